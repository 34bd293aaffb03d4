#!/usr/bin/env bash
# Prepares the Python peers: a venv under ~/.cache/ctx/peers-venv (override with CTX_PEERS_VENV)
# with the pinned packages of requirements.txt from PyPI, and tiktoken's cl100k_base file taken
# from the copy the tiktoken-rs crate ships, so that nothing is downloaded when the benchmark runs.
# Prints the two variables the benchmark needs: PEERS_PYTHON and TIKTOKEN_CACHE_DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CTX_PEERS_VENV:-$HOME/.cache/ctx/peers-venv}"
cache="$(dirname "$venv")/tiktoken-cache"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import langchain_core, tiktoken, quicktok" 2>/dev/null \
    || ! cmp -s "$here/requirements.txt" "$venv/.ctx-requirements"; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
    cp "$here/requirements.txt" "$venv/.ctx-requirements"
fi

# tiktoken looks for a blob in TIKTOKEN_CACHE_DIR under the sha1 of its URL, and checks its sha256.
asset=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tiktoken-rs-*/assets/cl100k_base.tiktoken 2>/dev/null | tail -1)
if [ -z "$asset" ]; then
    echo "tiktoken-rs's cl100k_base.tiktoken not found: run \`cargo fetch\` first" >&2
    exit 2
fi
url="https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
name=$(printf '%s' "$url" | sha1sum | cut -d' ' -f1)
mkdir -p "$cache"
cp "$asset" "$cache/$name"

echo "PEERS_PYTHON=$venv/bin/python"
echo "TIKTOKEN_CACHE_DIR=$cache"

#!/usr/bin/env bash
# Model files for ctx's model-file tests (tests/model_files.rs), all from PyPI: the vocabulary-only
# GGUF files (with llama.cpp's reference tokenizations, `*.gguf.inp` / `*.gguf.out`) and the chat
# templates (`templates/*.jinja`) that llama.cpp keeps for its own tests, inside the source
# distribution of llama-cpp-python (MIT). Nothing is committed: the files keep their own licenses
# (llama.cpp's LICENSE is copied beside them).
#
#   scripts/model-fixtures.sh provision   download and unpack once into the cache (later runs are quick)
#   scripts/model-fixtures.sh env         print CTX_VOCAB_DIR for the tests (eval it)
#
# Settings (environment): CTX_VOCAB_CACHE (~/.cache/ctx/llama-cpp-vocab), CTX_LLAMA_PYTHON (python3).
set -euo pipefail
# provision_once (no server here: the files are all there is)
source "$(dirname "${BASH_SOURCE[0]}")/recorded-pid.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
CACHE_DIR=${CTX_VOCAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/llama-cpp-vocab}
PYTHON=${CTX_LLAMA_PYTHON:-python3}
FILES="$CACHE_DIR/files-$LLAMA_CPP_PYTHON_VERSION"
READY="$FILES/.ctx-ready"

die() {
    echo "model-fixtures.sh: $*" >&2
    exit 1
}

provision_locked() {
    [[ -f "$READY" ]] && return 0
    echo "model-fixtures.sh: fetching llama-cpp-python $LLAMA_CPP_PYTHON_VERSION's source distribution from PyPI" >&2
    local venv="$CACHE_DIR/venv" sdist="$CACHE_DIR/sdist"
    if [[ ! -x "$venv/bin/pip" ]]; then
        "$PYTHON" -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    fi
    # pip reads a source distribution's metadata before saving it, which needs its build backend.
    "$venv/bin/pip" install --quiet --disable-pip-version-check scikit-build-core cmake ninja \
        || die "installing the build backend failed"
    rm -rf "$sdist"
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
        --no-build-isolation -d "$sdist" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
        || die "downloading llama-cpp-python's source distribution failed"
    local archive
    archive=$(compgen -G "$sdist/llama_cpp_python-*.tar.gz" | head -n1) || die "no source archive in $sdist"
    rm -rf "$FILES.partial"
    mkdir -p "$FILES.partial"
    tar -xzf "$archive" -C "$FILES.partial" --strip-components=4 --wildcards \
        "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp/models/ggml-vocab-*" \
        "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp/models/templates/*" \
        || die "unpacking $archive failed"
    tar -xzf "$archive" -O "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp/LICENSE" \
        >"$FILES.partial/LICENSE-llama.cpp" || die "no llama.cpp LICENSE in $archive"
    rm -rf "$sdist" "$FILES"
    mv "$FILES.partial" "$FILES"
    touch "$READY"
}

case "${1:-}" in
provision) provision_once ;;
env)
    [[ -f "$READY" ]] || die "not provisioned: run scripts/model-fixtures.sh provision"
    echo "export CTX_VOCAB_DIR=$FILES"
    ;;
*)
    echo "usage: $0 {provision|env}" >&2
    exit 2
    ;;
esac

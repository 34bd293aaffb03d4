#!/usr/bin/env bash
# Runs every benchmark of ctx and prints one table (Markdown): the criterion benches of
# ctx-tokens and ctx-runtime (token counting against tiktoken-rs, worst-case scaling, manage_context_budget on
# 1,000 nodes, history trimming, tool calls in a turn, the contract), the side-by-sides with
# LangChain's trim_messages on the same conversation (ctx-tests/benches/peers) and with quicktok and
# Hugging Face tokenizers on the token corpus (ctx-tokens/benches/peers_count.rs), and the macro's
# 40-step expansion.
#
#   scripts/bench.sh                # everything (about 20-30 minutes on 2 busy cores)
#   scripts/bench.sh history turn   # only these criterion benches (plus the macro)
#   scripts/bench.sh tokens peers_count   # counting only: `peers` is the trim side-by-side,
#                                   # `peers_count` the one with quicktok (both need the venv)
#   CTX_BENCH_FILTER=tokens/parallel scripts/bench.sh tokens   # a criterion filter for the benches
#   CTX_BENCH_NO_PEERS=1 scripts/bench.sh   # without the Python side (no PyPI access needed)
#   CTX_BENCH_NO_MACRO=1 scripts/bench.sh   # without the macro measurement
#   CTX_BENCH_KEEP=1 scripts/bench.sh turn  # add to (or redo part of) the previous run's results
#
# Measurement is deliberately short (1 s warm-up, 3 s per benchmark; benches with long
# iterations set their own sample size): figures are medians with their spread, not
# microsecond-exact. The table also lands in $out/table.md.
#
# "Cold" in any figure means every cache ctx has emptied before each timed pass: the count cache
# (a fresh TokenCounter) and the encoding's process-wide piece cache (`PieceCache::clear`), which
# outlives any counter. What depends only on the vocabulary (its rank index, the character table)
# stays loaded, as every peer's tables do. The table says beside each figure which caches it ran with.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
out="$target/ctx-bench"
# This run's results only: criterion writes here instead of the shared target/criterion.
export CRITERION_HOME="$out/criterion"
export CTX_BENCH_OUT="$out"
[ -z "${CTX_BENCH_KEEP:-}" ] && rm -rf "$CRITERION_HOME" "$out/tokens_interleaved.md" "$out/tokens_parallel.md" "$out/peers_count.md"
mkdir -p "$out"
failed=()
crit_args=(--warm-up-time 1 --measurement-time 3)
[ -n "${CTX_BENCH_FILTER:-}" ] && crit_args+=("$CTX_BENCH_FILTER")
# The load while the benches run goes into the table, beside the machine.
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)

# The criterion benches of ctx-tokens (counting) and ctx-runtime, in the order of the table; those
# not (yet) declared in either Cargo.toml are skipped.
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(tokens manage_budget history turn contract pipeline retrieve peers peers_count)
want() { printf '%s\n' "${wanted[@]}" | grep -qx "$1"; }
# With names given, the Python side-by-sides run only when named too.
if [ $# -gt 0 ] && ! want peers && ! want peers_count; then CTX_BENCH_NO_PEERS=1; fi
declared_in() { grep -A1 '^\[\[bench\]\]' "$1/Cargo.toml" | sed -n 's/^name *= *"\(.*\)"/\1/p'; }
for b in "${wanted[@]}"; do
    case "$b" in peers | peers_count) continue ;; esac
    if grep -qx "$b" <<<"$(declared_in ctx-tokens)"; then
        # `__tiktoken`: the counting bench compares with tiktoken-rs (its required feature); `hf`
        # as for peers_count below, so that ctx-tokens is compiled once for both.
        package=(-p ctx-tokens --features __tiktoken,hf)
    elif grep -qx "$b" <<<"$(declared_in ctx-runtime)"; then
        # `__tiktoken`: benches compare with tiktoken-rs; `bm25`: the offline retriever the
        # `retrieve` bench measures.
        package=(-p ctx-runtime --features __tiktoken,bm25)
    else
        echo "== $b: not declared in ctx-tokens/ or ctx-runtime/Cargo.toml, skipped" >&2
        continue
    fi
    echo "== cargo bench ${package[*]} --bench $b" >&2
    # A bench that fails (its own consistency check, a panic) is reported and the others still run.
    if ! cargo bench -q "${package[@]}" --bench "$b" -- "${crit_args[@]}" >"$out/$b.log" 2>&1; then
        echo "bench $b FAILED; see $out/$b.log" >&2
        failed+=("$b")
    fi
done

python_json=""
if [ -z "${CTX_BENCH_NO_PEERS:-}" ]; then
    eval "$(ctx-tests/benches/peers/setup.sh)"
    if want peers; then
        echo "== peers: history trim, ctx (Rust) and LangChain (Python) on the same JSON" >&2
        cargo bench -q -p ctx-tests --bench peers -- "${crit_args[@]}" >"$out/peers.log" 2>&1 \
            || { echo "bench peers failed; see $out/peers.log" >&2; exit 1; }
        # No network for the Python side: an unreachable proxy makes any download attempt fail.
        TIKTOKEN_CACHE_DIR="$TIKTOKEN_CACHE_DIR" HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
            "$PEERS_PYTHON" ctx-tests/benches/peers/trim_langchain.py "$out" "${CTX_PEERS_RUNS:-10}" >&2
        python_json="$out/peers_python.json"
    fi
    if want peers_count; then
        echo "== peers_count: counting beside quicktok and tokenizers, the scanner alone" >&2
        # The open models' rows need llama.cpp's vocabularies (scripts/model-fixtures.sh provision).
        # Built in ctx-tokens: only the tokenizer and its references, not the test suite's crates.
        vocab_env=$(scripts/model-fixtures.sh env 2>/dev/null || true)
        (eval "$vocab_env"; PEERS_PYTHON="$PEERS_PYTHON" cargo bench -q -p ctx-tokens --features __tiktoken,hf --bench peers_count) \
            >"$out/peers_count.log" 2>&1 || { echo "bench peers_count failed; see $out/peers_count.log" >&2; failed+=(peers_count); }
    fi
fi

macro_txt=""
if [ -z "${CTX_BENCH_NO_MACRO:-}" ] && grep -rqs "fn measure_expansion_of_forty_steps" ctx-macros/src; then
    echo "== ctx-macros: 40-step expansion (bench profile: optimised as the benches are)" >&2
    cargo test -q -p ctx-macros --lib --profile bench -- --ignored --nocapture measure >"$out/macro.txt" 2>&1 \
        || { echo "macro measurement failed; see $out/macro.txt" >&2; exit 1; }
    macro_txt="$out/macro.txt"
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
machine="Run $(date -u '+%Y-%m-%d %H:%M UTC') on ${cpu:-unknown CPU} ($(nproc) cores, $(uname -sm)), $(rustc --version); \
load average (1, 5, 15 min) ${load_before:-?} before, ${load_after:-?} after. Cold = the count cache and the \
process-wide piece cache emptied before each pass; the column \"caches\" says which each figure ran with."
{
    python3 scripts/bench_table.py "$CRITERION_HOME" ${python_json:+--python "$python_json"} \
        ${macro_txt:+--macro "$macro_txt"} --machine "$machine"
    # The tokens bench's interleaved rounds (its ratios are the ones the README quotes).
    if [ -f "$out/tokens_interleaved.md" ]; then
        printf '\n### Token counting, contenders interleaved\n\n'
        cat "$out/tokens_interleaved.md"
    fi
    if [ -f "$out/tokens_parallel.md" ]; then
        printf '\n\n### A million tokens on the cores free\n\n'
        cat "$out/tokens_parallel.md"
    fi
    if [ -f "$out/peers_count.md" ]; then
        printf '\n### Token counting beside quicktok and tokenizers\n\n'
        cat "$out/peers_count.md"
    fi
} | tee "$out/table.md"
if [ ${#failed[@]} -gt 0 ]; then
    echo
    echo "FAILED benches (partial or no figures above): ${failed[*]} — logs in $out/"
    exit 1
fi

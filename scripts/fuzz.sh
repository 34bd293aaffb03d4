#!/usr/bin/env bash
# The cargo-fuzz targets of fuzz/: install the tool, fuzz, replay the corpora, minimise them.
#
#   scripts/fuzz.sh install                    # cargo-fuzz from crates.io, pinned (builds on stable)
#   scripts/fuzz.sh run [TARGET…]              # fuzz each target FUZZ_SECONDS (60) on its corpus, one
#                                              # at a time, going on after a crash, then print a
#                                              # table; exit 1 on any crash
#   FUZZ_SECONDS=600 scripts/fuzz.sh run compact
#   scripts/fuzz.sh check [TARGET…]            # CI: replay each corpus, then FUZZ_CHECK_SECONDS (20)
#                                              # of fuzzing per target from a fixed seed
#                                              # (FUZZ_CHECK_SEED); exit 1 on any crash
#   scripts/fuzz.sh cmin [TARGET…]             # minimise the corpora kept in fuzz/corpus/
#   scripts/fuzz.sh list
#
# Toolchains: the project builds and tests on stable. cargo-fuzz passes `-Zsanitizer`-style flags
# that only a nightly rustc accepts, so the targets build with `cargo +nightly fuzz` (override
# with FUZZ_TOOLCHAIN). A missing nightly is an error, never a silent skip. The targets build
# in release with debug assertions and overflow checks on and without AddressSanitizer
# (`--sanitizer none`): they call safe Rust, what we hunt is panics, overflows, broken
# invariants, runaway memory and time, and ASan would halve the executions per second.
#
# Builds go to fuzz/target (CARGO_TARGET_DIR overrides), never to the workspace's target/.
# Each run is niced and memory-bounded (-rss_limit_mb=2048, -timeout=20 s per input): the
# machines are shared. Crash inputs land in fuzz/artifacts/<target>/, logs in fuzz/logs/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_FUZZ_VERSION=0.13.1
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/fuzz/target}"
fuzz_flags=(--sanitizer none)
lib_flags=(-rss_limit_mb=2048 -timeout=20 -print_final_stats=1)

die() {
    echo "fuzz.sh: $*" >&2
    exit 2
}

install() {
    if [ "$(cargo fuzz --version 2>/dev/null)" = "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
        return 0
    fi
    # cargo-fuzz itself builds on stable; only the targets need nightly.
    cargo +stable install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
}

need_tools() {
    rustup run "$toolchain" rustc --version >/dev/null 2>&1 ||
        die "the $toolchain toolchain is not installed (\`rustup toolchain install $toolchain\`); cargo-fuzz needs it"
    install
}

targets() {
    if [ $# -gt 0 ]; then
        printf '%s\n' "$@"
    else
        (cd "$root/fuzz" && cargo +"$toolchain" fuzz list)
    fi
}

# Seeds for an empty corpus, so that a fresh target starts from real SQL, C#, pipeline files and
# configs rather than from nothing. The corpora kept in git already hold them.
seed() {
    local target="$1" dir="$root/fuzz/corpus/$1"
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
    case "$target" in
        config_json)
            cp "$root"/ctx-runtime/tests/data/config/*.json "$dir"/ ;;
        pipeline_yaml)
            local i=0
            while IFS= read -r -d '' f; do
                i=$((i + 1))
                cp "$f" "$dir/seed-$i.yaml"
            done < <(find "$root/examples/pipelines" "$root/ctx-runtime/tests/data/pipelines" -name '*.yaml' -print0) ;;
        pretokenize)
            cp "$root"/ctx-tokens/tests/data/tokens/*.txt "$dir"/ ;;
        classify | compact | manage_budget)
            local i=0
            while IFS= read -r -d '' f; do
                i=$((i + 1))
                # A leading selector byte, then the file (arbitrary takes the rest as the text).
                { printf "\\x$(printf %02x $((i % 24)))"; cat "$f"; } >"$dir/seed-$i"
            done < <(find "$root/examples/codebase" -type f \( -name '*.sql' -o -name '*.cs' \
                -o -name '*.cshtml' -o -name '*.csproj' -o -name '*.md' \) -print0) ;;
    esac
}

build() {
    echo "building $# fuzz target(s) ($toolchain, release + debug assertions, no sanitizer) into $CARGO_TARGET_DIR" >&2
    local t
    for t in "$@"; do
        (cd "$root/fuzz" && nice -n 10 cargo +"$toolchain" fuzz build "${fuzz_flags[@]}" "$t") >&2
    done
}

artifacts() {
    find "$root/fuzz/artifacts/$1" -type f 2>/dev/null | wc -l
}

# Runs one target on a corpus directory with the given libFuzzer flags; appends
# "target|seconds|execs|cov|crashes" to the table.
rows=()
crashed=0
fuzz_one() {
    local t="$1" corpus="$2"
    shift 2
    local log="$root/fuzz/logs/$t.log" before after status start elapsed execs cov crashes
    mkdir -p "$root/fuzz/logs" "$root/fuzz/artifacts/$t"
    before=$(artifacts "$t")
    start=$(date +%s)
    set +e
    (cd "$root/fuzz" && nice -n 10 cargo +"$toolchain" fuzz run "${fuzz_flags[@]}" "$t" "$corpus" -- \
        "${lib_flags[@]}" -artifact_prefix="$root/fuzz/artifacts/$t/" "$@") >"$log" 2>&1
    status=$?
    set -e
    elapsed=$(($(date +%s) - start))
    # (`|| true`: a log without the line is a `?` in the table, not the end of the script.)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    # Fork mode prints no final stats: its progress lines start with the executions so far.
    [ -z "$execs" ] && execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
    after=$(artifacts "$t")
    crashes=$((after - before))
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="exit $status"; fi
    if [ "$crashes" != "0" ]; then
        crashed=1
        tail -n 40 "$log" >&2
    fi
    rows+=("$t|$elapsed|${execs:-?}|${cov:-?}|$crashes")
    echo "  $t: ${elapsed}s, ${execs:-?} executions, coverage ${cov:-?}, crashes: $crashes (log: fuzz/logs/$t.log)" >&2
}

table() {
    echo
    echo "fuzz $1 $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(rustup run "$toolchain" rustc --version)"
    printf '| %-14s | %8s | %12s | %8s | %7s |\n' target seconds executions coverage crashes
    printf '|%s|%s|%s|%s|%s|\n' "----------------" "----------" "--------------" "----------" "---------"
    local r t s e c k
    for r in "${rows[@]}"; do
        IFS='|' read -r t s e c k <<<"$r"
        printf '| %-14s | %8s | %12s | %8s | %7s |\n' "$t" "$s" "$e" "$c" "$k"
    done
    if [ "$crashed" -ne 0 ]; then
        echo "crash inputs are in fuzz/artifacts/<target>/; reproduce with:"
        echo "  (cd fuzz && cargo +$toolchain fuzz run --sanitizer none <target> <file>)"
    fi
}

cmd="${1:-run}"
[ $# -gt 0 ] && shift
case "$cmd" in
    install)
        install ;;
    list)
        need_tools
        targets ;;
    run)
        need_tools
        mapfile -t list < <(targets "$@")
        build "${list[@]}"
        for t in "${list[@]}"; do
            seed "$t"
            # One child process at a time (-fork=1) that is restarted after a crash, so one bug
            # does not end the run: every crash input is kept in fuzz/artifacts/<target>/.
            fuzz_one "$t" "$root/fuzz/corpus/$t" -max_total_time="${FUZZ_SECONDS:-60}" \
                -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
        done
        table "run"
        exit "$crashed" ;;
    check)
        # Replays every corpus input (libFuzzer runs them all before mutating), then mutates for
        # FUZZ_CHECK_SECONDS. Nothing found is kept: the corpora change only through `run`+`cmin`.
        need_tools
        mapfile -t list < <(targets "$@")
        build "${list[@]}"
        scratch="$(mktemp -d)"
        trap 'rm -rf "$scratch"' EXIT
        for t in "${list[@]}"; do
            # A scratch copy as the writable corpus, so new inputs do not dirty the checkout.
            mkdir -p "$scratch/$t"
            cp -r "$root/fuzz/corpus/$t/." "$scratch/$t/" 2>/dev/null || true
            # A fixed seed: the same commit mutates the same way on every CI run, so a check that
            # fails, fails again when rerun, and a green check is not luck of the clock. Exploring
            # new inputs is `run`'s job (a time-seeded, longer search before each merge).
            fuzz_one "$t" "$scratch/$t" -max_total_time="${FUZZ_CHECK_SECONDS:-20}" -seed="${FUZZ_CHECK_SEED:-20261126}"
        done
        table "check"
        exit "$crashed" ;;
    cmin)
        need_tools
        mapfile -t list < <(targets "$@")
        build "${list[@]}"
        for t in "${list[@]}"; do
            (cd "$root/fuzz" && nice -n 10 cargo +"$toolchain" fuzz cmin "${fuzz_flags[@]}" "$t" "$root/fuzz/corpus/$t" -- \
                -rss_limit_mb=2048 -timeout=20) >"$root/fuzz/logs/$t.cmin.log" 2>&1 ||
                { tail -n 20 "$root/fuzz/logs/$t.cmin.log" >&2; die "cmin of $t failed"; }
            echo "  $t: $(find "$root/fuzz/corpus/$t" -type f | wc -l) inputs, $(du -sh "$root/fuzz/corpus/$t" | cut -f1)" >&2
        done ;;
    *)
        die "unknown command \`$cmd\` (install | list | run | check | cmin)" ;;
esac

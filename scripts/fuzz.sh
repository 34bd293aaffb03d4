#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time and prints one table:
# target, seconds run, executions, crashes. Exits 1 when any target crashed.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   FUZZ_SECONDS=10 scripts/fuzz.sh compact template
#
# Needs `cargo install cargo-fuzz`. It works on the stable toolchain: RUSTC_BOOTSTRAP=1 lets
# cargo-fuzz pass its instrumentation flags, and `--sanitizer none` skips AddressSanitizer
# (these targets are safe Rust; what we hunt is panics, overflows and broken invariants, and
# debug assertions stay on). Not part of CI.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${FUZZ_SECONDS:-60}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is not installed: run \`cargo install cargo-fuzz\`" >&2
    exit 2
fi

cd "$root/fuzz"
mapfile -t all_targets < <(cargo fuzz list)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# Seed corpora (fuzz/corpus is ignored by git): the sample code base and the config fixtures,
# so that the fuzzer starts from real SQL, C#, Razor and config.json rather than from nothing.
seed() {
    local target="$1" dir="$root/fuzz/corpus/$1"
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
    case "$target" in
        config_json)
            cp "$root"/ctx-runtime/tests/data/config/*.json "$dir"/ 2>/dev/null || true ;;
        classify|compact|manage_budget)
            local i=0
            while IFS= read -r -d '' f; do
                i=$((i + 1))
                # A leading selector byte, then the file (arbitrary takes the rest as the text).
                { printf "\\x$(printf %02x $((i % 24)))"; cat "$f"; } >"$dir/seed-$i"
            done < <(find "$root/examples/codebase" -type f \( -name '*.sql' -o -name '*.cs' -o -name '*.cshtml' -o -name '*.csproj' -o -name '*.md' \) -print0) ;;
    esac
}

echo "building ${#targets[@]} target(s) (release, debug assertions on, no sanitizer)…" >&2
cargo fuzz build --sanitizer none >&2

# Crash and timeout inputs libFuzzer saved for a target so far.
artifacts() {
    find "$root/fuzz/artifacts/$1" -type f 2>/dev/null | wc -l || true
}

logs="$root/fuzz/logs"
mkdir -p "$logs"
rows=()
crashed=0
for t in "${targets[@]}"; do
    seed "$t"
    before=$(artifacts "$t")
    start=$(date +%s)
    set +e
    cargo fuzz run --sanitizer none "$t" "$root/fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 \
        >"$logs/$t.log" 2>&1
    status=$?
    set -e
    elapsed=$(( $(date +%s) - start ))
    execs=$( (grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" || true) | grep -o '[0-9]*$' | tail -1 || true)
    cov=$( (grep -o 'cov: [0-9]*' "$logs/$t.log" || true) | tail -1 | grep -o '[0-9]*' || true)
    after=$(artifacts "$t")
    crashes=$((after - before))
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="exit $status"; fi
    [ "$crashes" != "0" ] && crashed=1
    rows+=("$t|$elapsed|${execs:-?}|${cov:-?}|$crashes")
    echo "  $t: ${elapsed}s, ${execs:-?} executions, crashes: $crashes (log: fuzz/logs/$t.log)" >&2
done

echo
echo "fuzz run $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, ${seconds}s per target, $(rustc --version)"
printf '| %-14s | %8s | %12s | %8s | %7s |\n' target seconds executions coverage crashes
printf '|%s|%s|%s|%s|%s|\n' "----------------" "----------" "--------------" "----------" "---------"
for r in "${rows[@]}"; do
    IFS='|' read -r t s e c k <<<"$r"
    printf '| %-14s | %8s | %12s | %8s | %7s |\n' "$t" "$s" "$e" "$c" "$k"
done
if [ "$crashed" -ne 0 ]; then
    echo "crash inputs are in fuzz/artifacts/<target>/; reproduce with: RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> <file>"
fi
exit "$crashed"

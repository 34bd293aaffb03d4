#!/usr/bin/env bash
# The public API of every library crate, one snapshot per crate and feature set, as
# cargo-public-api lists it from rustdoc JSON (`public-api/<crate>.<features>.txt`). A change to
# what users can name shows as a diff of these files, reviewed like any other.
#
#   scripts/public-api.sh install   # cargo-public-api from crates.io, pinned (builds on stable)
#   scripts/public-api.sh write     # regenerate every snapshot (after a reviewed API change)
#   scripts/public-api.sh check     # CI: fail, printing the diff, when the API differs from the
#                                   # committed snapshots
#   scripts/public-api.sh list      # the crates and feature sets
#
# Feature sets: `default` (what `cargo add` gives) and `all` (every feature, the internal `__…`
# ones included, as docs.rs builds them). The macros crate's API is its macros; the CLI is a
# binary and has none.
#
# Toolchains: rustdoc JSON is unstable, so the snapshots are built with the nightly toolchain
# (override with PUBLIC_API_TOOLCHAIN; a missing nightly is an error, never a skip); the project
# itself builds on stable. The nightly's rustdoc JSON format must be one the pinned
# cargo-public-api reads: when a new nightly changes it, `check` fails saying so, and the pin is
# raised in this file. Builds go to $CARGO_TARGET_DIR/public-api, apart from the stable ones.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_PUBLIC_API_VERSION=0.52.0
toolchain="${PUBLIC_API_TOOLCHAIN:-nightly}"
snapshots="$root/public-api"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/public-api"

# The crates whose API users reach, bottom floor first; each gets one snapshot per feature set.
crates=(ctx-tokens ctx-spec ctx-runtime ctx-macros ctx-llm)
feature_sets=(default all)

die() {
    echo "public-api.sh: $*" >&2
    exit 2
}

install() {
    if [ "$(cargo public-api --version 2>/dev/null)" = "cargo-public-api $CARGO_PUBLIC_API_VERSION" ]; then
        return 0
    fi
    cargo +stable install cargo-public-api --locked --version "$CARGO_PUBLIC_API_VERSION"
}

need_tools() {
    rustup run "$toolchain" rustc --version >/dev/null 2>&1 ||
        die "the $toolchain toolchain is not installed (\`rustup toolchain install $toolchain\`); rustdoc JSON needs it"
    install
}

# The API of crate $1 with feature set $2, one item a line, to stdout. Blanket and auto-trait
# impls are left out: they follow from the items and would make every snapshot several times
# longer without saying anything a reviewer decides.
api() {
    local crate=$1 set=$2 features=()
    case "$set" in
        default) ;;
        all) features=(--all-features) ;;
        *) die "unknown feature set $set" ;;
    esac
    (cd "$root" && cargo +"$toolchain" public-api -p "$crate" "${features[@]}" \
        --omit blanket-impls,auto-trait-impls --color never)
}

write() {
    need_tools
    mkdir -p "$snapshots"
    for crate in "${crates[@]}"; do
        for set in "${feature_sets[@]}"; do
            echo "== $crate ($set)" >&2
            api "$crate" "$set" >"$snapshots/$crate.$set.txt"
        done
    done
    echo "wrote $(ls "$snapshots"/*.txt | wc -l) snapshots in public-api/; review \`git diff public-api/\`" >&2
}

check() {
    need_tools
    local failed=0 fresh
    fresh="$(mktemp -d)"
    trap 'rm -rf "$fresh"' RETURN
    for crate in "${crates[@]}"; do
        for set in "${feature_sets[@]}"; do
            local file="$crate.$set.txt"
            echo "== $crate ($set)" >&2
            api "$crate" "$set" >"$fresh/$file"
            if [ ! -f "$snapshots/$file" ]; then
                echo "public-api/$file is missing: run scripts/public-api.sh write and commit it" >&2
                failed=1
            elif ! diff -u --label "public-api/$file (committed)" --label "$crate, $set (this tree)" \
                "$snapshots/$file" "$fresh/$file"; then
                failed=1
            fi
        done
    done
    # A snapshot no crate or feature set writes any more is stale.
    for file in "$snapshots"/*.txt; do
        [ -f "$fresh/$(basename "$file")" ] || { echo "public-api/$(basename "$file") is written by no crate: remove it" >&2; failed=1; }
    done
    if [ "$failed" -ne 0 ]; then
        echo "the public API differs from public-api/ (above). If the change is meant, run" >&2
        echo "scripts/public-api.sh write and commit the snapshots with the change, for review." >&2
        exit 1
    fi
    echo "public API: as committed (${#crates[@]} crates × ${#feature_sets[@]} feature sets)" >&2
}

case "${1:-}" in
    install) install ;;
    write) write ;;
    check) check ;;
    list) for c in "${crates[@]}"; do for s in "${feature_sets[@]}"; do echo "$c $s"; done; done ;;
    *) die "usage: scripts/public-api.sh install|write|check|list" ;;
esac

#!/usr/bin/env bash
# Headless Chromium for the run report's rendering test (ctx-tests/tests/report_chromium.rs): Debian's
# `chromium` package, run once per page to take a screenshot and dump the rendered DOM.
#
#   scripts/chromium.sh provision              install Debian's chromium when it is missing (apt-get, as root)
#   scripts/chromium.sh installed              exit 0 when a chromium binary is found (tests skip otherwise, outside CI)
#   scripts/chromium.sh bin                    print the binary's path
#   scripts/chromium.sh env                    print the variables the test reads (eval it)
#   scripts/chromium.sh screenshot PAGE PNG    render the local file PAGE and save a PNG
#   scripts/chromium.sh dump-dom PAGE          render the local file PAGE and print its DOM
#
# Settings (environment): CTX_CHROMIUM (a chromium binary to use instead of the package's),
# CTX_CHROMIUM_WIDTH (1200), CTX_CHROMIUM_HEIGHT (2400).
#
# Nothing is served and nothing stays running: each command is one headless process that loads
# one local file and exits, so there is no port to bind and no pid to record (the process is
# waited for, and killed with its process group if it outlives CTX_CHROMIUM_TIMEOUT, 60 s). The
# page is local and self-contained; the browser is still kept off the network: every host
# resolves to nothing, a dead loopback proxy is set, and background networking, component
# updates, sync and first-run tasks are off. A throw-away profile is used and removed.
set -euo pipefail

WIDTH=${CTX_CHROMIUM_WIDTH:-1200}
HEIGHT=${CTX_CHROMIUM_HEIGHT:-2400}
TIMEOUT=${CTX_CHROMIUM_TIMEOUT:-60}

die() {
    echo "chromium.sh: $*" >&2
    exit 1
}

find_bin() {
    if [[ -n "${CTX_CHROMIUM:-}" ]]; then
        [[ -x "$CTX_CHROMIUM" ]] || die "CTX_CHROMIUM=$CTX_CHROMIUM is not an executable"
        echo "$CTX_CHROMIUM"
        return 0
    fi
    local candidate
    for candidate in chromium chromium-browser; do
        if command -v "$candidate" >/dev/null 2>&1; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

provision() {
    if find_bin >/dev/null; then
        return 0
    fi
    command -v apt-get >/dev/null || die "no chromium and no apt-get: install Chromium and set CTX_CHROMIUM"
    [[ "$(id -u)" == 0 ]] || die "installing Debian's chromium needs root: sudo apt-get install chromium"
    echo "chromium.sh: installing Debian's chromium (about 100 MB of packages)" >&2
    # The package lists may be missing on a fresh machine.
    if ! apt-cache show chromium >/dev/null 2>&1; then
        apt-get update -qq >&2
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2 ||
        die "apt-get install chromium failed"
    find_bin >/dev/null || die "chromium was installed but is not on PATH"
}

# Runs chromium headless on the local file $1 with the extra arguments after it.
run_headless() {
    local page=$1
    shift
    [[ -f "$page" ]] || die "no such page: $page"
    local bin profile url status
    bin=$(find_bin) || die "chromium is not installed (scripts/chromium.sh provision)"
    profile=$(mktemp -d)
    url="file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
    # --no-sandbox: CI runs as root, where Chromium refuses its sandbox. The page is ours and local.
    set +e
    timeout --kill-after=5 "$TIMEOUT" "$bin" \
        --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$profile" --no-first-run --no-default-browser-check \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-default-apps --disable-extensions --metrics-recording-only \
        --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="127.0.0.1:9" \
        --window-size="$WIDTH,$HEIGHT" "$@" "$url" 2> >(grep -v -E 'dbus|Fontconfig|GPU|gpu|sandbox' >&2)
    status=$?
    set -e
    rm -rf "$profile"
    return "$status"
}

case "${1:-}" in
provision) provision ;;
installed) find_bin >/dev/null ;;
bin) find_bin || die "chromium is not installed (scripts/chromium.sh provision)" ;;
env)
    bin=$(find_bin) || die "chromium is not installed (scripts/chromium.sh provision)"
    echo "export CTX_CHROMIUM=$bin"
    ;;
screenshot)
    [[ $# -eq 3 ]] || die "usage: scripts/chromium.sh screenshot PAGE PNG"
    png=$(realpath -m "$3")
    run_headless "$2" --screenshot="$png" >/dev/null
    [[ -s "$png" ]] || die "no screenshot was written to $png"
    ;;
dump-dom)
    [[ $# -eq 2 ]] || die "usage: scripts/chromium.sh dump-dom PAGE"
    run_headless "$2" --dump-dom
    ;;
*)
    sed -n '2,21p' "$0" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Arize Phoenix, an OpenTelemetry tracing backend that reads the GenAI semantic conventions, for
# ctx-tests/tests/report_phoenix.rs (feature `otel`): ctx's spans are exported to it over OTLP/HTTP and
# read back through its REST API. Installed from PyPI (arize-phoenix) into a venv in a cache and
# run on 127.0.0.1 only, with telemetry off.
#
#   scripts/phoenix.sh provision   venv + arize-phoenix in the cache (once; see "Cost" below)
#   scripts/phoenix.sh installed   exit 0 when the venv is ready (tests skip otherwise, outside CI)
#   scripts/phoenix.sh start       provision, start on 127.0.0.1 with fresh data, wait until it answers
#   scripts/phoenix.sh env         print the variables the test reads (eval it)
#   scripts/phoenix.sh status      say whether the server runs and answers
#   scripts/phoenix.sh pid         print the recorded process id of the running server
#   scripts/phoenix.sh stop        stop the server this script started (by its recorded process id)
#
# Settings (environment): CTX_PHOENIX_PORT (16006: the UI, the REST API and OTLP/HTTP at
# /v1/traces), CTX_PHOENIX_GRPC_PORT (14317: OTLP/gRPC, unused by ctx but always opened),
# CTX_PHOENIX_CACHE (~/.cache/ctx/phoenix), CTX_PHOENIX_PYTHON (python3).
#
# Cost, measured on this project's 2-core machine while other builds ran (load 10-16): installing
# arize-phoenix 20.26.1 from an empty pip cache (about 250 packages, an 850 MB venv: pandas,
# pyarrow, grpcio, botocore, …) took 6 min 51 s and 12 min of wall time in two runs (52 s and
# 66 s of CPU: the rest is download). Start-up to the first answer took 12-13 s of CPU: 116-130 s of
# wall time at that load, 14 s at a load of 5 with the venv's files in the page cache; `start`
# prints how long it waited.
#
# Loopback only. PHOENIX_HOST binds the HTTP server to 127.0.0.1; Phoenix's OTLP/gRPC receiver
# has no host setting (it binds [::]), so the server is started through a small launcher that
# rewrites that listening address to 127.0.0.1 before Phoenix opens it, and `start` checks that
# every socket the process listens on is a loopback one. Product telemetry is off
# (PHOENIX_TELEMETRY_ENABLED=false), and the server runs in its own mount namespace whose
# /etc/resolv.conf names a loopback resolver, so no host name it might look up leads off the
# machine.
set -euo pipefail
# recorded_pid, stop_recorded, provision_once, already_running, await_recorded, recorded_status
source "$(dirname "${BASH_SOURCE[0]}")/recorded-pid.sh"

VERSION=20.26.1
HOST=127.0.0.1

PORT=${CTX_PHOENIX_PORT:-16006}
GRPC_PORT=${CTX_PHOENIX_GRPC_PORT:-14317}
CACHE_DIR=${CTX_PHOENIX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/phoenix}
PYTHON=${CTX_PHOENIX_PYTHON:-python3}

die() {
    echo "phoenix.sh: $*" >&2
    exit 1
}

py_version() {
    "$PYTHON" -c 'import sys, platform; print(sys.version.split()[0], platform.machine())' \
        || die "cannot run $PYTHON (set CTX_PHOENIX_PYTHON)"
}

KEY=$(printf '%s|%s' "$VERSION" "$(py_version)" | sha256sum | cut -c1-12)
VENV="$CACHE_DIR/venv-$KEY"
READY="$VENV/.ctx-ready"
RUN_DIR="$CACHE_DIR/run-$PORT"
PIDFILE="$RUN_DIR/server.pid"
LOGFILE="$RUN_DIR/server.log"
LAUNCHER="$RUN_DIR/launch.py"
DATA="$RUN_DIR/data"
BASE_URL="http://$HOST:$PORT"

provision_locked() {
    if [[ -f "$READY" ]]; then
        return 0
    fi
    echo "phoenix.sh: installing arize-phoenix $VERSION into $VENV (several minutes from an empty pip cache)" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "arize-phoenix==$VERSION" \
        || die "installing arize-phoenix $VERSION failed"
    "$VENV/bin/python" -c 'import phoenix.server.main' || die "arize-phoenix does not import"
    touch "$READY"
}

write_launcher() {
    cat >"$LAUNCHER" <<'EOF'
# Written by scripts/phoenix.sh: starts `phoenix serve` with its OTLP/gRPC receiver bound to
# loopback (Phoenix binds it to [::] and has no setting for the host).
import sys

from grpc.aio import _server


def _loopback(open_port):
    def bind(self, address, *args):
        return open_port(self, "127.0.0.1:" + address.rsplit(":", 1)[1], *args)

    return bind


_server.Server.add_insecure_port = _loopback(_server.Server.add_insecure_port)
_server.Server.add_secure_port = _loopback(_server.Server.add_secure_port)

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
main()
EOF
    echo "nameserver 127.0.0.1" >"$RUN_DIR/resolv.conf"
}

# ISOLATE: the command prefix that gives the server its own /etc/resolv.conf.
isolate() {
    # shellcheck disable=SC2016 # expanded by the inner shell: $0 is the run directory
    local inner='mount --bind "$0/resolv.conf" /etc/resolv.conf && exec "$@"'
    if [[ $(id -u) == 0 ]] && unshare --mount --propagation private true 2>/dev/null; then
        ISOLATE=(unshare --mount --propagation private sh -c "$inner" "$RUN_DIR")
    elif unshare --user --map-root-user --mount true 2>/dev/null; then
        ISOLATE=(unshare --user --map-root-user --mount sh -c "$inner" "$RUN_DIR")
    else
        ISOLATE=()
    fi
}

# Is $1 the server process of this run directory (and not some other process that got the id)?
is_our_server() {
    local pid=$1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$LAUNCHER"
}


answers() {
    curl -sf --max-time 2 "$BASE_URL/healthz" >/dev/null
}

# The local addresses the process tree of $1 listens on (TCP), one per line.
listening() {
    local pid=$1 pids
    pids=$(pgrep -P "$pid" 2>/dev/null || true)
    ss -ltnpH 2>/dev/null | while read -r _ _ _ local _ users; do
        for p in $pid $pids; do
            if [[ "$users" == *"pid=$p,"* ]]; then
                echo "$local"
            fi
        done
    done
}

start() {
    provision_once
    mkdir -p "$RUN_DIR"
    already_running phoenix.sh "$BASE_URL" \
        "port $PORT already serves something this script did not start; set CTX_PHOENIX_PORT" && return 0
    rm -rf "$DATA"
    mkdir -p "$DATA"
    : >"$LOGFILE"
    write_launcher
    isolate
    local began=$SECONDS
    # `exec` in the inner shell keeps one process whose id is recorded.
    PHOENIX_HOST=$HOST PHOENIX_PORT=$PORT PHOENIX_GRPC_PORT=$GRPC_PORT PHOENIX_WORKING_DIR="$DATA" \
        PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ENABLE_AUTH=false PHOENIX_LOG_MIGRATIONS=false \
        nohup "${ISOLATE[@]}" "$VENV/bin/python" "$LAUNCHER" >>"$LOGFILE" 2>&1 </dev/null &
    local pid=$!
    await_recorded phoenix.sh "$pid" 180 30
    local addr
    while read -r addr; do
        [[ -z "$addr" ]] && continue
        case "$addr" in
        127.0.0.1:* | "[::1]:"* | "[::ffff:127.0.0.1]:"*) ;;
        *) stop; die "the server listens on $addr, not on loopback only" ;;
        esac
    done < <(listening "$pid")
    echo "phoenix.sh: running (pid $pid) at $BASE_URL after $((SECONDS - began)) s (log: $LOGFILE)" >&2
}

stop() {
    stop_recorded phoenix.sh 20
}

status() {
    recorded_status "$BASE_URL"
}

print_env() {
    echo "export CTX_PHOENIX_URL=$BASE_URL"
    echo "export CTX_PHOENIX_OTLP_ENDPOINT=$BASE_URL"
}

case "${1:-}" in
provision) provision_once ;;
installed) [[ -f "$READY" ]] ;;
start) start ;;
stop) stop ;;
status) status ;;
pid) recorded_pid || die "not running" ;;
env) print_env ;;
*)
    echo "usage: $0 {provision|installed|start|env|status|pid|stop}" >&2
    exit 2
    ;;
esac

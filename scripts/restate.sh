#!/usr/bin/env bash
# The Restate durable execution engine for ctx's durable runs (feature `restate`): restate-server
# from the npm package @restatedev/restate-server (whose platform package ships the binary),
# installed into a cache and run on 127.0.0.1 only.
#
#   scripts/restate.sh provision        install the server into the cache (once; about 5 s with npm's cache warm)
#   scripts/restate.sh installed        exit 0 when the server is in the cache (tests skip otherwise, outside CI)
#   scripts/restate.sh start            provision, start on 127.0.0.1 with fresh data, wait until ready
#   scripts/restate.sh restart          start again on the data it has (after `kill`, to test recovery)
#   scripts/restate.sh register URI     register a service deployment (http://127.0.0.1:PORT) with the engine
#   scripts/restate.sh env              print the variables ctx's tests and examples read (eval it)
#   scripts/restate.sh status           say whether the server runs and answers
#   scripts/restate.sh pid              print the recorded process id of the running server
#   scripts/restate.sh stop             stop the server this script started (by its recorded process id)
#
# Settings (environment): CTX_RESTATE_INGRESS_PORT (18180), CTX_RESTATE_ADMIN_PORT (19170),
# CTX_RESTATE_NODE_PORT (15222), CTX_RESTATE_CACHE (~/.cache/ctx/restate), CTX_RESTATE_RUN_DIR
# (<cache>/run-<ingress port>: data, log, pid; one directory per instance).
#
# Loopback only. Every listener binds 127.0.0.1 and every advertised address is set to
# 127.0.0.1 explicitly (by default the server advertises a non-loopback address of the machine).
# The server also asks api.github.com for its latest release at every start, with no setting to
# turn that off; it therefore runs in its own mount namespace where /etc/hosts maps the hosts it
# knows to loopback and /etc/resolv.conf names a loopback resolver, so no name it looks up
# leads off the machine. Telemetry is disabled; npm's install scripts are not run.
set -euo pipefail
# recorded_pid, stop_recorded, provision_once, already_running, await_recorded, recorded_status
source "$(dirname "${BASH_SOURCE[0]}")/recorded-pid.sh"

VERSION=1.7.12
HOST=127.0.0.1

INGRESS_PORT=${CTX_RESTATE_INGRESS_PORT:-18180}
ADMIN_PORT=${CTX_RESTATE_ADMIN_PORT:-19170}
NODE_PORT=${CTX_RESTATE_NODE_PORT:-15222}
CACHE_DIR=${CTX_RESTATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/restate}
INSTALL="$CACHE_DIR/server-$VERSION"
READY="$INSTALL/.ctx-ready"
RUN_DIR=${CTX_RESTATE_RUN_DIR:-$CACHE_DIR/run-$INGRESS_PORT}
PIDFILE="$RUN_DIR/server.pid"
LOGFILE="$RUN_DIR/server.log"
CONFIG="$RUN_DIR/restate.toml"
DATA="$RUN_DIR/data"
INGRESS_URL="http://$HOST:$INGRESS_PORT"
ADMIN_URL="http://$HOST:$ADMIN_PORT"

die() {
    echo "restate.sh: $*" >&2
    exit 1
}

platform_package() {
    local os arch
    case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "no restate-server package for $(uname -s)" ;;
    esac
    case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no restate-server package for $(uname -m)" ;;
    esac
    echo "@restatedev/restate-server-$os-$arch"
}

server_bin() {
    echo "$INSTALL/node_modules/$(platform_package)/bin/restate-server"
}

provision_locked() {
    if [[ -f "$READY" ]]; then
        return 0
    fi
    command -v npm >/dev/null || die "npm is needed to install @restatedev/restate-server (on Debian: apt-get install npm)"
    echo "restate.sh: installing @restatedev/restate-server $VERSION into $INSTALL" >&2
    rm -rf "$INSTALL"
    mkdir -p "$INSTALL"
    # --ignore-scripts: the package's postinstall reports the install to a third party.
    npm install --prefix "$INSTALL" --ignore-scripts --no-audit --no-fund --no-save --loglevel=error \
        "@restatedev/restate-server@$VERSION" >&2 || die "npm install failed"
    local bin
    bin=$(server_bin)
    [[ -x "$bin" ]] || die "npm did not install the platform binary $bin"
    "$bin" --version | grep -q "$VERSION" || die "$bin is not restate-server $VERSION"
    touch "$READY"
}

write_config() {
    cat >"$CONFIG" <<EOF
# Written by scripts/restate.sh: one node, loopback only.
node-name = "ctx-local"
cluster-name = "ctx-local"
listen-mode = "tcp"
bind-ip = "$HOST"
advertised-host = "$HOST"
bind-port = $NODE_PORT
advertised-address = "http://$HOST:$NODE_PORT/"
disable-telemetry = true
default-num-partitions = 8
# Quick recovery when a service process comes back (tests kill and restart it).
[default-retry-policy]
initial-interval = "100ms"
exponentiation-factor = 2.0
max-interval = "2s"
max-attempts = 200
on-max-attempts = "pause"

[admin]
bind-port = $ADMIN_PORT
advertised-address = "http://$HOST:$ADMIN_PORT/"
disable-web-ui = true

[ingress]
bind-port = $INGRESS_PORT
advertised-address = "http://$HOST:$INGRESS_PORT/"
EOF
    # Everything the server may look up by name resolves to loopback (see the header).
    cat >"$RUN_DIR/hosts" <<EOF
127.0.0.1 localhost api.github.com uploads.github.com github.com restate.gateway.scarf.sh
::1 localhost api.github.com uploads.github.com github.com restate.gateway.scarf.sh
EOF
    echo "nameserver 127.0.0.1" >"$RUN_DIR/resolv.conf"
}

# ISOLATE: the command prefix that gives the server its own /etc/hosts and /etc/resolv.conf.
isolate() {
    # shellcheck disable=SC2016 # expanded by the inner shell: $0 is the run directory
    local inner='mount --bind "$0/hosts" /etc/hosts && mount --bind "$0/resolv.conf" /etc/resolv.conf && exec "$@"'
    if [[ $(id -u) == 0 ]] && unshare --mount --propagation private true 2>/dev/null; then
        ISOLATE=(unshare --mount --propagation private sh -c "$inner" "$RUN_DIR")
    elif unshare --user --map-root-user --mount true 2>/dev/null; then
        ISOLATE=(unshare --user --map-root-user --mount sh -c "$inner" "$RUN_DIR")
    else
        return 1
    fi
}

# Is $1 the server process of this run directory (and not some other process that got the id)?
is_our_server() {
    local pid=$1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "restate-server --config-file $CONFIG "
}


answers() {
    curl -sf --max-time 2 "$ADMIN_URL/health" >/dev/null && curl -sf --max-time 2 "$INGRESS_URL/restate/health" >/dev/null
}

launch() {
    local fresh=$1
    provision_once
    mkdir -p "$RUN_DIR"
    already_running restate.sh "$INGRESS_URL" \
        "ports $INGRESS_PORT/$ADMIN_PORT already serve a Restate this script did not start; set CTX_RESTATE_*_PORT" \
        && return 0
    if [[ "$fresh" == fresh ]]; then
        rm -rf "$DATA"
        : >"$LOGFILE"
    fi
    write_config
    isolate || die "cannot give the server its own /etc/hosts (unshare --mount needs root or user namespaces); \
it would ask api.github.com for its latest release"
    nohup "${ISOLATE[@]}" "$(server_bin)" --config-file "$CONFIG" --base-dir "$DATA" --no-logo \
        --log-disable-ansi-codes true >>"$LOGFILE" 2>&1 </dev/null &
    local pid=$!
    await_recorded restate.sh "$pid" 60
    # The engine says where its ingress is; it must be the loopback address set above.
    curl -sf "$ADMIN_URL/version" | grep -q "\"ingress_endpoint\":\"$INGRESS_URL/\"" \
        || { stop; die "the server advertises an ingress other than $INGRESS_URL/"; }
    echo "restate.sh: running (pid $pid) at $INGRESS_URL (admin $ADMIN_URL)" >&2
}

register() {
    local uri=${1:-}
    [[ "$uri" =~ ^http://127\.0\.0\.1:[0-9]+/?$ ]] || die "register takes a loopback URI http://127.0.0.1:PORT, not '$uri'"
    answers || die "the server is not running at $ADMIN_URL"
    # force: a service restarted on the same address with the same services replaces its entry.
    curl -sf --max-time 30 -X POST "$ADMIN_URL/deployments" -H 'content-type: application/json' \
        -d "{\"uri\": \"$uri\", \"force\": true}" >/dev/null \
        || die "registering $uri failed (is the service listening?)"
    echo "restate.sh: registered $uri" >&2
}

stop() {
    stop_recorded restate.sh 20
}

status() {
    recorded_status "$INGRESS_URL, admin $ADMIN_URL"
}

print_env() {
    echo "export CTX_RESTATE_INGRESS_URL=$INGRESS_URL"
    echo "export CTX_RESTATE_ADMIN_URL=$ADMIN_URL"
    echo "export CTX_RESTATE_SCRIPT=$(cd "$(dirname "$0")" && pwd)/restate.sh"
}

case "${1:-}" in
provision) provision_once ;;
installed) [[ -f "$READY" ]] ;;
start) launch fresh ;;
restart) launch keep ;;
register) register "${2:-}" ;;
stop) stop ;;
status) status ;;
pid) recorded_pid || die "not running" ;;
env) print_env ;;
*)
    echo "usage: $0 {provision|installed|start|restart|register URI|env|status|pid|stop}" >&2
    exit 2
    ;;
esac

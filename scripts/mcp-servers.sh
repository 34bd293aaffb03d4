#!/usr/bin/env bash
# The reference MCP servers ctx's MCP tests run against (feature `mcp`): the npm packages
# @modelcontextprotocol/server-everything (every protocol feature, including tools that fail and
# tools whose results are large) and @modelcontextprotocol/server-filesystem (files under the
# directories it is given), pinned and installed into a cache. Over stdio the tests spawn the
# `node` command this script prints themselves, so no such server outlives its test; over
# Streamable HTTP this script runs server-everything on a port of 127.0.0.1, its pid recorded.
#
#   scripts/mcp-servers.sh provision    install both servers into the cache (once; a few seconds with npm's cache warm)
#   scripts/mcp-servers.sh installed    exit 0 when both are in the cache (tests skip otherwise, outside CI)
#   scripts/mcp-servers.sh start        provision, start server-everything over Streamable HTTP, wait until it answers
#   scripts/mcp-servers.sh status       say whether that server runs and answers
#   scripts/mcp-servers.sh stop         stop the server this script started (by its recorded process id)
#   scripts/mcp-servers.sh env          print the variables ctx's tests read (eval it); CTX_MCP_HTTP_URL while it runs
#
# Settings (environment): CTX_MCP_CACHE (~/.cache/ctx/mcp), CTX_MCP_HTTP_PORT (18391; one server
# per port, so a test can start and stop one of its own), CTX_MCP_RUN_DIR (<cache>/run-<port>:
# log and pid).
#
# npm's install scripts are not run; the servers reach nothing but their stdin, stdout, their
# port and (for the filesystem server) the directories named on their command line. The HTTP
# server binds the port alone, which Node listens to on every interface: it is started with
# mcp-loopback.cjs preloaded, which binds it to 127.0.0.1, and the start fails unless the port
# is then open on 127.0.0.1 only.
set -euo pipefail
# recorded_pid, stop_recorded, provision_once, running, already_running, await_recorded, recorded_status
source "$(dirname "${BASH_SOURCE[0]}")/recorded-pid.sh"

VERSION_EVERYTHING=2026.8.31
VERSION_FILESYSTEM=2026.8.31

CACHE_DIR=${CTX_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/mcp}
INSTALL="$CACHE_DIR/servers-$VERSION_EVERYTHING-$VERSION_FILESYSTEM"
READY="$INSTALL/.ctx-ready"
EVERYTHING="$INSTALL/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM="$INSTALL/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
PRELOAD="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mcp-loopback.cjs"
HOST=127.0.0.1
HTTP_PORT=${CTX_MCP_HTTP_PORT:-18391}
RUN_DIR=${CTX_MCP_RUN_DIR:-$CACHE_DIR/run-$HTTP_PORT}
PIDFILE="$RUN_DIR/server.pid"
LOGFILE="$RUN_DIR/server.log"
HTTP_URL="http://$HOST:$HTTP_PORT/mcp"

die() {
    echo "mcp-servers.sh: $*" >&2
    exit 1
}

provision_locked() {
    if [[ -f "$READY" ]]; then
        return 0
    fi
    command -v npm >/dev/null || die "npm is needed to install the MCP servers (on Debian: apt-get install npm)"
    command -v node >/dev/null || die "node is needed to run the MCP servers (on Debian: apt-get install nodejs)"
    echo "mcp-servers.sh: installing server-everything $VERSION_EVERYTHING and server-filesystem $VERSION_FILESYSTEM into $INSTALL" >&2
    rm -rf "$INSTALL"
    mkdir -p "$INSTALL"
    npm install --prefix "$INSTALL" --ignore-scripts --no-audit --no-fund --no-save --loglevel=error \
        "@modelcontextprotocol/server-everything@$VERSION_EVERYTHING" \
        "@modelcontextprotocol/server-filesystem@$VERSION_FILESYSTEM" >&2 || die "npm install failed"
    [[ -f "$EVERYTHING" ]] || die "npm did not install $EVERYTHING"
    [[ -f "$FILESYSTEM" ]] || die "npm did not install $FILESYSTEM"
    touch "$READY"
}

# Is $1 this port's server (and not some other process that got the id)?
is_our_server() {
    local pid=$1
    [[ -r "/proc/$pid/cmdline" && -r "/proc/$pid/environ" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$EVERYTHING streamableHttp" || return 1
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx -- "PORT=$HTTP_PORT"
}

# Any HTTP answer on the endpoint (a GET without a session is a 400): the server is up.
answers() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$HTTP_URL") || return 1
    [[ "$code" != 000 ]]
}

# The port is listened to on 127.0.0.1 and on no other address.
loopback_only() {
    local listening
    listening=$(ss -Hltn "sport = :$HTTP_PORT" | awk '{print $4}')
    [[ -n "$listening" ]] && ! grep -qv -- "^$HOST:$HTTP_PORT\$" <<<"$listening"
}

start() {
    provision_once
    mkdir -p "$RUN_DIR"
    already_running mcp-servers.sh "$HTTP_URL" \
        "port $HTTP_PORT already serves something this script did not start; set CTX_MCP_HTTP_PORT" && return 0
    : >"$LOGFILE"
    PORT=$HTTP_PORT nohup node --require "$PRELOAD" "$EVERYTHING" streamableHttp >>"$LOGFILE" 2>&1 </dev/null &
    local pid=$!
    await_recorded mcp-servers.sh "$pid" 30
    loopback_only || { stop; die "the server listens on more than $HOST:$HTTP_PORT: $(ss -Hltn "sport = :$HTTP_PORT")"; }
    echo "mcp-servers.sh: running (pid $pid) at $HTTP_URL" >&2
}

stop() {
    stop_recorded mcp-servers.sh 10
}

status() {
    recorded_status "$HTTP_URL"
}

print_env() {
    [[ -f "$READY" ]] || die "not installed: run $0 provision"
    echo "export CTX_MCP_NODE=$(command -v node)"
    echo "export CTX_MCP_EVERYTHING=$EVERYTHING"
    echo "export CTX_MCP_FILESYSTEM=$FILESYSTEM"
    echo "export CTX_MCP_SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mcp-servers.sh"
    if running; then
        echo "export CTX_MCP_HTTP_URL=$HTTP_URL"
    fi
}

case "${1:-}" in
provision) provision_once ;;
installed) [[ -f "$READY" ]] ;;
start) start ;;
status) status ;;
stop) stop ;;
env) print_env ;;
*)
    echo "usage: $0 {provision|installed|start|status|stop|env}" >&2
    exit 2
    ;;
esac

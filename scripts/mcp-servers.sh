#!/usr/bin/env bash
# The reference MCP servers ctx's MCP tests run against (feature `mcp`): the npm packages
# @modelcontextprotocol/server-everything (every protocol feature, including tools that fail and
# tools whose results are large) and @modelcontextprotocol/server-filesystem (files under the
# directories it is given), pinned, installed into a cache and run by the tests themselves over
# stdio: each test spawns the `node` command this script prints, so no server outlives its test
# and nothing listens on a port.
#
#   scripts/mcp-servers.sh provision    install both servers into the cache (once; a few seconds with npm's cache warm)
#   scripts/mcp-servers.sh installed    exit 0 when both are in the cache (tests skip otherwise, outside CI)
#   scripts/mcp-servers.sh env          print the variables ctx's tests read (eval it)
#
# Settings (environment): CTX_MCP_CACHE (~/.cache/ctx/mcp).
#
# npm's install scripts are not run; the servers reach nothing but their stdin, stdout and (for
# the filesystem server) the directories named on their command line.
set -euo pipefail

VERSION_EVERYTHING=2026.8.31
VERSION_FILESYSTEM=2026.8.31

CACHE_DIR=${CTX_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx/mcp}
INSTALL="$CACHE_DIR/servers-$VERSION_EVERYTHING-$VERSION_FILESYSTEM"
READY="$INSTALL/.ctx-ready"
EVERYTHING="$INSTALL/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM="$INSTALL/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

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

provision() {
    mkdir -p "$CACHE_DIR"
    # Serialise concurrent provisioning (parallel tests, CI and a developer) on one lock file.
    exec 9>"$CACHE_DIR/.lock"
    flock 9
    provision_locked
    flock -u 9
}

print_env() {
    [[ -f "$READY" ]] || die "not installed: run $0 provision"
    echo "export CTX_MCP_NODE=$(command -v node)"
    echo "export CTX_MCP_EVERYTHING=$EVERYTHING"
    echo "export CTX_MCP_FILESYSTEM=$FILESYSTEM"
}

case "${1:-}" in
provision) provision ;;
installed) [[ -f "$READY" ]] ;;
env) print_env ;;
*)
    echo "usage: $0 {provision|installed|env}" >&2
    exit 2
    ;;
esac

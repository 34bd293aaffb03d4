# Sourced by the scripts that start a local server (llama-server.sh, restate.sh, phoenix.sh): the
# server's process is known only by the pid they recorded in $PIDFILE, and a recorded pid counts
# only while it is still that server (the caller's `is_our_server PID`), so a recycled pid is
# never signalled.

# The recorded pid, when it is still our server; fails otherwise.
recorded_pid() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid=$(cat "$PIDFILE")
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    is_our_server "$pid" || return 1
    echo "$pid"
}

# Stops the recorded server: TERM, up to SECONDS (default 20) for it to exit, then KILL; the pid
# file goes either way. NAME is the script's name in the messages.
stop_recorded() {
    local name=$1 seconds=${2:-20} pid
    if ! pid=$(recorded_pid); then
        rm -f "$PIDFILE"
        echo "$name: not running" >&2
        return 0
    fi
    kill -TERM "$pid"
    for _ in $(seq 1 $((seconds * 4))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
    fi
    rm -f "$PIDFILE"
    echo "$name: stopped (pid $pid)" >&2
}

# Sourced by the scripts that start a local server (llama-server.sh, restate.sh, phoenix.sh,
# mcp-servers.sh): the server's process is known only by the pid they recorded in $PIDFILE, and a
# recorded pid counts only while it is still that server (the caller's `is_our_server PID`), so a
# recycled pid is never signalled. The caller also defines `answers` (whether the server answers
# on its port), `stop`, and $LOGFILE (the server's output) and $CACHE_DIR. model-fixtures.sh,
# which starts nothing, uses `provision_once` alone (with its `provision_locked` and $CACHE_DIR).

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

# Runs the caller's `provision_locked` holding $CACHE_DIR/.lock, so that concurrent provisioning
# (parallel tests, CI and a developer) installs once.
provision_once() {
    mkdir -p "$CACHE_DIR"
    exec 9>"$CACHE_DIR/.lock"
    flock 9
    provision_locked
    flock -u 9
}

# Whether the recorded server runs and answers.
running() {
    recorded_pid >/dev/null && answers >/dev/null 2>&1
}

# Before a start: succeeds (saying so) when the recorded server already answers at URL; exits
# with BUSY (what to change) when something this script did not start answers; fails otherwise.
already_running() {
    local name=$1 url=$2 busy=$3 pid
    if pid=$(recorded_pid) && answers >/dev/null 2>&1; then
        echo "$name: already running (pid $pid) at $url" >&2
        return 0
    fi
    if answers >/dev/null 2>&1; then
        echo "$name: $busy" >&2
        exit 1
    fi
    return 1
}

# Records PID, a server just started in the background, and waits until it answers, polling every
# 0.2 s for up to SECONDS. If it exits first, the last LINES (default 20) of $LOGFILE are shown
# and its pid file removed; if it does not answer in time, it is stopped. Either way the script
# exits, naming the log.
await_recorded() {
    local name=$1 pid=$2 seconds=$3 lines=${4:-20} waited=0
    echo "$pid" >"$PIDFILE"
    until answers >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n "$lines" "$LOGFILE" >&2 || true
            rm -f "$PIDFILE"
            echo "$name: the server exited before answering (log: $LOGFILE)" >&2
            exit 1
        fi
        if ((waited++ >= seconds * 5)); then
            stop
            echo "$name: the server did not answer within $seconds s (log: $LOGFILE)" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# `status`: "running (pid …) at WHERE" when the recorded server answers; "not running" (failing)
# otherwise.
recorded_status() {
    local where=$1 pid
    if pid=$(recorded_pid) && answers >/dev/null 2>&1; then
        echo "running (pid $pid) at $where"
    else
        echo "not running"
        return 1
    fi
}

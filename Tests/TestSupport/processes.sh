# Shell helpers shared by .ci/run and the suites under Tests/ (source this file): start a server on
# port 0 and read its port from its log, wait for an HTTP answer with a deadline, and stop a process
# this script started, with a bound. Nothing here touches a process it was not given.
#
# Every process a script starts in the background ends with the script (end_children): sourcing this
# file sets that as the EXIT trap, and makes SIGTERM, SIGINT and SIGHUP (a timeout's, Ctrl-C's, a
# closed terminal's) exit through it. A script with its own EXIT trap calls end_children in it.
#
# Bounds are measured on the monotonic clock (/proc/uptime), never with `date`: the wall clock of a
# virtual machine can be stepped by tens of seconds mid-run, which made a stop of a few milliseconds
# look like one that overran a 30 s bound.

# now_ms: milliseconds on a clock that never jumps (the kernel's uptime, 10 ms resolution).
now_ms() {
    local up
    read -r up _ < /proc/uptime
    echo $(( 10#${up/./} * 10 ))
}

# port_from_log LOG MARKER PID [SECONDS]: prints the number that follows MARKER (such as
# 'address=127.0.0.1:') in LOG once it appears; fails when PID exits first or SECONDS (10) pass.
port_from_log() {
    local log=$1 marker=${2//./\\.} pid=$3 limit=${4:-10} port
    local deadline=$(( $(now_ms) + limit * 1000 ))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        port=$(grep -oE "${marker}[0-9]+" "$log" 2>/dev/null | head -1 | grep -oE '[0-9]+$')
        if [ -n "$port" ]; then echo "$port"; return 0; fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# http_answers URL STATUS: true when URL answers STATUS now.
http_answers() {
    [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$1")" = "$2" ]
}

# wait_http URL [SECONDS] [STATUS]: returns once URL answers STATUS (200), fails after SECONDS (10).
wait_http() {
    wait_for "${2:-10}" http_answers "$1" "${3:-200}"
}

# gone PID: true once PID has exited (a zombie counts: its parent only has to reap it). The status is
# read once: a zombie reaped between two looks at /proc (an existence test, then a read) looked alive.
gone() {
    local state
    state=$(grep -s '^State:' "/proc/$1/status") || return 0
    [[ $state == *$'\t'Z* ]]
}

# describe_stuck PID: what a process that will not stop is doing (its command line, in case the PID
# now names another process; each thread's state and kernel wait; gdb's stacks when gdb is there).
describe_stuck() {
    local pid=$1 task
    echo "  command: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
    echo "  $(grep '^State' "/proc/$pid/status" 2>/dev/null)"
    for task in /proc/"$pid"/task/*; do
        echo "  thread $(basename "$task") $(cat "$task/comm" 2>/dev/null): $(grep '^State' "$task/status" 2>/dev/null | cut -f2) wchan=$(cat "$task/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$task/syscall" 2>/dev/null)"
    done
    if command -v gdb >/dev/null 2>&1; then
        timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' | head -150 | sed 's/^/  /'
    fi
}

# stop_process PID [SECONDS]: SIGTERM, then SIGKILL if PID still runs after SECONDS (5); reaps it
# when it is this shell's child. Returns PID's exit status when it stopped by itself, 137 after a
# SIGKILL (saying so on stderr).
stop_process() {
    local pid=$1 limit=${2:-5} status=0
    kill -TERM "$pid" 2>/dev/null || true
    local start wall_start deadline
    start=$(now_ms) wall_start=$(date +%s%N)
    deadline=$(( start + limit * 1000 ))
    while ! gone "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.02; done
    if ! gone "$pid"; then
        echo "process $pid did not stop within ${limit} s of SIGTERM ($(( $(now_ms) - start )) ms on the monotonic clock, $(( ($(date +%s%N) - wall_start) / 1000000 )) ms on the wall clock): SIGKILL" >&2
        describe_stuck "$pid" >&2
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null
        return 137
    fi
    wait "$pid" 2>/dev/null || status=$?
    # 127: not this shell's child, so its status is unknown; it did stop.
    [ "$status" = 127 ] && status=0
    return "$status"
}

# wait_for SECONDS COMMAND...: reruns COMMAND every 0.1 s until it succeeds (0); fails (1) once
# SECONDS pass on the monotonic clock. The way a script waits for an event: never a fixed sleep.
wait_for() {
    local deadline=$(( $(now_ms) + $1 * 1000 ))
    shift
    until "$@"; do
        [ "$(now_ms)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# window SECONDS [PID...]: lets SECONDS pass on the monotonic clock, in steps of 0.1 s, and fails
# (1) as soon as one of PIDs has exited. For a deliberate measurement window or load rhythm (a
# sampling period, a soak's fault cycle, a rate measured over time), never to wait for an event:
# use wait_for for that. SECONDS may be fractional.
window() {
    local end pid
    end=$(( $(now_ms) + $(awk -v s="$1" 'BEGIN { printf "%d", s * 1000 }') ))
    shift
    while [ "$(now_ms)" -lt "$end" ]; do
        for pid in "$@"; do gone "$pid" && return 1; done
        sleep 0.1
    done
    for pid in "$@"; do gone "$pid" && return 1; done
    return 0
}

# end_children: SIGTERM to every background job this shell started and has not reaped, SIGKILL to
# those still there 2 s later. For the EXIT trap: a suite ended by a timeout leaves no exporter,
# simulator or Prometheus behind holding ports and a core. Only this shell's own jobs, by pid.
end_children() {
    local pids pid deadline
    pids=$(jobs -pr)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    deadline=$(( $(now_ms) + 2000 ))
    for pid in $pids; do
        while ! gone "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
        gone "$pid" || kill -KILL "$pid" 2>/dev/null
    done
    return 0
}

trap end_children EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

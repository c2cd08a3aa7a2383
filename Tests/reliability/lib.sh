# Shared by run.sh and soak.sh: build, start exporters on loopback, read /proc, clean up.
# Every process started through start_exporter is killed on exit.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/Tests/reliability"
source "$ROOT/Tests/TestSupport/processes.sh"
WORK=$(mktemp -d /tmp/owe-reliability.XXXXXX)
STARTED=()
FAILURES=()
SUMMARY=()

cleanup() {
    for pid in "${STARTED[@]}"; do stop_process "$pid" 2 >/dev/null 2>&1; done
    rm -rf "$WORK"
    end_children
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n--- %s\n' "$*"; }
pass() { SUMMARY+=("PASS  $*"); echo "PASS: $*"; }
failed() { FAILURES+=("$*"); SUMMARY+=("FAIL  $*"); echo "FAIL: $*"; }

install_tools() {
    local missing=()
    for tool in wrk:wrk python3:python3 curl:curl prlimit:util-linux openssl:openssl htpasswd:apache2-utils; do
        command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

build_release() {
    (cd "$ROOT" && swift build -c release -Xswiftc -warnings-as-errors >/dev/null)
    BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/openweather-exporter"
}

# start_exporter NAME [prefix command...] -- [flags...]: runs the release binary in demo mode on
# an ephemeral loopback port; sets PID, PORT and SIM (the demo simulator's port); log in $WORK/NAME.log.
# Fails, with the log, when it does not start.
start_exporter() {
    local name=$1; shift
    local prefix=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do prefix+=("$1"); shift; done
    [ "${1:-}" = "--" ] && shift
    local log="$WORK/$name.log"
    "${prefix[@]}" "$BIN" --demo --web.listen-address=127.0.0.1:0 "$@" 2>"$log" &
    PID=$!
    STARTED+=("$PID")
    if ! PORT=$(port_from_log "$log" 'address=127.0.0.1:' "$PID" 10) \
        || ! SIM=$(port_from_log "$log" 'simulator=http://127.0.0.1:' "$PID" 10); then
        cat "$log"
        echo "the exporter $name did not start"
        return 1
    fi
}

# wait_ready PORT [SECONDS]: until /-/ready answers 200 (60 s by default).
wait_ready() { wait_http "http://127.0.0.1:$1/-/ready" "${2:-60}"; }

# stop_exporter PID: SIGTERM, SIGKILL after 5 s; fails unless it exited 0 by itself.
stop_exporter() { stop_process "$1" 5; }

# settle_fds PID: waits (up to 10 s) until PID's descriptor count holds still for half a second.
settle_fds() {
    local last=-1 same=0 now deadline=$(( $(now_ms) + 10000 ))
    while [ "$(now_ms)" -lt "$deadline" ] && [ "$same" -lt 10 ]; do
        now=$(fd_count "$1")
        if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; last=$now; fi
        sleep 0.05
    done
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
fd_count() { ls "/proc/$1/fd" | wc -l; }
fault() { curl -sf --max-time 5 -X POST "http://127.0.0.1:$1/_simulator/fault?$2" >/dev/null; }
clear_faults() { curl -sf --max-time 5 -X DELETE "http://127.0.0.1:$1/_simulator/fault" >/dev/null; }

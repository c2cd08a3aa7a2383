# Shared by run.sh and soak.sh: build, start exporters on loopback, read /proc, clean up.
# Every process started through start_exporter is killed on exit.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/Tests/reliability"
WORK=$(mktemp -d /tmp/owe-reliability.XXXXXX)
STARTED=()
FAILURES=()
SUMMARY=()

cleanup() {
    for pid in "${STARTED[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
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
start_exporter() {
    local name=$1; shift
    local prefix=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do prefix+=("$1"); shift; done
    [ "${1:-}" = "--" ] && shift
    local log="$WORK/$name.log"
    "${prefix[@]}" "$BIN" --demo --web.listen-address=127.0.0.1:0 "$@" 2>"$log" &
    PID=$!
    STARTED+=("$PID")
    PORT=""; SIM=""
    for _ in $(seq 200); do
        PORT=$(grep -o 'address=127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
        SIM=$(grep -o 'simulator=http://127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f3 || true)
        [ -n "$PORT" ] && [ -n "$SIM" ] && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$PORT" ] || [ -z "$SIM" ]; then
        cat "$log"
        echo "the exporter $name did not start"
        return 1
    fi
}

wait_ready() {
    for _ in $(seq "${2:-600}"); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/-/ready")" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}

stop_exporter() {
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
fd_count() { ls "/proc/$1/fd" | wc -l; }
fault() { curl -sf -X POST "http://127.0.0.1:$1/_simulator/fault?$2" >/dev/null; }
clear_faults() { curl -sf -X DELETE "http://127.0.0.1:$1/_simulator/fault" >/dev/null; }

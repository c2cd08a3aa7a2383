#!/usr/bin/env bash
# Issue 40's listeners end to end, against the built binary ($BIN): systemd's socket activation by
# systemd-socket-activate (two listening sockets handed over; /metrics through each, the health check
# finding the exporter by its inherited sockets in /proc), and what a wrong handover gets: no
# variables, the sockets of another process, LISTEN_FDS=100, a descriptor that is not a socket, a
# socket that is not listening, a datagram socket, fewer descriptors than LISTEN_FDS says. Each wrong
# one must exit 2 at once with a line that names the cause.
#
#   BIN=.build/release/openweather-exporter bash Tests/reliability/listeners.sh
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
: "${BIN:?set BIN to the exporter binary (run.sh does)}"
if ! command -v systemd-socket-activate >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi
command -v systemd-socket-activate >/dev/null 2>&1 || { echo "systemd-socket-activate could not be installed (apt-get install systemd)"; exit 1; }

# A copy of its own: the health check looks for processes of its own executable, and run.sh's other
# exporters (the budget's runs throughout) would answer for this one.
dir="$WORK/listeners"
mkdir -p "$dir"
cp "$BIN" "$dir/openweather-exporter"
BIN="$dir/openweather-exporter"

# free_ports N: N loopback ports nothing listens on now.
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in held])
PY
}

step "systemd-socket-activate hands over two sockets; --web.listen-address is then not used"
read -r p1 p2 p3 < <(free_ports 3)
log="$WORK/activated.log"
# It execs the exporter in its own process at the first connection, so $PID becomes the exporter.
systemd-socket-activate -l "127.0.0.1:$p1" -l "127.0.0.1:$p2" \
    "$BIN" --demo --web.systemd-socket --web.listen-address="127.0.0.1:$p3" 2>"$log" &
PID=$!
STARTED+=("$PID")
if wait_http "http://127.0.0.1:$p1/-/ready" 60; then
    [ "$(readlink "/proc/$PID/exe")" = "$BIN" ] && pass "the exporter runs in the process the sockets were handed to" ||
        failed "process $PID runs $(readlink "/proc/$PID/exe"), not the exporter"
    grep -q "address=127.0.0.1:$p1,127.0.0.1:$p2 " "$log" && pass "the startup line names both sockets" ||
        failed "the startup line does not name 127.0.0.1:$p1,127.0.0.1:$p2: $(grep 'starting' "$log")"
    grep -q -- "--web.listen-address is not used: --web.systemd-socket serves on the sockets systemd hands over" "$log" &&
        ! curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$p3/" &&
        pass "--web.listen-address is not used (as the toolkit does), and a warning says so" ||
        failed "--web.listen-address beside --web.systemd-socket: listened on, or no warning"
    for port in "$p1" "$p2"; do
        scraped=$(curl -s --max-time 10 "http://127.0.0.1:$port/metrics")
        grep -q 'openweather_temperature_celsius{location="Sydney"}' <<<"$scraped" &&
            pass "/metrics through the handed-over socket 127.0.0.1:$port ($(grep -vc '^#' <<<"$scraped") series)" ||
            failed "/metrics through 127.0.0.1:$port: no demo data"
    done
    said=$(timeout 30 "$BIN" healthcheck); status=$?
    [ "$status" = 0 ] && grep -qE "127\.0\.0\.1:($p1|$p2)/-/healthy answered 200" <<<"$said" &&
        pass "healthcheck with no flags finds the inherited sockets in /proc: $said" ||
        failed "healthcheck with no flags: exit $status: $said"
    said=$(timeout 30 "$BIN" healthcheck --web.systemd-socket --web.listen-address="127.0.0.1:$p3"); status=$?
    [ "$status" = 0 ] && pass "healthcheck given the exporter's own flags looks in /proc too: $said" ||
        failed "healthcheck --web.systemd-socket: exit $status: $said"
    stop_exporter "$PID" || failed "the socket-activated exporter: no clean exit on SIGTERM"
else
    cat "$log"
    failed "the socket-activated exporter did not become ready"
fi

# refused NAME EXPECTED COMMAND...: COMMAND must exit 2 within 10 s, its error naming EXPECTED.
refused() {
    local name=$1 expected=$2; shift 2
    local said status
    said=$(timeout 10 "$@" 2>&1 >/dev/null); status=$?
    if [ "$status" = 2 ] && grep -qF -- "$expected" <<<"$said"; then
        pass "$name: exit 2, ${said:0:260}"
    else failed "$name: exit $status (2 wanted), said: ${said:0:400}"; fi
}

# handover.py BINARY KIND: execs the exporter in its own process with descriptor 3 (and 4) of KIND
# and the variables naming that process.
cat >"$dir/handover.py" <<'PY'
import os, socket, sys
binary, kind = sys.argv[1], sys.argv[2]
count = 1
if kind == "unlistened":
    s = socket.socket(); s.bind(("127.0.0.1", 0))
elif kind == "datagram":
    s = socket.socket(type=socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
elif kind == "one-of-two":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); count = 2
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.closerange(4, 64)
env = {"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": str(count)}
os.execve(binary, [binary, "--demo", "--web.systemd-socket"], env)
PY

step "wrong handovers: each refused at once, saying why"
refused "no variables" 'systemd-socket: $LISTEN_PID and $LISTEN_FDS are not set' \
    env -u LISTEN_PID -u LISTEN_FDS "$BIN" --demo --web.systemd-socket
refused "LISTEN_PID of another process" 'the sockets are for process 1 ($LISTEN_PID), not this one' \
    env LISTEN_PID=1 LISTEN_FDS=1 "$BIN" --demo --web.systemd-socket
refused "LISTEN_FDS=100" '$LISTEN_FDS=100 is not a count of sockets from 1 to 64' \
    bash -c 'LISTEN_PID=$$ LISTEN_FDS=100 exec "$0" --demo --web.systemd-socket' "$BIN"
refused "a descriptor that is not a socket (/dev/null)" \
    'cannot serve on descriptor 3 of systemd ($LISTEN_FDS): it is a character device, not a socket' \
    bash -c 'exec 3</dev/null; LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --demo --web.systemd-socket' "$BIN"
refused "a socket that is not listening" \
    'cannot serve on descriptor 3 of systemd ($LISTEN_FDS): it is not listening: systemd hands over a listening socket only with Accept=no' \
    python3 "$dir/handover.py" "$BIN" unlistened
refused "a datagram socket" 'it is not a stream socket: the socket unit must use ListenStream=' python3 "$dir/handover.py" "$BIN" datagram
refused "LISTEN_FDS=2 with one descriptor open (the demo's simulator must not take the other)" '$LISTEN_FDS=2 names descriptor 4, which is not open' \
    python3 "$dir/handover.py" "$BIN" one-of-two

printf '\n=== listeners summary\n'
printf '%s\n' "${SUMMARY[@]}"
[ ${#FAILURES[@]} -eq 0 ]

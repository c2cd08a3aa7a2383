#!/usr/bin/env bash
# Issue 38's health check cases end to end, against the built binary ($BIN), as root: a planted
# /proc/PID/net/tcp of 60,000 listening rows naming the exporter's socket (the whole check within
# --timeout=1s, and a short answer), and an exporter in another network namespace (ip netns) with
# something else answering 200 on its port where the check runs: asked inside its namespace, stopped
# or not; refused, saying why, by a check without the right to enter it.
#
#   BIN=.build/release/openweather-exporter bash Tests/reliability/healthcheck.sh
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
: "${BIN:?set BIN to the exporter binary (run.sh does)}"
if [ "$(id -u)" != 0 ]; then
    echo "  (not root: a bind mount over /proc and network namespaces need root; skipped)"
    exit 0
fi

# A copy of its own, readable by nobody: the check looks for processes of its own executable, and
# run.sh's other exporters (the budget's runs throughout) would answer for these.
dir="$WORK/healthcheck"
mkdir -p "$dir"
chmod 755 "$WORK" "$dir"
cp "$BIN" "$dir/openweather-exporter"
BIN="$dir/openweather-exporter"
check() { timeout 60 "$@" "$BIN" healthcheck --timeout="$timeout"; }

step "healthcheck: a /proc/PID/net/tcp of 60,000 listening rows naming the exporter's socket (bind-mounted)"
if start_exporter planted --; then
    hex=$(printf '%04X' "$PORT")
    inode=$(awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10; exit }' "/proc/$PID/net/tcp")
    mkdir "$dir/net"
    python3 - "$inode" >"$dir/net/tcp" <<'PY'
import sys
print("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode")
for n in range(60000):
    host = "%08X" % int.from_bytes((0x7F000000 + n).to_bytes(4, "big"), "little")
    print("%4d: %s:2623 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 %s 1 0 100 0 0 10 0"
          % (n, host, sys.argv[1]))
PY
    started=$(now_ms)
    said=$(timeout 60 unshare --mount --propagation private \
        bash -c 'mount --bind "$1" "/proc/$2/net" && exec "$3" healthcheck --timeout=1s' _ "$dir/net" "$PID" "$BIN")
    status=$?
    took=$(( $(now_ms) - started ))
    echo "  exit $status in $took ms, ${#said} bytes: ${said:0:300}"
    if [ "$status" = 1 ] && [ "$took" -lt 2000 ] && [ "${#said}" -le 4096 ] && grep -q "more than 8 listening sockets" <<<"$said"; then
        pass "healthcheck --timeout=1s with a planted table of 60,000 rows: exit 1 in $took ms, ${#said} bytes (was 14.4 s and 4.4 MB)"
    else failed "healthcheck with a planted table of 60,000 rows: exit $status in $took ms, ${#said} bytes"; fi
    stop_exporter "$PID" || failed "the exporter under the planted table: no clean exit on SIGTERM"
else failed "healthcheck with a planted table: the exporter did not start"; fi

step "healthcheck: an exporter in another network namespace, something else answering 200 on its port here"
ns="owe-healthcheck-$$"
trap 'ip netns delete "$ns" 2>/dev/null; cleanup' EXIT
ip netns add "$ns" && ip -n "$ns" link set lo up || failed "ip netns add $ns"
# The decoy: 200 to anything, on a port of this namespace that the exporter then takes in its own.
python3 -u - >"$dir/decoy.port" <<'PY' &
import http.server
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
print(server.server_address[1])
server.serve_forever()
PY
decoy=$!
STARTED+=("$decoy")
wait_for 10 test -s "$dir/decoy.port"
port=$(cat "$dir/decoy.port")
in_namespace() {
    local name=$1; shift
    ip netns exec "$ns" "$@" "$BIN" --demo --web.listen-address="127.0.0.1:$port" 2>"$WORK/$name.log" &
    PID=$!
    STARTED+=("$PID")
    port_from_log "$WORK/$name.log" 'address=127.0.0.1:' "$PID" 10 >/dev/null
}
if http_answers "http://127.0.0.1:$port/-/healthy" 200 && in_namespace away; then
    timeout=3s
    said=$(check); status=$?
    [ "$status" = 0 ] && grep -q "/-/healthy (in the network namespace of process $PID) answered 200" <<<"$said" &&
        pass "the exporter in $ns is asked there: $said" || failed "the exporter in $ns: exit $status: $said"
    # Stopped, it keeps its socket and answers nothing; the decoy here would answer 200.
    kill -STOP "$PID"
    said=$(check); status=$?
    kill -CONT "$PID"
    [ "$status" = 1 ] && grep -q "(in the network namespace of process $PID): request timed out" <<<"$said" &&
        pass "the exporter in $ns stopped (SIGSTOP): unhealthy, though port $port answers 200 here: ${said:0:200}" ||
        failed "the exporter in $ns stopped: exit $status: $said"
    stop_exporter "$PID" || failed "the exporter in $ns: no clean exit on SIGTERM"
    # Without CAP_SYS_ADMIN the namespace cannot be entered: the check says so and fails.
    nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    if in_namespace nobody "${nobody[@]}"; then
        said=$(check "${nobody[@]}"); status=$?
        [ "$status" = 1 ] && grep -q "which this check cannot enter (Operation not permitted: entering needs CAP_SYS_ADMIN)" <<<"$said" &&
            pass "a check without CAP_SYS_ADMIN refuses to judge the exporter in $ns: ${said:0:240}" ||
            failed "a check without CAP_SYS_ADMIN: exit $status: $said"
        stop_exporter "$PID" || failed "the exporter in $ns as nobody: no clean exit on SIGTERM"
    else cat "$WORK/nobody.log"; failed "the exporter as nobody in $ns did not start"; fi
else cat "$WORK/away.log" 2>/dev/null; failed "the decoy or the exporter in $ns did not start"; fi
stop_process "$decoy" 2 >/dev/null 2>&1

printf '\n=== healthcheck summary\n'
printf '%s\n' "${SUMMARY[@]}"
[ ${#FAILURES[@]} -eq 0 ]

#!/usr/bin/env bash
# Issue 27's hostile cases end to end, against the built binary ($BIN; run.sh's release build):
# backfill writing with a planted link, FIFO or device at its output and a corrupt kept range; an
# endless stream of One Call 4.0 alert texts (the simulator's alerts=endless) with the resident
# memory and the state file bounded; an upstream echoing the key altered, none of it in the log.
#
#   BIN=.build/release/openweather-exporter bash Tests/reliability/hostile.sh [ENDLESS_SECONDS]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
: "${BIN:?set BIN to the exporter binary (run.sh does)}"
ENDLESS_SECONDS=${1:-90}
KEY=9f86d081884c7d659a2feaa0c55ad015

step "backfill: a link planted at OUTPUT.tmp, a FIFO or a device as --output, a corrupt range"
bf="$WORK/backfill"; mkdir -p "$bf"
backfill() { timeout 120 "$BIN" backfill --demo --openweather.max-requests-per-minute=6000 --location "A=44.34,10.99" "$@"; }
echo "precious" > "$bf/victim"
ln -s "$bf/victim" "$bf/history.om.tmp"
if backfill --since=2h --output="$bf/history.om" 2>"$bf/link.log" && [ "$(cat "$bf/victim")" = precious ] \
    && [ -L "$bf/history.om.tmp" ] && [ -f "$bf/history.om" ] && [ "$(tail -1 "$bf/history.om")" = "# EOF" ]; then
    pass "backfill with a link planted at OUTPUT.tmp: the output written, the link's target untouched"
else cat "$bf/link.log"; failed "backfill wrote through a planted link (or did not write)"; fi

mkfifo "$bf/fifo.om"
backfill --since=2h --output="$bf/fifo.om" 2>"$bf/fifo.log"; status=$?
if [ "$status" = 2 ] && grep -q "exists and is a FIFO" "$bf/fifo.log" && [ -p "$bf/fifo.om" ]; then
    pass "backfill --output=FIFO: refused with a message and exit 2, the FIFO left as it was"
else cat "$bf/fifo.log"; failed "backfill --output=FIFO (exit $status)"; fi

if [ "$(id -u)" = 0 ] && mknod "$bf/null.om" c 1 3 2>/dev/null; then
    backfill --since=2h --output="$bf/null.om" 2>"$bf/device.log"; status=$?
    if [ "$status" = 2 ] && grep -q "exists and is a device" "$bf/device.log" && [ -c "$bf/null.om" ]; then
        pass "backfill --output=DEVICE as root (a copy of /dev/null): refused, the device left as it was"
    else cat "$bf/device.log"; failed "backfill --output=DEVICE (exit $status)"; fi
else echo "  (not root: the device case needs mknod; the FIFO case covers the same check)"; fi

if [ "$(backfill --since=2h --output=- 2>"$bf/stdout.log" | tail -1)" = "# EOF" ] && [ ! -e "-.partial" ]; then
    pass "backfill --output=-: the file on standard output, nothing kept on disk"
else cat "$bf/stdout.log"; failed "backfill --output=-"; fi

for range in "from=1e300 until=1764590400 weather=true air_pollution=true" "from=nan until=1764590400 weather=true air_pollution=true" \
    "from=1 until=1764590400 weather=true air_pollution=true"; do
    rm -rf "$bf/range.om.partial"; mkdir -m 700 "$bf/range.om.partial"; echo "$range" > "$bf/range.om.partial/range"
    start=$(now_ms)
    backfill --since=2h --output="$bf/range.om" 2>"$bf/range.log"; status=$?
    if [ "$status" = 1 ] && grep -q "to start afresh" "$bf/range.log" && [ $(( $(now_ms) - start )) -lt 20000 ]; then
        pass "backfill with a kept range '$range': refused in $(( $(now_ms) - start )) ms"
    else cat "$bf/range.log"; failed "backfill with a kept range '$range' (exit $status)"; fi
done

/usr/bin/time -f '%M %e' -o "$bf/since.time" "$BIN" backfill --demo --location "A=44.34,10.99" --since=31000y --output="$bf/since.om" 2>"$bf/since.log"
status=$?; read -r peak seconds < <(tail -1 "$bf/since.time") || { peak=0; seconds=0; }
if [ "$status" = 2 ] && grep -q "before 1979-01-01" "$bf/since.log" && [ "${peak:-0}" -lt 200000 ]; then
    pass "backfill --since=31000y: refused with exit 2 before sizing anything (peak RSS ${peak} kB, ${seconds} s)"
else cat "$bf/since.log"; failed "backfill --since=31000y (exit $status, peak RSS ${peak} kB)"; fi

step "One Call 4.0 answers listing 16 new alert IDs a poll, each a 200 KB text until 2100, for ${ENDLESS_SECONDS} s"
mkdir -m 700 "$WORK/endless-state"
if ! { start_exporter endless -- --collector.onecall4 --collector.onecall4.interval=15s --openweather.max-requests-per-minute=100000 \
        --storage.path="$WORK/endless-state" --location "Tulsa=36.154,-95.9928" --location "Zocca=44.34,10.99" && wait_ready "$PORT"; }; then
    failed "endless alert texts: the exporter did not start"
else
    curl -sf -X POST "http://127.0.0.1:$SIM/_simulator/onecall?alerts=endless" >/dev/null
    peak=0; deadline=$(( $(now_ms) + ENDLESS_SECONDS * 1000 ))
    while [ "$(now_ms)" -lt "$deadline" ] && kill -0 "$PID" 2>/dev/null; do
        rss=$(rss_kb "$PID"); [ "$rss" -gt "$peak" ] && peak=$rss
        sleep 2
    done
    texts=$(curl -s "http://127.0.0.1:$SIM/_simulator/requests" | grep -c "/alert/ENDLESS-" || true)
    alerts=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c '^openweather_weather_alert_info{location="Tulsa"' || true)
    stop_exporter "$PID" || failed "endless alert texts: no clean exit on SIGTERM"
    state=$(stat -c %s "$WORK/endless-state/openweather-exporter.state" 2>/dev/null || echo 0)
    echo "  alert texts served: $texts; Tulsa's alerts shown: $alerts; peak RSS ${peak} kB; state file ${state} bytes"
    if [ "$texts" -ge 32 ] && [ "$alerts" -le 16 ] && [ "$peak" -lt 80000 ] && [ "$state" -gt 0 ] && [ "$state" -lt 2000000 ]; then
        pass "endless alert texts ($texts served, 200 KB each): peak RSS ${peak} kB, state file ${state} bytes, at most 16 alerts a place"
    else failed "endless alert texts: $texts served, peak RSS ${peak} kB, state file ${state} bytes, $alerts alerts"; fi
fi

step "an upstream echoing the key altered (cut with ..., … or \", its end first, upper case, base64, twice percent-encoded, a line break)"
b64=$(printf 'appid=%s' "$KEY" | base64 -w0)
twice=$(printf '%s' "$KEY" | od -An -tx1 | tr -d ' \n' | sed 's/../%25&/g')
echoes=("Invalid API key ${KEY:0:22}..." "Invalid API key ${KEY:0:23}…" "appid=\\\"${KEY:0:24}\\\" is wrong" "${KEY:10} is not a key"
    "KEY ${KEY^^} REFUSED" "auth $b64 refused" "GET /data/2.5/weather?appid=$twice" "key ${KEY:0:9}\\n${KEY:9} refused")
locations=()
for index in "${!echoes[@]}"; do locations+=(--location "P$index=$((10 + index)),20"); done
if ! OPENWEATHER_API_KEY=$KEY start_exporter echo -- --collector.weather.interval=1m --no-collector.forecast --no-collector.air_pollution \
        --openweather.max-requests-per-minute=6000 "${locations[@]}"; then
    failed "key echoes: the exporter did not start"
else
    for index in "${!echoes[@]}"; do
        curl -sf -X POST --data-binary "{\"cod\":400,\"message\":\"${echoes[$index]}\"}" \
            "http://127.0.0.1:$SIM/_simulator/fault?status=400&lat=$((10 + index))&path=/data/2.5/weather" >/dev/null
    done
    # The faults are set after the first round: the next round (1 min) meets them.
    for _ in $(seq 150); do
        [ "$(grep -c 'code=400' "$WORK/echo.log")" -ge "${#echoes[@]}" ] && break
        sleep 1
    done
    curl -s "http://127.0.0.1:$PORT/metrics" > "$WORK/echo.metrics"
    stop_exporter "$PID" || failed "key echoes: no clean exit on SIGTERM"
    failures=$(grep -c 'code=400' "$WORK/echo.log")
    if [ "$failures" -ge "${#echoes[@]}" ] && python3 - "$KEY" "$WORK/echo.log" "$WORK/echo.metrics" <<'EOF'
import base64, re, sys
key = sys.argv[1]
windows = {key[i:i + 8] for i in range(len(key) - 7)}
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8", errors="replace").read()
    views = [text.replace("\\n", "").replace("\n", "").lower()]
    views.append(re.sub(r"%([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), views[0]))
    views.append(re.sub(r"%([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), views[1]))
    for run in re.findall(r"[A-Za-z0-9+/]{12,}", text):
        for skip in range(4):
            part = run[skip:]
            part = part[:len(part) - len(part) % 4]
            views.append(base64.b64decode(part).decode("latin-1").lower())
    found = [w for w in windows for v in views if w in v]
    if found:
        print(f"  {path}: holds {sorted(set(found))[:3]}")
        sys.exit(1)
EOF
    then
        grep 'code=400' "$WORK/echo.log" | head -8 | cut -c1-220 | sed 's/^/  /'
        pass "an upstream echoing the key altered 8 ways: no 8 characters of it in the log or /metrics, in any view"
    else failed "key echoes: $failures failures logged, or the key (8 characters or more) in the log or /metrics"; fi
fi

printf '\n=== hostile summary\n'
printf '%s\n' "${SUMMARY[@]}"
[ ${#FAILURES[@]} -eq 0 ]

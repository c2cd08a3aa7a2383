#!/usr/bin/env bash
# The soak: the exporter under steady scraping, with upstream failures of every kind switched on
# and off, for SOAK_MINUTES (default 10). Resident memory and open descriptors are sampled every
# 10 s and must end near where they started (after a warm-up).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
minutes=${SOAK_MINUTES:-10}
seconds=$(python3 -c "print(int(float('$minutes') * 60))")
if [ -z "${BIN:-}" ]; then install_tools; build_release; fi
ulimit -n "$(ulimit -Hn)"

start_exporter soak -- --collector.weather.interval=2s --openweather.timeout=1s --web.idle-timeout=5s \
    --openweather.max-requests-per-minute=600
wait_ready "$PORT" || { echo "not ready"; exit 1; }
echo "soak: $minutes min, exporter pid $PID, port $PORT, simulator $SIM"
python3 "$HERE/clients.py" scrape-loop "$PORT" 20 20 >/dev/null  # warm-up
rss0=$(rss_kb "$PID"); fd0=$(fd_count "$PID")
echo "  start: RSS ${rss0} kB, ${fd0} fds"

python3 "$HERE/clients.py" scrape-loop "$PORT" "$seconds" 20 > "$WORK/scrapes.out" &
scraper=$!
STARTED+=("$scraper")  # stopped by the cleanup should anything below fail
# The too-large body is 1 MB (4 times the client's cap) rather than 20 MB: the demo's simulator runs
# in the exporter's process, and its own 20 MB answers leave a high-water mark of about 40 MB in the
# allocator that is not the exporter's (PollerTests prove the 20 MB case).
faults=("status=500" "status=503" "malformed=truncated" "malformed=notJSON" "malformed=nan" "delay=3s"
        "trickle=300ms" "close=1" "huge=1000000" "status=401" "status=429&retry_after=3" "status=404&lat=51.51")
deadline=$(( $(now_ms) + seconds * 1000 ))
i=0
samples=()
# The soak's rhythm (a fault for 4 s, then 6 s without) is the load it measures under, not a wait
# for an event: windows, which end at once should the exporter exit. (The scraper stops by itself
# at the deadline, which the last cycle may pass.)
died() { echo "FAIL: the exporter exited during the soak"; tail "$WORK/soak.log"; exit 1; }
while [ "$(now_ms)" -lt "$deadline" ]; do
    clear_faults "$SIM" || { echo "FAIL: the simulator does not answer"; exit 1; }
    fault "$SIM" "${faults[$(( i % ${#faults[@]} ))]}" || { echo "FAIL: the simulator refused a fault"; exit 1; }
    window 4 "$PID" || died
    clear_faults "$SIM" || { echo "FAIL: the simulator does not answer"; exit 1; }
    window 6 "$PID" || died
    i=$((i + 1))
    samples+=("$(rss_kb "$PID")/$(fd_count "$PID")")
    kill -0 "$PID" 2>/dev/null || { echo "FAIL: the exporter died"; cat "$WORK/soak.log" | tail; exit 1; }
done
status=0
# The scraper stops by itself at the deadline; bounded all the same.
stop_after=$(( $(now_ms) + 60000 ))
while ! gone "$scraper" && [ "$(now_ms)" -lt "$stop_after" ]; do sleep 0.1; done
gone "$scraper" || { echo "FAIL: the scraper did not finish"; status=1; kill -KILL "$scraper" 2>/dev/null; }
wait "$scraper" || status=1
cat "$WORK/scrapes.out"
# The scraper's idle keep-alive connections close at the 5 s idle timeout: wait for the count to come back.
fds_back=$(( $(now_ms) + 15000 ))
while [ "$(fd_count "$PID")" -gt $((fd0 + 4)) ] && [ "$(now_ms)" -lt "$fds_back" ]; do sleep 0.1; done
rss1=$(rss_kb "$PID"); fd1=$(fd_count "$PID")
echo "  samples (RSS kB/fds every 10 s): ${samples[*]}"
echo "  end:   RSS ${rss1} kB, ${fd1} fds"
curl -s --max-time 10 "http://127.0.0.1:$PORT/metrics" | grep '^openweather_api_requests_total' | sed 's/^/  /' || true
if [ "$fd1" -gt $((fd0 + 4)) ]; then echo "FAIL: descriptors grew from $fd0 to $fd1"; status=1; fi
if [ "$rss1" -gt $((rss0 * 6 / 5 + 3072)) ]; then echo "FAIL: RSS grew from $rss0 kB to $rss1 kB"; status=1; fi
stop_exporter "$PID" || { echo "FAIL: no clean exit on SIGTERM"; status=1; }
exit $status

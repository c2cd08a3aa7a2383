#!/usr/bin/env bash
# Serving /metrics at four body sizes against nginx serving the same bytes from a file (issue 28).
# run.sh calls it; it also runs alone:
#
#   Tests/bench/serving.sh            (builds the release binary unless BIN is set)
#
# Sizes: about 20 KB (10 places, weather only), the shipped defaults (weather and forecast) for 10
# and for 40 places, and about 1 MB (130 places). Each exporter runs in demo mode (its simulator in
# process, polling every 10 minutes so it stays quiet); its exposition is saved to nginx's root and
# both serve it to `wrk -t2 -c64` with keep-alive and no Accept-Encoding, nginx then the exporter,
# BENCH_SERVE_ROUNDS times. The machine is shared, so each round's exporter/nginx ratio is taken and
# the median of them reported, with each server's CPU time per request (which the load moves less).
#
# Environment:
#   BIN=path                 the exporter binary
#   BENCH_DURATION=5         seconds per wrk run
#   BENCH_SERVE_ROUNDS=3     nginx/exporter rounds per size
#   BENCH_SERVING_OUT=path   markdown table (default: printed)
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/TestSupport/processes.sh
DURATION=${BENCH_DURATION:-5}
ROUNDS=${BENCH_SERVE_ROUNDS:-3}
TOOL="python3 Tests/bench/benchtool.py"
step() { printf '=== %s\n' "$*" >&2; }
for tool in wrk nginx curl python3; do
    command -v $tool >/dev/null || { echo "$tool is missing: apt-get install -y wrk nginx-light curl python3" >&2; exit 1; }
done
if [ -z "${BIN:-}" ]; then
    swift build -c release >&2
    BIN=$(swift build -c release --show-bin-path)/openweather-exporter
fi

WORK=$(mktemp -d /tmp/owe-serving.XXXXXX)
chmod 755 "$WORK"  # nginx workers run as www-data
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do stop_process "$pid" 5 >/dev/null 2>&1 || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

NGX_PORT=$($TOOL free-port)
mkdir -p "$WORK/nginx/root"
$TOOL nginx-conf "$WORK/nginx" "$NGX_PORT"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
NGX_PID=$!
PIDS+=($NGX_PID)

QUIET=(--collector.weather.interval=10m --collector.forecast.interval=10m --openweather.max-requests-per-minute=100000)
# The shipped defaults: the collectors --demo turns on beyond them are turned off again, read from
# --help ("default: disabled; enabled with --demo") so a new demo-only source needs no edit here.
mapfile -t SHIPPED < <("$BIN" --help 2>&1 | awk '
    /^  --collector\.[a-z0-9_]+$/ { name = $1 }
    /\(default: disabled; enabled with --demo\)/ { sub(/^--collector\./, "--no-collector.", name); print name }')
[ "${#SHIPPED[@]}" -gt 0 ] || { echo "no demo-only collector found in $BIN --help; the shipped defaults are unknown" >&2; exit 1; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for size in "weather-10 10 --no-collector.forecast" "shipped-10 10" "shipped-40 40" "shipped-130 130"; do
    read -r name places flag <<<"$size"
    places_args=()
    for i in $(seq 0 $((places - 1))); do
        places_args+=(--location "City $i=$(( (i * 17) % 160 - 80 )).25,$(( (i * 35) % 340 - 170 )).5")
    done
    step "serving: $name ($places places)"
    "$BIN" --web.listen-address=127.0.0.1:0 --demo "${SHIPPED[@]}" "${QUIET[@]}" ${flag:+"$flag"} "${places_args[@]}" >"$WORK/$name.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    port=$(port_from_log "$WORK/$name.log" 'address=127.0.0.1:' "$pid" 10) || { cat "$WORK/$name.log" >&2; exit 1; }
    $TOOL wait "http://127.0.0.1:$port/-/ready" 60
    has_process_part() {
        curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >"$WORK/nginx/root/$name" && grep -q '^process_cpu_seconds_total ' "$WORK/nginx/root/$name"
    }
    wait_for 10 has_process_part || { echo "no process metrics after 10 s" >&2; exit 1; }
    bytes=$(wc -c <"$WORK/nginx/root/$name")
    $TOOL wait "http://127.0.0.1:$NGX_PORT/$name" 10
    : >"$WORK/rounds.txt"
    : >"$WORK/p99.txt"
    for _ in $(seq 1 "$ROUNDS"); do
        for target in nginx exporter; do
            if [ $target = nginx ]; then
                url="http://127.0.0.1:$NGX_PORT/$name"; c0=$($TOOL cpu-tree "$NGX_PID")
            else
                url="http://127.0.0.1:$port/metrics"; c0=$($TOOL cpu "$pid")
            fi
            wrk -t2 -c64 -d"${DURATION}s" --latency "$url" >"$WORK/wrk.txt"
            if [ $target = nginx ]; then c1=$($TOOL cpu-tree "$NGX_PID"); else c1=$($TOOL cpu "$pid"); fi
            grep -q 'Non-2xx' "$WORK/wrk.txt" && { cat "$WORK/wrk.txt" >&2; echo "$target answered non-2xx" >&2; exit 1; }
            read -r rps _ p99 requests _ <<<"$($TOOL wrk "$WORK/wrk.txt")"
            echo "$target $rps $requests $(python3 -c "print($c1 - $c0)")" >>"$WORK/rounds.txt"
            echo "$target $p99" >>"$WORK/p99.txt"
            step "  $target: $rps/s, p99 $p99 ms"
        done
    done
    read -r ngx_rps ngx_cpu exp_rps exp_cpu ratio ratio_min ratio_max <<<"$($TOOL rounds "$WORK/rounds.txt")"
    read -r ngx_p99 exp_p99 p99_ratio <<<"$(python3 - "$WORK/p99.txt" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    server, p99 = line.split()
    by.setdefault(server, []).append(float(p99))
n, e = statistics.median(by["nginx"]), statistics.median(by["exporter"])
print(f"{n:.2f} {e:.2f} {e / n:.2f}")
PY
)"
    rss=$($TOOL rss "$pid")
    rows+=("| $name: $places places, $bytes bytes | $ngx_rps | $exp_rps | $ratio ($ratio_min–$ratio_max) | $ngx_p99 | $exp_p99 | $p99_ratio | $ngx_cpu / $exp_cpu | $(python3 -c "print(f'{$rss / 1048576:.1f}')") |")
    stop_process "$pid" 5 || true
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

table() {
    echo "wrk -t2 -c64, keep-alive, no Accept-Encoding, ${DURATION} s per run, $ROUNDS rounds per size with nginx and the"
    echo "exporter alternating; load average before / after: $load / $load_after (2 CPUs, shared)."
    echo "nginx: sendfile on, tcp_nopush on, open_file_cache; the same bytes, saved from the exporter."
    echo
    echo "| body | nginx req/s | exporter req/s | exporter / nginx, median round (range) | nginx p99 ms | exporter p99 ms | p99 exporter / nginx | CPU µs/request nginx / exporter | exporter RSS after, MB |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
}
if [ -n "${BENCH_SERVING_OUT:-}" ]; then table >"$BENCH_SERVING_OUT"; fi
table

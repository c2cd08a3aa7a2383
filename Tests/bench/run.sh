#!/usr/bin/env bash
# Performance suite (issue #5), run by hand; not part of `swift test`.
#
#   Tests/bench/run.sh
#
# Side by side on this machine: the exporter's /metrics against nginx serving the
# same bytes as a static file and the Prometheus Pushgateway (the official Go
# client's handler) holding the same families; resident memory with 10, 1,000 and
# 10,000 locations; render time and CPU per poll round; startup time and binary size;
# the state file (--storage.path) at 10,000 locations: size, time per write, RSS, restart.
# Loopback only. Writes Tests/bench/results/latest.md and prints a one-line summary.
#
# Environment:
#   BENCH_DURATION=5      seconds per wrk run (9 runs)
#   BENCH_LARGE=10000     the largest location count (0 skips the 1,000/10,000 part)
#   BENCH_RENDER=1        0 skips the render benchmark (a release test build, slow the first time)
#   BENCH_CLIENT=1        0 skips the API client over https (Tests/bench/client.sh, about 2 minutes)
#   BENCH_AUTH=1          0 skips the basic-auth floods (about 1 minute)
#   BENCH_SERVING=1       0 skips serving at four body sizes against nginx (Tests/bench/serving.sh,
#                         about 4 minutes; BENCH_SERVE_ROUNDS rounds per size, 3 by default)
#   BENCH_TLS_ROUNDS=5    alternating nginx/exporter rounds per TLS shape (each BENCH_DURATION)
#   BENCH_OUT=path        results file
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
source Tests/TestSupport/processes.sh
DURATION=${BENCH_DURATION:-5}
TLS_ROUNDS=${BENCH_TLS_ROUNDS:-5}
LARGE=${BENCH_LARGE:-10000}
RENDER=${BENCH_RENDER:-1}
OUT=${BENCH_OUT:-Tests/bench/results/latest.md}
TOOL="python3 Tests/bench/benchtool.py"
step() { printf '=== %s\n' "$*" >&2; }

step "tools from Debian's packages"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || missing+=(nginx-light)
command -v prometheus-pushgateway >/dev/null || missing+=(prometheus-pushgateway)
command -v python3 >/dev/null || missing+=(python3)
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v taskset >/dev/null || missing+=(util-linux)
command -v htpasswd >/dev/null || missing+=(apache2-utils)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

step "release build"
swift build -c release >&2
BIN=$(swift build -c release --show-bin-path)/openweather-exporter

WORK=$(mktemp -d /tmp/owe-bench.XXXXXX)
chmod 755 "$WORK"  # nginx workers run as www-data
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do stop_process "$pid" 5 >/dev/null 2>&1 || true; done
    rm -rf "$WORK"
    end_children
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
FAST=(--openweather.max-requests-per-minute=100000 --collector.weather.interval=15s)

# sample_rss: the resident memory of MID_PID and LARGE_PID once a second over a 15 s poll round.
# With STATE_PID set, that exporter (state kept on disk) too.
sample_rss() {
    rss_mid_samples=() rss_large_samples=() rss_state_samples=()
    for _ in $(seq 1 15); do
        # The sampling period: a window, not a wait for an event.
        window 1 "$MID_PID" "$LARGE_PID" ${STATE_PID:+"$STATE_PID"} || { echo "an exporter exited while its memory was sampled" >&2; exit 1; }
        rss_mid_samples+=("$($TOOL rss "$MID_PID")")
        rss_large_samples+=("$($TOOL rss "$LARGE_PID")")
        [ -z "${STATE_PID:-}" ] || rss_state_samples+=("$($TOOL rss "$STATE_PID")")
    done
}

# start_exporter NAME ARGS...: runs it in the background; sets PID and PORT.
start_exporter() {
    local name=$1
    shift
    "$BIN" --web.listen-address=127.0.0.1:0 "$@" >"$WORK/$name.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    PORT=$(port_from_log "$WORK/$name.log" 'address=127.0.0.1:' "$PID" 10) || { cat "$WORK/$name.log" >&2; exit 1; }
}

step "exporter with 10 locations"
TEN=()
for i in $(seq 0 9); do TEN+=(--location "City $i=$((i * 17 - 80)).25,$((i * 35 - 170)).5"); done
start_exporter ten --demo "${TEN[@]}" "${FAST[@]}"
EXP_PID=$PID EXP_PORT=$PORT
$TOOL wait "http://127.0.0.1:$EXP_PORT/-/ready" 30
# The process part is rendered once a second: wait until it is in the exposition.
deadline=$(( $(date +%s) + 10 ))
until curl -sf --max-time 5 "http://127.0.0.1:$EXP_PORT/metrics" >"$WORK/metrics.prom" && grep -q '^process_cpu_seconds_total ' "$WORK/metrics.prom"; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "no process metrics after 10 s" >&2; exit 1; }
    sleep 0.05
done
rss_start=$($TOOL rss "$EXP_PID")
bytes=$(wc -c <"$WORK/metrics.prom")
# The served bytes must stay valid: promtool (Debian's `prometheus` package) prints nothing when they are.
lint=$(command -v promtool >/dev/null && { promtool check metrics <"$WORK/metrics.prom" 2>&1 | head -3; echo "exit ${PIPESTATUS[0]}"; } || echo "promtool not installed")
lint_large="not run"

step "nginx serving the same bytes, plain and over TLS"
NGX_PORT=$($TOOL free-port)
NGX_TLS_PORT=$($TOOL free-port)
# One certificate and key for nginx and the exporter; the exporter also checks basic auth (bcrypt
# cost 10, cached after the first request as exporter-toolkit does); nginx checks nothing.
mkdir -p "$WORK/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/tls/server.key" \
    -out "$WORK/tls/server.pem" -days 2 -subj "/CN=bench" -addext subjectAltName=IP:127.0.0.1 2>/dev/null
chmod 644 "$WORK/tls/server.key"
printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  bench: %s\n' \
    "$(htpasswd -nbBC 10 '' bench-secret | tr -d ':\n')" >"$WORK/tls/web.yml"
AUTH="Authorization: Basic $(printf 'bench:bench-secret' | base64)"
mkdir -p "$WORK/nginx/root"
cp "$WORK/metrics.prom" "$WORK/nginx/root/metrics"
$TOOL nginx-conf "$WORK/nginx" "$NGX_PORT" "$NGX_TLS_PORT" "$WORK/tls/server.pem" "$WORK/tls/server.key"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
NGX_PID=$!
PIDS+=($NGX_PID)
$TOOL wait "http://127.0.0.1:$NGX_PORT/metrics" 10

step "exporter with the same 10 locations over TLS with basic auth"
start_exporter tls --demo "${TEN[@]}" "${FAST[@]}" --web.config.file="$WORK/tls/web.yml"
TLS_PID=$PID TLS_PORT=$PORT
for _ in $(seq 300); do
    [ "$(curl -sk -o /dev/null -w '%{http_code}' -H "$AUTH" "https://127.0.0.1:$TLS_PORT/-/ready")" = 200 ] && break
    sleep 0.1
done
# The process part is rendered once a second: wait until it is in the exposition.
tls_process_part() {
    curl -sfk --max-time 5 -H "$AUTH" "https://127.0.0.1:$TLS_PORT/metrics" >"$WORK/tls-metrics.prom" && grep -q '^process_cpu_seconds_total ' "$WORK/tls-metrics.prom"
}
wait_for 10 tls_process_part || { echo "no process metrics over TLS after 10 s" >&2; exit 1; }
tls_bytes=$(wc -c <"$WORK/tls-metrics.prom")
cp "$WORK/tls-metrics.prom" "$WORK/nginx/root/tls-metrics"
[ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$TLS_PORT/metrics")" = 401 ] || { echo "the TLS exporter does not ask for basic auth" >&2; exit 1; }
[ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$NGX_TLS_PORT/tls-metrics")" = 200 ] || { echo "nginx does not serve TLS" >&2; exit 1; }

step "pushgateway holding the same families"
# start_gateway: sets PID and PORT.
start_gateway() {
    PORT=$($TOOL free-port)
    prometheus-pushgateway --web.listen-address="127.0.0.1:$PORT" --persistence.file="" --log.level=warn >"$WORK/pgw-$PORT.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    $TOOL wait "http://127.0.0.1:$PORT/-/healthy" 10
}
start_gateway
PGW_PID=$PID PGW_PORT=$PORT
$TOOL push "http://127.0.0.1:$PGW_PORT" "$WORK/metrics.prom"
pgw_bytes=$(curl -sf --max-time 30 "http://127.0.0.1:$PGW_PORT/metrics" | wc -c)
rss_pgw=$($TOOL rss "$PGW_PID")

step "serving: wrk, keep-alive, ${DURATION}s per run"
declare -A RESULT
declare -A TLS_ROW
exporter_requests=0
for shape in "1 1" "1 64" "2 64"; do
    read -r threads conns <<<"$shape"
    for target in nginx exporter pushgateway; do
        case $target in
            nginx) port=$NGX_PORT ;; exporter) port=$EXP_PORT ;; pushgateway) port=$PGW_PORT ;;
        esac
        wrk -t"$threads" -c"$conns" -d"${DURATION}s" --latency "http://127.0.0.1:$port/metrics" >"$WORK/wrk.txt"
        RESULT[$target,$threads,$conns]=$($TOOL wrk "$WORK/wrk.txt")
        step "  $target -t$threads -c$conns: ${RESULT[$target,$threads,$conns]}"
        if [ $target = exporter ]; then
            exporter_requests=$((exporter_requests + $(cut -d' ' -f4 <<<"${RESULT[$target,$threads,$conns]}")))
        fi
    done
done
# TLS: a handshake per connection (64), then keep-alive scrapes; the exporter checks basic auth on each.
# The machine is shared, so nginx and the exporter alternate over BENCH_TLS_ROUNDS rounds and the median
# of the per-round ratios is reported, with CPU time per request (load-independent) beside it. The last
# shape pins both servers to CPU 0 and wrk to CPU 1, so wrk and the server do not take turns on a core.
pin() { # CPU: every thread of the TLS exporter and of nginx's processes
    taskset -a -p -c "$1" "$TLS_PID" >/dev/null
    for pid in "$NGX_PID" $(pgrep -P "$NGX_PID"); do taskset -a -p -c "$1" "$pid" >/dev/null; done
}
for shape in "1 64" "2 64" "pinned 64"; do
    read -r threads conns <<<"$shape"
    runner=()
    if [ "$threads" = pinned ]; then
        pin 0
        runner=(taskset -c 1)
    fi
    : >"$WORK/rounds-$threads.txt"
    for _ in $(seq 1 "$TLS_ROUNDS"); do
        for target in nginx exporter; do
            if [ $target = nginx ]; then
                url="https://127.0.0.1:$NGX_TLS_PORT/tls-metrics" header=(); cpu_of() { $TOOL cpu-tree "$NGX_PID"; }
            else
                url="https://127.0.0.1:$TLS_PORT/metrics" header=(-H "$AUTH"); cpu_of() { $TOOL cpu "$TLS_PID"; }
            fi
            c0=$(cpu_of)
            "${runner[@]}" wrk -t"${threads/pinned/1}" -c"$conns" -d"${DURATION}s" --latency "${header[@]}" "$url" >"$WORK/wrk.txt"
            c1=$(cpu_of)
            grep -q 'Non-2xx' "$WORK/wrk.txt" && { cat "$WORK/wrk.txt" >&2; echo "$target over TLS answered non-2xx" >&2; exit 1; }
            read -r rps p50 p99 requests _ <<<"$($TOOL wrk "$WORK/wrk.txt")"
            echo "$target $rps $requests $(python3 -c "print($c1 - $c0)")" >>"$WORK/rounds-$threads.txt"
        done
    done
    read -r ngx_rps ngx_cpu exp_rps exp_cpu tls_ratio tls_ratio_min tls_ratio_max <<<"$($TOOL rounds "$WORK/rounds-$threads.txt")"
    TLS_ROW[$threads]="$ngx_rps $ngx_cpu $exp_rps $exp_cpu $tls_ratio $tls_ratio_min $tls_ratio_max"
    step "  TLS -t$threads -c$conns, $TLS_ROUNDS rounds: nginx $ngx_rps/s ($ngx_cpu us CPU per request), exporter $exp_rps/s ($exp_cpu us), median ratio $tls_ratio ($tls_ratio_min-$tls_ratio_max)"
done
pin "0-$(( $(nproc) - 1 ))"
rss_tls=$($TOOL rss "$TLS_PID")
kill "$TLS_PID"

if [ $exporter_requests -lt 100000 ]; then
    # Top up to 100,000 scrapes for the memory figure.
    rate=$(cut -d' ' -f1 <<<"${RESULT[exporter,1,64]}")
    wrk -t1 -c64 -d"$(( (100000 - exporter_requests) / (rate > 1000 ? rate : 1000) + 2 ))s" "http://127.0.0.1:$EXP_PORT/metrics" >"$WORK/wrk.txt"
    exporter_requests=$((exporter_requests + $(grep -o '[0-9]* requests in' "$WORK/wrk.txt" | cut -d' ' -f1)))
fi
rss_scraped=$($TOOL rss "$EXP_PID")
rss_pgw_scraped=$($TOOL rss "$PGW_PID")

if [ "$LARGE" -gt 0 ]; then
    MID=$((LARGE / 10))
    step "exporters with $MID and $LARGE locations"
    $TOOL config "$MID" "$WORK/mid.json"
    $TOOL config "$LARGE" "$WORK/large.json"
    # The simulator runs in a demo exporter of its own, so the measured exporters' memory and CPU
    # are theirs alone: they poll it as they would poll OpenWeather (it takes any non-empty key).
    start_exporter simulator --demo --location "Simulator host=0,0"
    SIM_PID=$PID
    SIM_URL=http://127.0.0.1:$(port_from_log "$WORK/simulator.log" 'simulator=http://127.0.0.1:' "$SIM_PID" 10) \
        || { cat "$WORK/simulator.log" >&2; exit 1; }
    OPENWEATHER_API_KEY=bench start_exporter mid --openweather.url="$SIM_URL" --config.file="$WORK/mid.json" "${FAST[@]}"
    MID_PID=$PID MID_PORT=$PORT
    OPENWEATHER_API_KEY=bench start_exporter large --openweather.url="$SIM_URL" --config.file="$WORK/large.json" "${FAST[@]}"
    LARGE_PID=$PID LARGE_PORT=$PORT
    # The same with a state file: its RSS beside the large one's is the cost of keeping the bodies.
    mkdir -p "$WORK/state"
    STATE_ARGS=(--openweather.url="$SIM_URL" --config.file="$WORK/large.json" --storage.path="$WORK/state" "${FAST[@]}")
    OPENWEATHER_API_KEY=bench start_exporter state "${STATE_ARGS[@]}"
    STATE_PID=$PID STATE_PORT=$PORT
    $TOOL wait "http://127.0.0.1:$MID_PORT/-/ready" 120
    $TOOL wait "http://127.0.0.1:$LARGE_PORT/-/ready" 120
    $TOOL wait "http://127.0.0.1:$STATE_PORT/-/ready" 120
    # Past the first round's burst before measuring: a settling window, not a wait for an event.
    window 2 "$EXP_PID" "$MID_PID" "$LARGE_PID" "$STATE_PID" || { echo "an exporter exited" >&2; exit 1; }
    # CPU over one poll interval (15 s), all three exporters at once, no scrapes meanwhile; the
    # readings before and after accept gzip, as Prometheus does (a plain scrape would cost an inflate).
    cpu0_ten=$($TOOL metric "http://127.0.0.1:$EXP_PORT/metrics" process_cpu_seconds_total)
    cpu0_mid=$($TOOL metric "http://127.0.0.1:$MID_PORT/metrics" process_cpu_seconds_total)
    cpu0_large=$($TOOL metric "http://127.0.0.1:$LARGE_PORT/metrics" process_cpu_seconds_total)
    cpu0_sim=$($TOOL cpu "$SIM_PID")
    # Resident memory swings within a round (chunks re-rendered, then trimmed): sample it every second.
    sample_rss
    rss_state=$(printf '%s\n' "${rss_state_samples[@]}" | sort -n | tail -1)
    rss_state_min=$(printf '%s\n' "${rss_state_samples[@]}" | sort -n | head -1)
    state_bytes=$(stat -c %s "$WORK/state/openweather-exporter.state")
    state_mode=$(stat -c %a "$WORK/state/openweather-exporter.state")
    # A restart: SIGTERM (a last write), then the time until /-/ready says 200 with every location restored.
    kill -TERM "$STATE_PID"; wait "$STATE_PID" 2>/dev/null || true
    restart_start=$(date +%s.%N)
    OPENWEATHER_API_KEY=bench start_exporter state-restart "${STATE_ARGS[@]}"
    STATE_PID=$PID STATE_PORT=$PORT
    $TOOL wait "http://127.0.0.1:$STATE_PORT/-/ready" 120
    state_restart_ms=$(python3 -c "print(round(($(date +%s.%N) - $restart_start) * 1000))")
    state_restored=$(grep -o 'readings=[0-9]*' "$WORK/state-restart.log" | head -1)
    # Memory after the restored state settled: a window, not a wait for an event.
    window 2 "$STATE_PID" || { echo "the restarted exporter exited" >&2; exit 1; }
    rss_state_restarted=$($TOOL rss "$STATE_PID")
    kill "$STATE_PID"
    STATE_PID=""
    # The process part is rendered once a second: a full second after the window for its reading to cover it.
    window 1.1 "$EXP_PID" "$MID_PID" "$LARGE_PID" || { echo "an exporter exited" >&2; exit 1; }
    cpu_ten=$(python3 -c "print(f'{$($TOOL metric "http://127.0.0.1:$EXP_PORT/metrics" process_cpu_seconds_total) - $cpu0_ten:.3f}')")
    cpu_mid=$(python3 -c "print(f'{$($TOOL metric "http://127.0.0.1:$MID_PORT/metrics" process_cpu_seconds_total) - $cpu0_mid:.3f}')")
    cpu_large=$(python3 -c "print(f'{$($TOOL metric "http://127.0.0.1:$LARGE_PORT/metrics" process_cpu_seconds_total) - $cpu0_large:.3f}')")
    cpu_sim=$(python3 -c "print(f'{$($TOOL cpu "$SIM_PID") - $cpu0_sim:.3f}')")
    rss_mid=$(printf '%s\n' "${rss_mid_samples[@]}" | sort -n | tail -1)
    rss_large=$(printf '%s\n' "${rss_large_samples[@]}" | sort -n | tail -1)
    rss_mid_min=$(printf '%s\n' "${rss_mid_samples[@]}" | sort -n | head -1)
    rss_large_min=$(printf '%s\n' "${rss_large_samples[@]}" | sort -n | head -1)
    # Every scrape of the large exporters accepts gzip, as Prometheus does; curl inflates for the lint.
    curl -sf --max-time 30 -D "$WORK/large.head" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$LARGE_PORT/metrics" >"$WORK/large.gz"
    large_gzip_bytes=$(wc -c <"$WORK/large.gz")
    large_encoding=$(grep -i '^content-encoding:' "$WORK/large.head" | tr -d '\r' | cut -d' ' -f2 || true)
    curl -sf --max-time 30 --compressed "http://127.0.0.1:$LARGE_PORT/metrics" >"$WORK/large.prom"
    large_bytes=$(wc -c <"$WORK/large.prom")
    lint_large=$(command -v promtool >/dev/null && { promtool check metrics <"$WORK/large.prom" 2>&1 | head -3; echo "exit ${PIPESTATUS[0]}"; } || echo "promtool not installed")
    per_location=$(( (rss_large - rss_mid) / (LARGE - MID) ))
    for pid in "$MID_PID" "$LARGE_PID"; do stop_process "$pid" 5 || true; done
    # The same with air pollution on too (a second request per location and round): peak memory only.
    step "exporters with $MID and $LARGE locations, air pollution on"
    AIR=(--collector.air_pollution --collector.air_pollution.interval=15s)
    OPENWEATHER_API_KEY=bench start_exporter mid-air --openweather.url="$SIM_URL" --config.file="$WORK/mid.json" "${FAST[@]}" "${AIR[@]}"
    MID_PID=$PID MID_PORT=$PORT
    OPENWEATHER_API_KEY=bench start_exporter large-air --openweather.url="$SIM_URL" --config.file="$WORK/large.json" "${FAST[@]}" "${AIR[@]}"
    LARGE_PID=$PID LARGE_PORT=$PORT
    $TOOL wait "http://127.0.0.1:$MID_PORT/-/ready" 180
    $TOOL wait "http://127.0.0.1:$LARGE_PORT/-/ready" 180
    # Past the first round's burst before sampling: a settling window, not a wait for an event.
    window 2 "$MID_PID" "$LARGE_PID" || { echo "an exporter exited" >&2; exit 1; }
    sample_rss
    rss_mid_air=$(printf '%s\n' "${rss_mid_samples[@]}" | sort -n | tail -1)
    rss_large_air=$(printf '%s\n' "${rss_large_samples[@]}" | sort -n | tail -1)
    per_location_air=$(( (rss_large_air - rss_mid_air) / (LARGE - MID) ))
    for pid in "$MID_PID" "$LARGE_PID" "$SIM_PID"; do stop_process "$pid" 5 || true; done
    step "pushgateway holding $LARGE locations"
    start_gateway
    PGW_LARGE_PID=$PID
    $TOOL push "http://127.0.0.1:$PORT" "$WORK/large.prom"
    rss_pgw_large=$($TOOL rss "$PGW_LARGE_PID")
    stop_process "$PGW_LARGE_PID" 5 || true
fi

render="skipped (BENCH_RENDER=0)"
if [ "$RENDER" = 1 ]; then
    step "render benchmark (a release test build in .build/bench)"
    BENCH=1 BENCH_LOCATIONS=${LARGE:-10000} swift test -c release --scratch-path .build/bench --filter 'RenderBenchmark|StateBenchmark' \
        >"$WORK/render.txt" 2>&1 || { tail -20 "$WORK/render.txt" >&2; exit 1; }
    render=$(grep -o 'RENDER_BENCHMARK sources=weather .*' "$WORK/render.txt")
    render_air=$(grep -o 'RENDER_BENCHMARK sources=air_pollution+weather .*' "$WORK/render.txt")
    state_bench=$(grep -o 'STATE_BENCHMARK.*' "$WORK/render.txt" || true)
fi

serving_rows=""
if [ "${BENCH_SERVING:-1}" = 1 ]; then
    BIN=$BIN BENCH_DURATION=$DURATION BENCH_SERVING_OUT="$WORK/serving.md" bash Tests/bench/serving.sh >&2
    serving_rows=$(cat "$WORK/serving.md")
fi

client_rows=""
if [ "${BENCH_CLIENT:-1}" = 1 ]; then
    BIN=$BIN BENCH_CLIENT_OUT="$WORK/client.md" bash Tests/bench/client.sh >&2
    client_rows=$(cat "$WORK/client.md")
fi

# Basic auth under floods of wrong passwords (Tests/reliability/clients.py auth-flood, which the
# reliability suite runs with a 1 s bound): the latency of a right password seen once before.
auth_rows=()
if [ "${BENCH_AUTH:-1}" = 1 ]; then
    printf 'basic_auth_users:\n  bench: %s\n' "$(htpasswd -nbBC 10 '' bench-secret | tr -d ':\n')" >"$WORK/auth-web.yml"
    for scenario in "short 4200 0 4,200 short wrong-password connections" \
                    "held 210 6 210 held wrong-password requests at --web.max-connections=200" \
                    "held 50 6 50 concurrent wrong-password clients" "held 400 6 400 concurrent wrong-password clients"; do
        read -r mode count seconds what <<<"$scenario"
        step "basic auth flood: $what"
        limit=()
        [ "$count" = 210 ] && limit=(--web.max-connections=200)
        start_exporter "auth-$mode-$count" --demo "${TEN[@]}" --web.config.file="$WORK/auth-web.yml" "${limit[@]}"
        wait_for 30 http_answers "http://127.0.0.1:$PORT/-/healthy" 401
        out=$(timeout 120 python3 Tests/reliability/clients.py auth-flood "$PORT" bench bench-secret "$mode" "$count" "$seconds" "$PID" 60 2>&1 || true)
        echo "$out" | sed 's/^/  /' >&2
        during=$(grep -o 'during the flood: .*' <<<"$out" | cut -d' ' -f4- || true)
        after=$(grep -o 'after the flood, 20 scrapes: .*' <<<"$out" | cut -d' ' -f6- || true)
        auth_rows+=("| $what | ${during:-failed} | ${after:-failed} |")
        stop_process "$PID" 5 >/dev/null 2>&1 || true
    done
fi

step "startup"
read -r startup_median startup_min <<<"$($TOOL startup "$BIN" 7 --demo "${TEN[@]}")"
binary_size=$(stat -c %s "$BIN")
strip -o "$WORK/stripped" "$BIN"
stripped_size=$(stat -c %s "$WORK/stripped")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----
field() { cut -d' ' -f"$2" <<<"${RESULT[$1]}"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
mb() { python3 -c "print(f'{$1 / 1048576:.1f}')"; }
summary="exporter/nginx $(ratio "$(field exporter,1,64 1)" "$(field nginx,1,64 1)")x (-t1 -c64), $(ratio "$(field exporter,2,64 1)" "$(field nginx,2,64 1)")x (-t2 -c64); over TLS with basic auth $(cut -d' ' -f5 <<<"${TLS_ROW[1]}")x (-t1 -c64), $(cut -d' ' -f5 <<<"${TLS_ROW[2]}")x (-t2 -c64), $(cut -d' ' -f5 <<<"${TLS_ROW[pinned]}")x (pinned) (medians of $TLS_ROUNDS rounds); exporter/pushgateway $(ratio "$(field exporter,1,64 1)" "$(field pushgateway,1,64 1)")x (-t1 -c64); p99 $(field exporter,1,64 3) ms (-t1 -c64); RSS $(mb "$rss_scraped") MB after $exporter_requests scrapes"
[ "$LARGE" -gt 0 ] && summary="$summary, +$per_location B per location (+$per_location_air B with air pollution)"
[ "$RENDER" = 1 ] && summary="$summary; re-render after a poll $(grep -o 'poll_refresh_ms_median=[0-9.]*' <<<"$render" | cut -d= -f2) ms, from scratch $(grep -o 'full_plain_ms_median=[0-9.]*' <<<"$render" | cut -d= -f2) ms"
summary="$summary; startup ${startup_median} ms"

mkdir -p "$(dirname "$OUT")"
{
    echo "# Benchmark results"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo ' (+ uncommitted changes)')"
    echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "- load average before / after: $load_before / $load_after (the machine is shared: read ratios, not absolutes)"
    echo "- command: \`Tests/bench/run.sh\` (BENCH_DURATION=$DURATION, BENCH_LARGE=$LARGE)"
    echo "- render rows: \`BENCH=1 swift test -c release --scratch-path .build/bench --filter RenderBenchmark\`, wall time median (min) of 7 runs and CPU time median (every thread)"
    echo "- versions: $(nginx -v 2>&1 | cut -d' ' -f3), pushgateway $(prometheus-pushgateway --version 2>&1 | head -1 | cut -d' ' -f3), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
    echo
    echo "## Serving /metrics (10 locations, keep-alive, ${DURATION} s per run)"
    echo
    echo "Body: exporter and nginx $bytes bytes (the same bytes, saved from the exporter); pushgateway $pgw_bytes bytes"
    echo "(the same families minus \`process_*\`, pushed under one job, plus its own \`go_*\`, \`process_*\` and push metrics)."
    echo "No \`Accept-Encoding\`: every server sends plain text."
    echo
    echo "| server | wrk | requests/s | p50 ms | p99 ms | exporter / server |"
    echo "|---|---|---:|---:|---:|---:|"
    for shape in "1 1" "1 64" "2 64"; do
        read -r threads conns <<<"$shape"
        for target in nginx exporter pushgateway; do
            key=$target,$threads,$conns
            r="–"
            [ $target != exporter ] && r="$(ratio "$(field exporter,$threads,$conns 1)" "$(field "$key" 1)")"
            echo "| $target | -t$threads -c$conns | $(field "$key" 1) | $(field "$key" 2) | $(field "$key" 3) | $r |"
        done
    done
    echo
    if [ -n "$serving_rows" ]; then
        echo "## Serving /metrics at four body sizes (Tests/bench/serving.sh)"
        echo
        printf '%s\n' "$serving_rows"
        echo
    fi
    echo "## Serving /metrics over TLS (10 locations, keep-alive, ${DURATION} s per run)"
    echo
    echo "Body: $tls_bytes bytes, the same for both (saved from the exporter). One certificate and key (ECDSA P-256) for"
    echo "both; TLS 1.3 as negotiated by wrk; 64 handshakes per run, then keep-alive. The exporter checks"
    echo "the \`Authorization: Basic\` header on every request (bcrypt cost 10, verified once and then cached, as exporter-toolkit"
    echo "does); nginx checks nothing."
    echo
    echo "nginx and the exporter alternate, $TLS_ROUNDS rounds each per shape; requests/s is the median round, CPU is"
    echo "the server's user + system time over all its rounds divided by the requests it answered."
    echo
    echo "| wrk | nginx requests/s | nginx CPU µs/request | exporter requests/s | exporter CPU µs/request | exporter / nginx, median round (range) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for threads in 1 2 pinned; do
        read -r a b c d e f g <<<"${TLS_ROW[$threads]}"
        label="-t$threads -c64"
        [ "$threads" = pinned ] && label="-t1 -c64 on CPU 1, servers on CPU 0"
        echo "| $label | $a | $b | $c | $d | $e ($f–$g) |"
    done
    echo
    echo "Exporter resident set after the TLS runs: $(mb "$rss_tls") MB."
    echo
    echo "## Memory (resident set)"
    echo
    echo "| what | MB |"
    echo "|---|---:|"
    echo "| exporter, 10 locations, after start | $(mb "$rss_start") |"
    echo "| exporter, 10 locations, after $exporter_requests scrapes | $(mb "$rss_scraped") |"
    echo "| pushgateway holding the 10 locations' series, after start / after the wrk runs | $(mb "$rss_pgw") / $(mb "$rss_pgw_scraped") |"
    if [ "$LARGE" -gt 0 ]; then
        echo "| exporter polling a separate simulator, $MID locations, peak over one poll round (lowest) | $(mb "$rss_mid") ($(mb "$rss_mid_min")) |"
        echo "| exporter, $LARGE locations ($large_bytes bytes of exposition, served as $large_gzip_bytes bytes with Content-Encoding: ${large_encoding:-none}), peak over one poll round (lowest) | $(mb "$rss_large") ($(mb "$rss_large_min")) |"
        echo "| pushgateway holding the $LARGE locations' series | $(mb "$rss_pgw_large") |"
        echo "| exporter, per location ($MID to $LARGE, peaks) | $per_location bytes |"
        echo "| exporter with air pollution on too, $MID / $LARGE locations, peak over one poll round | $(mb "$rss_mid_air") / $(mb "$rss_large_air") |"
        echo "| exporter with air pollution on too, per location ($MID to $LARGE, peaks) | $per_location_air bytes |"
        echo "| exporter, $LARGE locations with --storage.path, peak over one poll round (lowest); the same without: $(mb "$rss_large") | $(mb "$rss_state") ($(mb "$rss_state_min")) |"
        echo "| the same, 2 s after a restart from its state file | $(mb "$rss_state_restarted") |"
    fi
    if [ "$LARGE" -gt 0 ]; then
        echo
        echo "## State file (--storage.path), $LARGE locations"
        echo
        echo "| what | value |"
        echo "|---|---|"
        echo "| file size, weather only (the exporter above; mode $state_mode) | $state_bytes bytes ($((state_bytes / LARGE)) per location) |"
        echo "| restart (SIGTERM, start, /-/ready 200 with the state restored: $state_restored) | $state_restart_ms ms |"
        echo "| RSS with the state file / without (peaks over a poll round) | $(ratio "$rss_state" "$rss_large")x |"
        if [ -n "${state_bench:-}" ]; then
            sb() { grep -o "$1=[0-9.]*" <<<"$state_bench" | cut -d= -f2; }
            echo "| StateBenchmark (weather + air pollution, fixture bodies): file, bodies kept in memory | $(sb file_bytes) bytes, $(sb body_bytes) bytes |"
            echo "| one write: capture (under the poller's lock) + encoding streamed to the file with fsync (of which encoding), median (min) | $(sb capture_ms_median) ($(sb capture_ms_min)) + $(sb write_ms_median) ($(sb write_ms_min)) ms ($(sb encode_ms_median)) |"
            echo "| one load at start (read, check, decode every body, restore), median (min) | $(sb load_ms_median) ($(sb load_ms_min)) ms |"
        fi
    fi
    if [ ${#auth_rows[@]} -gt 0 ]; then
        echo
        echo "## Basic auth under floods of wrong passwords (bcrypt cost 10, 10 locations)"
        echo
        echo "A right password seen once before, on a fresh connection every 0.1 s, while"
        echo "\`Tests/reliability/clients.py auth-flood\` sends wrong ones (details in deploy/docs/operations.md, Security limits)."
        echo
        echo "| flood | right password during the flood | right password after it |"
        echo "|---|---|---|"
        printf '%s\n' "${auth_rows[@]}"
    fi
    echo
    echo "## Work"
    echo
    echo "| what | value |"
    echo "|---|---|"
    if [ "$RENDER" = 1 ]; then
        # One row per measurement of `BENCH=1 swift test -c release --filter RenderBenchmark`: wall median (min), CPU median.
        rf() { tr ' ' '\n' <<<"$render" | grep "^$1=" | cut -d= -f2; }
        rrow() { echo "| $1 | $(rf "$2_ms_median") ms ($(rf "$2_ms_min") ms); CPU $(rf "$2_cpu_ms_median") ms |"; }
        rrow "re-render after a poll, $(rf locations) locations (the changed shard, compressed; body re-assembled)" poll_refresh
        rrow "render from scratch, $(rf locations) locations, plain text ($(rf bytes) bytes; start, reload with other locations)" full_plain
        rrow "render from scratch, $(rf locations) locations, kept gzipped ($(rf served_bytes) bytes)" full_served
        rrow "reference: copying the same text" reference_copy
        rrow "reference: gzipping the same text in one zlib call, level 1 ($(rf gzip_bytes) bytes)" reference_gzip
        render=$render_air
        rrow "with air pollution on too: re-render after a poll, $(rf locations) locations" poll_refresh
        rrow "with air pollution on too: render from scratch, plain text ($(rf bytes) bytes)" full_plain
    else
        echo "| render benchmark | $render |"
    fi
    if [ "$LARGE" -gt 0 ]; then
        echo "| CPU seconds per poll round (15 s), 10 / $MID / $LARGE locations (10: demo, simulator included; $MID and $LARGE: the exporter alone) | $cpu_ten / $cpu_mid / $cpu_large |"
        echo "| CPU seconds of the separate simulator answering both over the same round | $cpu_sim |"
    fi
    echo "| startup: exec to first 200 on /-/healthy (median of 7, min) | $startup_median ms ($startup_min ms) |"
    echo "| release binary | $(mb "$binary_size") MB ($(mb "$stripped_size") MB stripped) |"
    echo "| \`promtool check metrics\`, 10 / $LARGE locations | $(echo $lint) / $(echo $lint_large) |"
    [ -n "$client_rows" ] && printf '%s\n' "$client_rows"
    echo
    echo "Summary: $summary"
} >"$OUT"
cat "$OUT" >&2
echo "$summary"

#!/usr/bin/env bash
# The API client's cost over https (issue #12): an exporter with 10,000 locations polling a
# local TLS front (nginx, keep-alive, session cache and tickets) of the simulator, once with a
# connection and a full handshake per poll (--openweather.max-idle-connections=0, the old
# behaviour) and once with keep-alive reuse (the default), one after the other in one run.
# Measures CPU seconds of the exporter per poll and TLS handshakes per 100 polls in steady state.
#
#   Tests/bench/client.sh            (run.sh calls it; alone it builds and cleans up by itself)
#
# Environment: BENCH_CLIENT_LOCATIONS=10000, BENCH_CLIENT_SECONDS=20 (measured window per run),
# BENCH_CLIENT_OUT=file (markdown rows appended; default: stdout only).
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
LOCATIONS=${BENCH_CLIENT_LOCATIONS:-10000}
SECONDS_PER_RUN=${BENCH_CLIENT_SECONDS:-20}
OUT=${BENCH_CLIENT_OUT:-/dev/null}
TOOL="python3 Tests/bench/benchtool.py"
source Tests/TestSupport/processes.sh
step() { printf '=== %s\n' "$*" >&2; }

missing=()
command -v nginx >/dev/null || missing+=(nginx-light)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ -z "${BIN:-}" ]; then
    swift build -c release >&2
    BIN=$(swift build -c release --show-bin-path)/openweather-exporter
fi

DIR=$(mktemp -d /tmp/owe-client-bench.XXXXXX)
chmod 755 "$DIR"  # nginx workers run as another user
OWN_PIDS=()
cleanup() {
    for pid in "${OWN_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${OWN_PIDS[@]}"; do timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$DIR"
    end_children
}
trap cleanup EXIT

# start NAME ARGS...: an exporter in the background; sets PID and PORT.
start() {
    local name=$1
    shift
    "$BIN" --web.listen-address=127.0.0.1:0 "$@" >"$DIR/$name.log" 2>&1 &
    PID=$!
    OWN_PIDS+=("$PID")
    PORT=""
    for _ in $(seq 1 200); do
        PORT=$(grep -o 'address=127.0.0.1:[0-9]*' "$DIR/$name.log" 2>/dev/null | head -1 | cut -d: -f2 || true)
        [ -n "$PORT" ] && break
        sleep 0.05
    done
    [ -n "$PORT" ] || { cat "$DIR/$name.log" >&2; exit 1; }
}

step "client bench: a private CA and a certificate for 127.0.0.1"
(
    cd "$DIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
        -subj '/CN=bench CA' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls.key -out tls.csr -subj '/CN=127.0.0.1' 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >tls.ext
    openssl x509 -req -in tls.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile tls.ext -out tls.pem 2>/dev/null
    chmod 644 tls.key
)

step "client bench: the simulator behind nginx with TLS"
start simulator --demo --location "Simulator host=0,0"
SIM_URL=""
for _ in $(seq 1 100); do
    SIM_URL=$(grep -o 'simulator=http://127.0.0.1:[0-9]*' "$DIR/simulator.log" | head -1 | cut -d= -f2 || true)
    [ -n "$SIM_URL" ] && break
    sleep 0.05
done
[ -n "$SIM_URL" ] || { cat "$DIR/simulator.log" >&2; exit 1; }
TLS_PORT=$($TOOL free-port)
cat >"$DIR/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    log_format bench '\$msec \$connection \$connection_requests \$ssl_session_reused';
    upstream simulator { server ${SIM_URL#http://}; keepalive 64; }
    server {
        listen 127.0.0.1:$TLS_PORT ssl;
        ssl_certificate $DIR/tls.pem;
        ssl_certificate_key $DIR/tls.key;
        ssl_session_cache shared:bench:10m;
        ssl_session_tickets on;
        keepalive_requests 1000000;
        keepalive_timeout 75s;
        access_log $DIR/access.log bench;
        location / {
            proxy_pass http://simulator;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
nginx -p "$DIR" -c "$DIR/nginx.conf" &
NGINX_PID=$!
OWN_PIDS+=("$NGINX_PID")
for _ in $(seq 1 100); do
    curl -s --max-time 2 --cacert "$DIR/ca.pem" -o /dev/null "https://127.0.0.1:$TLS_PORT/data/2.5/weather?lat=1&lon=2&appid=x" && break
    sleep 0.1
done

$TOOL config "$LOCATIONS" "$DIR/locations.json"

polls() {  # successful polls so far, from the exporter's own counter
    curl -s --max-time 10 "http://127.0.0.1:$1/metrics" | awk '/^openweather_api_requests_total\{code="200",source="weather"\}/ { print $2 }'
}

# run NAME ARGS...: one exporter over https; prints "cpu_per_poll_ms polls handshakes_per_100".
run() {
    local name=$1
    shift
    : >"$DIR/access.log"
    OPENWEATHER_API_KEY=bench start "$name" --openweather.url="https://127.0.0.1:$TLS_PORT" --openweather.tls-ca-file="$DIR/ca.pem" \
        --config.file="$DIR/locations.json" --openweather.max-requests-per-minute=100000 --collector.weather.interval=15s "$@"
    local pid=$PID port=$PORT
    $TOOL wait "http://127.0.0.1:$port/-/ready" 120 >&2
    # Past the first round's burst (every location polled once): steady state, about 667 polls a second.
    first_round_done() { local n; n=$(polls "$port"); [ -n "$n" ] && [ "${n%.*}" -ge "$LOCATIONS" ]; }
    wait_for 120 first_round_done || { echo "the first round of $LOCATIONS polls did not finish within 120 s" >&2; exit 1; }
    local start_lines cpu0 polls0
    start_lines=$(wc -l <"$DIR/access.log")
    cpu0=$($TOOL cpu "$pid")
    polls0=$(polls "$port")
    # The measured window, not a wait for an event.
    window "$SECONDS_PER_RUN" "$pid" "$NGINX_PID" || { echo "the exporter or nginx exited during the measurement" >&2; exit 1; }
    local cpu1 polls1 end_lines
    cpu1=$($TOOL cpu "$pid")
    end_lines=$(wc -l <"$DIR/access.log")
    polls1=$(polls "$port")
    # Handshakes: requests that were the first on their connection, among nginx's log lines of the window.
    local window requests handshakes resumed
    window=$(sed -n "$((start_lines + 1)),${end_lines}p" "$DIR/access.log")
    requests=$(wc -l <<<"$window")
    handshakes=$(awk '$3 == 1' <<<"$window" | wc -l)
    resumed=$(awk '$3 == 1 && $4 == "r"' <<<"$window" | wc -l)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    python3 -c "
polls = $polls1 - $polls0
print(f'{($cpu1 - $cpu0) * 1000 / max(polls, 1):.3f} {polls:.0f} {$handshakes * 100 / max($requests, 1):.2f} $resumed')"
}

step "client bench: $LOCATIONS locations over https, a connection per poll (max-idle-connections=0)"
read -r before_cpu before_polls before_hs before_resumed < <(run before --openweather.max-idle-connections=0)
step "  $before_cpu ms CPU per poll over $before_polls polls; $before_hs handshakes per 100 polls ($before_resumed resumed)"
step "client bench: $LOCATIONS locations over https, keep-alive reuse (default)"
read -r after_cpu after_polls after_hs after_resumed < <(run after)
step "  $after_cpu ms CPU per poll over $after_polls polls; $after_hs handshakes per 100 polls ($after_resumed resumed)"
ratio=$(python3 -c "print(f'{$before_cpu / max($after_cpu, 1e-9):.1f}')")
step "client bench: $ratio x less CPU per poll with reuse"

# The client alone, without the exporter's decoding and rendering around it: 16 threads of GETs
# in a release test build (shared with the render benchmark's build directory).
step "client bench: the HTTP client alone (a release test build in .build/bench)"
BENCH=1 BENCH_CLIENT_URL="https://127.0.0.1:$TLS_PORT" BENCH_CLIENT_CA="$DIR/ca.pem" \
    swift test -c release --scratch-path .build/bench --filter ClientBenchmark >"$DIR/client-bench.txt" 2>&1 \
    || { tail -20 "$DIR/client-bench.txt" >&2; exit 1; }
isolated=$(grep -o 'CLIENT_BENCHMARK .*' "$DIR/client-bench.txt")
step "  $isolated"
field() { grep -o "$1=[^ ]*" <<<"$isolated" | cut -d= -f2; }

{
    echo "| HTTP client alone, CPU per request over https, 16 threads, a connection and full handshake per request / keep-alive reuse | $(field off_ms) ms / $(field on_ms) ms ($(field ratio)x less) |"
    echo "| HTTP client alone, TLS handshakes (full+resumed) per 100 requests, reuse off / on | $(field off_handshakes_per_100) / $(field on_handshakes_per_100) |"
    echo "| exporter CPU per poll over https, $LOCATIONS locations, a connection and handshake per poll / keep-alive reuse | $before_cpu ms / $after_cpu ms (${ratio}x less) |"
    echo "| TLS handshakes per 100 polls in steady state, a connection per poll / keep-alive reuse | $before_hs / $after_hs |"
    echo "| polls measured (${SECONDS_PER_RUN} s windows after the first round), a connection per poll / keep-alive reuse | $before_polls / $after_polls |"
} | tee -a "$OUT"

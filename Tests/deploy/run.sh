#!/usr/bin/env bash
# Checks everything in deploy/: the static checks (promtool, amtool, the
# Kubernetes/compose/systemd/Grafana structure), then an end-to-end run on
# loopback: the exporter in --demo mode, a real Prometheus on a copy of
# deploy/prometheus (only addresses, intervals and `for:` changed), a real
# Alertmanager on a copy of deploy/alertmanager (only the webhook URL and the
# grouping delays changed) and a stand-in webhook receiver; then every
# exporter metric, the alerts and every Grafana dashboard query.
#
#   bash Tests/deploy/run.sh            # from any directory
#   REPO=/path/to/checkout bash Tests/deploy/run.sh
#
# REPO is where the built exporter is (.build/release/openweather-exporter);
# default: this checkout. EXPORTER_BIN overrides the binary itself.
# DEPLOY_TEST_TIMEOUT bounds the whole run (seconds, default 600).
# Installs prometheus, prometheus-alertmanager, python3-yaml and curl from
# Debian when missing. Exits non-zero when any check fails.

set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEPLOY="$ROOT/deploy"
REPO="${REPO:-$ROOT}"
BIN="${EXPORTER_BIN:-$REPO/.build/release/openweather-exporter}"
LIMIT="${DEPLOY_TEST_TIMEOUT:-600}"
INTERVAL=5s

WORK="$(mktemp -d -t openweather-deploy-test.XXXXXX)"
PIDS=()
PASSED=0
FAILED=0
FAILED_NAMES=()
STEP_NO=0

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null
    done
    [[ -n "${WATCHDOG:-}" ]] && kill "$WATCHDOG" 2>/dev/null
    if [[ "${KEEP_WORK:-0}" == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'echo "FAIL: deploy tests exceeded ${LIMIT}s (DEPLOY_TEST_TIMEOUT)"; exit 124' USR1
trap 'echo "FAIL: interrupted"; exit 130' INT TERM
# The watchdog takes its sleep down with it, and holds no output pipe open.
(
    sleep "$LIMIT" & sleeper=$!
    trap 'kill $sleeper; exit 0' TERM
    wait $sleeper && kill -USR1 $$
) >/dev/null 2>&1 &
WATCHDOG=$!

pass() { PASSED=$((PASSED + 1)); echo "PASS  $1"; }
fail() { FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); echo "FAIL  $1"; }

# step NAME COMMAND...: runs COMMAND (bounded to 3 minutes), shows its output
# when it fails or when VERBOSE=1.
step() {
    local name="$1"; shift
    local log="$WORK/step.$((STEP_NO += 1)).log"
    # Through bash -c, so that COMMAND may be one of the exported functions.
    if timeout 180 bash -c '"$@"' _ "$@" >"$log" 2>&1; then
        pass "$name"
        [[ "${VERBOSE:-0}" == 1 ]] && sed 's/^/      /' "$log"
    else
        fail "$name"
        tail -n 60 "$log" | sed 's/^/      /'
    fi
    return 0
}

# retry SECONDS COMMAND...: reruns COMMAND until it succeeds or time is up.
retry() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        ((SECONDS >= deadline)) && return 1
        sleep 2
    done
}

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

http_ok() { curl -fs --max-time 5 -o /dev/null "$@"; }

# --- tools -----------------------------------------------------------------------

apt_install() {
    echo "installing $* from Debian"
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get install -y --no-install-recommends "$@" >"$WORK/apt.log" 2>&1 \
        || { timeout 300 apt-get update >>"$WORK/apt.log" 2>&1 \
             && timeout 300 apt-get install -y --no-install-recommends "$@" >>"$WORK/apt.log" 2>&1; } \
        || { tail -n 20 "$WORK/apt.log"; return 1; }
}

missing=()
command -v promtool >/dev/null || missing+=(prometheus)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v amtool >/dev/null || missing+=(prometheus-alertmanager)
command -v curl >/dev/null || missing+=(curl)
PY=""
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import yaml' 2>/dev/null; then PY="$candidate"; break; fi
done
[[ -z "$PY" ]] && missing+=(python3-yaml)
if ((${#missing[@]})); then
    apt_install $(printf '%s\n' "${missing[@]}" | sort -u) || { echo "FAIL: cannot install ${missing[*]}"; exit 1; }
    [[ -z "$PY" ]] && PY=/usr/bin/python3
fi
ALERTMANAGER="$(command -v prometheus-alertmanager || command -v alertmanager)"

# step runs its command in a child bash: hand it the functions and settings.
export ROOT DEPLOY REPO BIN WORK PY HERE
export -f retry free_port http_ok

echo "deploy tests: checkout $ROOT, exporter $BIN, work dir $WORK, limit ${LIMIT}s"
echo "tools: $(promtool --version 2>&1 | head -1); $(amtool --version 2>&1 | head -1); $("$PY" --version)"

# --- static checks ---------------------------------------------------------------

echo "== static checks"
step "promtool check config deploy/prometheus/prometheus.yml" \
    promtool check config "$DEPLOY/prometheus/prometheus.yml"
step "promtool check rules deploy/prometheus/rules/openweather.yml" \
    promtool check rules "$DEPLOY/prometheus/rules/openweather.yml"
step "promtool test rules deploy/prometheus/rules/openweather.test.yml" \
    promtool test rules "$DEPLOY/prometheus/rules/openweather.test.yml"
extract_prometheusrule() {
    "$PY" -c 'import sys, yaml; print(yaml.safe_dump({"groups": yaml.safe_load(open(sys.argv[1]))["spec"]["groups"]}, allow_unicode=True))' \
        "$DEPLOY/kubernetes/prometheusrule.yaml" >"$WORK/prometheusrule-groups.yml" \
        && promtool check rules "$WORK/prometheusrule-groups.yml"
}
export -f extract_prometheusrule
step "promtool check rules on the PrometheusRule's groups" extract_prometheusrule
step "kubernetes/prometheusrule.yaml is generated from the current rules" \
    "$PY" "$DEPLOY/kubernetes/generate-prometheusrule.py" --check
step "amtool check-config deploy/alertmanager/alertmanager.yml" \
    amtool check-config "$DEPLOY/alertmanager/alertmanager.yml"
step "alertmanager routes: critical alerts go to webhook-critical" \
    amtool config routes test --config.file="$DEPLOY/alertmanager/alertmanager.yml" \
    --verify.receivers=webhook-critical alertname=OpenWeatherExporterDown severity=critical job=openweather
step "alertmanager routes: temperature alerts go to webhook" \
    amtool config routes test --config.file="$DEPLOY/alertmanager/alertmanager.yml" \
    --verify.receivers=webhook alertname=OpenWeatherTemperatureAboveThreshold severity=warning location=Seville
step "structure of deploy/ (kubernetes, docker, systemd, grafana)" \
    "$PY" "$HERE/check_structure.py" "$ROOT"

compose_config() {
    cd "$DEPLOY/docker" || return 1
    if docker compose version >/dev/null 2>&1; then
        docker compose -f compose.yaml config -q && docker compose -f compose.yaml -f compose.demo.yaml config -q
    elif command -v docker-compose >/dev/null; then
        docker-compose -f compose.yaml config -q && docker-compose -f compose.yaml -f compose.demo.yaml config -q
    else
        echo "neither 'docker compose' nor docker-compose: parsing with PyYAML only"
        "$PY" -c 'import sys, yaml; [yaml.safe_load(open(f)) for f in sys.argv[1:]]' compose.yaml compose.demo.yaml
    fi
}
export -f compose_config
step "compose files parse (compose.yaml, + compose.demo.yaml)" compose_config

systemd_verify() {
    if ! command -v systemd-analyze >/dev/null; then echo "systemd-analyze missing: skipped"; return 0; fi
    # verify insists the ExecStart binary exists: point it at one that does.
    local exe="$BIN"; [[ -x "$exe" ]] || exe=/bin/true
    mkdir -p "$WORK/systemd"
    sed "s|/usr/local/bin/openweather-exporter|$exe|" "$DEPLOY/systemd/openweather-exporter.service" \
        >"$WORK/systemd/openweather-exporter.service"
    local out
    out="$(systemd-analyze verify "$WORK/systemd/openweather-exporter.service" 2>&1)" || { echo "$out"; return 1; }
    # Unknown or misspelt settings are only warnings: treat any output as failure.
    [[ -z "$out" ]] || { echo "$out"; return 1; }
    systemd-analyze security --offline=yes "$WORK/systemd/openweather-exporter.service" 2>/dev/null | tail -n 1 || true
}
export -f systemd_verify
step "systemd-analyze verify deploy/systemd/openweather-exporter.service" systemd_verify

# --- Alertmanager: inhibitions and the webhook receiver ---------------------------

echo "== alertmanager"
EXPORTER_PORT="$(free_port)"
PROM_PORT="$(free_port)"
AM_PORT="$(free_port)"
HOOK_PORT="$(free_port)"
EXPORTER="127.0.0.1:$EXPORTER_PORT"
PROM="http://127.0.0.1:$PROM_PORT"
AM="http://127.0.0.1:$AM_PORT"
HOOK_LOG="$WORK/webhook.jsonl"
step "generate the test copies of prometheus.yml, rules and alertmanager.yml" \
    "$PY" "$HERE/e2e.py" genconfig --deploy "$DEPLOY" --out "$WORK/config" --exporter "$EXPORTER" \
    --alertmanager "127.0.0.1:$AM_PORT" --webhook "http://127.0.0.1:$HOOK_PORT" --interval "$INTERVAL" --rule-for 0s

"$PY" "$HERE/webhook_receiver.py" "$HOOK_PORT" "$HOOK_LOG" >"$WORK/webhook.log" 2>&1 &
PIDS+=($!)
"$ALERTMANAGER" --config.file="$WORK/config/alertmanager.yml" --storage.path="$WORK/alertmanager" \
    --web.listen-address="127.0.0.1:$AM_PORT" --cluster.listen-address= >"$WORK/alertmanager.log" 2>&1 &
PIDS+=($!)
if retry 30 http_ok "$AM/-/ready"; then
    pass "alertmanager started on $AM"
    step "alertmanager inhibitions (synthetic alerts)" "$PY" "$HERE/e2e.py" inhibit --alertmanager "$AM"
else
    fail "alertmanager started on $AM"; tail -n 20 "$WORK/alertmanager.log"
fi

# --- exporter --------------------------------------------------------------------

echo "== exporter (demo mode) on $EXPORTER"
LOCATIONS="Hot,Mild,Cold,Plain"
if [[ ! -x "$BIN" ]]; then
    fail "exporter binary $BIN exists (build it with: swift build -c release)"
else
    "$BIN" --demo --web.listen-address="$EXPORTER" \
        --location "Hot=38.0,23.7,above=-100" \
        --location "Mild=51.51,-0.13,above=100,below=-100" \
        --location "Cold=64.15,-21.94,below=100" \
        --location "Plain=35.68,139.69,alerts=off" \
        >"$WORK/exporter.log" 2>&1 &
    PIDS+=($!)
    if retry 30 http_ok "http://$EXPORTER/-/healthy"; then
        pass "exporter /-/healthy answers 200"
        step "exporter /-/ready answers 200 once every location was polled" \
            retry 90 http_ok "http://$EXPORTER/-/ready"
        step "container health check script succeeds against the exporter" \
            env HEALTHCHECK_PORT="$EXPORTER_PORT" bash "$DEPLOY/docker/healthcheck.sh"
        step "container health check script fails when nothing listens" \
            bash -c '! env HEALTHCHECK_PORT="$1" bash "$2" 2>/dev/null' _ "$(free_port)" "$DEPLOY/docker/healthcheck.sh"
        # Lint findings count as failures, as in .ci/run.
        step "promtool check metrics on the exporter's /metrics" \
            bash -c 'out="$(curl -fsS --max-time 5 "$1" | promtool check metrics 2>&1)" && [[ -z "$out" ]] || { echo "$out"; exit 1; }' \
            _ "http://$EXPORTER/metrics"
    else
        fail "exporter /-/healthy answers 200"; tail -n 30 "$WORK/exporter.log" | sed 's/^/      /'
    fi

    # --- Prometheus ----------------------------------------------------------------
    echo "== prometheus on $PROM (scrape and rule interval $INTERVAL, every for: 0s)"
    prometheus --config.file="$WORK/config/prometheus.yml" --storage.tsdb.path="$WORK/prometheus" \
        --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
    PIDS+=($!)
    up_is_1() {
        curl -fs --max-time 5 "$PROM/api/v1/query" --data-urlencode 'query=up{job="openweather"} == 1' 2>/dev/null \
            | "$PY" -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)' 2>/dev/null
    }
    if retry 60 up_is_1; then
        pass "prometheus scrapes the exporter: up{job=\"openweather\"} == 1"
        metrics_check() {
            "$PY" "$HERE/e2e.py" metrics --prometheus "$PROM" --locations "$LOCATIONS" \
                --thresholds "Hot:above:-100,Mild:above:100,Mild:below:-100,Cold:below:100"
        }
        export PROM LOCATIONS
        export -f metrics_check
        # Retried: a location polled after the first scrapes needs one more.
        step "every exporter metric, per location, through /api/v1/query" retry 60 metrics_check
        step "alerts: Hot above, Cold below; Mild and Plain silent; Alertmanager and webhook notified" \
            "$PY" "$HERE/e2e.py" alerts --prometheus "$PROM" --alertmanager "$AM" --webhook-log "$HOOK_LOG" \
            --expect "OpenWeatherTemperatureAboveThreshold:Hot,OpenWeatherTemperatureBelowThreshold:Cold" --timeout 90 \
            --ignore 'OpenWeather(Frost|Heat|HeavyRain)Expected'
        dashboard_check() {
            "$PY" "$HERE/e2e.py" dashboard --prometheus "$PROM" \
                --dashboard "$DEPLOY/grafana/dashboards/openweather.json" --location-regex "${LOCATIONS//,/|}" \
                --may-be-empty 'offset|uv_index|dew_point|weather_alert|OfficialAlert'
        }
        export -f dashboard_check
        # Retried: rate() over 1m needs two scrapes of a counter that moved.
        step "every Grafana dashboard query returns data" retry 60 dashboard_check
    else
        fail "prometheus scrapes the exporter: up{job=\"openweather\"} == 1"
        tail -n 20 "$WORK/prometheus.log" | sed 's/^/      /'
        tail -n 20 "$WORK/exporter.log" | sed 's/^/      /'
    fi
fi

# --- forecast and One Call ----------------------------------------------------------

# A second demo exporter with One Call (an official alert everywhere) and a place whose lower
# threshold only the forecast crosses, scraped by a second Prometheus that sends to the same
# Alertmanager; then One Call loses its subscription.
forecast_section() {
    local place exporter2 prom2 sim
    place="$("$PY" "$HERE/e2e.py" frost_place --metrics "http://$EXPORTER/metrics")" \
        || { fail "a demo place whose forecast dips 2 °C below now"; return; }
    pass "a demo place whose forecast dips 2 °C below now: $place (LAT,LON,threshold)"
    exporter2="127.0.0.1:$(free_port)"
    prom2="http://127.0.0.1:$(free_port)"
    "$BIN" --demo --collector.onecall --web.listen-address="$exporter2" \
        --location "Frosty=${place%,*},below=${place##*,}" --location "Texarkana=33.44,-94.04,alerts=off" \
        >"$WORK/exporter2.log" 2>&1 &
    PIDS+=($!)
    if ! retry 30 http_ok "http://$exporter2/-/healthy"; then
        fail "second exporter (One Call) starts"; tail -n 20 "$WORK/exporter2.log" | sed 's/^/      /'; return
    fi
    sim="$(grep -o 'simulator=http://[0-9.:]*' "$WORK/exporter2.log" | head -1 | cut -d= -f2)"
    if curl -fs --max-time 5 -X POST "$sim/_simulator/onecall?alerts=always" >/dev/null; then
        pass "the second exporter's simulator puts an official alert everywhere"
    else
        fail "the second exporter's simulator puts an official alert everywhere"; return
    fi
    "$PY" "$HERE/e2e.py" genconfig --deploy "$DEPLOY" --out "$WORK/config2" --exporter "$exporter2" \
        --alertmanager "127.0.0.1:$AM_PORT" --webhook "http://127.0.0.1:$HOOK_PORT" --interval "$INTERVAL" --rule-for 0s >/dev/null
    prometheus --config.file="$WORK/config2/prometheus.yml" --storage.tsdb.path="$WORK/prometheus2" \
        --web.listen-address="${prom2#http://}" >"$WORK/prometheus2.log" 2>&1 &
    PIDS+=($!)
    step "forecast: Frosty's forecast raises \"frost expected\" while it is above its threshold; official alerts fire" \
        "$PY" "$HERE/e2e.py" forecast_alerts --prometheus "$prom2" --alertmanager "$AM" --place Frosty --official Frosty,Texarkana
    dashboard_onecall() {
        "$PY" "$HERE/e2e.py" dashboard --prometheus "$1" --dashboard "$DEPLOY/grafana/dashboards/openweather.json" \
            --location-regex "Frosty|Texarkana" --only 'uv_index|dew_point|weather_alert|forecast_' --may-be-empty 'offset'
    }
    export -f dashboard_onecall
    step "every forecast and One Call dashboard query returns data" retry 60 dashboard_onecall "$prom2"
    curl -fs --max-time 5 -X POST "$sim/_simulator/onecall?subscribed=false" >/dev/null
    step "One Call without its subscription: weather and forecast stay up from the free endpoints, one error line" \
        "$PY" "$HERE/e2e.py" onecall_fallback --prometheus "$prom2" --places Frosty,Texarkana --log "$WORK/exporter2.log"
}
if [[ -x "$BIN" ]] && http_ok "http://$EXPORTER/-/healthy"; then
    echo "== forecast and One Call"
    step "alertmanager inhibitions of the forecast alerts (synthetic alerts)" \
        "$PY" "$HERE/e2e.py" inhibit_forecast --alertmanager "$AM"
    forecast_section
fi


# --- the command line of every deployment ------------------------------------------

# Each deployment's exporter arguments (compose, compose demo, Kubernetes,
# systemd) with local paths: the binary must accept them and serve /-/healthy.
start_with_args() {
    local name="$1" args_json="$2" port log pid ok=1
    port="$(free_port)"
    log="$WORK/args.$port.log"
    mapfile -t args < <("$PY" -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$args_json")
    OPENWEATHER_API_KEY=test-key-not-used "$BIN" "${args[@]}" --web.listen-address="127.0.0.1:$port" >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    retry 20 http_ok "http://127.0.0.1:$port/-/healthy" || ok=0
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    if ((ok)); then pass "exporter accepts the $name command line"
    else fail "exporter accepts the $name command line: ${args[*]}"; tail -n 10 "$log" | sed 's/^/      /'; fi
}
# The image, the pod and the unit run the exporter as an unprivileged user.
run_unprivileged() {
    local dir port pid ok=1
    dir="$(mktemp -d "$WORK/nonroot.XXXXXX")" && chmod 755 "$WORK" "$dir"
    cp "$BIN" "$dir/openweather-exporter" && chmod 755 "$dir/openweather-exporter"
    port="$(free_port)"
    (cd / && exec setpriv --reuid=65532 --regid=65532 --clear-groups \
        "$dir/openweather-exporter" --demo --web.listen-address="127.0.0.1:$port") >"$dir/log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    retry 20 http_ok "http://127.0.0.1:$port/-/ready" || ok=0
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    ((ok)) || tail -n 10 "$dir/log"
    ((ok))
}
if [[ -x "$BIN" ]] && [[ "$(id -u)" == 0 ]] && command -v setpriv >/dev/null; then
    if run_unprivileged; then pass "exporter serves as uid 65532 (no root, no home)"
    else fail "exporter serves as uid 65532 (no root, no home)"; fi
fi

if [[ -x "$BIN" ]]; then
    echo "== deployment command lines"
    printf 'test-key-not-used\n' >"$WORK/api-key" && chmod 600 "$WORK/api-key"
    while IFS=$'\t' read -r name args_json; do
        start_with_args "$name" "$args_json"
    done < <("$PY" "$HERE/e2e.py" argsets --deploy "$DEPLOY" \
                --config "$DEPLOY/config/openweather-exporter.json" --key-file "$WORK/api-key")
fi

# --- summary ---------------------------------------------------------------------

echo "== summary"
for name in "${FAILED_NAMES[@]}"; do echo "  failed: $name"; done
echo "deploy: $PASSED passed, $FAILED failed"
if ((FAILED)); then echo "FAIL"; exit 1; fi
echo "PASS"

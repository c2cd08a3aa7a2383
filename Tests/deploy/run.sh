#!/usr/bin/env bash
# Checks everything in deploy/: the static checks (promtool, amtool, the mixin's
# output and its selector, the
# kustomizations built by kubectl kustomize and validated against the Kubernetes
# schemas, the Kubernetes/compose/systemd/Grafana structure), then an end-to-end run on
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
# Installs prometheus, prometheus-alertmanager, jsonnet, python3-yaml and curl from
# Debian when missing, and prometheus_client (for its OpenMetrics parser) from
# PyPI into the work directory (Debian's python3-prometheus-client without pip);
# Tests/deploy/spelling.sh installs codespell from PyPI, kubernetes.sh kubernetes-validate.
# Exits non-zero when any check fails.

set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEPLOY="$ROOT/deploy"
REPO="${REPO:-$ROOT}"
BIN="${EXPORTER_BIN:-$REPO/.build/release/openweather-exporter}"
LIMIT="${DEPLOY_TEST_TIMEOUT:-600}"
INTERVAL=5s

WORK="$(mktemp -d -t openweather-deploy-test.XXXXXX)"
source "$ROOT/Tests/TestSupport/processes.sh"
PIDS=()
PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()
SKIPPED_NAMES=()
STEP_NO=0

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        stop_process "$pid" 5 >/dev/null 2>&1
    done
    [[ -n "${WATCHDOG:-}" ]] && kill "$WATCHDOG" 2>/dev/null
    if [[ "${KEEP_WORK:-0}" == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
    end_children
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
skip() { SKIPPED=$((SKIPPED + 1)); SKIPPED_NAMES+=("$1"); echo "SKIP  $1"; }

# step NAME COMMAND...: runs COMMAND (bounded to 3 minutes), shows its output
# when it fails or when VERBOSE=1. A COMMAND that exits 77 could not run here (a
# tool that cannot exist on this machine): a SKIP, loud, with its reason.
step() {
    local name="$1"; shift
    local log="$WORK/step.$((STEP_NO += 1)).log"
    local status=0
    # Through bash -c, so that COMMAND may be one of the exported functions.
    timeout 180 bash -c '"$@"' _ "$@" >"$log" 2>&1 || status=$?
    if ((status == 0)); then
        pass "$name"
        [[ "${VERBOSE:-0}" == 1 ]] && sed 's/^/      /' "$log"
    elif ((status == 77)); then
        skip "$name: $(tail -n 1 "$log")"
    else
        fail "$name"
        tail -n 60 "$log" | sed 's/^/      /'
    fi
    return 0
}

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

http_ok() { curl -fs --max-time 5 -o /dev/null "$@"; }

# --- tools -----------------------------------------------------------------------

apt_install() {
    echo "installing $* from Debian"
    export DEBIAN_FRONTEND=noninteractive
    # policy-rc.d's 101 keeps the packages' services (a Prometheus on :9090) from starting: this
    # script starts what it needs itself, and stops only that.
    local policy="" status=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
    fi
    timeout 300 apt-get install -y --no-install-recommends "$@" >"$WORK/apt.log" 2>&1 \
        || { timeout 300 apt-get update >>"$WORK/apt.log" 2>&1 \
             && timeout 300 apt-get install -y --no-install-recommends "$@" >>"$WORK/apt.log" 2>&1; } \
        || status=1
    [[ -n "$policy" ]] && rm -f "$policy"
    ((status == 0)) || { tail -n 20 "$WORK/apt.log"; return 1; }
}

missing=()
command -v promtool >/dev/null || missing+=(prometheus)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v amtool >/dev/null || missing+=(prometheus-alertmanager)
command -v curl >/dev/null || missing+=(curl)
command -v jsonnet >/dev/null || missing+=(jsonnet)
command -v systemd-analyze >/dev/null || missing+=(systemd)
# Compose files are checked by Compose itself; Debian packages the standalone docker-compose.
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || missing+=(docker-compose)
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
# prometheus_client's OpenMetrics parser, for Tests/deploy/openmetrics.py; PYTHONPATH only for it.
OM_PYTHONPATH="$WORK/pylib"
if ! "$PY" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null \
    && ! timeout 180 "$PY" -m pip install --quiet --disable-pip-version-check --target "$OM_PYTHONPATH" prometheus_client >"$WORK/pip.log" 2>&1; then
    cat "$WORK/pip.log"
    apt_install python3-prometheus-client || echo "prometheus_client could not be installed: the OpenMetrics parser steps will fail"
fi

# openmetrics_parse URL REGEX...: prometheus_client's parser on a scrape with Prometheus' Accept and
# on the golden .om files, a family matching each REGEX required (see openmetrics.py). Retried by its
# callers: its comparison with a text scrape may straddle a poll.
openmetrics_parse() {
    local url="$1" pattern families=(); shift
    for pattern in "$@"; do families+=(--family "$pattern"); done
    PYTHONPATH="$OM_PYTHONPATH" "$PY" "$HERE/openmetrics.py" parse --url "$url" "${families[@]}" \
        --file "$ROOT/Tests/ExporterTests/Golden/fixtures.om" --file "$ROOT/Tests/ExporterTests/Golden/onecall.om" \
        --file "$ROOT/Tests/ExporterTests/Golden/onecall-nowcast.om"
}

# step runs its command in a child bash: hand it the functions and settings.
export ROOT DEPLOY REPO BIN WORK PY HERE OM_PYTHONPATH
export -f wait_for now_ms free_port http_ok openmetrics_parse

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
        "$DEPLOY/kubernetes/base/prometheusrule.yaml" >"$WORK/prometheusrule-groups.yml" \
        && promtool check rules "$WORK/prometheusrule-groups.yml"
}
export -f extract_prometheusrule
step "promtool check rules on the PrometheusRule's groups" extract_prometheusrule
step "deploy/mixin renders the shipped rules, dashboard and PrometheusRule byte for byte (render.sh --check)" \
    bash "$DEPLOY/mixin/render.sh" --check
step "deploy/mixin: its objects are the shipped files; rendered with openweatherSelector, every query of the rules, their texts and the dashboard carries it" \
    "$PY" "$HERE/mixin.py" "$ROOT"
step "amtool check-config deploy/alertmanager/alertmanager.yml" \
    amtool check-config "$DEPLOY/alertmanager/alertmanager.yml"
step "alertmanager routes: critical alerts go to webhook-critical" \
    amtool config routes test --config.file="$DEPLOY/alertmanager/alertmanager.yml" \
    --verify.receivers=webhook-critical alertname=OpenWeatherExporterDown severity=critical job=openweather
step "alertmanager routes: temperature alerts go to webhook" \
    amtool config routes test --config.file="$DEPLOY/alertmanager/alertmanager.yml" \
    --verify.receivers=webhook alertname=OpenWeatherTemperatureAboveThreshold severity=warning location=Seville
step "alertmanager routes: heat index, wet-bulb and wind chill alerts, now and forecast, go to webhook" \
    bash -c 'for alert in HeatIndexAboveThreshold HeatIndexExpected WetBulbAboveThreshold WetBulbExpected WindChillBelowThreshold WindChillExpected; do
            amtool config routes test --config.file="$1" --verify.receivers=webhook "alertname=OpenWeather$alert" severity=warning location=Phoenix || exit 1
        done' \
    _ "$DEPLOY/alertmanager/alertmanager.yml"
step "alertmanager routes: air quality and place-not-found alerts go to webhook" \
    bash -c 'amtool config routes test --config.file="$1" --verify.receivers=webhook alertname=OpenWeatherAirQualityPoor severity=warning location=Delhi \
        && amtool config routes test --config.file="$1" --verify.receivers=webhook alertname=OpenWeatherPlaceNotFound severity=warning location=Nowhere source=geocoding' \
    _ "$DEPLOY/alertmanager/alertmanager.yml"
step "kubectl kustomize builds every kustomization; kubernetes-validate --strict on what it builds" \
    bash "$HERE/kubernetes.sh" "$WORK/kubernetes"
step "structure of deploy/ (kubernetes as kubectl kustomize builds it, docker, systemd, grafana) and the Markdown links" \
    "$PY" "$HERE/check_structure.py" "$ROOT"
step "spelling of the Markdown, deploy/, Sources/ and .ci/ (codespell from PyPI; a word written twice)" \
    bash "$HERE/spelling.sh"

compose_config() {
    cd "$DEPLOY/docker" || return 1
    if docker compose version >/dev/null 2>&1; then
        docker compose -f compose.yaml config -q && docker compose -f compose.yaml -f compose.demo.yaml config -q
    elif command -v docker-compose >/dev/null; then
        # Validation only: `config` needs no Docker engine (this machine has none).
        docker-compose -f compose.yaml config -q && docker-compose -f compose.yaml -f compose.demo.yaml config -q
    else
        echo "neither 'docker compose' nor docker-compose could be installed (apt-get install docker-compose)"
        exit 77
    fi
}
export -f compose_config
step "compose files parse (compose.yaml, + compose.demo.yaml)" compose_config

systemd_verify() {
    if ! command -v systemd-analyze >/dev/null; then
        echo "systemd-analyze could not be installed (apt-get install systemd)"
        exit 77
    fi
    # verify insists the ExecStart binary exists: point it at one that does.
    local exe="$BIN"; [[ -x "$exe" ]] || exe=/bin/true
    mkdir -p "$WORK/systemd"
    sed "s|/usr/local/bin/openweather-exporter|$exe|" "$DEPLOY/systemd/openweather-exporter.service" \
        >"$WORK/systemd/openweather-exporter.service"
    local out
    out="$(systemd-analyze verify "$WORK/systemd/openweather-exporter.service" 2>&1)" || { echo "$out"; return 1; }
    # Unknown or misspelt settings are only warnings: treat any output as failure.
    [[ -z "$out" ]] || { echo "$out"; return 1; }
    # The socket unit with the service it activates, the drop-in for it in place.
    cp "$DEPLOY/systemd/openweather-exporter.socket" "$WORK/systemd/"
    mkdir -p "$WORK/systemd/openweather-exporter.service.d"
    sed "s|/usr/local/bin/openweather-exporter|$exe|" "$DEPLOY/systemd/socket-activation.conf" \
        >"$WORK/systemd/openweather-exporter.service.d/socket-activation.conf"
    out="$(cd "$WORK/systemd" && systemd-analyze verify openweather-exporter.socket openweather-exporter.service 2>&1)" ||
        { echo "$out"; return 1; }
    [[ -z "$out" ]] || { echo "$out"; return 1; }
    systemd-analyze security --offline=yes "$WORK/systemd/openweather-exporter.service" 2>/dev/null | tail -n 1 || true
}
export -f systemd_verify
step "systemd-analyze verify deploy/systemd/openweather-exporter.service and .socket" systemd_verify

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
if wait_for 30 http_ok "$AM/-/ready"; then
    pass "alertmanager started on $AM"
    step "alertmanager inhibitions (synthetic alerts)" "$PY" "$HERE/e2e.py" inhibit --alertmanager "$AM"
else
    fail "alertmanager started on $AM"; tail -n 20 "$WORK/alertmanager.log"
fi

# --- exporter --------------------------------------------------------------------

echo "== exporter (demo mode) on $EXPORTER"
# Four places by coordinates, two by name (Paris; a postal code) and one the
# geocoder does not know. --demo polls air pollution too, every minute.
LOCATIONS="Hot,Mild,Cold,Plain,Paris,Office"
PLACES='{"Paris": ["Paris", "Ile-de-France", "FR"], "Office": ["Mountain View", "", "US"]}'
NOT_FOUND="Nowhere"
if [[ ! -x "$BIN" ]]; then
    fail "exporter binary $BIN exists (build it with: swift build -c release)"
else
    "$BIN" --demo --web.listen-address="$EXPORTER" \
        --location "Hot=38.0,23.7,above=-100,gust=100,heat_index=-100" \
        --location "Mild=51.51,-0.13,above=100,below=-100,wet_bulb=100" \
        --location "Cold=64.15,-21.94,below=100,wind_chill=100" \
        --location "Plain=35.68,139.69,alerts=off" \
        --location "Paris" \
        --location "Office=zip:94040,US" \
        --location "Nowhere=Xyzzyville" \
        >"$WORK/exporter.log" 2>&1 &
    EXPORTER_PID=$!
    PIDS+=($EXPORTER_PID)
    if wait_for 30 http_ok "http://$EXPORTER/-/healthy"; then
        pass "exporter /-/healthy answers 200"
        step "exporter /-/ready answers 200 once every location was polled" \
            wait_for 90 http_ok "http://$EXPORTER/-/ready"
        # The image's health check finds the address in the exporter's own sockets (the image runs it
        # with none given); given one, it asks that one.
        step "health check subcommand succeeds against the exporter (port $EXPORTER_PORT, found in its sockets)" \
            "$BIN" healthcheck
        step "health check subcommand succeeds given the exporter's address" \
            "$BIN" healthcheck --web.listen-address="$EXPORTER"
        step "health check subcommand fails, with exit 1, where nothing listens" \
            bash -c '"$1" healthcheck --web.listen-address=127.0.0.1:1; [ $? = 1 ]' _ "$BIN"
        # Lint findings count as failures, as in .ci/run; on a scrape with every
        # source's families (air pollution, health per source with geocoding).
        lint_metrics() {
            local scrape out
            scrape="$(curl -fsS --max-time 5 "http://$EXPORTER/metrics")" || return 1
            for want in 'openweather_air_quality_index{' 'openweather_air_pollutant_grams_per_cubic_meter{' \
                'openweather_air_pollution_observation_timestamp_seconds{' 'openweather_air_quality_scale_index{' \
                'openweather_forecast_air_quality_max_index{' 'openweather_up{location="Nowhere",source="geocoding"} 0'; do
                grep -qF "$want" <<<"$scrape" || { echo "the scrape has no $want"; return 1; }
            done
            out="$(promtool check metrics <<<"$scrape" 2>&1)" && [[ -z "$out" ]] || { echo "$out"; return 1; }
        }
        export EXPORTER
        export -f lint_metrics
        step "promtool check metrics on the exporter's /metrics, air pollution and places by name included" \
            wait_for 60 lint_metrics
        step "OpenMetrics: prometheus_client's parser reads a scrape with Prometheus' Accept (weather, air pollution, forecast, geocoding) and the golden .om files" \
            wait_for 30 openmetrics_parse "http://$EXPORTER/metrics" \
                '^openweather_api_requests$' '^openweather_air_' '^openweather_forecast_' '^openweather_temperature_celsius$'
        # The log says which place a name was taken for, and why a name failed.
        step "the log names the place taken for Paris and the reason Nowhere failed" \
            bash -c 'grep -E "msg=\"place resolved\" location=Paris source=geocoding .*state=Ile-de-France country=FR" "$1" \
                && grep -E "location=Nowhere source=geocoding .*no place matches" "$1"' _ "$WORK/exporter.log"
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
    if wait_for 60 up_is_1; then
        pass "prometheus scrapes the exporter: up{job=\"openweather\"} == 1"
        metrics_check() {
            "$PY" "$HERE/e2e.py" metrics --prometheus "$PROM" --locations "$LOCATIONS" \
                --places "$PLACES" --not-found "$NOT_FOUND" \
                --thresholds "Hot:above:-100,Mild:above:100,Mild:below:-100,Cold:below:100"
        }
        export PROM LOCATIONS PLACES NOT_FOUND
        export -f metrics_check
        # Retried: a location polled after the first scrapes needs one more.
        step "every exporter metric, per location and source, places by name resolved, through /api/v1/query" \
            wait_for 60 metrics_check
        # The demo logs its simulator's address; its fault API makes Hot's air very poor.
        SIMULATOR="$(grep -o 'simulator=http://[0-9.:]*' "$WORK/exporter.log" | head -n 1 | cut -d= -f2)"
        step "the simulator answers air quality 5 for Hot without nh3 (fault API), and Prometheus has both" \
            "$PY" "$HERE/e2e.py" force-aqi --simulator "${SIMULATOR:-http://127.0.0.1:1}" --prometheus "$PROM" \
            --location Hot --latitude 38.0 --longitude 23.7 --aqi 5
        step "alerts: Hot above (temperature and heat index), Cold below (temperature and wind chill), Hot's air poor, Nowhere not found; Mild, Plain, Paris, Office silent; Alertmanager and webhook notified" \
            "$PY" "$HERE/e2e.py" alerts --prometheus "$PROM" --alertmanager "$AM" --webhook-log "$HOOK_LOG" \
            --expect "OpenWeatherTemperatureAboveThreshold:Hot,OpenWeatherTemperatureBelowThreshold:Cold,OpenWeatherHeatIndexAboveThreshold:Hot,OpenWeatherWindChillBelowThreshold:Cold,OpenWeatherAirQualityPoor:Hot,OpenWeatherPlaceNotFound:Nowhere" \
            --timeout 150 --ignore 'OpenWeather(Forecast(Below|Above)Threshold|ForecastMissing|HeavyRainExpected|HeatIndexExpected|WindChillExpected)'
        # The simulator's answers skip no list entry (a real answer's odd hour does) and carry one
        # condition each (a real one may add "mist" to "rain"): those queries may be empty. The
        # answer-field panel has data: force-aqi's answer leaves nh3 out.
        dashboard_check() {
            "$PY" "$HERE/e2e.py" dashboard --prometheus "$PROM" \
                --dashboard "$DEPLOY/grafana/dashboards/openweather.json" --location-regex "${LOCATIONS//,/|}|$NOT_FOUND" \
                --may-be-empty 'offset|uv_index|dew_point|weather_alert|OfficialAlert|precipitation_next|entries_skipped|secondary_condition'
        }
        export -f dashboard_check
        # Retried: rate() over 1m needs two scrapes of a counter that moved.
        step "every Grafana dashboard query returns data" wait_for 60 dashboard_check
        step "prometheus negotiated OpenMetrics: # UNIT in its metadata, counter family without _total, _created series stored" \
            wait_for 30 "$PY" "$HERE/openmetrics.py" ingested --prometheus "$PROM" --job openweather
    else
        fail "prometheus scrapes the exporter: up{job=\"openweather\"} == 1"
        tail -n 20 "$WORK/prometheus.log" | sed 's/^/      /'
        tail -n 20 "$WORK/exporter.log" | sed 's/^/      /'
    fi
fi

# --- a restart with a state file, Prometheus scraping every second -----------------

# 12 locations at 30 requests a minute: without the state file the first round after a start
# takes 24 s; with it, every reading is back before /-/ready says 200.
state_restart() {
    local port prom_port dir t0 t1 i
    # Runs in the step's own shell: whatever happens, it stops what it started.
    STATE_PIDS=()
    trap 'kill "${STATE_PIDS[@]}" 2>/dev/null' EXIT TERM
    port="$(free_port)"; prom_port="$(free_port)"; dir="$WORK/state"
    mkdir -p "$WORK/state-prometheus"
    printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: state\n    scrape_timeout: 1s\n    static_configs: [{targets: ["127.0.0.1:%s"]}]\n' \
        "$port" >"$WORK/state-prometheus/prometheus.yml"
    local pid source args=(--demo --web.listen-address="127.0.0.1:$port" --storage.path="$dir"
        --collector.weather.interval=10m --openweather.max-requests-per-minute=30)
    # The weather alone: every other source the demo polls, as the demo exporter above says, is off.
    local polled
    polled="$("$PY" "$HERE/e2e.py" polled_sources --metrics "http://$EXPORTER/metrics")" \
        || { echo "the demo exporter on $EXPORTER did not say what it polls"; return 1; }
    for source in $polled; do [[ $source == weather ]] || args+=(--no-collector."$source"); done
    for i in $(seq 1 12); do args+=(--location "P$i=$((i * 6)).5,$((i * 13)).25"); done
    "$BIN" "${args[@]}" >"$WORK/state-1.log" 2>&1 & pid=$!
    STATE_PIDS+=("$pid")
    prometheus --config.file="$WORK/state-prometheus/prometheus.yml" --storage.tsdb.path="$WORK/state-prometheus/data" \
        --web.listen-address="127.0.0.1:$prom_port" >"$WORK/state-prometheus.log" 2>&1 &
    STATE_PIDS+=($!)
    all_scraped() {
        curl -fs --max-time 5 "http://127.0.0.1:$1/api/v1/query" --data-urlencode 'query=count(openweather_temperature_celsius{job="state"}) == 12' \
            | "$PY" -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)' 2>/dev/null
    }
    wait_for 90 all_scraped "$prom_port" || { echo "Prometheus never saw the 12 locations"; tail -5 "$WORK/state-1.log"; return 1; }
    # Samples well before the restart, for the gap check to compare with.
    "$PY" "$HERE/e2e.py" scraped --prometheus "http://127.0.0.1:$prom_port" --job state --count 12 --seconds 3 || return 1
    t0=$(date +%s.%N)
    kill -TERM "$pid"; wait "$pid"
    STATE_PIDS=("${STATE_PIDS[1]}")
    "$BIN" "${args[@]}" >"$WORK/state-2.log" 2>&1 &
    STATE_PIDS+=($!)
    for i in $(seq 300); do http_ok "http://127.0.0.1:$port/-/ready" && break; sleep 0.1; done
    t1=$(date +%s.%N)
    http_ok "http://127.0.0.1:$port/-/ready" || { echo "not ready 30 s after the restart"; cat "$WORK/state-2.log"; return 1; }
    grep 'state restored' "$WORK/state-2.log" | grep -q 'readings=12' || { echo "no full restore:"; cat "$WORK/state-2.log"; return 1; }
    # gap waits until Prometheus has scraped every location more than two intervals after /-/ready.
    "$PY" "$HERE/e2e.py" gap --prometheus "http://127.0.0.1:$prom_port" --job state --count 12 --down "$t0" --up "$t1" || return 1
    # The state file's families (only with --storage.path) in OpenMetrics too; its counter's _created.
    # No openweather_api_requests here: every reading came from the state file, no request was made.
    wait_for 20 openmetrics_parse "http://127.0.0.1:$port/metrics" '^openweather_exporter_state_write_failures$'
}
export -f state_restart
export BIN WORK PY HERE EXPORTER
if [[ -x "$BIN" ]]; then
    echo "== restart with --storage.path, Prometheus scraping every second"
    step "a restart with the state file: no gap in openweather_temperature_celsius beyond the restart; its families parse as OpenMetrics" state_restart
fi

# --- backfill: 24 h of the demo places into a real Prometheus ------------------------

# `backfill --demo` writes the simulator's last 24 hours (weather from its timemachine, air
# pollution from its history); promtool makes blocks of the file; a Prometheus started on those
# blocks (loopback only, scraping nothing) answers a query at a past hour with the file's value.
backfill_history() {
    local dir="$WORK/backfill" prom_port until at line expected got
    BACKFILL_PIDS=()
    trap 'kill "${BACKFILL_PIDS[@]}" 2>/dev/null' EXIT TERM
    mkdir -p "$dir"
    until=$(( $(date +%s) / 3600 * 3600 ))
    "$BIN" backfill --demo --since=24h --until="$until" --output="$dir/history.om" \
        --openweather.max-requests-per-minute=100000 2>"$dir/backfill.log" || { cat "$dir/backfill.log"; return 1; }
    grep -q '5/5 locations done, 0 calls left' "$dir/backfill.log" || { echo "no progress on stderr:"; cat "$dir/backfill.log"; return 1; }
    [[ "$(tail -n 1 "$dir/history.om")" == "# EOF" ]] || { echo "the file does not end with # EOF"; return 1; }
    [[ ! -e "$dir/history.om.partial" ]] || { echo "the work directory was left behind"; return 1; }
    promtool tsdb create-blocks-from openmetrics "$dir/history.om" "$dir/data" || return 1
    "$PY" "$HERE/e2e.py" backfill_panels --history "$dir/history.om" --dashboard "$DEPLOY/grafana/dashboards/openweather.json" || return 1
    prom_port="$(free_port)"
    printf 'global: {scrape_interval: 1m}\n' >"$dir/prometheus.yml"
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$prom_port" >"$dir/prometheus.log" 2>&1 &
    BACKFILL_PIDS+=($!)
    wait_for 30 http_ok "http://127.0.0.1:$prom_port/-/ready" || { tail -n 20 "$dir/prometheus.log"; return 1; }
    for at in $((until - 20 * 3600)) $((until - 3600)); do
        for metric in 'openweather_temperature_celsius{job="openweather",location="London"}' 'openweather_air_quality_index{job="openweather",location="Tokyo"}'; do
            line="$(grep -F "$metric " "$dir/history.om" | grep " $at\$")" || { echo "the file has no $metric at $at"; return 1; }
            expected="$(awk '{print $(NF-1)}' <<<"$line")"
            got="$(curl -fs --max-time 5 "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$metric" \
                --data-urlencode "time=$at" | "$PY" -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")')"
            [[ "$got" == "$expected" ]] || { echo "$metric at $at: Prometheus has $got, the file $expected"; return 1; }
            echo "$metric at $at: $got, as written"
        done
    done
}
export -f backfill_history
if [[ -x "$BIN" ]]; then
    echo "== backfill"
    step "backfill --demo 24 h: promtool tsdb create-blocks-from openmetrics accepts it; the dashboard's lines of its families connect its hourly samples; Prometheus on the blocks reads past values back" backfill_history
fi

# --- a newcomer's journey: an existing Prometheus plus the snippet, a backfill, the demo's alert ---

# Issue 29 §1-3: plain --demo (its five places with thresholds); the last three hours of the same
# places backfilled (--label instance= the exporter's address, job="openweather" by default) and made
# into blocks; the stock prometheus.yml of Debian's package (or a copy of it) with the snippet merged
# in as deploy/docs/install.md says, the shipped rules unchanged. Then: the existing jobs and the
# exporter's, the rules loaded, La Rinconada's forecast alert pending within minutes, and the
# dashboard's temperature query with $job from its variable reading the backfilled hours.
newcomer_journey() {
    local dir="$WORK/journey" port prom_port until log
    JOURNEY_PIDS=()
    trap 'kill "${JOURNEY_PIDS[@]}" 2>/dev/null' EXIT TERM
    mkdir -p "$dir"
    port="$(free_port)"; prom_port="$(free_port)"
    until=$(( $(date +%s) / 3600 * 3600 ))
    "$BIN" backfill --demo --since=3h --until="$until" --output="$dir/history.om" --label "instance=127.0.0.1:$port" \
        --openweather.max-requests-per-minute=100000 2>"$dir/backfill.log" || { cat "$dir/backfill.log"; return 1; }
    promtool tsdb create-blocks-from openmetrics "$dir/history.om" "$dir/data" >"$dir/promtool.log" 2>&1 \
        || { cat "$dir/promtool.log"; return 1; }
    "$BIN" --demo --web.listen-address="127.0.0.1:$port" >"$dir/exporter.log" 2>&1 &
    JOURNEY_PIDS+=($!)
    "$PY" "$HERE/e2e.py" merge --existing /etc/prometheus/prometheus.yml --snippet "$DEPLOY/prometheus/snippet.yml" \
        --out "$dir/config" --exporter "127.0.0.1:$port" --interval 5s || return 1
    log="$(promtool check config "$dir/config/prometheus.yml" 2>&1)" || { echo "$log"; return 1; }
    grep -q 'SUCCESS: 1 rule files found' <<<"$log" || { echo "promtool found no rule file: $log"; return 1; }
    prometheus --config.file="$dir/config/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$prom_port" >"$dir/prometheus.log" 2>&1 &
    JOURNEY_PIDS+=($!)
    wait_for 30 http_ok "http://127.0.0.1:$prom_port/-/ready" || { tail -n 20 "$dir/prometheus.log"; return 1; }
    "$PY" "$HERE/e2e.py" journey --prometheus "http://127.0.0.1:$prom_port" --dashboard "$DEPLOY/grafana/dashboards/openweather.json" \
        --rules "$DEPLOY/prometheus/rules/openweather.yml" --cold "La Rinconada" --instance "127.0.0.1:$port" \
        --existing-jobs prometheus,node --backfill-until "$until" --timeout 120 \
        || { tail -n 5 "$dir/exporter.log"; tail -n 5 "$dir/prometheus.log"; return 1; }
}
export -f newcomer_journey
if [[ -x "$BIN" ]]; then
    echo "== a newcomer's journey"
    step "an existing prometheus.yml plus snippet.yml: its jobs and openweather scraped, the shipped rules loaded; --demo's La Rinconada forecast alert pending within 2 minutes; a backfill (job=openweather, --label instance) read through the dashboard's \$job" newcomer_journey
fi

# --- TLS and basic auth (--web.config.file) --------------------------------------

# deploy/config/web-config.yml with a test CA's certificate and a fresh user, the
# exporter behind it, and a real Prometheus scraping it over https with
# tls_config.ca_file and basic_auth; then what must be refused is refused.
if [[ -x "$BIN" ]]; then
    echo "== TLS and basic auth"
    command -v htpasswd >/dev/null || apt_install apache2-utils || fail "install apache2-utils (htpasswd)"
    command -v openssl >/dev/null || apt_install openssl || fail "install openssl"
    TLS="$WORK/tls"
    make_certificates() {
        mkdir -p "$TLS" && cd "$TLS" || return 1
        local key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
        openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj "/CN=deploy test CA" \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null || return 1
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
        printf 'extendedKeyUsage=clientAuth\n' > client.ext
        for name in server client; do
            openssl req $key -keyout $name.key -out $name.csr -subj "/CN=$name" 2>/dev/null &&
            openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                -extfile $name.ext -out $name.pem 2>/dev/null || return 1
        done
        openssl req -x509 $key -keyout stranger.key -out stranger.pem -days 2 -subj "/CN=stranger" 2>/dev/null || return 1
        head -c 18 /dev/urandom | base64 | tr -d '/+=' > password
        htpasswd -nbBC 10 "" "$(cat password)" | tr -d ':\n' > hash
    }
    export TLS
    export -f make_certificates
    step "test CA, server and client certificates, bcrypt hash (htpasswd -nBC 10)" make_certificates
    TLS_PORT="$(free_port)"
    TLS_PROM_PORT="$(free_port)"
    TLS_EXPORTER="127.0.0.1:$TLS_PORT"
    TLS_PROM="http://127.0.0.1:$TLS_PROM_PORT"
    webconfig() { # [client-ca] writes $WORK/tls-config/{web-config.yml,prometheus-tls.yml}
        local extra=()
        [[ "${1:-}" == client-ca ]] && extra=(--client-ca "$TLS/ca.pem" --client-cert "$TLS/client.pem" --client-key "$TLS/client.key")
        "$PY" "$HERE/e2e.py" webconfig --deploy "$DEPLOY" --out "$WORK/tls-config" --exporter "$TLS_EXPORTER" \
            --interval "$INTERVAL" --cert "$TLS/server.pem" --key "$TLS/server.key" --ca "$TLS/ca.pem" \
            --user prometheus --hash "$(cat "$TLS/hash")" --password-file "$TLS/password" "${extra[@]}"
    }
    export TLS_EXPORTER TLS_PROM INTERVAL
    export -f webconfig
    step "web config from deploy/config/web-config.yml, prometheus.yml with scheme https, tls_config, basic_auth" webconfig
    "$BIN" --demo --web.listen-address="$TLS_EXPORTER" --web.config.file="$WORK/tls-config/web-config.yml" \
        --web.enable-lifecycle --location "Hot=38.0,23.7" >"$WORK/exporter-tls.log" 2>&1 &
    TLS_EXPORTER_PID=$!
    PIDS+=($TLS_EXPORTER_PID)
    auth=(--cacert "$TLS/ca.pem" -u "prometheus:$(cat "$TLS/password" 2>/dev/null)")
    if wait_for 30 http_ok "${auth[@]}" "https://$TLS_EXPORTER/-/healthy"; then
        pass "exporter serves https with basic auth (curl --cacert -u)"
        status_is() { # expected-code curl-args...: the HTTP status curl sees ("000" when TLS fails)
            local want="$1"; shift
            local got
            got="$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@")"
            echo "status $got (want $want)"
            [[ "$got" == "$want" ]]
        }
        export -f status_is
        step "no password: 401 with WWW-Authenticate: Basic" \
            bash -c 'status_is 401 --cacert "$1/ca.pem" "https://$2/metrics" && curl -s --max-time 5 --cacert "$1/ca.pem" -D - -o /dev/null "https://$2/metrics" | grep -q "^WWW-Authenticate: Basic"' \
            _ "$TLS" "$TLS_EXPORTER"
        step "wrong password: 401" status_is 401 --cacert "$TLS/ca.pem" -u prometheus:wrong "https://$TLS_EXPORTER/metrics"
        step "unknown user: 401" status_is 401 --cacert "$TLS/ca.pem" -u mallory:"$(cat "$TLS/password")" "https://$TLS_EXPORTER/metrics"
        # curl does send a TLS 1.1 ClientHello here; the server's "protocol version" alert is the refusal.
        step "TLS 1.1 is refused by the server (min_version TLS12): protocol version alert" \
            bash -c 'out="$(curl -sv --max-time 5 --tlsv1.1 --tls-max 1.1 "${@}" -o /dev/null 2>&1)"; echo "$out" | grep -i alert; echo "$out" | grep -q "alert, protocol version"' \
            _ "${auth[@]}" "https://$TLS_EXPORTER/metrics"
        step "plain http on the TLS port gets no answer" \
            bash -c '! curl -fs --max-time 5 -o /dev/null "http://$1/metrics"' _ "$TLS_EXPORTER"
        step "Strict-Transport-Security from http_server_config.headers" \
            bash -c 'curl -s --max-time 5 "${@}" -D - -o /dev/null | grep -q "^Strict-Transport-Security: max-age=31536000"' _ "${auth[@]}" "https://$TLS_EXPORTER/metrics"
        step "POST /-/reload with --web.enable-lifecycle: 200" status_is 200 -X POST "${auth[@]}" "https://$TLS_EXPORTER/-/reload"
        if [[ -n "${EXPORTER:-}" ]]; then
            step "POST /-/reload without --web.enable-lifecycle: 403" status_is 403 -X POST "http://$EXPORTER/-/reload"
        fi

        prometheus --config.file="$WORK/tls-config/prometheus-tls.yml" --storage.tsdb.path="$WORK/prometheus-tls" \
            --web.listen-address="127.0.0.1:$TLS_PROM_PORT" >"$WORK/prometheus-tls.log" 2>&1 &
        PIDS+=($!)
        tls_scraped() { # a weather series came through the https + basic auth scrape
            curl -fs --max-time 5 "$TLS_PROM/api/v1/query" \
                --data-urlencode 'query=up{job="openweather"} == 1 and on() openweather_up{job="openweather",location="Hot"} == 1' 2>/dev/null \
                | "$PY" -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)' 2>/dev/null
        }
        export -f tls_scraped
        if wait_for 60 tls_scraped; then
            pass "prometheus scrapes over https with tls_config.ca_file and basic_auth: up == 1, weather series stored"
        else
            fail "prometheus scrapes over https with tls_config.ca_file and basic_auth"
            curl -s --max-time 5 "$TLS_PROM/api/v1/targets" | head -c 2000; echo
            tail -n 20 "$WORK/prometheus-tls.log" | sed 's/^/      /'
        fi

        # Client certificates required: the file is rewritten in place, no restart (the toolkit's behaviour).
        step "web config rewritten with client_auth_type RequireAndVerifyClientCert" webconfig client-ca
        step "no client certificate: the handshake is refused" \
            wait_for 10 bash -c '! curl -s --max-time 5 -o /dev/null "${@}"' _ "${auth[@]}" "https://$TLS_EXPORTER/metrics"
        step "a client certificate from the CA: 200" \
            status_is 200 "${auth[@]}" --cert "$TLS/client.pem" --key "$TLS/client.key" "https://$TLS_EXPORTER/metrics"
        step "a client certificate from another CA is refused" \
            bash -c '! curl -s --max-time 5 -o /dev/null "${@}"' _ "${auth[@]}" --cert "$TLS/stranger.pem" --key "$TLS/stranger.key" "https://$TLS_EXPORTER/metrics"
    else
        fail "exporter serves https with basic auth (curl --cacert -u)"; tail -n 20 "$WORK/exporter-tls.log" | sed 's/^/      /'
    fi
fi

# --- the shape of the sections below ---------------------------------------------------

# An exporter on a free port (its address in STARTED, its log $WORK/exporter-NAME.log), waited for
# until /-/healthy answers; else `fail WHAT` with the log's tail, and status 1.
start_exporter() {
    local name=$1 what=$2
    shift 2
    STARTED="127.0.0.1:$(free_port)"
    "$@" --web.listen-address="$STARTED" >"$WORK/exporter-$name.log" 2>&1 &
    PIDS+=($!)
    if ! wait_for 30 http_ok "http://$STARTED/-/healthy"; then
        fail "$what"; tail -n 20 "$WORK/exporter-$name.log" | sed 's/^/      /'; return 1
    fi
}

# The simulator of a demo exporter started for it (its URL in SIMULATED), steered by a section
# before its own exporter's first poll.
start_simulator() {
    local name=$1
    start_exporter "$name" "a demo exporter starts for its simulator ($name)" "$BIN" --demo --location "Elsewhere=0,0" || return 1
    SIMULATED="$(grep -o 'simulator=http://[0-9.:]*' "$WORK/exporter-$name.log" | head -1 | cut -d= -f2)"
}

# A Prometheus (its URL in PROMETHEUS_URL) with the shipped configuration and rules, scraping
# EXPORTER and sending to the shared Alertmanager and webhook.
start_prometheus() {
    local name=$1 exporter=$2
    PROMETHEUS_URL="http://127.0.0.1:$(free_port)"
    "$PY" "$HERE/e2e.py" genconfig --deploy "$DEPLOY" --out "$WORK/config-$name" --exporter "$exporter" \
        --alertmanager "127.0.0.1:$AM_PORT" --webhook "http://127.0.0.1:$HOOK_PORT" --interval "$INTERVAL" --rule-for 0s >/dev/null
    prometheus --config.file="$WORK/config-$name/prometheus.yml" --storage.tsdb.path="$WORK/prometheus-$name" \
        --web.listen-address="${PROMETHEUS_URL#http://}" >"$WORK/prometheus-$name.log" 2>&1 &
    PIDS+=($!)
}

# --- forecast and One Call ----------------------------------------------------------

# A second demo exporter with One Call (an official alert and rain 10 minutes ahead everywhere) and a place whose lower
# threshold only the forecast crosses, scraped by a second Prometheus that sends to the same
# Alertmanager; then One Call loses its subscription. Once with One Call 3.0, once with 4.0 (whose
# forecast, read from its 1h, 1day and, for the horizons under the hour, 15min timelines, must raise
# the same alerts).
forecast_section() {
    local collector=$1 place exporter2 prom2 sim
    local extra=()
    [[ "$collector" == onecall4 ]] && extra=(--collector.forecast.horizons=15m,30m,45m,1h,3h,6h,12h,24h,48h)
    place="$("$PY" "$HERE/e2e.py" frost_place --metrics "http://$EXPORTER/metrics")" \
        || { fail "a demo place whose forecast dips 2 °C below now"; return; }
    pass "a demo place whose forecast dips 2 °C below now: $place (LAT,LON,threshold)"
    start_exporter "$collector" "second exporter ($collector) starts" "$BIN" --demo --collector."$collector" "${extra[@]}" \
        --location "Frosty=${place%,*},below=${place##*,}" --location "Texarkana=33.44,-94.04,alerts=off" || return
    exporter2=$STARTED
    sim="$(grep -o 'simulator=http://[0-9.:]*' "$WORK/exporter-$collector.log" | head -1 | cut -d= -f2)"
    if curl -fs --max-time 5 -X POST "$sim/_simulator/onecall?alerts=always&rain=soon" >/dev/null; then
        pass "$collector: the second exporter's simulator puts an official alert everywhere, and rain 10 minutes ahead"
    else
        fail "$collector: the second exporter's simulator puts an official alert everywhere, and rain 10 minutes ahead"; return
    fi
    start_prometheus "$collector" "$exporter2"
    prom2=$PROMETHEUS_URL
    step "$collector: Frosty's forecast raises \"forecast below threshold\" while it is above its threshold; official and rain-soon alerts fire, but none for Texarkana (alerts=off)" \
        "$PY" "$HERE/e2e.py" forecast_alerts --prometheus "$prom2" --alertmanager "$AM" --place Frosty --official Frosty \
        --rain-soon Frosty --silent Texarkana
    dashboard_onecall() {
        "$PY" "$HERE/e2e.py" dashboard --prometheus "$1" --dashboard "$DEPLOY/grafana/dashboards/openweather.json" \
            --location-regex "Frosty|Texarkana" --only 'uv_index|dew_point|weather_alert|forecast_|precipitation_next' \
            --may-be-empty 'offset'
    }
    export -f dashboard_onecall
    step "$collector: every forecast and One Call dashboard query returns data" wait_for 60 dashboard_onecall "$prom2"
    step "$collector, OpenMetrics: prometheus_client's parser reads a scrape with official alerts and the minute forecast" \
        wait_for 30 openmetrics_parse "http://$exporter2/metrics" \
        '^openweather_api_requests$' '^openweather_weather_alert_' '^openweather_uv_index$' '^openweather_dew_point_celsius$' '^openweather_forecast_' '^openweather_precipitation_next_hour_meters$'
    curl -fs --max-time 5 -X POST "$sim/_simulator/onecall?subscribed=false" >/dev/null
    step "$collector without its subscription: weather and forecast stay up from the free endpoints, one error line" \
        "$PY" "$HERE/e2e.py" onecall_fallback --prometheus "$prom2" --places Frosty,Texarkana --log "$WORK/exporter-$collector.log" --source "$collector"
}
if [[ -x "$BIN" ]] && http_ok "http://$EXPORTER/-/healthy"; then
    echo "== forecast and One Call"
    step "alertmanager inhibitions of the forecast alerts (synthetic alerts)" \
        "$PY" "$HERE/e2e.py" inhibit_forecast --alertmanager "$AM"
    forecast_section onecall
    forecast_section onecall4
fi

# --- the example config as shipped ---------------------------------------------------

# deploy/config/openweather-exporter.yml unchanged and without --demo (whose defaults would switch
# the forecast on by themselves), polling the simulator of a demo exporter started for it: the
# forecast must be in the request plan, and a forecast below Seville's 0 °C threshold (the simulator
# steered before the first poll to forecast -3 °C there tomorrow) must reach Alertmanager, with no
# alert saying a location lacks its forecast.
shipped_config_section() {
    local shipped prom3 sim
    start_simulator shipped-simulator || return
    sim=$SIMULATED
    step "the simulator forecasts -3 °C for Seville 6 to 18 hours ahead (fault API)" \
        "$PY" "$HERE/e2e.py" steer_forecast --simulator "${sim:-http://127.0.0.1:1}" --latitude 37.39 --longitude -5.99 --celsius -3
    start_exporter shipped "exporter starts on the example config as shipped" \
        env OPENWEATHER_API_KEY=0123456789abcdef0123456789abcdef "$BIN" --config.file="$DEPLOY/config/openweather-exporter.yml" \
        --openweather.url="${sim:-http://127.0.0.1:1}" || return
    shipped=$STARTED
    pass "exporter starts on the example config as shipped"
    step "its request plan polls the forecast: one request per location every 1h" \
        grep -E 'msg="request plan" .*forecast="[0-9.]+/min \(1 request per location every 1h\)"' "$WORK/exporter-shipped.log"
    start_prometheus shipped "$shipped"
    prom3=$PROMETHEUS_URL
    step "example config as shipped: Seville's forecast raises OpenWeatherForecastBelowThreshold, which reaches Alertmanager and the webhook; no OpenWeatherForecastMissing" \
        "$PY" "$HERE/e2e.py" forecast_alerts --prometheus "$prom3" --alertmanager "$AM" --place Seville \
        --webhook-log "$HOOK_LOG" --not-firing OpenWeatherForecastMissing --timeout 150
}
if [[ -x "$BIN" ]] && http_ok "$AM/-/ready"; then
    echo "== the example config as shipped"
    shipped_config_section
fi


# --- the demo's showcase, as far as Alertmanager --------------------------------------

# Issue 40: plain --demo, the shipped rules (for: 0s) and Alertmanager. The simulator forecasts Tokyo
# a cold spell that never comes: its forecast alert fires while it is mild there now, so nothing
# mutes it and it reaches the receiver, as the README says.
showcase_section() {
    start_exporter showcase "plain --demo starts (the showcase)" "$BIN" --demo || return
    start_prometheus showcase "$STARTED"
    step "the demo's showcase: Tokyo's OpenWeatherForecastBelowThreshold fires while its temperature is above the threshold, is active (not inhibited) in Alertmanager and reaches the webhook, as the README says" \
        "$PY" "$HERE/e2e.py" showcase --prometheus "$PROMETHEUS_URL" --alertmanager "$AM" --webhook-log "$HOOK_LOG" \
        --place "Tokyo" --timeout 150
}
if [[ -x "$BIN" ]] && http_ok "$AM/-/ready"; then
    echo "== the demo's showcase in Alertmanager"
    showcase_section
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
    wait_for 20 http_ok "http://127.0.0.1:$port/-/healthy" || ok=0
    stop_process "$pid" 5 || ok=0
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
    wait_for 40 http_ok "http://127.0.0.1:$port/-/ready" || ok=0
    stop_process "$pid" 5 || ok=0
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
                --config "$DEPLOY/config/openweather-exporter.yml" --key-file "$WORK/api-key")
fi

# --- per-place gust and rain thresholds (issue 30) ------------------------------------

# An exporter polling the simulator of a demo exporter started for it, steered before its first
# poll: Gusty (gust=20) has gusts of 30 m/s now and forecast, Quiet (alerts=off) the same gusts and
# heavy rain. Both gust rules fire for Gusty in a real Prometheus with the shipped rules, the
# forecast's is muted in Alertmanager by the gusts now, and Quiet raises nothing. Then the steering
# is cleared: the gusts now resolve, and the webhook gets the text of their last firing evaluation.
gust_section() {
    local gusty prom4 sim
    start_simulator gust-simulator || return
    sim=$SIMULATED
    step "the simulator answers gusts of 30 m/s for Gusty, now and forecast (fault API)" \
        "$PY" "$HERE/e2e.py" steer_wind_rain --simulator "${sim:-http://127.0.0.1:1}" --latitude 53.5 --longitude 8.5 --gust 30
    step "the simulator answers gusts of 30 m/s and 10 mm of rain every 3 hours for Quiet (fault API)" \
        "$PY" "$HERE/e2e.py" steer_wind_rain --simulator "${sim:-http://127.0.0.1:1}" --latitude 57.5 --longitude 9.5 --gust 30 --rain-mm 10
    start_exporter gust "exporter with gust thresholds starts" \
        env OPENWEATHER_API_KEY=0123456789abcdef0123456789abcdef "$BIN" --openweather.url="${sim:-http://127.0.0.1:1}" \
        --collector.weather.interval=15s --location "Gusty=53.5,8.5,gust=20" --location "Quiet=57.5,9.5,alerts=off" || return
    gusty=$STARTED
    start_prometheus gust "$gusty"
    prom4=$PROMETHEUS_URL
    step "gusts: OpenWeatherWindGustAboveThreshold and OpenWeatherWindGustExpected fire for Gusty (threshold and dashboard link in the text), the forecast's muted in Alertmanager; Quiet (alerts off) raises nothing" \
        "$PY" "$HERE/e2e.py" gust_alerts --prometheus "$prom4" --alertmanager "$AM" --place Gusty --quiet Quiet \
        --job openweather --threshold 20 --timeout 150
    step "gusts back to the model's: the webhook gets OpenWeatherWindGustAboveThreshold resolved, its text the last firing evaluation's (30.0 m/s at HH:MM UTC)" \
        "$PY" "$HERE/e2e.py" gust_resolved --simulator "${sim:-http://127.0.0.1:1}" --webhook-log "$HOOK_LOG" --place Gusty \
        --gust 30 --timeout 120
}
if [[ -x "$BIN" ]] && http_ok "$AM/-/ready"; then
    echo "== per-place gust and rain thresholds"
    gust_section
fi

# --- summary ---------------------------------------------------------------------

echo "== summary"
for name in "${FAILED_NAMES[@]}"; do echo "  failed: $name"; done
for name in "${SKIPPED_NAMES[@]}"; do echo "  SKIPPED: $name"; done
echo "deploy: $PASSED passed, $FAILED failed, $SKIPPED skipped"
if ((FAILED)); then echo "FAIL"; exit 1; fi
echo "PASS"

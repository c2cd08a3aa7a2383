#!/usr/bin/env python3
"""Helpers for Tests/deploy/run.sh: generate the test configs and check a live
Prometheus and Alertmanager over their HTTP APIs. Standard library, plus PyYAML
for the config generation.

Each subcommand prints what it checked and exits non-zero on a failure.
"""
import argparse
import json
import pathlib
import re
import sys
import time
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in Tests/TestSupport, a Swift target
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "TestSupport"))
from waiting import poll  # noqa: E402
from checks import check, failures  # noqa: E402

WEATHER_METRICS = [
    "openweather_temperature_celsius", "openweather_feels_like_celsius",
    "openweather_temperature_min_celsius", "openweather_temperature_max_celsius",
    "openweather_humidity_ratio", "openweather_pressure_pascals",
    "openweather_ground_level_pressure_pascals", "openweather_wind_speed_meters_per_second",
    "openweather_wind_gust_meters_per_second", "openweather_wind_direction_degrees",
    "openweather_cloudiness_ratio", "openweather_visibility_meters",
    "openweather_rain_1h_meters", "openweather_snow_1h_meters",
    "openweather_sunrise_timestamp_seconds", "openweather_sunset_timestamp_seconds",
    "openweather_observation_timestamp_seconds", "openweather_timezone_offset_seconds",
    "openweather_condition_id", "openweather_condition_info", "openweather_location_info",
]
AIR_METRICS = [
    "openweather_air_quality_index", "openweather_air_pollution_observation_timestamp_seconds", "openweather_air_quality_scale_index",
    "openweather_forecast_air_quality_index", "openweather_forecast_air_quality_max_index",
]
POLLUTANTS = {"co", "no", "no2", "o3", "so2", "pm2_5", "pm10", "nh3"}
# Per location and source.
HEALTH_METRICS = ["openweather_up", "openweather_last_success_timestamp_seconds", "openweather_poll_duration_seconds"]
# The resolver of places given by name: a source of the configuration, but no collector to switch.
RESOLVER = "geocoding"
GLOBAL_METRICS = [
    "openweather_api_requests_total", "openweather_api_requests_today", "openweather_exporter_build_info",
    "openweather_exporter_config_last_reload_successful",
    "openweather_exporter_config_last_reload_success_timestamp_seconds",
    "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
    "process_open_fds", "process_max_fds", "process_start_time_seconds",
]
# Plausible ranges in base units: catches a unit left unconverted (hPa, %, mm, µg/m³).
RANGES = {
    "openweather_temperature_celsius": (-90, 60), "openweather_humidity_ratio": (0, 1),
    "openweather_cloudiness_ratio": (0, 1), "openweather_pressure_pascals": (85000, 110000),
    "openweather_ground_level_pressure_pascals": (50000, 110000),
    "openweather_wind_direction_degrees": (0, 360), "openweather_visibility_meters": (0, 10000),
    "openweather_rain_1h_meters": (0, 0.5), "openweather_snow_1h_meters": (0, 0.5),
    "openweather_condition_info": (1, 1), "openweather_location_info": (1, 1),
    "openweather_air_quality_index": (1, 5),
    "openweather_forecast_air_quality_index": (1, 5), "openweather_forecast_air_quality_max_index": (1, 5),
    # The US EPA scale is the widest: 0 to 500.
    "openweather_air_quality_scale_index": (0, 500),
    # CO, the largest, is a few hundred µg/m³ in a city: a few 1e-4 g/m³.
    "openweather_air_pollutant_grams_per_cubic_meter": (0, 0.05),
}

def finish():
    print(f"  {len(failures)} failed" if failures else "  all ok")
    sys.exit(1 if failures else 0)


def get_json(url, data=None):
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        body = r.read()
    return json.loads(body) if body.strip() else None


def query(prom, expr):
    body = get_json(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if body.get("status") != "success":
        raise RuntimeError(body)
    return body["data"]["result"]


def firing_alerts(prom):
    """The alerts firing in Prometheus, and their (alertname, location) pairs."""
    alerts = [x for x in get_json(f"{prom}/api/v1/alerts")["data"]["alerts"] if x["state"] == "firing"]
    return alerts, {(x["labels"]["alertname"], x["labels"].get("location", "")) for x in alerts}


def wait_firing(prom, want, timeout):
    """Waits up to `timeout` for every (alertname, location) of `want` to fire in Prometheus (rules
    need an evaluation), checks that they do, and returns what fires then, as `firing_alerts` does."""
    seen = [], set()

    def fired():
        nonlocal seen
        seen = firing_alerts(prom)
        return want <= seen[1]
    poll(fired, timeout)
    check(want <= seen[1], f"firing in Prometheus: {sorted(want)} (got {sorted(seen[1])})")
    return seen


# --- genconfig -----------------------------------------------------------------

def genconfig(a):
    """Copies prometheus.yml and the rules with only the addresses, the
    intervals and the `for:` durations changed, and alertmanager.yml with the
    receivers pointed at the test's webhook and no grouping delay."""
    import yaml
    deploy = pathlib.Path(a.deploy)
    out = pathlib.Path(a.out)
    (out / "rules").mkdir(parents=True, exist_ok=True)
    prom = yaml.safe_load((deploy / "prometheus" / "prometheus.yml").read_text())
    prom["global"]["scrape_interval"] = a.interval
    prom["global"]["evaluation_interval"] = a.interval
    (job,) = [j for j in prom["scrape_configs"] if j["job_name"] == "openweather"]
    job["static_configs"] = [{"targets": [a.exporter]}]
    job["scrape_timeout"] = a.interval
    prom["alerting"]["alertmanagers"] = [{"static_configs": [{"targets": [a.alertmanager]}]}]
    (out / "prometheus.yml").write_text(yaml.safe_dump(prom, sort_keys=False))
    for src in prom["rule_files"]:
        rules = yaml.safe_load((deploy / "prometheus" / src).read_text())
        for group in rules["groups"]:
            for rule in group["rules"]:
                # Not the absence alert: without its `for`, an evaluation before the first scrape finds no
                # `up` and fires it, and its inhibition mutes every alert of the job in Alertmanager.
                if "for" in rule and rule.get("alert") != "OpenWeatherExporterAbsent":
                    rule["for"] = a.rule_for
        (out / src).write_text(yaml.safe_dump(rules, sort_keys=False, allow_unicode=True))
    am = yaml.safe_load((deploy / "alertmanager" / "alertmanager.yml").read_text())
    am["route"]["group_wait"] = "1s"
    am["route"]["group_interval"] = "1s"
    for r in am["receivers"]:
        for w in r.get("webhook_configs", []):
            w["url"] = f"{a.webhook}/{r['name']}"
    (out / "alertmanager.yml").write_text(yaml.safe_dump(am, sort_keys=False))
    print(f"  wrote {out}/prometheus.yml, rules, alertmanager.yml")


def webconfig(a):
    """The TLS run's files: deploy/config/web-config.yml with the test's
    certificate, key, client CA (when asked) and user put in, and a copy of
    prometheus.yml whose openweather job scrapes over https with tls_config
    and basic_auth, as the deploy/ README tells users to."""
    import yaml
    deploy = pathlib.Path(a.deploy)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    web = yaml.safe_load((deploy / "config" / "web-config.yml").read_text())
    web["tls_server_config"]["cert_file"] = a.cert
    web["tls_server_config"]["key_file"] = a.key
    if a.client_ca:
        web["tls_server_config"]["client_auth_type"] = "RequireAndVerifyClientCert"
        web["tls_server_config"]["client_ca_file"] = a.client_ca
    web["basic_auth_users"] = {a.user: a.hash}
    (out / "web-config.yml").write_text(yaml.safe_dump(web, sort_keys=False))
    prom = yaml.safe_load((deploy / "prometheus" / "prometheus.yml").read_text())
    prom["global"]["scrape_interval"] = a.interval
    prom["global"]["evaluation_interval"] = a.interval
    prom.pop("rule_files", None)
    prom.pop("alerting", None)
    (job,) = [j for j in prom["scrape_configs"] if j["job_name"] == "openweather"]
    job["static_configs"] = [{"targets": [a.exporter]}]
    job["scrape_timeout"] = a.interval
    job["scheme"] = "https"
    job["tls_config"] = {"ca_file": a.ca}
    if a.client_ca:
        job["tls_config"].update(cert_file=a.client_cert, key_file=a.client_key)
    job["basic_auth"] = {"username": a.user, "password_file": a.password_file}
    (out / "prometheus-tls.yml").write_text(yaml.safe_dump(prom, sort_keys=False))
    print(f"  wrote {out}/web-config.yml and {out}/prometheus-tls.yml")


# --- metrics -------------------------------------------------------------------

def metrics(a):
    """Every exporter metric is in Prometheus, for each location (and source), in range."""
    prom, locs = a.prometheus, a.locations.split(",")
    places = json.loads(a.places)          # name -> [city, state, country] from the geocoder
    missing_places = a.not_found.split(",") if a.not_found else []
    for m in WEATHER_METRICS + AIR_METRICS:
        res = query(prom, f'{m}{{job="openweather"}}')
        by_loc = {r["metric"].get("location"): float(r["value"][1]) for r in res}
        missing = [l for l in locs if l not in by_loc]
        lo, hi = RANGES.get(m, (float("-inf"), float("inf")))
        bad = {l: v for l, v in by_loc.items() if not lo <= v <= hi}
        extra = [l for l in missing_places if l in by_loc]
        check(not missing and not bad and not extra, f"{m}: every location" + (f", missing {missing}" if missing else "")
              + (f", out of [{lo}, {hi}]: {bad}" if bad else "") + (f", but also places not found: {extra}" if extra else ""))
    res = query(prom, 'openweather_air_quality_index{job="openweather"}')
    check(all(float(r["value"][1]).is_integer() for r in res), "openweather_air_quality_index: whole numbers")
    now = time.time()
    res = query(prom, 'openweather_air_quality_scale_index{job="openweather"}')
    scales = {}
    for r in res:
        scales.setdefault(r["metric"]["location"], set()).add(r["metric"]["scale"])
    check(all(scales.get(l) == {"eu_caqi", "openweather", "uk_daqi", "us_epa"} for l in locs),
          f"openweather_air_quality_scale_index: every location in the four scales (got {scales})")
    res = query(prom, 'openweather_air_pollution_observation_timestamp_seconds{job="openweather"}')
    old = {r["metric"]["location"]: float(r["value"][1]) for r in res if not now - 3 * 3600 <= float(r["value"][1]) <= now + 300}
    check(not old, f"air pollution observed within the last hours (not: {old})")
    m = "openweather_air_pollutant_grams_per_cubic_meter"
    res = query(prom, f'{m}{{job="openweather"}}')
    got = {}
    for r in res:
        got.setdefault(r["metric"]["location"], {})[r["metric"]["pollutant"]] = float(r["value"][1])
    lo, hi = RANGES[m]
    for l in locs:
        values = got.get(l, {})
        bad = {p: v for p, v in values.items() if not lo <= v <= hi}
        check(set(values) == POLLUTANTS and not bad, f"{m}: {l} has {sorted(POLLUTANTS)} in g/m³"
              + (f" (has {sorted(values)})" if set(values) != POLLUTANTS else "") + (f", out of [{lo}, {hi}]: {bad}" if bad else ""))
    check(not any(l in got for l in missing_places), f"{m}: nothing for places not found")

    # Health per (location, source): every source of a location with data is up;
    # a place given by name also has geocoding; a place not found is 0 for
    # geocoding and for the sources waiting for it, and has no last success.
    # What the exporter polls, as it says: openweather_api_requests_today has one series per source of
    # its configuration, so a source the demo gains is checked here without a list of ours.
    polled = sorted({r["metric"]["source"] for r in query(prom, 'openweather_api_requests_today{job="openweather"}')} - {RESOLVER})
    check(len(polled) > 1, f"openweather_api_requests_today names the demo's sources (got {polled})")
    for m in HEALTH_METRICS:
        res = query(prom, f'{m}{{job="openweather"}}')
        series = {(r["metric"].get("location"), r["metric"].get("source")): float(r["value"][1]) for r in res}
        want = {(l, s) for l in locs for s in polled} | {(l, RESOLVER) for l in places}
        if m != "openweather_last_success_timestamp_seconds":
            want |= {(l, s) for l in missing_places for s in ([RESOLVER] + (polled if m == "openweather_up" else []))}
        check(set(series) == want, f"{m}: one series per location and source"
              + ("" if set(series) == want else f", missing {sorted(want - set(series))}, unexpected {sorted(set(series) - want)}"))
        if m == "openweather_up":
            wrong = {k: v for k, v in series.items() if v != (0 if k[0] in missing_places else 1)}
            check(not wrong, f"openweather_up is 1 for every source of a location with data, 0 for places not found (wrong: {wrong})")
    res = query(prom, 'openweather_location_info{job="openweather"}')
    info = {r["metric"]["location"]: [r["metric"].get(k, "") for k in ("city", "state", "country")] for r in res}
    for name, want in places.items():
        check(info.get(name) == want, f"{name} resolved by name: location_info city/state/country {want} (got {info.get(name)})")
    for m, label in (("openweather_api_requests_total", "code"),):
        res = query(prom, f'{m}{{job="openweather"}}')
        pairs = {(r["metric"].get("source"), r["metric"].get(label)) for r in res}
        want = {(s, "200") for s in polled + ([RESOLVER] if places or missing_places else [])}
        check(want <= pairs, f"{m} has code=\"200\" for every source {sorted(want)} (got {sorted(pairs)})")

    for m in GLOBAL_METRICS:
        res = query(prom, f'{m}{{job="openweather"}}')
        check(bool(res), f"{m}: present")
    res = query(prom, 'openweather_temperature_alert_threshold_celsius{job="openweather"}')
    got = sorted((r["metric"]["location"], r["metric"]["bound"], float(r["value"][1])) for r in res)
    want = sorted(tuple(t.split(":")[:2]) + (float(t.split(":")[2]),) for t in a.thresholds.split(","))
    check(got == want, f"threshold series are exactly {want} (got {got})")
    finish()


# --- force-aqi -----------------------------------------------------------------

def force_aqi(a):
    """Makes the demo's simulator answer air pollution at one place with the
    given index (its fault API), and waits until Prometheus has it. The answer
    leaves out nh3, as a real one may: the answer-field panel then has data
    whatever the simulator's weather does."""
    body = {"coord": {"lon": a.longitude, "lat": a.latitude},
            "list": [{"main": {"aqi": a.aqi},
                      "components": {"co": 1500.0, "no": 40.0, "no2": 210.0, "o3": 190.0, "so2": 30.0,
                                     "pm2_5": 90.0, "pm10": 210.0},
                      "dt": int(time.time()) // 3600 * 3600}]}
    url = f"{a.simulator}/_simulator/fault?" + urllib.parse.urlencode(
        {"path": "/data/2.5/air_pollution", "lat": a.latitude, "body": json.dumps(body)}, quote_via=urllib.parse.quote)
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        check(r.status == 200, f"simulator accepted the fault: air pollution at lat {a.latitude} answers aqi {a.aqi}")
    expr = f'openweather_air_quality_index{{job="openweather",location="{a.location}"}}'
    got = []

    def reached():
        nonlocal got
        got = [float(r["value"][1]) for r in query(a.prometheus, expr)]
        return got == [float(a.aqi)]
    poll(reached, a.timeout)
    check(got == [float(a.aqi)], f"Prometheus has {expr} = {a.aqi} (got {got})")
    missing = 'openweather_fields_missing_total{job="openweather",source="air_pollution",field="list[].components.nh3"}'
    poll(lambda: bool(query(a.prometheus, missing)), a.timeout)
    check(bool(query(a.prometheus, missing)), f"Prometheus has {missing}: the answer left nh3 out")
    finish()


# --- alerts --------------------------------------------------------------------

def alerts(a):
    """The threshold alerts fire exactly for the expected locations, and nothing
    else fires. Retries until a.timeout, because rules need an evaluation."""
    expected = set(tuple(x.split(":")) for x in a.expect.split(","))
    want, firing, got = set(), [], set()

    def exactly():
        nonlocal want, firing, got
        # The simulator's air can turn poor on its own (an afternoon's ozone):
        # wherever Prometheus has an index of 4 or worse, the alert must fire.
        poor = {("OpenWeatherAirQualityPoor", r["metric"]["location"])
                for r in query(a.prometheus, 'openweather_air_quality_index{job="openweather"} >= 4')}
        want = expected | poor
        firing = firing_alerts(a.prometheus)[0]
        if a.ignore:
            firing = [x for x in firing if not re.fullmatch(a.ignore, x["labels"]["alertname"])]
        got = {(x["labels"]["alertname"], x["labels"].get("location", "")) for x in firing}
        return got == want
    poll(exactly, a.timeout)
    check(got == want, f"firing alerts are exactly {sorted(want)} (got {sorted(got)})")
    for x in firing:
        desc = x["annotations"].get("description", "")
        if x["labels"]["alertname"].startswith("OpenWeatherTemperature"):
            check(re.search(r"went (above|below) its threshold of -?[\d.]+ °C at least 15 minutes ago and was -?\d+\.\d °C "
                            r"at \d\d:\d\d UTC\. It ends when back to -?[\d.]+ °C or (below|above)\.", desc) is not None,
                  f"{x['labels']['location']}: description gives value and threshold: {desc!r}")
        if x["labels"]["alertname"] == "OpenWeatherAirQualityPoor":
            check(re.search(r"and [45] \((very )?poor\) at \d\d:\d\d UTC", desc) is not None,
                  f"{x['labels']['location']}: description gives the index: {desc!r}")
        if x["labels"]["alertname"] == "OpenWeatherPlaceNotFound":
            check(x["labels"].get("source") == "geocoding" and "has not resolved" in desc,
                  f"{x['labels']['location']}: place not found, source=\"geocoding\": {desc!r}")
    if a.alertmanager:
        got_am = set()

        def received():
            nonlocal got_am
            am = get_json(f"{a.alertmanager}/api/v2/alerts?active=true")
            got_am = {(x["labels"]["alertname"], x["labels"].get("location", "")) for x in am
                      if x["labels"].get("job") == "openweather"}
            return want <= got_am
        poll(received, a.timeout)
        check(want <= got_am, f"Alertmanager received {sorted(want)} (has {sorted(got_am)})")
    if a.webhook_log:
        wanted = {("webhook", n, l) for n, l in want}
        posts, seen = [], set()

        def delivered():
            nonlocal posts, seen
            path = pathlib.Path(a.webhook_log)
            posts = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
            seen = {(p["receiver"], al["labels"]["alertname"], al["labels"].get("location", ""))
                    for p in posts for al in p["alerts"]}
            return wanted <= seen
        poll(delivered, a.timeout)
        check(wanted <= seen, f"the webhook receiver got {sorted(wanted)}")
        ours = [p for p in posts if p["commonLabels"].get("job") == "openweather"]
        check(ours and all(p["groupLabels"] == {"alertname": p["commonLabels"]["alertname"],
                                                "location": p["commonLabels"]["location"]} for p in ours),
              "notifications are grouped by alertname and location")
    finish()


# --- inhibit -------------------------------------------------------------------

def inhibit(a):
    """Posts synthetic alerts to Alertmanager and checks the inhibition rules."""
    def alert(**labels):
        return {"labels": labels, "annotations": {}}
    posted = [
        alert(alertname="OpenWeatherExporterDown", job="inhibit-a", instance="x:9755", severity="critical"),
        alert(alertname="OpenWeatherTemperatureAboveThreshold", job="inhibit-a", instance="x:9755", location="Seville", severity="warning"),
        alert(alertname="OpenWeatherAirQualityPoor", job="inhibit-a", instance="x:9755", location="Delhi", severity="warning"),
        alert(alertname="OpenWeatherTemperatureAboveThreshold", job="inhibit-b", instance="x:9755", location="Seville", severity="warning"),
        alert(alertname="OpenWeatherAPIKeyRejected", job="inhibit-c", instance="y:9755", code="401", source="weather", severity="critical"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-c", instance="y:9755", location="Lima", source="weather", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-c", instance="y:9755", location="Lima", source="air_pollution", severity="warning"),
        alert(alertname="OpenWeatherDataStale", job="inhibit-c", instance="y:9755", location="Quito", source="weather", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-c", instance="z:9755", location="Lima", source="weather", severity="warning"),
        alert(alertname="OpenWeatherDataStale", job="inhibit-c", instance="z:9755", location="Lima", source="weather", severity="warning"),
        alert(alertname="OpenWeatherDataStale", job="inhibit-c", instance="z:9755", location="Quito", source="weather", severity="warning"),
        alert(alertname="OpenWeatherAPIKeyRejected", job="inhibit-d", instance="w:9755", code="401", source="geocoding", severity="critical"),
        alert(alertname="OpenWeatherPlaceNotFound", job="inhibit-d", instance="w:9755", location="Nowhere", source="geocoding", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-d", instance="w:9755", location="Oslo", source="weather", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-e", instance="v:9755", location="Rome", source="air_pollution", severity="warning"),
        alert(alertname="OpenWeatherDataStale", job="inhibit-e", instance="v:9755", location="Rome", source="weather", severity="warning"),
    ]
    get_json(f"{a.alertmanager}/api/v2/alerts", data=json.dumps(posted).encode())
    want = {  # (alertname, job, instance, location, source) -> suppressed?
        ("OpenWeatherExporterDown", "inhibit-a", "x:9755", "", ""): False,
        ("OpenWeatherTemperatureAboveThreshold", "inhibit-a", "x:9755", "Seville", ""): True,   # exporter down, same job
        ("OpenWeatherAirQualityPoor", "inhibit-a", "x:9755", "Delhi", ""): True,                # exporter down, same job
        ("OpenWeatherTemperatureAboveThreshold", "inhibit-b", "x:9755", "Seville", ""): False,  # another job
        ("OpenWeatherAPIKeyRejected", "inhibit-c", "y:9755", "", "weather"): False,
        ("OpenWeatherLocationFailing", "inhibit-c", "y:9755", "Lima", "weather"): True,         # key rejected, same instance and source
        ("OpenWeatherLocationFailing", "inhibit-c", "y:9755", "Lima", "air_pollution"): False,  # the key works for air pollution
        ("OpenWeatherDataStale", "inhibit-c", "y:9755", "Quito", "weather"): True,              # key rejected for the weather
        ("OpenWeatherLocationFailing", "inhibit-c", "z:9755", "Lima", "weather"): False,        # another instance
        ("OpenWeatherDataStale", "inhibit-c", "z:9755", "Lima", "weather"): True,               # failing location, same place and source
        ("OpenWeatherDataStale", "inhibit-c", "z:9755", "Quito", "weather"): False,
        ("OpenWeatherAPIKeyRejected", "inhibit-d", "w:9755", "", "geocoding"): False,
        ("OpenWeatherPlaceNotFound", "inhibit-d", "w:9755", "Nowhere", "geocoding"): True,      # key rejected for geocoding
        ("OpenWeatherLocationFailing", "inhibit-d", "w:9755", "Oslo", "weather"): False,        # only geocoding is rejected
        ("OpenWeatherLocationFailing", "inhibit-e", "v:9755", "Rome", "air_pollution"): False,
        ("OpenWeatherDataStale", "inhibit-e", "v:9755", "Rome", "weather"): False,              # air pollution failing says nothing of the weather
    }
    got = {}

    def settled():
        nonlocal got
        got = {}
        for x in get_json(f"{a.alertmanager}/api/v2/alerts"):
            l = x["labels"]
            if l.get("job", "").startswith("inhibit-"):
                key = (l["alertname"], l["job"], l["instance"], l.get("location", ""), l.get("source", ""))
                got[key] = x["status"]["state"] == "suppressed" and bool(x["status"]["inhibitedBy"])
        return got == want
    poll(settled, a.timeout)
    for k, v in want.items():
        check(got.get(k) == v, f"{'inhibited' if v else 'not inhibited'}: {k[0]} job={k[1]} instance={k[2]} location={k[3] or '-'} source={k[4] or '-'}")
    finish()


# --- dashboard -----------------------------------------------------------------

def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))


def dashboard(a):
    """Runs every query of the Grafana dashboard against Prometheus."""
    dash = json.loads(pathlib.Path(a.dashboard).read_text())
    subst = {"location": a.location_regex, "job": "openweather", "__rate_interval": "1m",
             "__interval": "15s", "__range": "5m", "__range_s": "300", "__interval_ms": "15000"}

    def expand(expr):
        out = re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", lambda m: subst.get(m.group(1) or m.group(2), m.group(0)), expr)
        return out

    queries = []
    for p in walk(dash["panels"]):
        for t in p.get("targets", []):
            queries.append((f"panel {p['title']!r} {t['refId']}", t["expr"]))
    for an in dash.get("annotations", {}).get("list", []):
        if an.get("expr"):
            queries.append((f"annotation {an['name']!r}", an["expr"]))
    check(len(queries) > 20, f"{len(queries)} dashboard queries found")
    if a.only:
        check(any(re.search(a.only, e) for _, e in queries), f"dashboard queries matching {a.only!r} found")
    for what, expr in queries:
        if a.only and not re.search(a.only, expr):
            continue
        e = expand(expr)
        if "$" in e:
            check(False, f"{what}: unknown variable in {e!r}")
            continue
        try:
            res = query(a.prometheus, e)
            # Queries that need history (offset) or another source may be empty; they must still parse.
            check(bool(res) or bool(a.may_be_empty and re.search(a.may_be_empty, expr)), f"{what}: {len(res)} series")
        except Exception as ex:  # a PromQL error comes back as HTTP 400
            check(False, f"{what}: {e!r} failed: {ex}")
    # The variables' label_values() queries, through the same API Grafana uses.
    for v in dash["templating"]["list"] if not a.only else []:
        m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", str(v.get("query", "")))
        if m:
            sel, label = expand(m.group(1)), m.group(2)
            body = get_json(f"{a.prometheus}/api/v1/label/{label}/values?" + urllib.parse.urlencode({"match[]": sel}))
            check(bool(body.get("data")), f"variable ${v['name']}: {body.get('data')}")
    finish()


# --- a newcomer's journey: merge into an existing Prometheus, backfill, a demo alert ---------

# What Debian's prometheus package ships as /etc/prometheus/prometheus.yml (its jobs, its rule_files
# with nothing in it), for a machine without it: the "existing" config the snippet is merged into.
STOCK_PROMETHEUS = """
global:
  scrape_interval:     15s
  evaluation_interval: 15s
  external_labels:
      monitor: 'example'
alerting:
  alertmanagers:
  - static_configs:
    - targets: ['localhost:9093']
rule_files:
  # - "first_rules.yml"
scrape_configs:
  - job_name: 'prometheus'
    scrape_interval: 5s
    scrape_timeout: 5s
    static_configs:
      - targets: ['localhost:9090']
  - job_name: node
    static_configs:
      - targets: ['localhost:9100']
"""


def merge(a):
    """Does what deploy/docs/install.md tells a user with a Prometheus of their own: the snippet's
    rule file under the existing `rule_files:` and its job under `scrape_configs:` (each list made
    where the file has none), the rules installed into `rules/` beside the config, unchanged. Only
    the job's target and interval are the test's (as genconfig's). Prints the jobs of the result."""
    import yaml
    existing_text = pathlib.Path(a.existing).read_text() if a.existing and pathlib.Path(a.existing).is_file() else STOCK_PROMETHEUS
    config = yaml.safe_load(existing_text)
    snippet = yaml.safe_load(pathlib.Path(a.snippet).read_text())
    before = [j["job_name"] for j in config.get("scrape_configs") or []]
    config["rule_files"] = (config.get("rule_files") or []) + snippet["rule_files"]
    config["scrape_configs"] = (config.get("scrape_configs") or []) + snippet["scrape_configs"]
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "openweather"]
    job["static_configs"] = [{"targets": [a.exporter]}]
    job["scrape_interval"] = a.interval
    job["scrape_timeout"] = a.interval
    out = pathlib.Path(a.out)
    (out / "rules").mkdir(parents=True, exist_ok=True)
    (out / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    for src in snippet["rule_files"]:
        (out / src).write_text((pathlib.Path(a.snippet).parent / src).read_text())
    check(before and set(before) < {j["job_name"] for j in config["scrape_configs"]},
          f"merged: the existing jobs {before} and openweather; rule files {config['rule_files']}")
    finish()


def journey(a):
    """The merged Prometheus: the existing jobs still configured beside openweather, which is up;
    the shipped rules loaded as shipped; the demo's cold place's forecast alert pending (or firing)
    within the timeout; and the backfilled past read through the dashboard's own queries with its
    $job variable taken from label_values over a range before the exporter started."""
    dash = json.loads(pathlib.Path(a.dashboard).read_text())
    pools = set()

    def targets():
        nonlocal pools
        active = get_json(f"{a.prometheus}/api/v1/targets")["data"]["activeTargets"]
        pools = {t["scrapePool"] for t in active}
        return any(t["scrapePool"] == "openweather" and t["health"] == "up" for t in active)
    check(poll(targets, 60), "openweather target up")
    check(set(a.existing_jobs.split(",")) <= pools, f"the existing jobs are still scraped: {sorted(pools)}")
    groups = {g["name"] for g in get_json(f"{a.prometheus}/api/v1/rules")["data"]["groups"]}
    shipped = {g["name"] for g in __import__("yaml").safe_load(pathlib.Path(a.rules).read_text())["groups"]}
    check(shipped <= groups, f"the shipped rule groups are loaded: {sorted(shipped)}")
    state = {}

    def pending():
        for x in get_json(f"{a.prometheus}/api/v1/alerts")["data"]["alerts"]:
            if x["labels"]["alertname"] == "OpenWeatherForecastBelowThreshold" and x["labels"].get("location") == a.cold:
                state["value"] = x["state"]
                return True
        return False
    started = time.monotonic()
    check(poll(pending, a.timeout), f"OpenWeatherForecastBelowThreshold for {a.cold} {state.get('value', 'not raised')} "
          f"after {time.monotonic() - started:.0f} s (the shipped rules, for: 15m, so pending first)")

    # The backfill: before the exporter started, only it wrote anything; its samples are on the hour
    # (a query at another moment finds nothing within Prometheus' 5-minute lookback).
    past_end = a.backfill_until - 3600
    past_start = a.backfill_until - 3 * 3600
    variable = next(v for v in dash["templating"]["list"] if v["name"] == "job")
    m = re.fullmatch(r"label_values\((\w+),\s*job\)", variable["query"])
    jobs = get_json(f"{a.prometheus}/api/v1/label/job/values?" + urllib.parse.urlencode(
        {"match[]": m.group(1), "start": past_start, "end": past_end}))["data"]
    check(jobs == ["openweather"], f"$job over the backfilled hours (label_values({m.group(1)}, job)): {jobs}")
    panel = next(p for p in walk(dash["panels"]) if p.get("title", "").startswith("Temperature, feels like"))
    expr = panel["targets"][0]["expr"].replace("$job", jobs[0] if jobs else "none").replace("$location", ".+")
    body = get_json(f"{a.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": past_end}))
    places = sorted(r["metric"]["location"] for r in body["data"]["result"])
    check(a.cold in places and len(places) >= 5, f"the dashboard's {expr!r} {a.backfill_until - past_end} s before the exporter started: {places}")
    instances = {r["metric"].get("instance") for r in body["data"]["result"]}
    check(instances == {a.instance}, f"--label instance={a.instance} on every backfilled series: {instances}")
    finish()


# --- forecast and One Call ------------------------------------------------------

def scrape(url):
    """The exporter's /metrics as {(name, frozenset(labels)): value}."""
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'(\w+)(?:\{(.*)\})? (\S+)', line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def polled_sources(a):
    """Prints the sources a running exporter polls, one a line, from its /metrics
    (openweather_api_requests_today: one series per source of its configuration),
    without the resolver, which no --no-collector flag turns off."""
    series = scrape(a.metrics)
    names = sorted({dict(labels)["source"] for (name, labels) in series if name == "openweather_api_requests_today"} - {RESOLVER})
    if not names:
        print(f"{a.metrics} has no openweather_api_requests_today{{source}}", file=sys.stderr)
        sys.exit(1)
    print("\n".join(names))


def frost_place(a):
    """Prints LAT,LON,THRESHOLD for a place of the running demo exporter whose forecast minimum over
    the next 24 h is at least 2 °C below its temperature now: a lower threshold halfway between is
    crossed by the forecast, not by the measurement (the simulator is deterministic, so a second
    demo exporter sees the same numbers)."""
    series = scrape(a.metrics)
    best = None
    for (name, labels), value in series.items():
        if name != "openweather_temperature_celsius":
            continue
        loc = dict(labels)["location"]
        low = series.get(("openweather_forecast_temperature_min_celsius", frozenset({("location", loc), ("window_hours", "24")})))
        info = [dict(l) for (n, l) in series if n == "openweather_location_info" and dict(l)["location"] == loc]
        if low is None or not info or value - low < 2:
            continue
        if best is None or value - low > best[0]:
            best = (value - low, info[0]["latitude"], info[0]["longitude"], round((value + low) / 2, 2))
    if best is None:
        print("no demo location has a forecast minimum 2 °C below its temperature", file=sys.stderr)
        sys.exit(1)
    print(f"{best[1]},{best[2]},{best[3]}")


def steer_forecast(a):
    """Makes the demo's simulator forecast `celsius` at one place from 6 to 18 hours ahead (its fault
    API serving its own forecast with those steps changed), so that only the forecast crosses a lower
    threshold; the weather now stays the model's."""
    query = urllib.parse.urlencode({"lat": a.latitude, "lon": a.longitude, "appid": "demo-key", "units": "metric"})
    forecast = get_json(f"{a.simulator}/data/2.5/forecast?{query}")
    now = time.time()
    changed = 0
    for step in forecast["list"]:
        if now + 6 * 3600 <= step["dt"] <= now + 18 * 3600:
            for field in ("temp", "feels_like", "temp_min", "temp_max"):
                step["main"][field] = a.celsius
            changed += 1
    check(changed >= 3, f"{changed} forecast steps 6 to 18 hours ahead set to {a.celsius} °C")
    url = f"{a.simulator}/_simulator/fault?" + urllib.parse.urlencode({"path": "/data/2.5/forecast", "lat": a.latitude})
    req = urllib.request.Request(url, data=json.dumps(forecast).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        check(r.status == 200, f"simulator serves it for lat {a.latitude}")
    finish()


def forecast_alerts(a):
    """Against a demo exporter with a place whose lower threshold only the forecast crosses: "forecast
    below threshold" fires while "below threshold" does not, and reaches Alertmanager not inhibited
    (and the webhook, when given); the official-alert rule fires for every place in `official` (One
    Call); the rain-soon rule fires for every place in `rain_soon` (One Call's minute forecast); no
    alert at all fires for a place in `silent` (alerts=off: openweather_location_alerts_enabled 0), though
    the simulator gives it the same official alert and rain; nothing matching `not_firing` fires once it did."""
    official = [p for p in a.official.split(",") if p]
    rain_soon = [p for p in a.rain_soon.split(",") if p]
    want = ({("OpenWeatherForecastBelowThreshold", a.place)} | {("OpenWeatherOfficialAlert", p) for p in official}
            | {("OpenWeatherRainStartingSoon", p) for p in rain_soon})
    alerts, got = wait_firing(a.prometheus, want, a.timeout)
    check(("OpenWeatherTemperatureBelowThreshold", a.place) not in got, f"{a.place} is not below its threshold now")
    now = query(a.prometheus, f'openweather_temperature_celsius{{location="{a.place}"}} > ignoring(bound) '
                              f'openweather_temperature_alert_threshold_celsius{{location="{a.place}",bound="below"}}')
    check(bool(now), f"{a.place}: the temperature now is above the lower threshold")
    for place in [p for p in a.silent.split(",") if p]:
        enabled = [float(r["value"][1]) for r in query(a.prometheus, f'openweather_location_alerts_enabled{{location="{place}"}}')]
        check(enabled == [0.0], f"{place}: openweather_location_alerts_enabled is 0 with alerts=off ({enabled})")
        loud = sorted(name for name, where in got if where == place)
        check(not loud, f"{place} (alerts=off): no alert fires there, official and rain-soon included ({loud})")
    official = [x for x in alerts if x["labels"]["alertname"] == "OpenWeatherOfficialAlert"]
    check(all(x["labels"].get("event") and x["labels"].get("sender") for x in official), "official alerts carry event and sender")
    am = poll(lambda: [x for x in get_json(f"{a.alertmanager}/api/v2/alerts") if x["labels"].get("location") == a.place
                       and x["labels"]["alertname"] == "OpenWeatherForecastBelowThreshold"], a.timeout)
    check(bool(am) and all(x["status"]["state"] == "active" for x in am),
          f"Alertmanager has OpenWeatherForecastBelowThreshold for {a.place}, not inhibited: {[x['status'] for x in am]}")
    if a.webhook_log:
        def delivered():
            path = pathlib.Path(a.webhook_log)
            posts = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
            return [al for p in posts for al in p["alerts"] if al["labels"].get("alertname") == "OpenWeatherForecastBelowThreshold"
                    and al["labels"].get("location") == a.place and al["status"] == "firing"]
        check(bool(poll(delivered, a.timeout)), f"the webhook receiver got OpenWeatherForecastBelowThreshold for {a.place}")
    if a.not_firing:
        # Until every location's first poll is scraped, an alert with `for: 0s` may fire for a moment.
        def unwanted():
            return [(x["labels"]["alertname"], x["labels"].get("location")) for x in get_json(f"{a.prometheus}/api/v1/alerts")["data"]["alerts"]
                    if x["state"] == "firing" and re.fullmatch(a.not_firing, x["labels"]["alertname"])]
        left = unwanted()
        if left:
            poll(lambda: not unwanted(), a.timeout)
            left = unwanted()
        check(not left, f"once every location was polled, nothing matching {a.not_firing} fires: {left}")
    finish()


def showcase(a):
    """Issue 40: what the README says of plain --demo in Alertmanager. The simulator forecasts the
    showcase place (Tokyo) a cold spell that never comes, so OpenWeatherForecastBelowThreshold fires for
    it while its temperature stays above the threshold: nothing mutes it, it is active in Alertmanager
    and reaches the webhook."""
    forecast, now = ("OpenWeatherForecastBelowThreshold", a.place), ("OpenWeatherTemperatureBelowThreshold", a.place)
    _, firing = wait_firing(a.prometheus, {forecast}, a.timeout)
    check(now not in firing, f"{a.place}: no current-temperature alert beside it ({sorted(firing)})")
    temperature = [float(r["value"][1]) for r in query(a.prometheus, f'openweather_temperature_celsius{{location="{a.place}"}}')]
    below = [float(r["value"][1]) for r in query(
        a.prometheus, f'openweather_temperature_alert_threshold_celsius{{location="{a.place}",bound="below"}}')]
    check(len(temperature) == 1 and len(below) == 1 and temperature[0] > below[0],
          f"{a.place}: {temperature} °C now, above its threshold {below}")

    def state():
        got = {x["labels"]["alertname"]: x["status"] for x in get_json(f"{a.alertmanager}/api/v2/alerts")
               if x["labels"].get("location") == a.place}
        return got if forecast[0] in got else None
    got = poll(state, a.timeout) or {}
    check(got.get(forecast[0], {}).get("state") == "active",
          f"Alertmanager: {forecast[0]} active (not inhibited) for {a.place} ({got})")

    def delivered():
        path = pathlib.Path(a.webhook_log)
        posts = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
        return [al for p in posts for al in p["alerts"] if al["status"] == "firing"
                and (al["labels"].get("alertname"), al["labels"].get("location")) == forecast]
    check(bool(poll(delivered, a.timeout)), f"the webhook receiver got {forecast[0]} for {a.place}")
    finish()


def inhibit_forecast(a):
    """Synthetic alerts: below (above) the threshold now mutes the forecast below (above) it for the same
    place only, and so for the heat index, wet bulb and wind chill, each its own forecast only; a forecast
    that fails to poll, or whose key is refused, mutes "forecast missing"."""
    def alert(**labels):
        return {"labels": labels, "annotations": {}}
    posted = [
        alert(alertname="OpenWeatherTemperatureBelowThreshold", job="inhibit-f", instance="x:9755", location="Oslo", severity="warning"),
        alert(alertname="OpenWeatherForecastBelowThreshold", job="inhibit-f", instance="x:9755", location="Oslo", severity="warning"),
        alert(alertname="OpenWeatherForecastBelowThreshold", job="inhibit-f", instance="x:9755", location="Bergen", severity="warning"),
        alert(alertname="OpenWeatherTemperatureAboveThreshold", job="inhibit-f", instance="x:9755", location="Seville", severity="warning"),
        alert(alertname="OpenWeatherForecastAboveThreshold", job="inhibit-f", instance="x:9755", location="Seville", severity="warning"),
        alert(alertname="OpenWeatherForecastBelowThreshold", job="inhibit-f", instance="x:9755", location="Seville", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-f", instance="x:9755", location="Lyon", source="forecast", severity="warning"),
        alert(alertname="OpenWeatherForecastMissing", job="inhibit-f", instance="x:9755", location="Lyon", severity="warning"),
        alert(alertname="OpenWeatherLocationFailing", job="inhibit-f", instance="x:9755", location="Tromso", source="weather", severity="warning"),
        alert(alertname="OpenWeatherForecastMissing", job="inhibit-f", instance="x:9755", location="Tromso", severity="warning"),
        alert(alertname="OpenWeatherAPIKeyRejected", job="inhibit-f", instance="y:9755", code="401", source="forecast", severity="critical"),
        alert(alertname="OpenWeatherForecastMissing", job="inhibit-f", instance="y:9755", location="Graz", severity="warning"),
        alert(alertname="OpenWeatherAirQualityPoor", job="inhibit-f", instance="x:9755", location="Delhi", severity="warning"),
        alert(alertname="OpenWeatherPoorAirExpected", job="inhibit-f", instance="x:9755", location="Delhi", window_hours="24", severity="warning"),
        alert(alertname="OpenWeatherPoorAirExpected", job="inhibit-f", instance="x:9755", location="Milan", window_hours="24", severity="warning"),
        # The thermal indices: each current alert mutes its own forecast only, at its own place.
        alert(alertname="OpenWeatherHeatIndexAboveThreshold", job="inhibit-f", instance="x:9755", location="Phoenix", severity="warning"),
        alert(alertname="OpenWeatherHeatIndexExpected", job="inhibit-f", instance="x:9755", location="Phoenix", severity="warning"),
        alert(alertname="OpenWeatherWetBulbExpected", job="inhibit-f", instance="x:9755", location="Phoenix", severity="warning"),
        alert(alertname="OpenWeatherHeatIndexExpected", job="inhibit-f", instance="x:9755", location="Tucson", severity="warning"),
        alert(alertname="OpenWeatherWetBulbAboveThreshold", job="inhibit-f", instance="x:9755", location="Dubai", severity="warning"),
        alert(alertname="OpenWeatherWetBulbExpected", job="inhibit-f", instance="x:9755", location="Dubai", severity="warning"),
        alert(alertname="OpenWeatherWindChillBelowThreshold", job="inhibit-f", instance="x:9755", location="Winnipeg", severity="warning"),
        alert(alertname="OpenWeatherWindChillExpected", job="inhibit-f", instance="x:9755", location="Winnipeg", severity="warning"),
        alert(alertname="OpenWeatherForecastBelowThreshold", job="inhibit-f", instance="x:9755", location="Winnipeg", severity="warning"),
    ]
    get_json(f"{a.alertmanager}/api/v2/alerts", data=json.dumps(posted).encode())
    want = {("OpenWeatherTemperatureBelowThreshold", "Oslo"): False, ("OpenWeatherForecastBelowThreshold", "Oslo"): True,
            ("OpenWeatherForecastBelowThreshold", "Bergen"): False, ("OpenWeatherTemperatureAboveThreshold", "Seville"): False,
            ("OpenWeatherForecastAboveThreshold", "Seville"): True, ("OpenWeatherForecastBelowThreshold", "Seville"): False,
            ("OpenWeatherLocationFailing", "Lyon"): False, ("OpenWeatherForecastMissing", "Lyon"): True,
            ("OpenWeatherLocationFailing", "Tromso"): False, ("OpenWeatherForecastMissing", "Tromso"): False,
            ("OpenWeatherAPIKeyRejected", ""): False, ("OpenWeatherForecastMissing", "Graz"): True,
            # Poor air now mutes the forecast of poor air at that place only.
            ("OpenWeatherAirQualityPoor", "Delhi"): False, ("OpenWeatherPoorAirExpected", "Delhi"): True,
            ("OpenWeatherPoorAirExpected", "Milan"): False,
            ("OpenWeatherHeatIndexAboveThreshold", "Phoenix"): False, ("OpenWeatherHeatIndexExpected", "Phoenix"): True,
            ("OpenWeatherWetBulbExpected", "Phoenix"): False, ("OpenWeatherHeatIndexExpected", "Tucson"): False,
            ("OpenWeatherWetBulbAboveThreshold", "Dubai"): False, ("OpenWeatherWetBulbExpected", "Dubai"): True,
            ("OpenWeatherWindChillBelowThreshold", "Winnipeg"): False, ("OpenWeatherWindChillExpected", "Winnipeg"): True,
            ("OpenWeatherForecastBelowThreshold", "Winnipeg"): False}
    got = {}

    def settled():
        nonlocal got
        got = {(x["labels"]["alertname"], x["labels"].get("location", "")): x["status"]["state"] == "suppressed"
               for x in get_json(f"{a.alertmanager}/api/v2/alerts") if x["labels"].get("job") == "inhibit-f"}
        return got == want
    poll(settled, a.timeout)
    for k, v in want.items():
        check(got.get(k) == v, f"{'inhibited' if v else 'not inhibited'}: {k[0]} location={k[1]}")
    finish()


def onecall_fallback(a):
    """After One Call starts answering 401 for the missing subscription: weather and forecast are up
    again from the free endpoints for every place, One Call is down, and the log has one error."""
    places = a.places.split(",")
    up, ok, codes, polled = {}, False, {}, False

    def fallen_back():
        nonlocal up, ok, codes, polled
        # Up stays 1 from One Call's last answer; the free endpoints' own successes show in the request counts.
        up = {(r["metric"]["location"], r["metric"]["source"]): float(r["value"][1])
              for r in query(a.prometheus, 'openweather_up{job="openweather"}')}
        ok = all(up.get((p, s)) == 1 for p in places for s in ("weather", "forecast")) and all(up.get((p, a.source)) == 0 for p in places)
        codes = {(r["metric"]["source"], r["metric"]["code"]): float(r["value"][1])
                 for r in query(a.prometheus, 'openweather_api_requests_total{job="openweather"}')}
        polled = all(codes.get((s, "200"), 0) >= len(places) for s in ("weather", "forecast")) and (a.source, "401") in codes
        return ok and polled
    poll(fallen_back, a.timeout)
    check(ok, f"weather and forecast up, {a.source} down, for {places}: {up}")
    check(polled, f"weather and forecast polled from their own endpoints for every place, {a.source} answered 401: {sorted(codes.items())}")
    errors = [l for l in pathlib.Path(a.log).read_text().splitlines() if "level=error" in l]
    check(len(errors) == 1 and "One Call by Call" in errors[0], f"one error line naming the subscription: {errors}")
    firing = {x["labels"]["alertname"] for x in get_json(f"{a.prometheus}/api/v1/alerts")["data"]["alerts"] if x["state"] == "firing"}
    check("OpenWeatherAPIKeyRejected" not in firing, f"the key is not reported rejected (firing: {sorted(firing)})")
    finish()


# --- argsets --------------------------------------------------------------------

def argsets(a):
    """Prints "NAME<TAB>JSON list" for the exporter command line of each way to
    deploy it, with the in-container paths pointed at local files, the listen
    address left to the caller and the API on a closed loopback port."""
    import shlex
    import yaml
    deploy = pathlib.Path(a.deploy)
    docker = deploy / "docker"
    sets = {
        "docker compose": yaml.safe_load((docker / "compose.yaml").read_text())["services"]["exporter"]["command"],
        "docker compose demo": yaml.safe_load((docker / "compose.demo.yaml").read_text())["services"]["exporter"]["command"],
    }
    for doc in yaml.safe_load_all((deploy / "kubernetes" / "deployment.yaml").read_text()):
        sets["kubernetes"] = doc["spec"]["template"]["spec"]["containers"][0]["args"]
    unit = (deploy / "systemd" / "openweather-exporter.service").read_text().replace("\\\n", " ")
    (exec_start,) = re.findall(r"^ExecStart=(.*)$", unit, re.M)
    sets["systemd"] = shlex.split(exec_start)[1:]

    def local(arg):
        flag, eq, value = arg.partition("=")
        if eq and value.startswith(("/etc/openweather-exporter/", "%d/")):
            value = a.config if value.endswith((".yml", ".json")) else a.key_file
        if flag == "--storage.path":
            # Beside the key file, in the test's work directory: never /var/lib on the machine.
            value = str(pathlib.Path(a.key_file).parent / "state")
        return flag + eq + value

    for name, args in sets.items():
        args = [local(x) for x in args if not x.startswith("--web.listen-address")]
        if "--demo" not in args:
            args.append("--openweather.url=http://127.0.0.1:1")
        print(f"{name}\t{json.dumps(args)}")


# --- gap -----------------------------------------------------------------------

def temperature_samples(prometheus, job, seconds):
    """Each openweather_temperature_celsius series of `job` with its sample times over the last `seconds`."""
    return [(r["metric"].get("location"), [float(t) for t, _ in r["values"]])
            for r in query(prometheus, f'openweather_temperature_celsius{{job="{job}"}}[{int(seconds)}s]')]


def scraped(a):
    """Waits until Prometheus has had each of the `count` temperature series of `job` for `seconds`:
    its oldest sample is that old (a restart after this has samples before it to compare)."""
    def long_enough():
        series = temperature_samples(a.prometheus, a.job, 600)
        old = time.time() - a.seconds
        return len(series) == a.count and all(stamps and stamps[0] <= old for _, stamps in series)
    check(bool(poll(long_enough, a.timeout)), f"Prometheus has had the {a.count} temperature series of {a.job} for {a.seconds} s")
    finish()


def gap(a):
    """Across a restart (SIGTERM at `down`, /-/ready 200 at `up`, Unix times), every location's
    temperature has samples before and after, and no gap between two samples longer than the
    restart itself plus two scrape intervals. Waits (up to --timeout) until every series has a
    sample more than two scrape intervals after `up`."""
    down, up = float(a.down), float(a.up)
    res = []

    def scraped_after():
        nonlocal res
        res = temperature_samples(a.prometheus, a.job, int(time.time() - down) + 20)
        return len(res) == a.count and all(stamps and stamps[-1] > up + 2 for _, stamps in res)
    poll(scraped_after, a.timeout)
    check(len(res) == a.count, f"{a.count} temperature series (got {len(res)})")
    allowed = up - down + 2.0
    worst = 0.0
    for location, stamps in res:
        spans = bool(stamps) and stamps[0] < down - 2 and stamps[-1] > up + 2
        check(spans, f"{location}: samples before the restart and after it")
        worst = max([worst] + [later - earlier for earlier, later in zip(stamps, stamps[1:])])
    check(worst <= allowed, f"largest gap {worst:.1f} s <= the restart ({up - down:.1f} s) + 2 scrape intervals")
    finish()

# --- per-place gust and rain thresholds (issue 30) --------------------------------

def steer_wind_rain(a):
    """Makes the simulator answer, at one place, gusts of `gust` m/s now (its weather) and in the
    forecast 3 to 21 hours ahead, and `rain_mm` mm of certain rain in each of those forecast steps
    (its fault API serving its own answers with those fields changed)."""
    params = urllib.parse.urlencode({"lat": a.latitude, "lon": a.longitude, "appid": "demo-key", "units": "metric"})
    changed = []
    if a.gust is not None:
        weather = get_json(f"{a.simulator}/data/2.5/weather?{params}")
        weather.setdefault("wind", {})["gust"] = a.gust
        changed.append(("/data/2.5/weather", weather))
    forecast = get_json(f"{a.simulator}/data/2.5/forecast?{params}")
    now = time.time()
    steps = [step for step in forecast["list"] if now + 3 * 3600 <= step["dt"] <= now + 21 * 3600]
    for step in steps:
        if a.gust is not None:
            step.setdefault("wind", {})["gust"] = a.gust
        if a.rain_mm is not None:
            step["rain"] = {"3h": a.rain_mm}
            step["pop"] = 1
    check(len(steps) >= 5, f"{len(steps)} forecast steps 3 to 21 hours ahead changed at lat {a.latitude}")
    changed.append(("/data/2.5/forecast", forecast))
    for path, body in changed:
        url = f"{a.simulator}/_simulator/fault?" + urllib.parse.urlencode({"path": path, "lat": a.latitude})
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            check(r.status == 200, f"simulator serves the changed {path} for lat {a.latitude}")
    finish()


def gust_alerts(a):
    """A place with a gust threshold whose gusts (now and forecast) pass it: both gust rules fire in
    Prometheus with the threshold in their text and a dashboard link; in Alertmanager the gusts now
    are active and mute the forecast's; a place with alerts off, gusts and heavy rain alike, raises
    nothing and exports no threshold."""
    want = {("OpenWeatherWindGustAboveThreshold", a.place), ("OpenWeatherWindGustExpected", a.place)}
    alerts, _ = wait_firing(a.prometheus, want, a.timeout)
    now = [x for x in alerts if x["labels"]["alertname"] == "OpenWeatherWindGustAboveThreshold" and x["labels"].get("location") == a.place]
    text = now[0]["annotations"].get("description", "") if now else ""
    check(f"its threshold is {a.threshold:g} m/s" in text, f"the description names the threshold: {text!r}")
    link = now[0]["annotations"].get("dashboard", "") if now else ""
    check(link.endswith(f"/d/openweather-exporter?var-job={a.job}&var-location={urllib.parse.quote_plus(a.place)}"),
          f"the dashboard annotation links the place: {link!r}")
    quiet = [x["labels"]["alertname"] for x in alerts if x["labels"].get("location") == a.quiet]
    check(not quiet, f"{a.quiet} (alerts off) raises no alert though it has gusts and heavy rain: {quiet}")
    exported = query(a.prometheus, f'{{__name__=~"openweather_.*alert_threshold.*|openweather_temperature_alert_hysteresis_celsius",location="{a.quiet}"}}')
    check(not exported, f"{a.quiet} exports no threshold of any kind: {[r['metric'] for r in exported]}")
    rain = query(a.prometheus, f'openweather_forecast_window_rain_meters{{location="{a.quiet}",window_hours="24"}} * 1000')
    check(bool(rain) and float(rain[0]["value"][1]) >= 20, f"{a.quiet} is forecast heavy rain (got {rain and rain[0]['value'][1]} mm)")

    def in_alertmanager():
        got = {x["labels"]["alertname"]: x["status"] for x in get_json(f"{a.alertmanager}/api/v2/alerts")
               if x["labels"].get("location") == a.place and x["labels"]["alertname"].startswith("OpenWeatherWindGust")}
        return got if len(got) == 2 else None
    statuses = poll(in_alertmanager, a.timeout) or {}
    check(statuses.get("OpenWeatherWindGustAboveThreshold", {}).get("state") == "active",
          f"Alertmanager: OpenWeatherWindGustAboveThreshold active for {a.place} ({statuses})")
    check(statuses.get("OpenWeatherWindGustExpected", {}).get("state") == "suppressed"
          and statuses["OpenWeatherWindGustExpected"].get("inhibitedBy"),
          f"Alertmanager: OpenWeatherWindGustExpected for {a.place} inhibited by the gusts now ({statuses})")
    finish()


def gust_resolved(a):
    """Issue 40: a resolved notification carries the text of the alert's last firing evaluation, so
    the text says its value as of then. The simulator's steered gusts cleared, the place's gusts are
    the model's again (below 80 % of the threshold): the webhook gets OpenWeatherWindGustAboveThreshold
    resolved, saying the gusts reached the steered value at a time of day at most 10 minutes before
    the alert's end, not that they reach it now."""
    req = urllib.request.Request(f"{a.simulator}/_simulator/fault", method="DELETE")
    with urllib.request.urlopen(req, timeout=10) as r:
        check(r.status == 200, "the simulator's steered answers cleared")
    found = []

    def resolved():
        nonlocal found
        path = pathlib.Path(a.webhook_log)
        posts = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
        found = [al for p in posts for al in p["alerts"] if al["status"] == "resolved"
                 and al["labels"].get("alertname") == "OpenWeatherWindGustAboveThreshold" and al["labels"].get("location") == a.place]
        return found
    poll(resolved, a.timeout)
    if not check(bool(found), f"the webhook got OpenWeatherWindGustAboveThreshold for {a.place} resolved"):
        finish()
    text = found[0]["annotations"].get("description", "")
    m = re.match(rf"Gusts in {re.escape(a.place)} reached {a.gust:.1f} m/s at (\d\d):(\d\d) UTC; its threshold is", text)
    ends = found[0]["endsAt"]
    check(m is not None, f"the resolved text gives the gusts as of its time ({a.gust:.1f} m/s): {text!r}")
    if m:
        end = time.strptime(ends[:16], "%Y-%m-%dT%H:%M")
        before = (end.tm_hour * 60 + end.tm_min - int(m.group(1)) * 60 - int(m.group(2))) % 1440
        check(before <= 10, f"its time {m.group(1)}:{m.group(2)} UTC is the last firing evaluation's, before the end {ends}")
    finish()


def backfill_panels(a):
    """Issue 40: backfilled samples are an hour apart, so a panel drawing lines of a family the backfill
    writes connects across the gaps between them (spanNulls true, or an hour or more); points and
    bars need not, nor the exporter's health (the observation's age), whose gaps are the news."""
    families = set(re.findall(r"^# TYPE (\S+) ", pathlib.Path(a.history).read_text(), re.M))
    families.discard("openweather_observation_timestamp_seconds")
    check(len(families) > 10, f"{len(families)} families in the backfill")
    dash = json.loads(pathlib.Path(a.dashboard).read_text())
    for p in walk(dash["panels"]):
        if p["type"] != "timeseries":
            continue
        custom = p.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
        read = {name for t in p.get("targets", []) for name in re.findall(r"\bopenweather_\w+", t["expr"])} & families
        if read and custom.get("drawStyle", "line") == "line":
            span = custom.get("spanNulls", False)
            check(span is True or (not isinstance(span, bool) and span >= 3600 * 1000),
                  f"panel {p['title']!r} connects the hourly samples of {sorted(read)} (spanNulls {span})")
    finish()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("genconfig")
    for k in ("deploy", "out", "exporter", "alertmanager", "webhook", "interval", "rule_for"):
        g.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    m = sub.add_parser("metrics")
    m.add_argument("--prometheus", required=True)
    m.add_argument("--locations", required=True, help="every location with data")
    m.add_argument("--places", default="{}", help='JSON {"NAME": [city, state, country]}: locations given by name')
    m.add_argument("--not-found", default="", help="places the geocoder does not find, comma-separated")
    m.add_argument("--thresholds", required=True, help="location:bound:value,...")
    al = sub.add_parser("alerts")
    al.add_argument("--prometheus", required=True)
    al.add_argument("--alertmanager")
    al.add_argument("--webhook-log")
    al.add_argument("--expect", required=True, help="alertname:location,...")
    al.add_argument("--timeout", type=float, default=60)
    al.add_argument("--ignore", help="alert names (regex) left out of the comparison")
    f = sub.add_parser("force-aqi")
    f.add_argument("--simulator", required=True)
    f.add_argument("--prometheus", required=True)
    f.add_argument("--location", required=True)
    f.add_argument("--latitude", type=float, required=True)
    f.add_argument("--longitude", type=float, required=True)
    f.add_argument("--aqi", type=int, required=True)
    f.add_argument("--timeout", type=float, default=150)
    i = sub.add_parser("inhibit")
    i.add_argument("--alertmanager", required=True)
    i.add_argument("--timeout", type=float, default=20)
    d = sub.add_parser("dashboard")
    d.add_argument("--prometheus", required=True)
    d.add_argument("--dashboard", required=True)
    d.add_argument("--location-regex", required=True)
    d.add_argument("--may-be-empty", help="queries matching this regex may return no series")
    d.add_argument("--only", help="check only the queries matching this regex")
    gp = sub.add_parser("gap")
    gp.add_argument("--prometheus", required=True)
    gp.add_argument("--job", required=True)
    gp.add_argument("--count", type=int, required=True)
    gp.add_argument("--down", required=True)
    gp.add_argument("--up", required=True)
    gp.add_argument("--timeout", type=float, default=30)
    sc = sub.add_parser("scraped")
    sc.add_argument("--prometheus", required=True)
    sc.add_argument("--job", required=True)
    sc.add_argument("--count", type=int, required=True)
    sc.add_argument("--seconds", type=float, required=True)
    sc.add_argument("--timeout", type=float, default=30)
    w = sub.add_parser("webconfig")
    for k in ("deploy", "out", "exporter", "interval", "cert", "key", "ca", "user", "hash", "password_file"):
        w.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    for k in ("client_ca", "client_cert", "client_key"):
        w.add_argument("--" + k.replace("_", "-"), dest=k)
    ps = sub.add_parser("polled_sources")
    ps.add_argument("--metrics", required=True)
    fp = sub.add_parser("frost_place")
    fp.add_argument("--metrics", required=True)
    fa = sub.add_parser("forecast_alerts")
    for k in ("prometheus", "alertmanager", "place"):
        fa.add_argument("--" + k, required=True)
    fa.add_argument("--official", default="", help="places with an official alert (One Call), comma-separated")
    fa.add_argument("--rain-soon", dest="rain_soon", default="", help="places with rain due within 15 minutes (One Call), comma-separated")
    fa.add_argument("--silent", default="", help="places with alerts=off, where nothing may fire, comma-separated")
    fa.add_argument("--webhook-log", dest="webhook_log")
    fa.add_argument("--not-firing", dest="not_firing", help="alert names (regex) that must not fire")
    fa.add_argument("--timeout", type=float, default=90)
    sf = sub.add_parser("steer_forecast")
    sf.add_argument("--simulator", required=True)
    sf.add_argument("--latitude", type=float, required=True)
    sf.add_argument("--longitude", type=float, required=True)
    sf.add_argument("--celsius", type=float, required=True)
    fi = sub.add_parser("inhibit_forecast")
    fi.add_argument("--alertmanager", required=True)
    fi.add_argument("--timeout", type=float, default=20)
    fb = sub.add_parser("onecall_fallback")
    for k in ("prometheus", "places", "log"):
        fb.add_argument("--" + k, required=True)
    fb.add_argument("--source", default="onecall")
    fb.add_argument("--timeout", type=float, default=90)
    mg = sub.add_parser("merge")
    for k in ("snippet", "out", "exporter", "interval"):
        mg.add_argument("--" + k, required=True)
    mg.add_argument("--existing", help="the prometheus.yml to merge into (Debian's stock one when missing)")
    j = sub.add_parser("journey")
    for k in ("prometheus", "dashboard", "rules", "cold", "instance", "existing_jobs"):
        j.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    j.add_argument("--backfill-until", dest="backfill_until", type=int, required=True)
    j.add_argument("--timeout", type=float, default=150)
    sw = sub.add_parser("steer_wind_rain")
    sw.add_argument("--simulator", required=True)
    sw.add_argument("--latitude", type=float, required=True)
    sw.add_argument("--longitude", type=float, required=True)
    sw.add_argument("--gust", type=float)
    sw.add_argument("--rain-mm", dest="rain_mm", type=float)
    ga = sub.add_parser("gust_alerts")
    for k in ("prometheus", "alertmanager", "place", "quiet", "job"):
        ga.add_argument("--" + k, required=True)
    ga.add_argument("--threshold", type=float, required=True)
    ga.add_argument("--timeout", type=float, default=150)
    gr = sub.add_parser("gust_resolved")
    for k in ("simulator", "webhook_log", "place"):
        gr.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    gr.add_argument("--gust", type=float, required=True)
    gr.add_argument("--timeout", type=float, default=150)
    bp = sub.add_parser("backfill_panels")
    bp.add_argument("--history", required=True)
    bp.add_argument("--dashboard", required=True)
    sh = sub.add_parser("showcase")
    for k in ("prometheus", "alertmanager", "webhook_log", "place"):
        sh.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    sh.add_argument("--timeout", type=float, default=150)
    s = sub.add_parser("argsets")
    for k in ("deploy", "config", "key_file"):
        s.add_argument("--" + k.replace("_", "-"), dest=k, required=True)
    a = ap.parse_args()
    globals()[a.cmd.replace("-", "_")](a)


if __name__ == "__main__":
    main()

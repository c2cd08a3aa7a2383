#!/usr/bin/env python3
"""Checks deploy/mixin beyond `render.sh --check` (which proves the committed files are its output):

- its prometheusAlerts and grafanaDashboards are what the committed rules file and dashboard hold;
- rendered with _config.openweatherSelector set, every series selector carries it: in every rule's
  expression, every query an alert's text makes (inside its Go template), every dashboard target,
  annotation and variable query; the rules so rendered pass `promtool check rules`, and a promtool
  unit test sees them alert on the selected job only, with the thresholds their texts query;
- the shipped rule tests, rendered for job="weather", site="home", pass against the rules rendered so;
  a selector that is not a list of matchers is refused by every render;
- a place two exporters of the job poll gets two legends told apart by instance.

    python3 Tests/deploy/mixin.py [REPO_ROOT]     # needs jsonnet, PyYAML and promtool
"""
import functools
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in Tests/TestSupport, a Swift target
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "TestSupport"))
from checks import check, failures  # noqa: E402

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
MIXIN = ROOT / "deploy" / "mixin"
SELECTOR = 'job="weather"'
# Two matchers, a regex and a backslash: what must survive the Go string of an alert's text.
TRICKY = 'job="weather", cluster=~"eu\\\\..*"'


def jsonnet(*args):
    return subprocess.run(["jsonnet", *args], check=True, capture_output=True, text=True, cwd=MIXIN).stdout


@functools.lru_cache(maxsize=None)
def render(what, selector):
    config = "{openweatherSelector: %s}" % json.dumps(selector)
    return jsonnet("-S", "--tla-code", "config=" + config, f"render/{what}.jsonnet")


KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group"}


def selectors(expr):
    """(metric, matchers) of every series selector of a PromQL expression."""
    found, i, n = [], 0, len(expr)

    def skip_string(j):
        j += 1
        while expr[j] != '"':
            j += 2 if expr[j] == "\\" else 1
        return j + 1

    while i < n:
        c = expr[i]
        if c == '"':
            i = skip_string(i)
        elif c == "[":
            i = expr.index("]", i) + 1
        elif c.isdigit():
            i += len(re.match(r"[0-9.]+(e[+-]?[0-9]+)?[smhdwy]?", expr[i:]).group(0))
        elif re.match(r"[A-Za-z_:]", c):
            name = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", expr[i:]).group(0)
            j = i + len(name)
            rest = expr[j:].lstrip(" ")
            if name in KEYWORDS:
                if name not in ("and", "or", "unless", "bool", "offset") and rest.startswith("("):
                    j = expr.index(")", j) + 1
                elif name == "offset":
                    j += len(re.match(r"\s+\S+", expr[j:]).group(0))
            elif name in AGGREGATIONS or rest.startswith("("):
                pass  # a function or an aggregation
            elif j < n and expr[j] == "{":
                e = j
                while expr[e] != "}":
                    e = skip_string(e) if expr[e] == '"' else e + 1
                found.append((name, expr[j + 1:e]))
                j = e + 1
            else:
                found.append((name, ""))
            i = j
        else:
            i += 1
    return found


def text_queries(text):
    """The PromQL of every `printf "..."` in an alert's text that names a metric, as Go reads it."""
    out = []
    for m in re.finditer(r'printf "((?:[^"\\]|\\.)*)"', text):
        q = re.sub(r"\\(.)", r"\1", m.group(1))
        if "_" in q:
            out.append(q.replace("%%", "%"))
    return out


def carries(selector, matchers):
    return all(part in matchers for part in selector.split(", "))


def check_selector(selector, kubernetes):
    print(f"openweatherSelector: '{selector}'")
    rules = yaml.safe_load(render("rules", selector))
    dash = json.loads(render("dashboard", selector))
    if kubernetes:
        kube = yaml.safe_load(render("prometheusrule", selector))
        check(kube["spec"]["groups"] == rules["groups"], "the PrometheusRule holds the rules file's groups")
    queries = []
    for g in rules["groups"]:
        for r in g["rules"]:
            queries.append((f"{r['alert']} expr", r["expr"]))
            for k, v in r["annotations"].items():
                queries += [(f"{r['alert']} {k} query", q) for q in text_queries(v)]
    panels = []
    stack = list(dash["panels"])
    while stack:
        p = stack.pop()
        panels.append(p)
        stack += p.get("panels", [])
    queries += [(f"panel {p['title']!r}", t["expr"]) for p in panels for t in p.get("targets", [])]
    queries += [(f"annotation {a['name']!r}", a["expr"]) for a in dash["annotations"]["list"] if "expr" in a]
    # label_values(SERIES, LABEL): the series only.
    queries += [(f"variable {v['name']} {k}", re.fullmatch(r"label_values\((.*), \w+\)", v[k]).group(1))
                for v in dash["templating"]["list"] if v["type"] == "query" for k in ("query", "definition")]
    series = [(where, name, matchers) for where, q in queries for name, matchers in selectors(q)]
    missing = [f"{where}: {name}{{{matchers}}}" for where, name, matchers in series if not carries(selector, matchers)]
    check(len(series) > 150 and not missing,
          f"all {len(series)} series selectors of {len(queries)} queries carry {selector}"
          + (f"; not: {'; '.join(missing[:10])}" if missing else ""))
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "rules.yml"
        path.write_text(render("rules", selector))
        result = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True)
        check(result.returncode == 0, "promtool check rules accepts them" + ("" if result.returncode == 0 else ": " + result.stdout + result.stderr))


def check_alerting(selector):
    """A promtool unit test of the rules rendered with `selector`: Seville of the selected job is above its
    temperature and heat index thresholds (given in °F) and alerts, with the threshold and its end in its
    text; the same place of another job (no cluster label) does not."""
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "rules.yml").write_text(render("rules", selector))
        mine = 'job="weather",instance="a:9755",cluster="eu.1",location="Seville"'
        other = 'job="openweather",instance="a:9755",location="Seville"'
        series = []
        for labels in (mine, other):
            series += [
                {"series": "openweather_temperature_alert_threshold_celsius{%s,bound=\"above\"}" % labels, "values": "35x30"},
                {"series": "openweather_temperature_alert_threshold_info{%s,bound=\"above\",unit=\"fahrenheit\"}" % labels, "values": "1x30"},
                {"series": "openweather_temperature_alert_hysteresis_celsius{%s}" % labels, "values": "1x30"},
                {"series": "openweather_temperature_celsius{%s}" % labels, "values": "36x30"},
                {"series": "openweather_heat_index_alert_threshold_celsius{%s}" % labels, "values": "40x30"},
                {"series": "openweather_thermal_alert_threshold_info{%s,index=\"heat_index\",unit=\"fahrenheit\"}" % labels, "values": "1x30"},
                {"series": "openweather_heat_index_celsius{%s}" % labels, "values": "41x30"},
            ]
        test = {
            "rule_files": ["rules.yml"],
            "evaluation_interval": "1m",
            "tests": [{
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [{
                    "eval_time": "20m",
                    "alertname": "OpenWeatherTemperatureAboveThreshold",
                    "exp_alerts": [{
                        "exp_labels": {"severity": "warning", "job": "weather", "instance": "a:9755", "cluster": "eu.1", "location": "Seville"},
                        "exp_annotations": {
                            "summary": "Seville is hotter than its alert threshold",
                            "dashboard": "http://localhost:3000/d/openweather-exporter?var-job=weather&var-location=Seville",
                            "description": DESCRIPTION,
                        },
                    }],
                }, {
                    "eval_time": "20m",
                    "alertname": "OpenWeatherHeatIndexAboveThreshold",
                    "exp_alerts": [{
                        "exp_labels": {"severity": "warning", "job": "weather", "instance": "a:9755", "cluster": "eu.1", "location": "Seville"},
                        "exp_annotations": {
                            "summary": "The heat index in Seville is above its alert threshold",
                            "dashboard": "http://localhost:3000/d/openweather-exporter?var-job=weather&var-location=Seville",
                            "description": HEAT_INDEX_DESCRIPTION,
                        },
                    }],
                }],
            }],
        }
        (pathlib.Path(tmp) / "test.yml").write_text(yaml.safe_dump(test, allow_unicode=True))
        result = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=tmp, capture_output=True, text=True)
        check(result.returncode == 0, f"promtool test rules: with {selector}, only the selected job's Seville alerts, its text from queries with the selector"
              + ("" if result.returncode == 0 else ":\n" + result.stdout + result.stderr))


def check_rendered_tests(selector):
    """Issue 50: the shipped tests fit the default job only; render/tests.jsonnet renders them for the
    rules' own config, and promtool passes them against the rules rendered with it (a target label such
    as site= beside the job included, which the thermal rules' hysteresis once dropped)."""
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "openweather.yml").write_text(render("rules", selector))
        (pathlib.Path(tmp) / "openweather.test.yml").write_text(render("tests", selector))
        result = subprocess.run(["promtool", "test", "rules", "openweather.test.yml"], cwd=tmp, capture_output=True, text=True)
        check(result.returncode == 0, f"promtool test rules: the tests rendered for {selector} pass against its rules"
              + ("" if result.returncode == 0 else ":\n" + (result.stdout + result.stderr)[-3000:]))
        shipped = (ROOT / "deploy" / "prometheus" / "rules" / "openweather.test.yml").read_text()
        (pathlib.Path(tmp) / "openweather.test.yml").write_text(shipped)
        result = subprocess.run(["promtool", "test", "rules", "openweather.test.yml"], cwd=tmp, capture_output=True, text=True)
        check(result.returncode != 0, f"the shipped tests (for the default job) fail against rules for {selector}")
    for config, words in [
        ({"openweatherSelector": 'cluster=~"eu.*"'}, 'cluster=~"eu.*" is not an equality, which a series could carry'),
        ({"openweatherSelector": 'instance="a:9755"'}, "the tests set instance themselves"),
        ({"openweatherSelector": 'job="weather"', "exporterSelector": 'job="other"'},
         "_config.exporterSelector is 'job=\"other\"', not the selector the tests expect of `up`"),
    ]:
        result = subprocess.run(["jsonnet", "-S", "--tla-code", "config=" + json.dumps(config), "render/tests.jsonnet"],
                                cwd=MIXIN, capture_output=True, text=True)
        check(result.returncode != 0 and words in result.stderr,
              f"render/tests.jsonnet refuses {config}: {words}" + ("" if words in result.stderr else f"; said: {result.stderr[:300]}"))


def check_bad_selectors():
    """Issue 49: a selector that is not a list of matchers broke every rule; each render refuses it, saying why."""
    for selector, why in [
        ('job="a",', "it ends with a comma"),
        ("  ", "it is blank"),
        ("job=weather", "the value of job should be quoted"),
        ('job="a" site="b"', 'a comma should come between matchers at character 9, not "s"'),
        ('job="a', "a value opened with \" at character 5 is not closed"),
        ('9job="a"', 'a label name (like job) should come at character 1, not "9"'),
        ("job", "the label job needs one of = != =~ !~ and a quoted value"),
    ]:
        for what in ("rules", "dashboard", "prometheusrule"):
            result = subprocess.run(
                ["jsonnet", "-S", "--tla-code", "config=" + json.dumps({"openweatherSelector": selector}), f"render/{what}.jsonnet"],
                cwd=MIXIN, capture_output=True, text=True)
            said = f"_config.openweatherSelector is '{selector}', which is not a list of label matchers: {why}"
            check(result.returncode != 0 and said in result.stderr and not result.stdout,
                  f"render/{what}.jsonnet refuses openweatherSelector '{selector}': {why}"
                  + ("" if said in result.stderr else f"; said: {result.stderr[:300]}"))
    result = subprocess.run(["jsonnet", "-S", "--tla-code", 'config={exporterSelector: ""}', "render/rules.jsonnet"],
                            cwd=MIXIN, capture_output=True, text=True)
    check(result.returncode != 0 and "_config.exporterSelector is '', which is not a list of label matchers: it is blank" in result.stderr,
          "a blank exporterSelector is refused")


def check_legends():
    """Issue 40: two exporters of one job polling the same place drew two legends alike. Every query
    whose legend names the location adds the instance to the location of a place that repeats:
    promtool evaluates the temperature panel's query over Paris on two exporters and Lyon on one."""
    dash = json.loads((ROOT / "deploy" / "grafana" / "dashboards" / "openweather.json").read_text())
    marker = '"location", " on ", "location", "instance")'
    targets = [(p, t) for p in dash["panels"] if p["type"] in ("timeseries", "stat", "state-timeline")
               for t in p.get("targets", []) if "{{location}}" in t.get("legendFormat", "")]
    plain = [f"{p['title']!r} {t['refId']}" for p, t in targets if marker not in t["expr"]]
    check(len(targets) > 40 and not plain, f"all {len(targets)} queries with the location in their legend tell repeated places apart"
          + (f" (not: {', '.join(plain)})" if plain else ""))
    (expr,) = [t["expr"] for p, t in targets if p["title"] == "Temperature" and p["type"] == "stat"]
    expr = expr.replace('job=~"$job"', 'job=~"openweather"').replace('location=~"$location"', 'location=~".+"')
    series = lambda instance, place: f'openweather_temperature_celsius{{job="openweather",instance="{instance}",location="{place}"}}'
    test = {
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1m",
            "input_series": [{"series": series("a:9755", "Paris"), "values": "10x5"},
                             {"series": series("b:9755", "Paris"), "values": "11x5"},
                             {"series": series("a:9755", "Lyon"), "values": "12x5"}],
            "promql_expr_test": [{
                "expr": expr,
                "eval_time": "2m",
                "exp_samples": [{"labels": series("a:9755", "Paris on a:9755"), "value": 10},
                                {"labels": series("b:9755", "Paris on b:9755"), "value": 11},
                                {"labels": series("a:9755", "Lyon"), "value": 12}],
            }],
        }],
    }
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "test.yml").write_text(yaml.safe_dump(test))
        result = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=tmp, capture_output=True, text=True)
        check(result.returncode == 0, "promtool: Paris on two exporters is \"Paris on a:9755\" and \"Paris on b:9755\", Lyon stays Lyon"
              + ("" if result.returncode == 0 else ":\n" + result.stdout + result.stderr))


# What the rules say of Seville at 20m (35 °C, given as 95 °F; 36 °C; hysteresis 1 °C).
DESCRIPTION = ("The temperature in Seville went above its threshold of 35 °C (95 °F) at least 15 minutes ago "
               "and was 36.0 °C (96.8 °F) at 00:20 UTC. It ends when back to 34 °C (93.2 °F) or below.")
# And of its heat index (40 °C, given in °F; 41 °C; the same hysteresis).
HEAT_INDEX_DESCRIPTION = ("The heat index in Seville went above its threshold of 40 °C (104 °F) at least 15 minutes ago "
                          "and was 41.0 °C (105.8 °F) at 00:20 UTC. It ends when back to 39 °C (102.2 °F) or below.")


def main():
    print("the mixin's objects are the committed files:")
    alerts = json.loads(jsonnet("-e", "(import 'mixin.libsonnet').prometheusAlerts"))
    committed = yaml.safe_load((ROOT / "deploy" / "prometheus" / "rules" / "openweather.yml").read_text())
    check(alerts == committed, "prometheusAlerts is deploy/prometheus/rules/openweather.yml")
    dashboards = json.loads(jsonnet("-e", "(import 'mixin.libsonnet').grafanaDashboards"))
    committed = json.loads((ROOT / "deploy" / "grafana" / "dashboards" / "openweather.json").read_text())
    check(list(dashboards) == ["openweather.json"] and dashboards["openweather.json"] == committed,
          "grafanaDashboards is {'openweather.json': deploy/grafana/dashboards/openweather.json}")
    check_selector(SELECTOR, kubernetes=True)
    check_selector(TRICKY, kubernetes=False)
    check_alerting(TRICKY)
    print("the rules' tests for another selector, and selectors refused:")
    check_rendered_tests('job="weather", site="home"')
    check_bad_selectors()
    print("the dashboard's legends:")
    check_legends()
    print(f"mixin: {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

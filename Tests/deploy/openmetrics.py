#!/usr/bin/env python3
"""OpenMetrics checks for Tests/deploy/run.sh.

  parse --url URL [--file FILE ...] [--family REGEX ...]
      Scrapes URL as Prometheus 2.x does (its Accept header, gzip), checks the
      Content-Type, and has the OpenMetrics parser of prometheus_client (which
      run.sh installs) read the answer and each FILE; the live scrape must carry
      the same series as a text-format scrape, counters with _created, `# UNIT`
      where the name ends in a unit, and for each REGEX a family it matches.
  ingested --prometheus URL --job JOB
      A Prometheus scraping JOB negotiated OpenMetrics: the metadata API has the
      units and the counter family without _total, and the _created series are stored.

Prints what it checked; exits non-zero on a failure.
"""
import argparse
import gzip
import json
import re
import urllib.parse
import urllib.request

from e2e import check, finish  # one way to report a check, beside this file

# What Prometheus 2.42 (Debian 12) sends, captured from a real scrape.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
UNIT = re.compile(r"_(celsius|seconds|pascals|meters|meters_per_second|degrees|ratio|bytes|grams_per_cubic_meter)$")

def fetch(url, headers):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return r.headers.get("Content-Type"), body.decode()


def series(text):
    """The sample lines of an exposition, without _created lines and the process part (which moves)."""
    return {line.rsplit(" ", 1)[0] for line in text.splitlines()
            if line and not line.startswith("#") and not line.startswith("process_")
            and not re.match(r"\w+_created[{ ]", line)}


def parse(a):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    def read(text, what):
        try:
            families = list(text_string_to_metric_families(text))
        except Exception as error:  # the parser raises ValueError and others
            check(False, f"{what}: prometheus_client's OpenMetrics parser: {error!r}")
            return []
        check(True, f"{what}: prometheus_client's OpenMetrics parser reads {len(families)} families, "
                    f"{sum(len(f.samples) for f in families)} samples")
        return families

    for path in a.file or []:
        with open(path) as f:
            read(f.read(), path)
    content_type, text = fetch(a.url, {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"})
    check(content_type == OPENMETRICS, f"Prometheus' Accept gets {OPENMETRICS} (got {content_type})")
    families = read(text, f"live scrape of {a.url}")
    if not families:
        finish()
    _, plain = fetch(a.url, {"Accept": "*/*"})
    check(series(text) == series(plain), "the same series as the text format, _created aside")
    by_name = {f.name: f for f in families}
    for family in families:
        if family.type == "counter":
            names = {s.name for s in family.samples}
            check(names == {family.name + "_total", family.name + "_created"},
                  f"counter {family.name}: _total and _created samples ({sorted(names)})")
        unit = UNIT.search(family.name)
        check(family.unit == (unit.group(1) if unit else ""), f"{family.name}: unit {family.unit!r}")
    check(by_name.get("process_cpu_seconds") is not None and by_name["process_cpu_seconds"].type == "counter",
          "process_cpu_seconds is a counter family")
    for pattern in a.family or []:
        matching = [name for name in by_name if re.search(pattern, name)]
        check(bool(matching), f"families matching {pattern}: {len(matching)}")
    finish()


def ingested(a):
    def metadata(metric):
        with urllib.request.urlopen(f"{a.prometheus}/api/v1/metadata?" + urllib.parse.urlencode({"metric": metric}), timeout=10) as r:
            return json.load(r)["data"].get(metric, [])

    def query(expr):
        with urllib.request.urlopen(f"{a.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=10) as r:
            return json.load(r)["data"]["result"]

    check(any(m.get("unit") == "celsius" for m in metadata("openweather_temperature_celsius")),
          "metadata: openweather_temperature_celsius has unit celsius (only OpenMetrics carries # UNIT)")
    check(any(m.get("type") == "counter" for m in metadata("openweather_api_requests")),
          "metadata: the counter family is openweather_api_requests, without _total")
    created = query(f'openweather_api_requests_created{{job="{a.job}"}}')
    check(bool(created), f"openweather_api_requests_created stored for job {a.job}: {len(created)} series")
    check(bool(query(f'process_cpu_seconds_created{{job="{a.job}"}}')), f"process_cpu_seconds_created stored for job {a.job}")
    finish()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse")
    p.add_argument("--url", required=True)
    p.add_argument("--file", action="append")
    p.add_argument("--family", action="append")
    i = sub.add_parser("ingested")
    i.add_argument("--prometheus", required=True)
    i.add_argument("--job", required=True)
    a = ap.parse_args()
    globals()[a.cmd](a)


if __name__ == "__main__":
    main()

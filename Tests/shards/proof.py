#!/usr/bin/env python3
"""The shard proof (issue 15): one config of many locations, run unsharded, as 3 shards and as 4 shards,
each exporter in --demo mode (its own simulator on loopback; the simulators' request logs use the
machine's CLOCK_MONOTONIC, so the logs of several processes merge into one timeline).

Checks:
- every shard keeps exactly the locations Tests/shards/shardhash.py (an independent implementation of
  the hash) gives it; no location on two shards; the union is every location;
- the union of the 3 shards' per-location series equals the unsharded exporter's (same series; values
  that do not depend on the poll time are equal);
- from 3 to 4 shards about a quarter of the locations move, all to the new shard;
- the 3 shards together never start more than the key's budget of requests in any 60 s window
  (and the budget binds: they would need more);
- a real Prometheus scraping the 3 shards counts as many openweather_temperature_celsius series as
  scraping the unsharded one, and no location twice.

Run by Tests/shards/run.sh (which installs Prometheus and builds the exporter); stops only the
processes it started.
"""
import argparse
import json
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in Tests/TestSupport, a Swift target
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "TestSupport"))
import shardhash  # noqa: E402
from waiting import poll, window  # noqa: E402
from checks import check, failures  # noqa: E402

children = []


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode()


def status_of(url):
    try:
        return http_get(url, timeout=5)[0]
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


class Exporter:
    def __init__(self, name, binary, work, args):
        self.name = name
        self.log_path = work / f"{name}.log"
        self.log = open(self.log_path, "w")
        self.started = time.monotonic()
        self.process = subprocess.Popen([binary, "--web.listen-address=127.0.0.1:0", *args],
                                        stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        children.append(self.process)
        self.url = self.simulator = None
        self.ready_after = None

    def discover(self, deadline):
        while time.monotonic() < deadline:
            text = self.log_path.read_text()
            address = re.search(r"address=127\.0\.0\.1:(\d+)", text)
            simulator = re.search(r"simulator=(http://127\.0\.0\.1:\d+)", text)
            if address and simulator:
                self.url = f"http://127.0.0.1:{address.group(1)}"
                self.simulator = simulator.group(1)
                return True
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        print(f"{self.name} did not start:\n{self.log_path.read_text()}")
        return False

    def poll_ready(self):
        if self.ready_after is None and status_of(self.url + "/-/ready") == 200:
            self.ready_after = time.monotonic() - self.started
        return self.ready_after is not None

    def scrape(self):
        return http_get(self.url + "/metrics")[1]


def stop_all():
    for process in children:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for process in children:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# Labels of condition_info follow the weather at poll time; everything else names the series.
TIME_DEPENDENT_LABELS = {"main", "description", "icon"}
# Values that do not depend on when the place was polled.
TIME_INDEPENDENT = {"openweather_location_info", "openweather_timezone_offset_seconds", "openweather_up",
                    "openweather_temperature_threshold_celsius"}


def parse(text):
    """{series key: value} of the samples that carry a location label, and the total sample count."""
    series, total = {}, 0
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        total += 1
        match = SAMPLE.match(line)
        if not match:
            raise ValueError(f"unparsable line {line!r}")
        name, labels, value = match.groups()
        pairs = dict(LABEL.findall(labels or ""))
        if "location" not in pairs:
            continue
        key = (name, tuple(sorted((k, v) for k, v in pairs.items() if k not in TIME_DEPENDENT_LABELS)))
        series[key] = float(value)
    return series, total


def locations_of(series):
    return {dict(labels)["location"] for (name, labels) in series if name == "openweather_up"}


def prometheus_query(prom, query):
    _, body = http_get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    return json.loads(body)["data"]["result"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--locations", type=int, default=300)
    parser.add_argument("--budget", type=int, default=900)
    parser.add_argument("--prometheus", default="prometheus")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    # timeout(1) and Ctrl-C: leave through `finally`, which stops the children.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = pathlib.Path(tempfile.mkdtemp(prefix="openweather-shards."))
    print(f"work directory {work}")
    try:
        run(options, work)
    finally:
        stop_all()
        if not options.keep:
            subprocess.run(["rm", "-rf", str(work)])
    print(f"\n{'all passed' if not failures else f'{len(failures)} FAILED: ' + '; '.join(failures)}")
    return 1 if failures else 0


def config_yaml(config):
    """The config file as the exporter's users write it: YAML (a JSON string is a YAML double-quoted scalar)."""
    lines = ["# written by Tests/shards/proof.py", "locations:"]
    for location in config["locations"]:
        lines += [f"  - name: {json.dumps(location['name'], ensure_ascii=False)}", f"    latitude: {location['latitude']}",
                  f"    longitude: {location['longitude']}"]
    return "\n".join(lines) + "\n"


def run(options, work):
    names = [f"Place {i:03d}" if i % 10 else f"Zürich {i:03d}" for i in range(options.locations)]
    config = {
        "locations": [{"name": name, "latitude": round(-60 + (i * 0.37) % 120, 4),
                       "longitude": round(-180 + (i * 1.13) % 360, 4)} for i, name in enumerate(names)],
    }
    config_path = work / "config.yml"
    config_path.write_text(config_yaml(config))
    common = ["--demo", "--web.enable-lifecycle", f"--config.file={config_path}", f"--openweather.max-requests-per-minute={options.budget}"]

    reference = Exporter("unsharded", options.bin, work, common)
    three = [Exporter(f"shard-{i}-of-3", options.bin, work, common + ["--total-shards=3", f"--shard={i}"]) for i in range(2)]
    # The third one the StatefulSet way: the shard from the pod name's ordinal.
    three.append(Exporter("shard-2-of-3", options.bin, work, common + ["--total-shards=3", "--pod=openweather-exporter-2"]))
    four = [Exporter(f"shard-{i}-of-4", options.bin, work, common + ["--total-shards=4", f"--shard={i}"]) for i in range(4)]
    everyone = [reference, *three, *four]
    deadline = time.monotonic() + 30
    if not all(exporter.discover(deadline) for exporter in everyone):
        check(False, "every exporter starts")
        return
    started = min(exporter.started for exporter in three)

    prom_port = free_port()
    prom = f"http://127.0.0.1:{prom_port}"
    (work / "prometheus.yml").write_text(
        "global: {scrape_interval: 2s, scrape_timeout: 2s}\nscrape_configs:\n"
        f"  - job_name: unsharded\n    static_configs: [{{targets: ['{reference.url[7:]}']}}]\n"
        f"  - job_name: shards\n    static_configs: [{{targets: [{', '.join(repr(e.url[7:]) for e in three)}]}}]\n")
    prom_log = open(work / "prometheus.log", "w")
    children.append(subprocess.Popen(
        [options.prometheus, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=prom_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    # Every exporter ready: each source of each of its locations tried once, paced by its budget.
    poll(lambda: all(exporter.poll_ready() for exporter in everyone), 240)
    for exporter in everyone:
        check(exporter.ready_after is not None,
              f"{exporter.name} ready after {exporter.ready_after or float('nan'):.1f} s")
    if failures:
        return

    # Scrape the shards first, then the reference: the series sets must match.
    shard_series = [parse(e.scrape()) for e in three]
    four_series = [parse(e.scrape()) for e in four]
    ref_text = reference.scrape()
    ref_series, ref_total = parse(ref_text)
    print(f"unsharded: {len(ref_series)} per-location series, {ref_total} samples, {len(ref_text)} bytes")
    for exporter, (series, total) in zip(three, shard_series):
        print(f"{exporter.name}: {len(locations_of(series))} locations, {len(series)} per-location series, {total} samples")

    shard_locations = [locations_of(series) for series, _ in shard_series]
    check(set().union(*shard_locations) == set(names) and locations_of(ref_series) == set(names),
          f"the 3 shards together poll every one of the {len(names)} locations, as the unsharded one does")
    overlaps = [(a, b, shard_locations[a] & shard_locations[b]) for a in range(3) for b in range(a + 1, 3)]
    check(all(not both for _, _, both in overlaps), "no location is on two shards")
    check(all(shardhash.owner(name, 3) == index for index, owned in enumerate(shard_locations) for name in owned),
          "each shard owns exactly the locations the independent hash (shardhash.py) gives it")

    union = {}
    for series, _ in shard_series:
        union.update(series)
    check(set(union) == set(ref_series),
          f"the union of the 3 shards' per-location series equals the unsharded exporter's ({len(ref_series)} series)"
          + ("" if set(union) == set(ref_series) else
             f"; only unsharded: {sorted(set(ref_series) - set(union))[:3]}, only shards: {sorted(set(union) - set(ref_series))[:3]}"))
    differing = [key for key in ref_series if key[0] in TIME_INDEPENDENT and union.get(key) != ref_series[key]]
    check(not differing and any(key[0] in TIME_INDEPENDENT for key in ref_series),
          f"values that do not depend on the poll time are equal (location_info, timezone offset, up, thresholds){differing[:3]}")
    temperature = [abs(union[k] - v) for k, v in ref_series.items() if k[0] == "openweather_temperature_celsius" and k in union]
    print(f"temperature: largest difference between unsharded and sharded readings {max(temperature):.2f} °C "
          f"(the simulated weather moves between the two polls)")

    four_locations = [locations_of(series) for series, _ in four_series]
    check(set().union(*four_locations) == set(names) and sum(map(len, four_locations)) == len(names),
          "the 4 shards together poll every location once")
    owner3 = {name: i for i, owned in enumerate(shard_locations) for name in owned}
    owner4 = {name: i for i, owned in enumerate(four_locations) for name in owned}
    moved = [name for name in names if owner3[name] != owner4[name]]
    check(all(owner4[name] == 3 for name in moved), "from 3 to 4 shards every moved location goes to the new shard 3")
    share = len(moved) / len(names)
    check(0.18 <= share <= 0.32, f"from 3 to 4 shards {len(moved)} of {len(names)} locations move ({share:.1%}; 25% expected)")
    modulo_moved = sum(1 for name in names if shardhash.fnv1a(name.encode()) % 3 != shardhash.fnv1a(name.encode()) % 4)
    print(f"for comparison, hash mod N would move {modulo_moved} of {len(names)} ({modulo_moved / len(names):.1%})")

    # Prometheus: the same count from the 3 shards as from the unsharded exporter, and no location twice.
    counts = None

    def counted():
        nonlocal counts
        try:
            counts = [prometheus_query(prom, f'count(openweather_temperature_celsius{{job="{job}"}})') for job in ("unsharded", "shards")]
            counts = [float(result[0]["value"][1]) if result else 0 for result in counts]
            return counts[0] == counts[1] == len(names)
        except (OSError, ValueError, KeyError):
            return False
    poll(counted, 90)
    check(counts is not None and counts[0] == counts[1] == len(names),
          f"Prometheus: count(openweather_temperature_celsius) is {counts} for (unsharded, 3 shards); {len(names)} expected")
    try:
        twice = prometheus_query(prom, 'count by (location, source) (openweather_up{job="shards"}) > 1')
        targets = prometheus_query(prom, 'count by (job) (up == 1)')
    except OSError as error:
        twice, targets = [error], []
    check(twice == [], f"Prometheus: no location is scraped from two shards {twice[:3]}")
    print(f"Prometheus targets up: { {t['metric']['job']: t['value'][1] for t in targets} }")

    # The budget: the 3 shards' requests, merged, in every 60 s window, after at least 65 s of polling.
    remaining = started + 65 - time.monotonic()
    if remaining > 0:
        # A window (the budget is a rate over time), not a wait for an event.
        print(f"measuring {remaining:.0f} s more so that the request logs span more than a minute")
        window(remaining, alive=lambda: all(e.process.poll() is None for e in three))
    starts = []
    per_shard = []
    for exporter in three:
        lines = http_get(exporter.simulator + "/_simulator/requests")[1].split("\n")
        times = sorted(float(line.split()[0]) for line in lines if line.strip())
        per_shard.append(max_in_window(times))
        starts += times
    starts.sort()
    span = starts[-1] - starts[0]
    busiest = max_in_window(starts)
    share_budget = options.budget // 3
    check(span >= 60, f"the shards' request logs span {span:.0f} s ({len(starts)} requests)")
    check(all(count <= share_budget for count in per_shard),
          f"each shard starts at most its share, {share_budget}, in any 60 s window: {per_shard}")
    check(busiest <= options.budget,
          f"the 3 shards together start at most {busiest} requests in any 60 s window; the key's budget is {options.budget}")
    need = len(names) * (60 / 15 + 60 / 60)
    check(busiest >= 0.8 * options.budget,
          f"the budget binds: the locations need {need:.0f}/min at the demo intervals, the shards used {busiest} of {options.budget}")
    ref_lines = http_get(reference.simulator + "/_simulator/requests")[1].split("\n")
    ref_busiest = max_in_window(sorted(float(line.split()[0]) for line in ref_lines if line.strip()))
    print(f"unsharded: at most {ref_busiest} requests in any 60 s window")

    global_series = ["openweather_exporter_build_info", "process_resident_memory_bytes",
                     "openweather_exporter_config_last_reload_successful", "openweather_api_requests_total"]
    for exporter in [reference, *three]:
        text = exporter.scrape()
        check(all(re.search(rf"^{name}[{{ ]", text, re.M) for name in global_series),
              f"{exporter.name} serves the exporter's own series ({', '.join(global_series)})")
        rss = re.search(r"^process_resident_memory_bytes (\S+)$", text, re.M)
        print(f"{exporter.name}: resident memory {float(rss.group(1)) / 2**20:.1f} MiB")

    # A reload re-reads the shared file and keeps the shard: 30 more locations spread over the 3.
    added = [f"Added {i:02d}" for i in range(30)]
    config["locations"] += [{"name": name, "latitude": 10 + i, "longitude": 20 + i} for i, name in enumerate(added)]
    config_path.write_text(config_yaml(config))
    for exporter in three:
        request = urllib.request.Request(exporter.url + "/-/reload", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            check(response.status == 200, f"{exporter.name}: POST /-/reload answers 200")
    after = []

    def moved_over():
        nonlocal after
        after = [locations_of(parse(e.scrape())[0]) for e in three]
        return set().union(*after) == set(names) | set(added)
    done = poll(moved_over, 120)
    check(done and sum(map(len, after)) == len(names) + len(added)
          and all(shardhash.owner(name, 3) == index for index, owned in enumerate(after) for name in owned),
          f"after the reload the 3 shards poll all {len(names) + len(added)} locations, each on the shard the hash gives "
          f"(new ones: {[len(owned & set(added)) for owned in after]})")


def max_in_window(times, window=60.0):
    best, low = 0, 0
    for high, t in enumerate(times):
        while times[low] <= t - window:
            low += 1
        best = max(best, high - low + 1)
    return best


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Structure checks for deploy/: Kubernetes manifests, compose files, the
Dockerfile, the systemd unit and the Grafana files; and that every relative
link of the Markdown files (README.md, deploy/, Tests/, Sources/) leads to a
file that exists and, with a #fragment, to one of its headings. Needs PyYAML,
and kubectl for the Kubernetes part: the kustomizations are built by kustomize itself.

    python3 Tests/deploy/check_structure.py [REPO_ROOT]

Prints one line per check and exits non-zero when any fails.
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in Tests/TestSupport, a Swift target
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "TestSupport"))
import checks as tally  # noqa: E402
from checks import check, failures  # noqa: E402

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
DEPLOY = ROOT / "deploy"


def load_yaml_docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def subset(small, big):
    return bool(small) and all(big.get(k) == v for k, v in small.items())


# --- Kubernetes ----------------------------------------------------------------

KUSTOMIZATIONS = {"single": "kubernetes", "sharded": "kubernetes/sharded"}


def kustomize(rel):
    """The objects `kubectl kustomize deploy/REL` builds (kustomize itself, never a rebuild here),
    by (kind, name)."""
    out = subprocess.run(["kubectl", "kustomize", str(DEPLOY / rel)], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl kustomize deploy/{rel}: {out.stderr.strip()}")
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(out.stdout) if d}


def one(objects, kind):
    found = [d for (k, _), d in objects.items() if k == kind]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} objects of kind {kind}, expected 1")
    return found[0]


def check_workload(name, objects, workload):
    """What either layout must get right about its pod, its Service and its ServiceMonitor."""
    svc, sm, cm = one(objects, "Service"), one(objects, "ServiceMonitor"), one(objects, "ConfigMap")
    pr = one(objects, "PrometheusRule")
    check(not any(k == "Secret" for k, _ in objects),
          f"{name}: no Secret in what `apply -k` applies (a placeholder would replace the key created by hand)")
    check(len({d["metadata"].get("namespace") for d in objects.values()}) == 1
          and all(d["metadata"].get("namespace") for d in objects.values()),
          f"{name}: every object in one namespace")
    pod = workload["spec"]["template"]
    pod_labels = pod["metadata"]["labels"]
    check(subset(workload["spec"]["selector"]["matchLabels"], pod_labels), f"{name}: {workload['kind']} selector matches its pod labels")
    check(subset(svc["spec"]["selector"], pod_labels), f"{name}: Service selector matches the pod labels")
    check(subset(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]), f"{name}: ServiceMonitor selector matches the Service labels")

    spec = pod["spec"]
    check(len(spec["containers"]) == 1, f"{name}: one container")
    c = spec["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(ports.get("http") == 9755, f"{name}: container port http is 9755")

    def port_ok(p):
        return p in ports or p in ports.values()

    for probe, path in (("livenessProbe", "/-/healthy"), ("readinessProbe", "/-/ready")):
        get = c.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path and port_ok(get.get("port")), f"{name}: {probe} GET {path} on a container port")
    for p in svc["spec"]["ports"]:
        check(port_ok(p["targetPort"]), f"{name}: Service port {p['name']} targets a container port")
    svc_port_names = {p["name"] for p in svc["spec"]["ports"]}
    for ep in sm["spec"]["endpoints"]:
        check(ep.get("port") in svc_port_names, f"{name}: ServiceMonitor endpoint port {ep.get('port')} is a Service port")
        check(ep.get("path", "/metrics") == "/metrics", f"{name}: ServiceMonitor scrapes /metrics")
        job = [r for r in ep.get("relabelings", []) if r.get("targetLabel") == "job"]
        check(job and job[0].get("replacement") == "openweather", f"{name}: ServiceMonitor sets job=\"openweather\" as the rules expect")

    psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True or csc.get("runAsNonRoot") is True, f"{name}: runAsNonRoot")
    check(csc.get("readOnlyRootFilesystem") is True, f"{name}: readOnlyRootFilesystem")
    check(csc.get("allowPrivilegeEscalation") is False, f"{name}: allowPrivilegeEscalation: false")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}: capabilities drop ALL")
    res = c.get("resources", {})
    check("requests" in res and "memory" in res.get("limits", {}), f"{name}: resources: requests and a memory limit")

    # The files the arguments name come from the Secret (created by hand) and the ConfigMap.
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in c["volumeMounts"]}

    def file_source(path):
        d, _, f = path.rpartition("/")
        return volumes.get(mounts.get(d, ""), {}), f

    args = dict(a.split("=", 1) if "=" in a else (a, "") for a in c["args"])
    vol, key = file_source(args.get("--openweather.api-key-file", ""))
    check(vol.get("secret", {}).get("secretName") == "openweather-exporter-api-key" and key == "api-key"
          and not vol["secret"].get("optional"),
          f"{name}: --openweather.api-key-file is key api-key of Secret openweather-exporter-api-key, which the pod waits for")
    vol, key = file_source(args.get("--config.file", ""))
    check(vol.get("configMap", {}).get("name") == cm["metadata"]["name"] and key in cm["data"],
          f"{name}: --config.file is a key of the mounted ConfigMap")
    # The ConfigMap's comment tells to POST /-/reload: 403 without the lifecycle API.
    check("--web.enable-lifecycle" in args, f"{name}: --web.enable-lifecycle, so POST /-/reload works as configmap.yaml says")
    return cm, pr, workload, c, args


def check_kubernetes():
    print("kubernetes (kubectl kustomize):")
    kdir = DEPLOY / "kubernetes"
    dirs = sorted(p.parent.relative_to(DEPLOY).as_posix() for p in kdir.rglob("kustomization.yaml"))
    check(set(KUSTOMIZATIONS.values()) <= set(dirs), f"kustomizations: {dirs}")
    # Every manifest is in some kustomization, so nothing lies there unapplied (and untested).
    listed = set()
    for d in dirs:
        kust = load_yaml_docs(DEPLOY / d / "kustomization.yaml")[0]
        for entry in kust.get("resources", []) + [p["path"] for p in kust.get("patches", [])]:
            listed.add((DEPLOY / d / entry).resolve())
    stray = sorted(p.relative_to(kdir).as_posix() for p in kdir.rglob("*.yaml")
                   if p.name != "kustomization.yaml" and p.resolve() not in listed)
    check(not stray, f"every manifest is a resource or a patch of a kustomization (not: {stray})")

    single = kustomize(KUSTOMIZATIONS["single"])
    cm, pr, dep, base_c, _ = check_workload("single", single, one(single, "Deployment"))
    check(not any(k == "StatefulSet" for k, _ in single), "single: no StatefulSet")
    args = dict(a.split("=", 1) for a in base_c["args"] if "=" in a)
    volumes = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in base_c["volumeMounts"]}
    state = volumes.get(mounts.get(args.get("--storage.path", "").rstrip("/"), ""), {})
    claims = {n for k, n in single if k == "PersistentVolumeClaim"}
    check(state.get("persistentVolumeClaim", {}).get("claimName") in claims,
          "single: --storage.path is a mounted PersistentVolumeClaim of the manifests (state survives a restart)")
    example = (DEPLOY / "config" / "openweather-exporter.yml").read_text()
    check(cm["data"]["config.yml"] == example, "ConfigMap config.yml is the text of deploy/config/openweather-exporter.yml (comments too)")
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    check(pr["spec"]["groups"] == rules["groups"], "PrometheusRule groups equal deploy/prometheus/rules/openweather.yml")

    sharded = kustomize(KUSTOMIZATIONS["sharded"])
    sts = one(sharded, "StatefulSet")
    check_workload("sharded", sharded, sts)
    kinds = [k for k, _ in sharded]
    check("Deployment" not in kinds and "PersistentVolumeClaim" not in kinds,
          "sharded: no Deployment and no shared claim beside the StatefulSet")
    check({d["metadata"]["namespace"] for d in sharded.values()} == {d["metadata"]["namespace"] for d in single.values()},
          "sharded: the same namespace as deploy/kubernetes")
    svc, sm = one(sharded, "Service"), one(sharded, "ServiceMonitor")
    check(svc["spec"].get("clusterIP") == "None", "sharded: the Service is headless (clusterIP: None): one endpoint per pod")
    check(sts["spec"].get("serviceName") == svc["metadata"]["name"], "sharded: StatefulSet serviceName is the headless Service")
    check(sm == one(single, "ServiceMonitor"), "sharded: ServiceMonitor unchanged (job=\"openweather\", so the rules apply as they are)")
    check(one(sharded, "ConfigMap") == cm and one(sharded, "PrometheusRule") == pr, "sharded: ConfigMap and PrometheusRule unchanged")
    check(sts["spec"].get("podManagementPolicy") == "Parallel", "sharded: podManagementPolicy Parallel: all shards start and stop together")

    c = sts["spec"]["template"]["spec"]["containers"][0]
    args = dict(a.split("=", 1) for a in c["args"] if "=" in a)
    check(args.get("--total-shards") == str(sts["spec"]["replicas"]) and sts["spec"]["replicas"] > 1,
          f"sharded: --total-shards equals replicas ({sts['spec']['replicas']})")
    check(args.get("--pod") == "$(POD_NAME)" and "--shard" not in args, "sharded: --pod=$(POD_NAME) chooses the shard, no --shard")
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name",
          "sharded: POD_NAME comes from the downward API's metadata.name")
    check(c["args"][:len(base_c["args"])] == base_c["args"], "sharded: the StatefulSet's arguments are the Deployment's plus the shard flags")
    same = lambda d: {k: v for k, v in d.items() if k not in ("args", "env")}  # noqa: E731
    check(same(c) == same(base_c), "sharded: the container is the Deployment's otherwise (image, probes, resources, security, mounts)")
    # The single claim is one file for one replica: each shard gets its own from volumeClaimTemplates.
    dep_spec = dep["spec"]["template"]["spec"]
    state = [v for v in dep_spec.get("volumes", []) if "persistentVolumeClaim" in v]
    dep_spec = dep_spec | {"containers": [], "volumes": [v for v in dep_spec.get("volumes", []) if v not in state]}
    check(same(sts["spec"]["template"]["spec"] | {"containers": []}) == same(dep_spec),
          "sharded: the pod spec is the Deployment's otherwise (security context, volumes but the state claim)")
    templates = {t["metadata"]["name"]: t for t in sts["spec"].get("volumeClaimTemplates", [])}
    check(all(v["name"] in templates and templates[v["name"]]["spec"] == single[("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"])]["spec"]
              for v in state) and state,
          "sharded: each shard has its own state claim (volumeClaimTemplates like the single claim)")


# --- Docker ----------------------------------------------------------------------

def check_docker():
    print("docker:")
    ddir = DEPLOY / "docker"
    compose = yaml.safe_load((ddir / "compose.yaml").read_text())
    demo = yaml.safe_load((ddir / "compose.demo.yaml").read_text())
    services = compose["services"]
    check(set(services) == {"exporter", "prometheus", "alertmanager", "grafana"}, "compose services: exporter, prometheus, alertmanager, grafana")

    for name, svc in services.items():
        for vol in svc.get("volumes", []):
            src = vol.split(":")[0]
            if src.startswith((".", "/")):
                check((ddir / src).exists(), f"{name}: mounted path {src} exists")
        for port in svc.get("ports", []):
            check(str(port).startswith("127.0.0.1:"), f"{name}: port {port} published on loopback only")
    exporter_cmd = services["exporter"].get("command", [])
    state_arg = [a for a in exporter_cmd if a.startswith("--storage.path=")]
    check(state_arg and any(v.split(":")[0] in compose.get("volumes", {}) and v.split(":")[1] == state_arg[0].split("=", 1)[1]
                            for v in services["exporter"].get("volumes", [])),
          "compose: the exporter's --storage.path is a named volume")
    check(not any(a.startswith("--storage.path") for a in demo["services"]["exporter"].get("command", [])),
          "compose.demo.yaml: the demo keeps no state")
    build = services["exporter"]["build"]
    context = (ddir / build["context"]).resolve()
    check(context == ROOT, "exporter build context is the repository root")
    dockerfile = context / build["dockerfile"]
    check(dockerfile.exists(), "exporter Dockerfile exists")

    env_example = (ddir / ".env.example").read_text()
    for var in sorted(set(re.findall(r"\$\{(\w+)", (ddir / "compose.yaml").read_text()))):
        check(re.search(rf"^{var}=", env_example, re.M) is not None, f".env.example defines {var}")
    demo_cmd = demo["services"]["exporter"]["command"]
    check("--demo" in demo_cmd, "compose.demo.yaml runs the exporter with --demo")
    check(set(demo["services"]) <= set(services), "compose.demo.yaml only overrides existing services")

    # deploy/docker/prometheus.yml is the bare-metal config with service names.
    base = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    docker = (ddir / "prometheus.yml").read_text()
    swapped = base.replace('"localhost:9755"', '"exporter:9755"').replace('"localhost:9093"', '"alertmanager:9093"')
    check(yaml.safe_load(docker) == yaml.safe_load(swapped), "docker/prometheus.yml equals prometheus/prometheus.yml but for the addresses")
    prom_mounts = dict(v.split(":")[:2] for v in services["prometheus"]["volumes"] if v.startswith("."))
    check(prom_mounts.get("../prometheus/rules") == "/etc/prometheus/rules"
          and prom_mounts.get("./prometheus.yml") == "/etc/prometheus/prometheus.yml",
          "Prometheus finds rules/openweather.yml next to its config")
    gf_mounts = dict(v.split(":")[:2] for v in services["grafana"]["volumes"] if v.startswith("."))
    provider = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "dashboards" / "openweather.yml").read_text())
    check(gf_mounts.get("../grafana/dashboards") == provider["providers"][0]["options"]["path"],
          "Grafana's dashboard provider path is where compose mounts the dashboards")
    check("PROMETHEUS_URL" in services["grafana"].get("environment", {}), "compose gives Grafana PROMETHEUS_URL")

    text = dockerfile.read_text()
    check(re.search(r"^FROM swift:\$\{SWIFT_VERSION\}-\w+ AS binary-source", text, re.M) and re.search(r"^ARG SWIFT_VERSION=6\.", text, re.M),
          "Dockerfile builds on the official swift:6.x image")
    release = (ROOT / "Tests" / "release" / "build.sh").read_text()
    check("--static-swift-stdlib" in text or ("Tests/release/build.sh --binary-only" in text and "--static-swift-stdlib" in release),
          "Dockerfile links the Swift runtime statically")
    check(re.search(r"^USER (?!root|0\b)", text, re.M) is not None, "Dockerfile runs as a non-root USER")
    check(re.search(r"^EXPOSE 9755$", text, re.M) is not None, "Dockerfile exposes 9755")
    check(re.search(r"^HEALTHCHECK ", text, re.M) is not None, "Dockerfile has a HEALTHCHECK")
    for src in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
        # .build/docker/ holds the binary given to BINARY=prebuilt (Tests/release/check_image.sh).
        if not src.startswith(".build/docker/"):
            check((ROOT / src).exists(), f"Dockerfile COPY source {src} exists in the build context")


# --- systemd ----------------------------------------------------------------------

def check_systemd():
    print("systemd:")
    unit = (DEPLOY / "systemd" / "openweather-exporter.service").read_text()
    settings = {}
    for line in unit.splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";")) and not line.startswith(" "):
            k, v = line.split("=", 1)
            settings.setdefault(k.strip(), []).append(v.strip())
    want = {
        "DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
        "PrivateTmp": "yes", "MemoryDenyWriteExecute": "yes", "CapabilityBoundingSet": "",
    }
    for k, v in want.items():
        check(settings.get(k) == [v], f"{k}={v}")
    check(any(v.startswith("AF_INET") for v in settings.get("RestrictAddressFamilies", [])), "RestrictAddressFamilies set")
    check("@system-service" in settings.get("SystemCallFilter", []), "SystemCallFilter=@system-service")
    state = settings.get("StateDirectory", [""])[0]
    check(state and f"--storage.path=%S/{state}" in unit and settings.get("StateDirectoryMode") == ["0700"],
          "the state file lives in StateDirectory= (mode 0700), given as --storage.path")
    cred = settings.get("LoadCredential", [""])[0].split(":")[0]
    check(cred and f"--openweather.api-key-file=%d/{cred}" in unit, "the key file comes from LoadCredential=")
    # Socket activation: the drop-in runs the service's command with --web.systemd-socket in place
    # of --web.listen-address, and the socket listens on the port the service would.
    def exec_start(text):
        flat = text.replace("\\\n", " ")
        return [line.split("=", 1)[1].split() for line in flat.splitlines() if line.startswith("ExecStart=")]
    service_command = exec_start(unit)[0]
    dropin = (DEPLOY / "systemd" / "socket-activation.conf").read_text()
    address = next(a for a in service_command if a.startswith("--web.listen-address="))
    check(exec_start(dropin) == [[], [a if a != address else "--web.systemd-socket" for a in service_command]],
          "socket-activation.conf runs the service's ExecStart with --web.systemd-socket for --web.listen-address")
    socket_unit = (DEPLOY / "systemd" / "openweather-exporter.socket").read_text()
    streams = [l.split("=", 1)[1] for l in socket_unit.splitlines() if l.startswith("ListenStream=")]
    check(streams == [address.rsplit(":", 1)[1]], f"the .socket listens on the service's port ({address})")


# --- Grafana ----------------------------------------------------------------------

def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


# Words of PromQL that are not series: functions (followed by "("), operators, modifiers.
PROMQL_WORDS = {"and", "or", "unless", "bool", "offset"}


def series_selectors(expr):
    """(metric, matchers) of every series an expression reads; matchers is "" when it has none."""
    # String arguments (label_join's label names), not the strings of a selector's matchers.
    e = re.sub(r'\{[^}]*\}|"(?:[^"\\]|\\.)*"', lambda m: m.group(0) if m.group(0).startswith("{") else " ", expr)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)              # range and subquery durations
    e = re.sub(r"\boffset\s+\S+", " ", e)
    e = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", " ", e)  # numbers such as 1e6
    found = []
    for m in re.finditer(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?", e):
        name, matchers = m.group(1), m.group(2) or ""
        if name in PROMQL_WORDS or (not matchers and e[m.end():].lstrip().startswith("(")):
            continue
        found.append((name, matchers))
    return found


def overlaps(panels):
    """Pairs of panels whose gridPos rectangles share any cell (Grafana's 24-column grid)."""
    found = []
    for i, a in enumerate(panels):
        for b in panels[i + 1:]:
            ga, gb = a["gridPos"], b["gridPos"]
            if (ga["x"] < gb["x"] + gb["w"] and gb["x"] < ga["x"] + ga["w"]
                    and ga["y"] < gb["y"] + gb["h"] and gb["y"] < ga["y"] + ga["h"]):
                found.append(f"{a['title']!r} and {b['title']!r}")
    return found


# The unit a family's name ends in (Prometheus' naming), longest first.
FAMILY_UNITS = ["meters_per_second", "grams_per_cubic_meter", "celsius", "ratio", "meters", "pascals", "degrees",
                "seconds_total", "seconds", "bytes", "index", "total", "info", "id"]


def quantity(expr):
    """What a query draws, as unit and scale: `openweather_rain_1h_meters * 1000` is ("meters", "*1000")."""
    units = []
    for name, _ in series_selectors(expr):
        unit = next((u for u in FAMILY_UNITS if name.endswith("_" + u)), name)
        units.append("seconds" if unit == "seconds" and name.endswith("timestamp_seconds") else unit)
    scale = "".join(re.findall(r"[*/]\s*\d[\d.e]*\s*$", expr)).replace(" ", "")
    return (units[0] if units else "", scale)


# The Grafana unit of what a query draws, by its family's unit and scale (see quantity).
GRAFANA_UNITS = {("celsius", ""): "celsius", ("meters", "*1000"): "lengthmm", ("meters_per_second", ""): "velocityms",
                 ("ratio", ""): "percentunit", ("pascals", "/100"): "pressurehpa", ("degrees", ""): "degree",
                 ("grams_per_cubic_meter", "*1e6"): "conμgm3", ("bytes", ""): "bytes"}


def check_units(panels):
    """Issue 40: a panel drawing a physical quantity says its unit (not `none`, which printed the next
    hour's rain as 1.7000000000000006): the unit of its first query's family, scaled."""
    for p in panels:
        if p["type"] not in ("timeseries", "barchart", "stat") or not p.get("targets"):
            continue
        q = quantity(p["targets"][0]["expr"])
        if q in GRAFANA_UNITS:
            got = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
            check(got == GRAFANA_UNITS[q], f"panel {p['title']!r}: unit {GRAFANA_UNITS[q]} for {q[0]}{q[1]} (has {got})")


def check_layout(panels):
    """Issue 29 §6: no two panels overlap; the Forecast row comes right after the first ("Now") row;
    every axis of a time series shows one quantity (a series on a second axis is one an override
    gives a unit of its own)."""
    found = overlaps(panels)
    check(not found, f"dashboard: no two of {len(panels)} panels overlap" + (f" (overlapping: {'; '.join(found)})" if found else ""))
    rows = sorted((p for p in panels if p["type"] == "row"), key=lambda p: p["gridPos"]["y"])
    check([r["title"] for r in rows][:2] == ["Now", "Forecast"], f"dashboard: the Forecast row comes right after Now (rows: {[r['title'] for r in rows]})")
    for p in panels:
        if p["type"] not in ("timeseries", "barchart"):
            continue
        own_axis = [o["matcher"]["options"] for o in p.get("fieldConfig", {}).get("overrides", [])
                    if o["matcher"]["id"] == "byRegexp" and any(pr["id"] == "unit" for pr in o["properties"])]
        axes = {}
        for t in p["targets"]:
            legend = t.get("legendFormat") or ""
            sample = re.sub(r"\{\{\s*\w+\s*\}\}", "x", legend)
            axis = next((r for r in own_axis if re.fullmatch(r, sample)), "")
            axes.setdefault(axis, set()).add(quantity(t["expr"]))
        mixed = {axis or "left": sorted(q) for axis, q in axes.items() if len(q) > 1}
        check(not mixed, f"panel {p['title']!r}: one unit per axis" + (f" (mixes {mixed})" if mixed else ""))


def check_grafana():
    print("grafana:")
    gdir = DEPLOY / "grafana"
    ds = yaml.safe_load((gdir / "provisioning" / "datasources" / "prometheus.yml").read_text())
    check(ds["datasources"][0]["type"] == "prometheus", "datasource provisioning: a prometheus datasource")
    # Grafana refuses to start when two provisioned datasources are the default; ours needs not be.
    check(all(d.get("isDefault") is not True for d in ds["datasources"]),
          "datasource provisioning: not marked isDefault (a second default stops Grafana from starting)")
    dash = json.loads((gdir / "dashboards" / "openweather.json").read_text())
    check(dash.get("schemaVersion", 0) >= 39 and dash.get("uid"), "dashboard: schemaVersion >= 39 and a uid")
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    check(variables.get("datasource", {}).get("type") == "datasource", "dashboard: datasource variable")
    loc = variables.get("location", {})
    # Read from a family that a live scrape and a backfill (`openweather-exporter backfill`, which
    # writes no openweather_up) both write, so backfilled history is selectable.
    check(loc.get("multi") is True and re.match(r"label_values\(openweather_temperature_celsius\b.*, location\)", str(loc.get("query"))),
          "dashboard: multi-select location variable from label_values(openweather_temperature_celsius, location)")
    check(str(variables.get("job", {}).get("query")) == "label_values(openweather_temperature_celsius, job)",
          "dashboard: job variable from label_values(openweather_temperature_celsius, job), which backfill writes too")
    panels = list(walk_panels(dash["panels"]))
    ids = [p["id"] for p in panels]
    check(len(ids) == len(set(ids)), "dashboard: panel ids are unique")
    ok = True
    for p in panels:
        g = p["gridPos"]
        ok &= g["x"] + g["w"] <= 24
        if p["type"] != "row":
            ok &= p.get("datasource", {}).get("uid") == "${datasource}"
            ok &= all(t.get("datasource", {}).get("uid") == "${datasource}" and t.get("expr") for t in p["targets"])
    check(ok, "dashboard: every panel and query uses the ${datasource} variable, and fits the grid")
    check_layout(panels)
    check_units(panels)
    targets = [(p, t) for p in panels for t in p.get("targets", [])]
    exprs = " ".join(t["expr"] for _, t in targets)
    # Every family the exporter can write (the golden exposition of every
    # source) is on the dashboard; condition_id is shown through condition_info, and the
    # thresholds' units (temperature and thermal indices), the hysteresis, and whether a place's alerts
    # are on only shape the alerts' logic and text (the thresholds themselves are drawn, absent with
    # alerts off; the landing page lists the places with alerts off).
    golden = ROOT / "Tests" / "ExporterTests" / "Golden" / "fixtures.prom"
    families = re.findall(r"^# TYPE (\S+) ", golden.read_text(), re.M)
    check(len(families) > 30, f"{len(families)} families in {golden.relative_to(ROOT)}")
    for metric in families:
        if metric not in ("openweather_condition_id", "openweather_temperature_alert_threshold_info",
                          "openweather_thermal_alert_threshold_info", "openweather_temperature_alert_hysteresis_celsius",
                          "openweather_location_alerts_enabled"):
            check(re.search(rf"\b{metric}\b", exprs) is not None, f"dashboard shows {metric}")
    # Health is per location and source: no two sources drawn as one series.
    for p, t in targets:
        for metric in ("openweather_up", "openweather_last_success_timestamp_seconds", "openweather_poll_duration_seconds"):
            if re.search(rf"\b{metric}\b", t["expr"]):
                check("{{source}}" in t.get("legendFormat", "") and "{{location}}" in t.get("legendFormat", ""),
                      f"panel {p['title']!r}: {metric} per location and source")
        if "openweather_api_requests_total" in t["expr"]:
            check(re.search(r"by \(source, code\)", t["expr"]) and "{{source}}" in t.get("legendFormat", ""),
                  f"panel {p['title']!r}: API requests by source and code")
        if "openweather_air_pollutant_grams_per_cubic_meter" in t["expr"]:
            check(t["expr"].endswith("* 1e6") and p["fieldConfig"]["defaults"].get("unit") == "conμgm3"
                  and "{{pollutant}}" in t.get("legendFormat", ""),
                  f"panel {p['title']!r}: pollutants converted to µg/m³ (× 1e6, unit conμgm3), one series per pollutant")
    aqi = [p for p, t in targets if "openweather_air_quality_index" in t["expr"]]
    want = {"1": "good", "2": "fair", "3": "moderate", "4": "poor", "5": "very poor"}
    for p in aqi:
        got = {k: v.get("text", "").lower() for m in p["fieldConfig"]["defaults"].get("mappings", [])
               if m.get("type") == "value" for k, v in m["options"].items()}
        check(got == want, f"panel {p['title']!r}: AQI value mappings 1 good .. 5 very poor (got {got})")
    # Every series a panel or annotation reads is filtered on the job variable, so two
    # Prometheus jobs (a test and a production exporter) are never drawn as one.
    queries = [(f"panel {p['title']!r}", t["expr"]) for p, t in targets]
    queries += [(f"annotation {a['name']!r}", a["expr"]) for a in dash.get("annotations", {}).get("list", []) if "expr" in a]
    unfiltered = [f"{where}: {name}" for where, expr in queries for name, matchers in series_selectors(expr)
                  if 'job=~"$job"' not in matchers]
    check(queries and not unfiltered, f"dashboard: every series of all {len(queries)} queries filters on job=~\"$job\""
          + (f" (not: {'; '.join(unfiltered)})" if unfiltered else ""))
    # A panel whose series only One Call writes (the families of its golden exposition that
    # neither the free weather nor the free forecast has) says so: it is empty without it.
    golden_families = {f: set(re.findall(r"^# TYPE (\S+) ", (golden.parent / f"{f}.prom").read_text(), re.M))
                       for f in ("fixtures", "forecast", "onecall", "onecall-nowcast")}
    onecall_only = (golden_families["onecall"] | golden_families["onecall-nowcast"]) - golden_families["fixtures"] - golden_families["forecast"]
    check({"openweather_uv_index", "openweather_dew_point_celsius", "openweather_precipitation_next_start_timestamp_seconds",
           "openweather_precipitation_next_hour_meters"} <= onecall_only,
          f"{len(onecall_only)} families only One Call writes, from the golden expositions")
    for p in panels:
        read = {name for t in p.get("targets", []) for name, _ in series_selectors(t["expr"])}
        if read & onecall_only:
            check("One Call" in p.get("description", "") and "--collector.onecall" in p["fieldConfig"]["defaults"].get("noValue", ""),
                  f"panel {p['title']!r}: says in its description and no-data text that it needs One Call")
        # A forecast read back by "offset" needs that much history before it draws anything.
        offsets = [int(h) for t in p.get("targets", []) if "openweather_forecast_" in t["expr"]
                   for h in re.findall(r"\boffset\s+(\d+)h\b", t["expr"])]
        if offsets:
            longest = max(offsets)
            check("history" in p.get("description", "") and re.search(rf"\b{longest} (h|hours)\b", p.get("description", "")),
                  f"panel {p['title']!r}: says it needs {longest} h of forecast history")
    # The alerts the dashboard annotates exist in the rules.
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    for an in dash.get("annotations", {}).get("list", []):
        m = re.search(r'alertname=~?"([^"]+)"', an.get("expr", ""))
        if m:
            check(any(re.fullmatch(m.group(1), n) for n in names), f"annotation {an['name']!r} matches alerts of the rules")


# --- Sources ---------------------------------------------------------------------

MAX_EXPORTER_FILE_LINES = 320


def check_source_lengths():
    """Issue 43: a file of the exporter is one a person reads at once; a longer one is split by
    concern (Sources/README.md says how)."""
    print("sources:")
    files = sorted((ROOT / "Sources" / "Exporter").rglob("*.swift"))
    lines = {f.relative_to(ROOT): len(f.read_text().splitlines()) for f in files}
    over = [f"{name} ({count})" for name, count in lines.items() if count > MAX_EXPORTER_FILE_LINES]
    check(files and not over,
          f"every Swift file under Sources/Exporter ({len(files)}) has at most {MAX_EXPORTER_FILE_LINES} lines"
          + (": over are " + ", ".join(over) if over else ""))


# Lines over the formatter's 120 columns that it cannot break itself (long string literals and
# comments): every one under Sources is wrapped, so a new one is a mistake to wrap, not a line to allow.
MAX_SOURCE_LINES_OVER_120 = 0


def check_source_line_widths():
    """Issue 43: the formatter wraps code at 120 columns but leaves a long string literal or comment
    whole; those are wrapped by hand, so none is left."""
    over = {}
    for f in sorted((ROOT / "Sources").rglob("*.swift")):
        count = sum(1 for line in f.read_text().splitlines() if len(line) > 120)
        if count:
            over[str(f.relative_to(ROOT))] = count
    total = sum(over.values())
    check(total <= MAX_SOURCE_LINES_OVER_120,
          f"Swift lines over 120 columns under Sources: {total}, at most {MAX_SOURCE_LINES_OVER_120}"
          + ("" if total <= MAX_SOURCE_LINES_OVER_120 else
             " (" + ", ".join(f"{name} {count}" for name, count in over.items()) + "): wrap a long string"
             " as a multi-line literal whose lines end in a \\ line continuation (the value stays one line),"
             " rewrap a long comment, and run swift format for the rest"))


def check_readme_length():
    """The README is the newcomer's path, read whole: at most 3,000 words (as `wc -w` counts);
    reference lives beside what it describes, in deploy/docs."""
    words = len((ROOT / "README.md").read_text().split())
    check(words <= 3000, f"README.md has {words} words, at most 3,000")

# --- Markdown links ------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_prose(text):
    """The lines outside fenced code blocks, with inline code removed."""
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield re.sub(r"`[^`]*`", lambda m: "" if "](" in m.group(0) else m.group(0), line)


def heading_anchors(path):
    """The anchors GitHub makes of a Markdown file's headings."""
    anchors, seen = set(), {}
    for line in markdown_prose(path.read_text()):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def check_docs():
    print("docs:")
    files = sorted(p for p in ROOT.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))
    for md in files:
        name = md.relative_to(ROOT)
        links = [t for line in markdown_prose(md.read_text()) for t in LINK.findall(line)]
        bad = []
        for target in links:
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, fragment = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if not dest.exists():
                bad.append(f"{target} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in heading_anchors(dest):
                bad.append(f"{target} (no such heading)")
        check(not bad, f"{name}: {len(links)} relative links resolve" + (": " + ", ".join(bad) if bad else ""))


def check_prometheus_snippet():
    """Issue 29 §2: the snippet to merge into an existing prometheus.yml has the whole file's job and
    rule file (the job may add its own scrape_interval, which the whole file sets globally)."""
    print("prometheus snippet:")
    whole = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    snippet = yaml.safe_load((DEPLOY / "prometheus" / "snippet.yml").read_text())
    check(set(snippet) == {"rule_files", "scrape_configs"}, "snippet.yml holds rule_files and scrape_configs only (nothing of yours to overwrite)")
    check(snippet["rule_files"] == whole["rule_files"], "snippet.yml names prometheus.yml's rule file")
    (job,) = snippet["scrape_configs"]
    (whole_job,) = [j for j in whole["scrape_configs"] if j["job_name"] == "openweather"]
    check(job.get("scrape_interval") == whole["global"]["scrape_interval"], "snippet.yml's job scrapes at prometheus.yml's interval")
    check({k: v for k, v in job.items() if k != "scrape_interval"} == whole_job, "snippet.yml's job is prometheus.yml's")
    for doc in ["README.md", "deploy/README.md"] + [str(p.relative_to(ROOT)) for p in (DEPLOY / "docs").glob("*.md")]:
        text = (ROOT / doc).read_text()
        check("cp -r" not in text and "cp deploy/prometheus/prometheus.yml /etc/prometheus/prometheus.yml" not in text,
              f"{doc}: no `cp -r` of the rules and no copy over an existing /etc/prometheus/prometheus.yml")


def check_readme_metrics():
    """The README names its metrics by hand: each is a family with a row in the reference's tables
    (deploy/docs/metrics.md, sources.md), whose rows SourceReferenceTests holds to the sources."""
    print("readme metrics:")
    rows = "".join(line.split("|")[1] for doc in ["metrics.md", "sources.md"]
                   for line in (DEPLOY / "docs" / doc).read_text().splitlines() if line.startswith("| `openweather_"))
    documented = set(re.findall(r"openweather_\w+", rows))
    named = set(re.findall(r"openweather_\w+", (ROOT / "README.md").read_text()))
    check(named <= documented, f"README.md's {len(named)} metric names each have a row in deploy/docs/metrics.md or sources.md"
          + (f" (no row: {sorted(named - documented)})" if not named <= documented else ""))


def check_alert_table():
    """deploy/docs/alerts.md's alert table has a row for every alert of the rules, and no row for one
    that does not exist; the example config does not name metrics the exporter does not have."""
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    rows = set(re.findall(r"^\| `(OpenWeather\w+)` \|", (DEPLOY / "docs" / "alerts.md").read_text(), re.M))
    check(rows == names, "deploy/docs/alerts.md's alert table lists every rule"
          + (f" (missing {sorted(names - rows)}, unknown {sorted(rows - names)})" if rows != names else ""))
    example = (DEPLOY / "config" / "openweather-exporter.yml").read_text()
    unknown = set(re.findall(r"openweather_\w+", example)) - {"openweather_temperature_alert_threshold_celsius"}
    check(not unknown, "the example config names no metric but the thresholds' (openweather_temperature_alert does not exist)"
          + (f": it names {sorted(unknown)}" if unknown else ""))


def main():
    checks = [check_kubernetes, check_docker, check_systemd, check_grafana, check_prometheus_snippet, check_alert_table, check_readme_metrics, check_docs,
              check_source_lengths, check_source_line_widths, check_readme_length]
    if shutil.which("kubectl") is None:
        # Tests/deploy/kubernetes.sh says so as a SKIP in the deploy suite's summary.
        print("kubernetes: SKIPPED, no kubectl to build the kustomizations with")
        checks.remove(check_kubernetes)
    for f in checks:
        try:
            f()
        except Exception as e:  # a missing key is a failed check, not a crash
            check(False, f"{f.__name__} raised {type(e).__name__}: {e}")
    yaml.safe_load((DEPLOY / "config" / "openweather-exporter.yml").read_text())
    print(f"structure: {tally.passes} passed, {len(failures)} failed")
    for f in failures:
        print(f"  failed: {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

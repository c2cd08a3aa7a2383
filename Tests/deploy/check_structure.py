#!/usr/bin/env python3
"""Structure checks for deploy/: Kubernetes manifests, compose files, the
Dockerfile, the systemd unit and the Grafana files. Needs PyYAML only.

    python3 Tests/deploy/check_structure.py [REPO_ROOT]

Prints one line per check and exits non-zero when any fails.
"""
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
DEPLOY = ROOT / "deploy"
failures = []
passes = 0


def check(ok, what):
    global passes
    if ok:
        passes += 1
        print(f"  ok   {what}")
    else:
        failures.append(what)
        print(f"  FAIL {what}")
    return ok


def load_yaml_docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def subset(small, big):
    return bool(small) and all(big.get(k) == v for k, v in small.items())


# --- Kubernetes ----------------------------------------------------------------

def check_kubernetes():
    print("kubernetes:")
    kdir = DEPLOY / "kubernetes"
    objects = {}
    for path in sorted(kdir.glob("*.yaml")):
        for doc in load_yaml_docs(path):
            meta = doc.get("metadata") or {}
            check(isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)
                  and (doc["kind"] == "Kustomization" or isinstance(meta.get("name"), str)),
                  f"{path.name}: apiVersion, kind and metadata.name")
            objects.setdefault(doc["kind"], []).append((path.name, doc))

    kust = objects["Kustomization"][0][1]
    listed = set(kust.get("resources", []))
    on_disk = {p.name for p in kdir.glob("*.yaml")} - {"kustomization.yaml"}
    check(listed == on_disk, f"kustomization lists every manifest ({sorted(on_disk)})")

    dep = objects["Deployment"][0][1]
    svc = objects["Service"][0][1]
    sec = objects["Secret"][0][1]
    cm = objects["ConfigMap"][0][1]
    sm = objects["ServiceMonitor"][0][1]
    pr = objects["PrometheusRule"][0][1]

    pod = dep["spec"]["template"]
    pod_labels = pod["metadata"]["labels"]
    check(subset(dep["spec"]["selector"]["matchLabels"], pod_labels), "Deployment selector matches its pod labels")
    check(subset(svc["spec"]["selector"], pod_labels), "Service selector matches the pod labels")
    check(subset(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]), "ServiceMonitor selector matches the Service labels")

    spec = pod["spec"]
    check(len(spec["containers"]) == 1, "one container")
    c = spec["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(ports.get("http") == 9755, "container port http is 9755")

    def port_ok(p):
        return p in ports or p in ports.values()

    for probe, path in (("livenessProbe", "/-/healthy"), ("readinessProbe", "/-/ready")):
        get = c.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path and port_ok(get.get("port")), f"{probe} GET {path} on a container port")
    for p in svc["spec"]["ports"]:
        check(port_ok(p["targetPort"]), f"Service port {p['name']} targets a container port")
    svc_port_names = {p["name"] for p in svc["spec"]["ports"]}
    for ep in sm["spec"]["endpoints"]:
        check(ep.get("port") in svc_port_names, f"ServiceMonitor endpoint port {ep.get('port')} is a Service port")
        check(ep.get("path", "/metrics") == "/metrics", "ServiceMonitor scrapes /metrics")
        job = [r for r in ep.get("relabelings", []) if r.get("targetLabel") == "job"]
        check(job and job[0].get("replacement") == "openweather", "ServiceMonitor sets job=\"openweather\" as the rules expect")

    psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True or csc.get("runAsNonRoot") is True, "runAsNonRoot")
    check(csc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities drop ALL")
    res = c.get("resources", {})
    check("requests" in res and "memory" in res.get("limits", {}), "resources: requests and a memory limit")

    # The files the arguments name come from the Secret and the ConfigMap.
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in c["volumeMounts"]}

    def file_source(path):
        d, _, f = path.rpartition("/")
        vol = volumes.get(mounts.get(d, ""), {})
        return vol, f

    args = dict(a.split("=", 1) for a in c["args"] if "=" in a)
    vol, key = file_source(args.get("--openweather.api-key-file", ""))
    check(vol.get("secret", {}).get("secretName") == sec["metadata"]["name"] and key in sec.get("stringData", sec.get("data", {})),
          "--openweather.api-key-file is a key of the mounted Secret")
    state = volumes.get(mounts.get(args.get("--storage.path", "").rstrip("/"), ""), {})
    claims = {o["metadata"]["name"]: o for _, o in objects.get("PersistentVolumeClaim", [])}
    check(state.get("persistentVolumeClaim", {}).get("claimName") in claims,
          "--storage.path is a mounted PersistentVolumeClaim of the manifests (state survives a restart)")
    vol, key = file_source(args.get("--config.file", ""))
    check(vol.get("configMap", {}).get("name") == cm["metadata"]["name"] and key in cm["data"],
          "--config.file is a key of the mounted ConfigMap")
    example = (DEPLOY / "config" / "openweather-exporter.yml").read_text()
    check(cm["data"]["config.yml"] == example, "ConfigMap config.yml is the text of deploy/config/openweather-exporter.yml (comments too)")

    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    check(pr["spec"]["groups"] == rules["groups"], "PrometheusRule groups equal deploy/prometheus/rules/openweather.yml")
    return pr


def check_kubernetes_sharded():
    """deploy/kubernetes/sharded: the overlay `kubectl apply -k` builds from the base, rebuilt here
    (no kustomize on the machine): base objects, the patches, the StatefulSet."""
    print("kubernetes/sharded:")
    kdir = DEPLOY / "kubernetes"
    sdir = kdir / "sharded"
    kust = load_yaml_docs(sdir / "kustomization.yaml")[0]
    base_kust = load_yaml_docs(kdir / "kustomization.yaml")[0]
    own = [r for r in kust.get("resources", []) if r != ".."]
    patches = [p["path"] for p in kust.get("patches", [])]
    check(".." in kust.get("resources", []), "the overlay builds on deploy/kubernetes (resources: ..)")
    check(kust.get("namespace") == base_kust.get("namespace"), "the overlay's namespace is the base's")
    on_disk = {p.name for p in sdir.glob("*.yaml")} - {"kustomization.yaml"}
    check(set(own) | set(patches) == on_disk, f"the overlay lists every file as a resource or a patch ({sorted(on_disk)})")

    base = {}
    for name in base_kust["resources"]:
        for doc in load_yaml_docs(kdir / name):
            base[(doc["kind"], doc["metadata"]["name"])] = doc
    built = dict(base)
    for name in patches:
        patch = load_yaml_docs(sdir / name)[0]
        target = (patch["kind"], patch["metadata"]["name"])
        check(target in base, f"patch {name} targets the base's {target[0]} {target[1]}")
        if patch.get("$patch") == "delete":
            built.pop(target, None)
        elif target in built:
            merged = json.loads(json.dumps(built[target]))
            merged["spec"].update(patch.get("spec", {}))
            built[target] = merged
    for name in own:
        for doc in load_yaml_docs(sdir / name):
            built[(doc["kind"], doc["metadata"]["name"])] = doc
    kinds = [kind for kind, _ in built]
    check("Deployment" not in kinds and kinds.count("StatefulSet") == 1, "one StatefulSet and no Deployment")
    check(kinds.count("Service") == 1 and kinds.count("ServiceMonitor") == 1,
          "one Service and one ServiceMonitor, so each pod is scraped once")

    sts = next(d for (k, _), d in built.items() if k == "StatefulSet")
    svc = next(d for (k, _), d in built.items() if k == "Service")
    sm = next(d for (k, _), d in built.items() if k == "ServiceMonitor")
    dep = next(d for (k, _), d in base.items() if k == "Deployment")
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    check(svc["spec"].get("clusterIP") == "None", "the Service is headless (clusterIP: None): one endpoint per pod")
    check(sts["spec"].get("serviceName") == svc["metadata"]["name"], "StatefulSet serviceName is the headless Service")
    check(subset(sts["spec"]["selector"]["matchLabels"], pod_labels), "StatefulSet selector matches its pod labels")
    check(subset(svc["spec"]["selector"], pod_labels), "Service selector matches the StatefulSet's pod labels")
    check(subset(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]), "ServiceMonitor selects the headless Service")
    check(sm == base[("ServiceMonitor", sm["metadata"]["name"])], "ServiceMonitor unchanged (job=\"openweather\", so the rules apply as they are)")
    check(sts["spec"].get("podManagementPolicy") == "Parallel", "podManagementPolicy Parallel: all shards start and stop together")

    c = sts["spec"]["template"]["spec"]["containers"][0]
    args = dict(a.split("=", 1) for a in c["args"] if "=" in a)
    check(args.get("--total-shards") == str(sts["spec"]["replicas"]) and sts["spec"]["replicas"] > 1,
          f"--total-shards equals replicas ({sts['spec']['replicas']})")
    check(args.get("--pod") == "$(POD_NAME)" and "--shard" not in args, "--pod=$(POD_NAME) chooses the shard, no --shard")
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name",
          "POD_NAME comes from the downward API's metadata.name")
    base_c = dep["spec"]["template"]["spec"]["containers"][0]
    check(c["args"][:len(base_c["args"])] == base_c["args"], "the StatefulSet's arguments are the Deployment's plus the shard flags")
    same = lambda d: {k: v for k, v in d.items() if k not in ("args", "env")}  # noqa: E731
    check(same(c) == same(base_c), "the container is the Deployment's otherwise (image, probes, resources, security, mounts)")
    # The base's state claim is one file for one replica: each shard gets its own from volumeClaimTemplates.
    state = [v for v in dep["spec"]["template"]["spec"].get("volumes", []) if "persistentVolumeClaim" in v]
    dep_spec = dep["spec"]["template"]["spec"] | {"containers": [],
                                                  "volumes": [v for v in dep["spec"]["template"]["spec"].get("volumes", []) if v not in state]}
    check(same(sts["spec"]["template"]["spec"] | {"containers": []}) == same(dep_spec),
          "the pod spec is the Deployment's otherwise (security context, volumes but the state claim)")
    templates = {t["metadata"]["name"]: t for t in sts["spec"].get("volumeClaimTemplates", [])}
    check(all(v["name"] in templates and templates[v["name"]]["spec"] == base[("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"])]["spec"]
              for v in state) and "PersistentVolumeClaim" not in kinds,
          "each shard has its own state claim (volumeClaimTemplates like the base's claim), the shared one is gone")


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
    check(re.search(r"^FROM swift:\$\{SWIFT_VERSION\}-\w+ AS build", text, re.M) and re.search(r"^ARG SWIFT_VERSION=6\.", text, re.M),
          "Dockerfile builds on the official swift:6.x image")
    release = (ROOT / "Tests" / "release" / "build.sh").read_text()
    check("--static-swift-stdlib" in text or ("Tests/release/build.sh --binary-only" in text and "--static-swift-stdlib" in release),
          "Dockerfile links the Swift runtime statically")
    check(re.search(r"^USER (?!root|0\b)", text, re.M) is not None, "Dockerfile runs as a non-root USER")
    check(re.search(r"^EXPOSE 9755$", text, re.M) is not None, "Dockerfile exposes 9755")
    check(re.search(r"^HEALTHCHECK ", text, re.M) is not None, "Dockerfile has a HEALTHCHECK")
    for src in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
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


# --- Grafana ----------------------------------------------------------------------

def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


def check_grafana():
    print("grafana:")
    gdir = DEPLOY / "grafana"
    ds = yaml.safe_load((gdir / "provisioning" / "datasources" / "prometheus.yml").read_text())
    check(ds["datasources"][0]["type"] == "prometheus", "datasource provisioning: a prometheus datasource")
    dash = json.loads((gdir / "dashboards" / "openweather.json").read_text())
    check(dash.get("schemaVersion", 0) >= 39 and dash.get("uid"), "dashboard: schemaVersion >= 39 and a uid")
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    check(variables.get("datasource", {}).get("type") == "datasource", "dashboard: datasource variable")
    loc = variables.get("location", {})
    check(loc.get("multi") is True and re.match(r"label_values\(openweather_up\b.*, location\)", str(loc.get("query"))),
          "dashboard: multi-select location variable from label_values(openweather_up, location)")
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
    targets = [(p, t) for p in panels for t in p.get("targets", [])]
    exprs = " ".join(t["expr"] for _, t in targets)
    # Every family the exporter can write (the golden exposition of every
    # source) is on the dashboard; condition_id is shown through condition_info.
    golden = ROOT / "Tests" / "ExporterTests" / "Golden" / "fixtures.prom"
    families = re.findall(r"^# TYPE (\S+) ", golden.read_text(), re.M)
    check(len(families) > 30, f"{len(families)} families in {golden.relative_to(ROOT)}")
    for metric in families:
        if metric != "openweather_condition_id":
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
    # The alerts the dashboard annotates exist in the rules.
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    for an in dash.get("annotations", {}).get("list", []):
        m = re.search(r'alertname=~?"([^"]+)"', an.get("expr", ""))
        if m:
            check(any(re.fullmatch(m.group(1), n) for n in names), f"annotation {an['name']!r} matches alerts of the rules")


def check_alert_table():
    """deploy/README.md's alert table has a row for every alert of the rules, and no row for one
    that does not exist; the example config does not name metrics the exporter does not have."""
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "openweather.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    rows = set(re.findall(r"^\| `(OpenWeather\w+)` \|", (DEPLOY / "README.md").read_text(), re.M))
    check(rows == names, "deploy/README.md's alert table lists every rule"
          + (f" (missing {sorted(names - rows)}, unknown {sorted(rows - names)})" if rows != names else ""))
    example = (DEPLOY / "config" / "openweather-exporter.yml").read_text()
    unknown = set(re.findall(r"openweather_\w+", example)) - {"openweather_temperature_alert_threshold_celsius"}
    check(not unknown, "the example config names no metric but the thresholds' (openweather_temperature_alert does not exist)"
          + (f": it names {sorted(unknown)}" if unknown else ""))


def main():
    for f in (check_kubernetes, check_kubernetes_sharded, check_docker, check_systemd, check_grafana, check_alert_table):
        try:
            f()
        except Exception as e:  # a missing key is a failed check, not a crash
            check(False, f"{f.__name__} raised {type(e).__name__}: {e}")
    yaml.safe_load((DEPLOY / "config" / "openweather-exporter.yml").read_text())
    print(f"structure: {passes} passed, {len(failures)} failed")
    for f in failures:
        print(f"  failed: {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

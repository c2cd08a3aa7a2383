#!/usr/bin/env bash
# Every kustomization under deploy/kubernetes built by kustomize itself (`kubectl kustomize`, v5 on
# this machine kind) and each object validated against the Kubernetes OpenAPI schemas, strictly (an
# unknown field is an error) with kubernetes-validate from PyPI, for the oldest and the newest
# Kubernetes release that its pinned version carries. ServiceMonitor and PrometheusRule are the
# Prometheus Operator's CRDs, for which it has no schema: they are the only objects allowed to go
# unvalidated here (check_structure.py checks their content, promtool the rules).
#
#   bash Tests/deploy/kubernetes.sh [OUT_DIR]     # the built YAML is left in OUT_DIR
#
# Exits 77 (the deploy suite's loud SKIP) when there is no kubectl: Debian's kubernetes-client is
# 1.20, whose kustomize v2 cannot build these files, and nothing else can be fetched. Under CI
# (CI=true, as .ci/run is run) a missing kubectl fails instead: CI's machines have it, and a green
# run must mean every kustomization was built.
# kubernetes-validate is installed into $KUBERNETES_VALIDATE_DIR (default .build/deploy-tools).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$(mktemp -d)}"
VERSION=1.37.0   # kubernetes-validate; its schemas: Kubernetes 1.25 to 1.37
OLDEST=1.25.0
TOOLS="${KUBERNETES_VALIDATE_DIR:-$ROOT/.build/deploy-tools/kubernetes-validate-$VERSION}"

if ! command -v kubectl >/dev/null; then
    echo "no kubectl (kustomize v5) on this machine: the kustomizations cannot be built"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
echo "$(kubectl version --client 2>/dev/null | grep -i kustomize || echo 'kubectl without a kustomize version line')"

mkdir -p "$OUT"
built=()
while IFS= read -r kust; do
    dir="${kust%/kustomization.yaml}"
    name="${dir#"$ROOT"/deploy/}"
    file="$OUT/${name//\//-}.yaml"
    if ! kubectl kustomize "$dir" >"$file" 2>"$file.err"; then
        echo "FAIL kubectl kustomize deploy/$name:"; cat "$file.err"; exit 1
    fi
    echo "ok   kubectl kustomize deploy/$name: $(grep -c '^kind:' "$file") objects"
    built+=("$file")
done < <(find "$ROOT/deploy/kubernetes" -name kustomization.yaml | sort)

# The image is the kustomization's `images:` entry, and pointing it at a registry changes every pod
# (issue 29 §10): a copy of deploy/kubernetes with newName and newTag edited as deploy/docs/install.md
# says for kubectl alone (or by `kustomize edit set image
# openweather-exporter=registry.example.com/openweather-exporter:1.2.3` when kustomize is installed),
# built again by kubectl kustomize.
images_of() { grep -E '^ +image: ' "$1" | sed -E 's/^ +image: //' | sort -u | xargs; }
for name in kubernetes kubernetes-sharded; do
    got=$(images_of "$OUT/$name.yaml")
    [ "$got" = "openweather-exporter:latest" ] || { echo "FAIL deploy/${name/-//}: the pods run $got, not the images: entry's openweather-exporter:latest"; exit 1; }
done
copy="$OUT/image-override"
rm -rf "$copy" && cp -r "$ROOT/deploy/kubernetes" "$copy"
want=registry.example.com/openweather-exporter:1.2.3
for dir in "$copy" "$copy/sharded"; do
    if command -v kustomize >/dev/null; then
        (cd "$dir" && kustomize edit set image "openweather-exporter=$want")
    else
        python3 - "$dir/kustomization.yaml" "$want" <<'PY'
import sys, yaml
path, image = sys.argv[1], sys.argv[2]
kust = yaml.safe_load(open(path))
(entry,) = [i for i in kust["images"] if i["name"] == "openweather-exporter"]
entry["newName"], entry["newTag"] = image.rsplit(":", 1)
yaml.safe_dump(kust, open(path, "w"), sort_keys=False)
PY
    fi
    kubectl kustomize "$dir" >"$dir.built.yaml" 2>"$dir.err" || { echo "FAIL kubectl kustomize of the edited copy:"; cat "$dir.err"; exit 1; }
    got=$(images_of "$dir.built.yaml")
    [ "$got" = "$want" ] || { echo "FAIL set image in ${dir#"$OUT"/}: the pods run $got, not $want"; exit 1; }
    echo "ok   images: openweather-exporter=$want in ${dir#"$OUT"/}: every pod runs $got"
done

if ! PYTHONPATH="$TOOLS" python3 -c 'import kubernetes_validate' 2>/dev/null; then
    rm -rf "$TOOLS"
    timeout 300 python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLS" \
        "kubernetes-validate==$VERSION" >"$OUT/pip.log" 2>&1 || { cat "$OUT/pip.log"; echo "FAIL pip install kubernetes-validate==$VERSION"; exit 1; }
fi

failed=0
for file in "${built[@]}"; do
    for k8s in "$OLDEST" "$VERSION"; do
        status=0
        report=$(PYTHONPATH="$TOOLS" python3 -m kubernetes_validate --strict -k "$k8s" "$file" 2>&1) || status=$?
        # Each object is one line: INFO passed, WARN no schema (its kind named), ERROR with the reason.
        passed=$(grep -c '^INFO .* passed for resource' <<<"$report" || true)
        unexpected=$(grep -v '^INFO .* passed for resource' <<<"$report" |
            grep -vE "^WARN .* Couldn't find schema for kind (ServiceMonitor|PrometheusRule) " || true)
        crds=$(grep -oE "Couldn't find schema for kind [A-Za-z]+" <<<"$report" | awk '{print $NF}' | sort | xargs)
        if [ "$status" = 0 ] && [ -z "$unexpected" ] && [ "$passed" -gt 0 ]; then
            echo "ok   $(basename "$file") on Kubernetes $k8s: $passed objects valid (strict); no schema, not validated: ${crds:-none}"
        else
            echo "FAIL $(basename "$file") on Kubernetes $k8s (exit $status):"; echo "$report" | sed 's/^/     /'
            failed=1
        fi
    done
done
exit "$failed"

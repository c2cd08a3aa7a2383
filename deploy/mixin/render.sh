#!/usr/bin/env bash
# Writes the files deploy/ ships from the mixin, or with --check says which differ from it:
#
#   bash deploy/mixin/render.sh            # after editing deploy/mixin
#   bash deploy/mixin/render.sh --check    # exit 1, with a diff, when a committed file is not its output,
#                                          # or when a file of the mixin is not as jsonnetfmt writes it
#
# rules: prometheus/rules/openweather.yml; dashboard: grafana/dashboards/openweather.json;
# prometheusrule: kubernetes/base/prometheusrule.yaml. The rules' tests (prometheus/rules/openweather.test.yml)
# are written by hand; render/tests.jsonnet moves them to another selector. Needs jsonnet and jsonnetfmt (Debian's jsonnet
# package, 0.18 or later).
set -euo pipefail
MIXIN="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEPLOY="$(dirname "$MIXIN")"
check=0
[[ "${1:-}" == --check ]] && check=1
command -v jsonnet >/dev/null || { echo "jsonnet is missing: apt-get install jsonnet" >&2; exit 2; }

status=0
if ((check)); then
    unformatted=()
    while IFS= read -r file; do
        jsonnetfmt --test "$file" 2>/dev/null || unformatted+=("${file#"$DEPLOY"/}")
    done < <(find "$MIXIN" -name '*.jsonnet' -o -name '*.libsonnet' | sort)
    if ((${#unformatted[@]})); then
        echo "FAIL  not as jsonnetfmt writes them (jsonnetfmt -i FILE): ${unformatted[*]}"
        status=1
    else
        echo "ok    the mixin's files are as jsonnetfmt writes them"
    fi
fi
for pair in rules:prometheus/rules/openweather.yml dashboard:grafana/dashboards/openweather.json \
    prometheusrule:kubernetes/base/prometheusrule.yaml; do
    source="$MIXIN/render/${pair%%:*}.jsonnet" target="$DEPLOY/${pair#*:}"
    rendered="$(mktemp)"
    if ! jsonnet -S "$source" >"$rendered"; then
        rm -f "$rendered"; echo "jsonnet failed on $source" >&2; exit 1
    fi
    if ((check)); then
        if cmp -s "$rendered" "$target"; then
            echo "ok    deploy/${pair#*:} is the mixin's output"
        else
            echo "FAIL  deploy/${pair#*:} differs from the mixin's output (bash deploy/mixin/render.sh writes it):"
            diff -u "$target" "$rendered" | head -n 40
            status=1
        fi
        rm -f "$rendered"
    else
        mv "$rendered" "$target" && chmod 644 "$target"
        echo "wrote deploy/${pair#*:}"
    fi
done
# The tests are written by hand for the default config; rendered for it they must come back unchanged.
if ((check)); then
    if jsonnet -S "$MIXIN/render/tests.jsonnet" | cmp -s - "$DEPLOY/prometheus/rules/openweather.test.yml"; then
        echo "ok    render/tests.jsonnet gives deploy/prometheus/rules/openweather.test.yml back for the default config"
    else
        echo "FAIL  render/tests.jsonnet changes deploy/prometheus/rules/openweather.test.yml for the default config"
        status=1
    fi
fi
exit "$status"

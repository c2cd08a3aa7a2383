// deploy/kubernetes/base/prometheusrule.yaml, written by deploy/mixin/render.sh:
//   jsonnet -S deploy/mixin/render/prometheusrule.jsonnet
// config: fields of _config to change, as for render/rules.jsonnet.
local yaml = import '../lib/yaml.libsonnet';

function(config={})
  local mixin = (import '../mixin.libsonnet') + { _config+:: config };
  |||
    # Written by deploy/mixin/render.sh from deploy/mixin, with the same groups as
    # deploy/prometheus/rules/openweather.yml: edit the mixin, then run it.
    # The operator's Prometheus must select it (ruleSelector).
  ||| + yaml.document({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'openweather-exporter',
      labels: { 'app.kubernetes.io/name': 'openweather-exporter' },
    },
    spec: { groups: mixin.prometheusAlerts.groups },
  })

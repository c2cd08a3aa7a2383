// deploy/grafana/dashboards/openweather.json, written by deploy/mixin/render.sh:
//   jsonnet -S deploy/mixin/render/dashboard.jsonnet
// config: fields of _config to change, as for render/rules.jsonnet.
local json = import '../lib/json.libsonnet';

function(config={})
  local mixin = (import '../mixin.libsonnet') + { _config+:: config };
  json.document(mixin.grafanaDashboards['openweather.json'])

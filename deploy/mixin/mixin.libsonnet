// openweather-exporter's monitoring mixin: its alerts, its dashboard, and the _config they share.
// deploy/mixin/render.sh writes the files deploy/ ships from it; see deploy/docs/mixin.md.
(import 'config.libsonnet')
+ (import 'alerts/alerts.libsonnet')
+ (import 'dashboards/dashboards.libsonnet')

// The alerting rules, one file per group, in the order of the rules file. Each group file is a
// function of lib/selectors.libsonnet's fields; a `comment::` (hidden, so not in prometheusAlerts)
// is written above its group or rule in deploy/prometheus/rules/openweather.yml.
local selectors = import '../lib/selectors.libsonnet';

{
  prometheusAlerts+:: {
    local c = selectors($._config),
    groups+: [
      (import 'temperature.libsonnet')(c),
      (import 'thermal-indices.libsonnet')(c),
      (import 'wind.libsonnet')(c),
      (import 'exporter.libsonnet')(c),
      (import 'air-quality.libsonnet')(c),
      (import 'forecast.libsonnet')(c),
    ],
  },
}

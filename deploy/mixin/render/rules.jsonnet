// deploy/prometheus/rules/openweather.yml, written by deploy/mixin/render.sh:
//   jsonnet -S deploy/mixin/render/rules.jsonnet
// config: fields of _config to change, e.g. --tla-code 'config={openweatherSelector: "job=\"weather\""}'.
local yaml = import '../lib/yaml.libsonnet';

function(config={})
  local mixin = (import '../mixin.libsonnet') + { _config+:: config };
  yaml.rulesFile(
    |||
      Alerts for openweather-exporter.

      Written by deploy/mixin/render.sh from the mixin in deploy/mixin (jsonnet),
      as are the dashboard and the Kubernetes PrometheusRule: edit the mixin and
      run it, not this file (Tests/deploy/run.sh fails when they differ). To
      select a job of another name, or some of your series only, render them with
      the mixin's _config.openweatherSelector (deploy/docs/mixin.md).

      The temperature thresholds live in the exporter's configuration (per location,
      or global defaults) and are exported as
        openweather_temperature_alert_threshold_celsius{location, bound="above"|"below"}
      so one rule serves every location. `ignoring(bound)` joins a temperature with
      the threshold series that has the same labels apart from `bound` (location,
      job, instance and any target labels); a location without that threshold has
      no series to join and never alerts. The comparison is strict: a temperature
      equal to its threshold does not alert. A place with alerts off (`alerts=off`,
      `alerts: false`) exports no threshold of any kind, so no weather rule fires
      there. Thresholds given in °F are exported in °C like every temperature;
      openweather_temperature_alert_threshold_info{unit="fahrenheit"} tells the
      descriptions to repeat them in °F.

      No flapping: once a threshold alert fires it keeps firing until the reading is
      clearly back, by hysteresis in the expression itself: `or (... and on(...)
      ALERTS{alertname="X", alertstate="firing"})` keeps an alert that is already
      firing while the reading stays within a margin of its bound, the place's own
      openweather_temperature_alert_hysteresis_celsius (default 1 °C) for
      temperatures, heat index, wet-bulb temperature and wind chill, 20 % of the
      threshold for gusts and rain (0.8 x, and a probability of rain of 0.4
      instead of 0.5). A pending alert gets no margin, so
      `for:` still wants the bound itself crossed for that long. The cost: a real
      recovery resolves only once the reading is past the margin (35 °C threshold,
      cooling by 1 °C an hour in the evening: about an hour later than the bound),
      and a reading that settles inside the margin keeps the alert firing.
      `keep_firing_for` (Prometheus 2.42+) was not used: it delays every
      resolution by a fixed time whatever the reading does, cannot hold through
      wavering longer than that time, and older Prometheus versions still in
      distributions refuse the whole file.

      A description that gives a value gives it as of its evaluation (its time of day,
      UTC, from hour() and minute()): Prometheus sends a resolved alert with the
      annotations of its last firing evaluation, which must stay true then. Values
      and thresholds print with printf "%.4g" (0.8, not humanize's 800m).

      Each weather alert's `dashboard` annotation links the Grafana dashboard at the
      place: set the external label `grafana_url` (global.external_labels in
      prometheus.yml, for example https://grafana.example.com) to your Grafana's
      address; without it the link points at http://localhost:3000.

      The exporter-health rules read `up` of the scrape job "openweather"
      (deploy/prometheus/prometheus.yml), or of the mixin's selector.

      Every health series has a `source` label, the API it is about: weather,
      forecast, air_pollution, onecall, or geocoding (a place given by name, looked
      up once). The
      rules alert per location and source where that says what is failing, per
      source where a key can be refused for one API only, and once per exporter
      for the rate limit, which OpenWeather applies to the key. Rules about the
      weather's own values use its series, which have no `source` label.

      No recording rules: every dashboard query and alert is a single plain
      expression over raw series, so a recorded copy would only add a name to learn.
    |||,
    mixin.prometheusAlerts.groups
  )

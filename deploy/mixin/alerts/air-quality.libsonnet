function(c) {
  name: 'openweather-air-quality',
  rules: [
    {
      alert: 'OpenWeatherAirQualityPoor',
      comment:: |||
        The index is hourly: `for: 1h` holds for one poor reading that stays
        a whole hour (until the next poll) or for two in a row.
      |||,
      expr: |||
        openweather_air_quality_index%(selector)s >= 4
          %(unlessAlertsOff)s
      ||| % c,
      'for': '1h',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Air quality in {{ $labels.location }} is poor',
      } + c.describe(|||
        The air quality index in {{ $labels.location }} was 4 (poor) or worse
        for at least an hour, and {{ $value }}
        ({{ if ge $value 5.0 }}very poor{{ else }}poor{{ end }}) at «time», on
        OpenWeather's scale of 1 (good) to 5 (very poor).
      |||),
    },
    {
      alert: 'OpenWeatherPoorAirExpected',
      comment:: |||
        The air quality forecast (--collector.air_pollution_forecast): the
        highest index of the hours from now to 24 hours ahead, re-read by the
        exporter every minute, so a poor hour warns up to a day before it. It
        is polled hourly: `for: 1h` wants two forecasts in a row to agree.
        Alertmanager mutes it while the air is already poor there.
      |||,
      expr: |||
        openweather_forecast_air_quality_max_index{%(matchers)swindow_hours="24"} >= 4
          %(unlessAlertsOff)s
      ||| % c,
      'for': '1h',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Poor air expected in {{ $labels.location }} within 24 hours',
      } + c.describe(|||
        At «time» OpenWeather's forecast for {{ $labels.location }} had an air
        quality index of {{ $value }}
        ({{ if ge $value 5.0 }}very poor{{ else }}poor{{ end }}) within the
        next 24 hours, on its scale of 1 (good) to 5 (very poor).
      |||),
    },
  ],
}

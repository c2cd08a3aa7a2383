function(c) {
  name: 'openweather-wind',
  comment:: |||
    Gusts now above the place's own threshold (--location ...,gust=M/S,
    wind_gust_meters_per_second in an alerts block, or the default
    --alerts.wind-gust-meters-per-second; none unless given), exported as
    openweather_wind_gust_alert_threshold_meters_per_second. OpenWeather
    reports a gust only in wind, and drops it in calm weather: the series
    absent, no alert. The weather is polled every 10 minutes, so `for: 5m`
    fires on one reading past the threshold (gusts are peaks already) and
    rides out a failed scrape; kept firing down to 80 % of the threshold.
  |||,
  rules: [
    {
      alert: 'OpenWeatherWindGustAboveThreshold',
      expr: |||
        openweather_wind_gust_meters_per_second%(selector)s
          >
        openweather_wind_gust_alert_threshold_meters_per_second%(selector)s
        or
        (
          openweather_wind_gust_meters_per_second%(selector)s
            >
          openweather_wind_gust_alert_threshold_meters_per_second%(selector)s * 0.8
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherWindGustAboveThreshold", alertstate="firing"}
        )
      ||| % c,
      'for': '5m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Gusts in {{ $labels.location }} are above their alert threshold',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        Gusts in {{ $labels.location }} reached {{ $value | printf "%.1f" }} m/s
        at «time»; its threshold is
        {{ with printf "openweather_wind_gust_alert_threshold_meters_per_second{«sel»job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} m/s.{{ with printf "openweather_wind_gust_alert_threshold_meters_per_second{«sel»job=%q,instance=%q,location=%q} * 0.8" $labels.job $labels.instance $labels.location | query }}
        It ends when they are back to {{ . | first | value | printf "%.4g" }} m/s or below.{{ end }}
      |||),
    },
  ],
}

function(c) {
  name: 'openweather-temperature',
  rules: [
    {
      alert: 'OpenWeatherTemperatureAboveThreshold',
      expr: |||
        openweather_temperature_celsius%(selector)s
          > ignoring(bound)
        openweather_temperature_alert_threshold_celsius{%(matchers)sbound="above"}
        or
        (
          openweather_temperature_celsius%(selector)s
            > ignoring(bound)
          (
            openweather_temperature_alert_threshold_celsius{%(matchers)sbound="above"}
              - on(job, instance, location) group_left
            openweather_temperature_alert_hysteresis_celsius%(selector)s
          )
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherTemperatureAboveThreshold", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: '{{ $labels.location }} is hotter than its alert threshold',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        The temperature in {{ $labels.location }} went above its threshold of
        {{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
        at least 15 minutes ago and was
        {{ $value | printf "%.1f" }} °C{{ with printf "openweather_temperature_celsius{«sel»job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location) openweather_temperature_alert_threshold_info{«sel»bound=\"above\",unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} at «time».{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q} - on(job, instance, location) group_left openweather_temperature_alert_hysteresis_celsius«{sel}»" $labels.job $labels.instance $labels.location | query }}
        It ends when back to {{ . | first | value | printf "%.4g" }} °C{{ with printf "(openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q} - on(job, instance, location) group_left openweather_temperature_alert_hysteresis_celsius«{sel}») * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
        or below.{{ end }}
      |||),
    },
    {
      alert: 'OpenWeatherTemperatureBelowThreshold',
      expr: |||
        openweather_temperature_celsius%(selector)s
          < ignoring(bound)
        openweather_temperature_alert_threshold_celsius{%(matchers)sbound="below"}
        or
        (
          openweather_temperature_celsius%(selector)s
            < ignoring(bound)
          (
            openweather_temperature_alert_threshold_celsius{%(matchers)sbound="below"}
              + on(job, instance, location) group_left
            openweather_temperature_alert_hysteresis_celsius%(selector)s
          )
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherTemperatureBelowThreshold", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: '{{ $labels.location }} is colder than its alert threshold',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        The temperature in {{ $labels.location }} went below its threshold of
        {{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
        at least 15 minutes ago and was
        {{ $value | printf "%.1f" }} °C{{ with printf "openweather_temperature_celsius{«sel»job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location) openweather_temperature_alert_threshold_info{«sel»bound=\"below\",unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} at «time».{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q} + on(job, instance, location) group_left openweather_temperature_alert_hysteresis_celsius«{sel}»" $labels.job $labels.instance $labels.location | query }}
        It ends when back to {{ . | first | value | printf "%.4g" }} °C{{ with printf "(openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q} + on(job, instance, location) group_left openweather_temperature_alert_hysteresis_celsius«{sel}») * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
        or above.{{ end }}
      |||),
    },
  ],
}

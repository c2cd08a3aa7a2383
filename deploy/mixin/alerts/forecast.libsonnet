function(c) {
  name: 'openweather-forecast',
  comment:: |||
    The forecast (--collector.forecast, on by default, or One Call): alert
    before the temperature crosses a threshold, not after. The same
    per-location thresholds as the current temperature, applied to the
    forecast's extremes over the next 24 hours, which the exporter re-reads at
    every render as time passes: set a place's lower threshold to 0 for frost
    warnings. `ignoring(bound, window_hours)` joins a window's extreme with the
    threshold of the same location and exporter. Alertmanager mutes these
    while the place is already past its threshold
    (deploy/alertmanager/alertmanager.yml).
  |||,
  rules: [
    {
      alert: 'OpenWeatherForecastBelowThreshold',
      expr: |||
        openweather_forecast_temperature_min_celsius{%(matchers)swindow_hours="24"}
          < ignoring(bound, window_hours)
        openweather_temperature_alert_threshold_celsius{%(matchers)sbound="below"}
        or
        (
          openweather_forecast_temperature_min_celsius{%(matchers)swindow_hours="24"}
            < ignoring(bound, window_hours)
          (
            openweather_temperature_alert_threshold_celsius{%(matchers)sbound="below"}
              + on(job, instance, location) group_left
            openweather_temperature_alert_hysteresis_celsius%(selector)s
          )
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherForecastBelowThreshold", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: '{{ $labels.location }} is forecast to get colder than its alert threshold within 24 hours',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        At «time» the forecast for {{ $labels.location }} went down to
        {{ $value | printf "%.1f" }} °C{{ with printf "openweather_forecast_temperature_min_celsius{«sel»job=%q,instance=%q,location=%q,window_hours=\"24\"} * 9 / 5 + 32 and on(job, instance, location) openweather_temperature_alert_threshold_info{«sel»bound=\"below\",unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} within the next 24 hours; its
        threshold is {{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"below\",job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}.
      |||),
    },
    {
      alert: 'OpenWeatherForecastAboveThreshold',
      expr: |||
        openweather_forecast_temperature_max_celsius{%(matchers)swindow_hours="24"}
          > ignoring(bound, window_hours)
        openweather_temperature_alert_threshold_celsius{%(matchers)sbound="above"}
        or
        (
          openweather_forecast_temperature_max_celsius{%(matchers)swindow_hours="24"}
            > ignoring(bound, window_hours)
          (
            openweather_temperature_alert_threshold_celsius{%(matchers)sbound="above"}
              - on(job, instance, location) group_left
            openweather_temperature_alert_hysteresis_celsius%(selector)s
          )
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherForecastAboveThreshold", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: '{{ $labels.location }} is forecast to get hotter than its alert threshold within 24 hours',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        At «time» the forecast for {{ $labels.location }} went up to
        {{ $value | printf "%.1f" }} °C{{ with printf "openweather_forecast_temperature_max_celsius{«sel»job=%q,instance=%q,location=%q,window_hours=\"24\"} * 9 / 5 + 32 and on(job, instance, location) openweather_temperature_alert_threshold_info{«sel»bound=\"above\",unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} within the next 24 hours; its
        threshold is {{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "openweather_temperature_alert_threshold_celsius{«sel»bound=\"above\",job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location, bound) openweather_temperature_alert_threshold_info{«sel»unit=\"fahrenheit\"}" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}.
      |||),
    },
    {
      alert: 'OpenWeatherHeavyRainExpected',
      comment:: |||
        The place's own threshold (--location ...,rain=MM, rain_millimeters in
        an alerts block; 20 mm by default, heavy rain in most climates), with
        at least an even chance, so a wet but unlikely run does not page. In
        millimetres, for the description. Kept firing down to 80 % of the
        threshold and a chance of 0.4 (see the top of this file).
      |||,
      expr: |||
        (
          openweather_forecast_window_rain_meters{%(matchers)swindow_hours="24"} * 1000
            >= ignoring(window_hours) group_left
          openweather_rain_alert_threshold_meters%(selector)s * 1000
            and on(job, instance, location)
          openweather_forecast_precipitation_probability_max_ratio{%(matchers)swindow_hours="24"} >= 0.5
        )
        or
        (
          openweather_forecast_window_rain_meters{%(matchers)swindow_hours="24"} * 1000
            >= ignoring(window_hours) group_left
          openweather_rain_alert_threshold_meters%(selector)s * 1000 * 0.8
            and on(job, instance, location)
          openweather_forecast_precipitation_probability_max_ratio{%(matchers)swindow_hours="24"} >= 0.4
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherHeavyRainExpected", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Heavy rain is forecast for {{ $labels.location }} within 24 hours',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        At «time» the forecast for {{ $labels.location }} added up to
        {{ $value | printf "%.4g" }} mm of rain over the next 24 hours; its
        threshold is
        {{ with printf "openweather_rain_alert_threshold_meters{«sel»job=%q,instance=%q,location=%q} * 1000" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} mm.
      |||),
    },
    {
      alert: 'OpenWeatherWindGustExpected',
      comment:: |||
        Gusts forecast within 24 hours above the place's threshold
        (--location ...,gust=M/S, wind_gust_meters_per_second in an alerts
        block; no default): the strongest gust of the forecast's steps in the
        window (the 5-day forecast and One Call report gusts). Alertmanager
        mutes it while the gusts are already past the threshold there. Kept
        firing down to 80 % of the threshold.
      |||,
      expr: |||
        openweather_forecast_wind_gust_max_meters_per_second{%(matchers)swindow_hours="24"}
          > ignoring(window_hours)
        openweather_wind_gust_alert_threshold_meters_per_second%(selector)s
        or
        (
          openweather_forecast_wind_gust_max_meters_per_second{%(matchers)swindow_hours="24"}
            > ignoring(window_hours)
          openweather_wind_gust_alert_threshold_meters_per_second%(selector)s * 0.8
            and on(job, instance, location)
          ALERTS{%(matchers)salertname="OpenWeatherWindGustExpected", alertstate="firing"}
        )
      ||| % c,
      'for': '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Gusts above the alert threshold are forecast for {{ $labels.location }} within 24 hours',
        dashboard: c.dashboardLink,
      } + c.describe(|||
        At «time» the forecast for {{ $labels.location }} had gusts of
        {{ $value | printf "%.1f" }} m/s within the next 24 hours; its threshold is
        {{ with printf "openweather_wind_gust_alert_threshold_meters_per_second{«sel»job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} m/s.
      |||),
    },
    {
      alert: 'OpenWeatherForecastMissing',
      comment:: |||
        The rules above, and the thermal indices' Expected rules, read the
        24-hour window; a location with a temperature, gust, heat index,
        wet-bulb or wind chill threshold and no such series gets no warning at
        all (the rain
        threshold, which every place has by default, is left out: it would
        make every place of an exporter without the forecast alert): the forecast collector is
        off (--no-collector.forecast), --collector.forecast.windows leaves out
        24h, or its polls have failed for longer than --openweather.max-staleness
        (OpenWeatherLocationFailing says so, and Alertmanager then mutes this
        one). A place not found yet is OpenWeatherPlaceNotFound's. `for: 1h`
        covers the first round of polls after a start, which a stretched
        budget can spread over many minutes.
      |||,
      expr: |||
        (
          count without (bound) (openweather_temperature_alert_threshold_celsius%(selector)s)
            or
          openweather_wind_gust_alert_threshold_meters_per_second%(selector)s
            or
          openweather_heat_index_alert_threshold_celsius%(selector)s
            or
          openweather_wet_bulb_alert_threshold_celsius%(selector)s
            or
          openweather_wind_chill_alert_threshold_celsius%(selector)s
        )
          unless on(job, instance, location)
        openweather_forecast_temperature_min_celsius{%(matchers)swindow_hours="24"}
          unless on(job, instance, location)
        openweather_up{%(matchers)ssource="geocoding"} == 0
      ||| % c,
      'for': '1h',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'No 24-hour forecast for {{ $labels.location }}: its forecast alerts cannot fire',
      } + c.describe(|||
        {{ $labels.instance }} has alert thresholds for {{ $labels.location }}
        but has exported no openweather_forecast_temperature_min_celsius{window_hours="24"}
        for an hour, so OpenWeatherForecastBelowThreshold,
        OpenWeatherForecastAboveThreshold, OpenWeatherWindGustExpected,
        OpenWeatherHeavyRainExpected, OpenWeatherHeatIndexExpected,
        OpenWeatherWetBulbExpected and OpenWeatherWindChillExpected cannot fire
        there. Switch the forecast collector on
        (--collector.forecast, or collector.forecast.enabled in the config
        file), keep 24h in --collector.forecast.windows, or see why its
        polls fail (openweather_up{source="forecast"}).
      |||),
    },
    {
      alert: 'OpenWeatherOfficialAlert',
      comment:: |||
        Official warnings from national weather services (One Call's alerts):
        the series exists only while the warning is in force.
      |||,
      expr: |||
        openweather_weather_alert_info%(selector)s == 1
          %(unlessAlertsOff)s
      ||| % c,
      labels: { severity: 'warning' },
      annotations: {
        summary: '{{ $labels.sender }}: {{ $labels.event }} for {{ $labels.location }}',
      } + c.describe(|||
        {{ $labels.sender }} has issued "{{ $labels.event }}" for
        {{ $labels.location }}, in force until
        {{ with printf "openweather_weather_alert_end_timestamp_seconds{«sel»job=%q,instance=%q,location=%q,event=%q,sender=%q}" $labels.job $labels.instance $labels.location $labels.event $labels.sender | query }}{{ . | first | value | humanizeTimestamp }}{{ end }}.
      |||),
    },
    {
      alert: 'OpenWeatherRainStartingSoon',
      comment:: |||
        One Call's minute forecast (--collector.onecall, without `minutely`
        in --collector.onecall.exclude): rain or snow due within 15 minutes
        where it is dry now. The start is that of the first wet minute from
        the one covering now, so once the rain has begun it is no longer
        ahead and the alert resolves; it resolves too when the forecast drops
        the rain. No `for:`: the exporter re-renders the series every minute,
        and a warning 15 minutes ahead is worth little 5 minutes late.
      |||,
      expr: |||
        (
          openweather_precipitation_next_start_timestamp_seconds%(selector)s - time() > 0
            and
          openweather_precipitation_next_start_timestamp_seconds%(selector)s - time() <= 900
        )
          %(unlessAlertsOff)s
      ||| % c,
      labels: { severity: 'info' },
      annotations: {
        summary: 'Rain is about to start in {{ $labels.location }}',
      } + c.describe(|||
        At «time» One Call's minute forecast for {{ $labels.location }} had
        precipitation starting in {{ $value | humanizeDuration }}
        ({{ with printf "openweather_precipitation_next_hour_meters{«sel»job=%q,instance=%q,location=%q} * 1000" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.1f" }}{{ end }}
        mm forecast for the next hour).
      |||),
    },
  ],
}

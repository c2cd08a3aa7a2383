function(c) {
  name: 'openweather-exporter',
  rules: [
    {
      alert: 'OpenWeatherExporterDown',
      expr: 'up{%(upSelector)s} == 0' % c,
      'for': '5m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'openweather-exporter {{ $labels.instance }} cannot be scraped',
      } + c.describe(|||
        Prometheus has failed to scrape {{ $labels.instance }} (job
        {{ $labels.job }}) for 5 minutes; no weather data is collected.
      |||),
    },
    {
      alert: 'OpenWeatherExporterAbsent',
      expr: 'absent(up{%(upSelector)s})' % c,
      'for': '10m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'No openweather-exporter target is known to Prometheus',
      } + c.describe(|||
        There has been no `up{«up»}` series for 10 minutes:
        the scrape job is missing or service discovery finds no target.
      |||),
    },
    {
      alert: 'OpenWeatherExporterReloadFailed',
      comment:: |||
        A reload (SIGHUP or POST /-/reload) that was refused: the exporter
        goes on with the configuration it had, so the change you made is not
        in force, and the next restart would fail on the same file.
      |||,
      expr: 'openweather_exporter_config_last_reload_successful%(selector)s == 0' % c,
      'for': '5m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'openweather-exporter {{ $labels.instance }} refused its new configuration',
      } + c.describe(|||
        The last configuration reload of {{ $labels.instance }} failed, so
        it still runs the configuration it had before, and a restart would
        fail on the same file. Its log says why (msg="reload refused; the
        previous configuration stays in force" reason=...): fix the config
        file or web config and reload again.
      |||),
    },
    {
      alert: 'OpenWeatherLocationFailing',
      comment:: |||
        One alert per location and source that keeps failing (`source` says
        which API), after about three failed polls of the weather (every 10m)
        and two of the slower sources: air pollution is polled hourly and a
        failed poll is retried after an interval, then two, so it must have
        been failing for 90 minutes (or since the exporter started) plus the
        30 of `for:`. A place not resolved yet is not polled at all (its
        sources show 0): OpenWeatherPlaceNotFound reports that, once.
      |||,
      expr: |||
        (
            openweather_up{%(matchers)ssource="weather"} == 0
          or
            max_over_time(openweather_up{%(matchers)ssource!~"weather|geocoding"}[90m]) == 0
        )
          unless on(job, instance, location)
        openweather_up{%(matchers)ssource="geocoding"} == 0
      ||| % c,
      'for': '30m',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Polling OpenWeather's {{ $labels.source }} for {{ $labels.location }} keeps failing",
      } + c.describe(|||
        Every poll of {{ $labels.source }} for {{ $labels.location }} on
        {{ $labels.instance }} has failed for
        {{ if eq $labels.source "weather" }}30 minutes{{ else }}2 hours (or since the exporter started){{ end }};
        see openweather_api_requests_total by code and source, and the
        exporter's log.
      |||),
    },
    {
      alert: 'OpenWeatherPlaceNotFound',
      comment:: |||
        A place given by name or postal code that the geocoder does not find
        (or whose lookups fail): nothing is polled there until it resolves.
        A miss is retried hourly, at once on reload.
      |||,
      expr: 'openweather_up{%(matchers)ssource="geocoding"} == 0' % c,
      'for': '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'OpenWeather cannot find the place of {{ $labels.location }}',
      } + c.describe(|||
        {{ $labels.instance }} has not resolved {{ $labels.location }} to
        coordinates for 10 minutes, so nothing is polled there: no place
        matches its name or postal code, or the geocoding requests fail (see
        openweather_api_requests_total{source="geocoding"} and the exporter's
        log). Correct the query, or give coordinates (NAME=LAT,LON).
      |||),
    },
    {
      alert: 'OpenWeatherDataStale',
      comment:: |||
        OpenWeather serving old weather while polls succeed. Failing polls are
        OpenWeatherLocationFailing's: the exporter drops a location's weather
        series after --openweather.max-staleness (3 poll intervals) anyway.
        The `source` label lets the Alertmanager inhibitions match it with the
        failure alerts of the weather source.
      |||,
      expr: 'time() - openweather_observation_timestamp_seconds%(selector)s > 3600' % c,
      'for': '5m',
      labels: { severity: 'warning', source: 'weather' },
      annotations: {
        summary: 'Weather data for {{ $labels.location }} is more than an hour old',
      } + c.describe(|||
        At «time» the latest observation for {{ $labels.location }} was
        {{ $value | humanizeDuration }} old (OpenWeather normally updates
        every 10 minutes).
      |||),
    },
    {
      alert: 'OpenWeatherAPIKeyRejected',
      comment:: |||
        Per source: a key can lack the subscription of one API only. A 401 is
        not retried sooner than the source's interval (hourly for air
        pollution), so the window spans two hours, and the alert ends as soon as
        no location of that source fails any more (a place not found, whose
        sources wait at 0, keeps it until the two hours are over).
      |||,
      exprComment:: |||
        One Call answers 401 both for a wrong key and for a key without its
        subscription. Without the subscription the exporter polls the weather
        from the free endpoint, so weather requests go on: not this. With a
        wrong key One Call still stands in for the weather, which then makes
        no requests of its own, and it is this.
      |||,
      expr: |||
        (
          increase(openweather_api_requests_total{%(matchers)scode="401",source!="onecall"}[2h]) > 0
            and on(job, instance, source)
          openweather_up%(selector)s == 0
        )
        or
        (
          increase(openweather_api_requests_total{%(matchers)scode="401",source="onecall"}[2h]) > 0
            and on(job, instance, source)
          openweather_up%(selector)s == 0
            unless on(job, instance)
          increase(openweather_api_requests_total{%(matchers)ssource="weather"}[2h]) > 0
        )
      ||| % c,
      labels: { severity: 'critical' },
      annotations: {
        summary: 'OpenWeather rejects the API key of {{ $labels.instance }} for {{ $labels.source }}',
      } + c.describe(|||
        OpenWeather answered 401 to {{ $value | printf "%.0f" }}
        {{ $labels.source }} requests in the 2 hours to «time», and polls of
        {{ $labels.source }} still failed: the key is wrong, not yet activated
        (up to a couple of hours for a new key) or lacks the subscription.
      |||),
    },
    {
      alert: 'OpenWeatherRateLimited',
      comment:: |||
        OpenWeather limits the key, not the endpoint, and a 429 pauses every
        source: one alert per exporter.
      |||,
      expr: 'sum without (source) (increase(openweather_api_requests_total{%(matchers)scode="429"}[20m])) > 0' % c,
      labels: { severity: 'warning' },
      annotations: {
        summary: 'OpenWeather rate-limits {{ $labels.instance }}',
      } + c.describe(|||
        OpenWeather answered 429 to {{ $value | printf "%.0f" }} requests in
        the 20 minutes to «time». It blocks the key for an hour or more; lower
        --openweather.max-requests-per-minute to your plan's limit, poll
        fewer locations or sources, or check whether another client shares
        the key.
      |||),
    },
    {
      alert: 'OpenWeatherDailyRequestsNearLimit',
      comment:: |||
        A daily limit (--collector.onecall.max-requests-per-day, or the key's
        --openweather.max-requests-per-day) 90 % spent: at 100 % the source, or
        every source for the key's, pauses until 00:00 UTC. The counts start
        again at 00:00 UTC, which ends the alert. The key's limit has no
        `source` label: it is compared with the sum over the sources.
      |||,
      expr: |||
        openweather_api_requests_today%(selector)s >= 0.9 * openweather_api_daily_request_limit%(selector)s
          or
        sum without (source) (openweather_api_requests_today%(selector)s) >= 0.9 * openweather_api_key_daily_request_limit%(selector)s
      ||| % c,
      labels: { severity: 'warning' },
      annotations: {
        summary: "{{ $labels.instance }} has spent 90 % of {{ if $labels.source }}{{ $labels.source }}'s{{ else }}the key's{{ end }} requests for today",
      } + c.describe(|||
        {{ $value | printf "%.0f" }} requests sent from 00:00 to «time», 90 % or
        more of the daily limit of {{ if $labels.source }}{{ $labels.source }}
        (--collector.{{ $labels.source }}.max-requests-per-day){{ else }}the
        key (--openweather.max-requests-per-day){{ end }}. At the limit it
        pauses until 00:00 UTC (One Call hands the weather and forecast back
        to their free endpoints). If it happens daily, poll less often or
        raise the limit to your plan's.
      |||),
    },
  ],
}

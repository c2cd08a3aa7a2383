{
  _config+:: {
    // Matchers added to every series selector of every alert expression, of every query an
    // alert's text makes, and of every dashboard query, e.g. 'job="weather"' or
    // 'cluster="eu", job="weather"'. Empty: every series of the exporter's metric names.
    openweatherSelector: '',
    // The exporter's targets in `up`, for OpenWeatherExporterDown and OpenWeatherExporterAbsent,
    // which need a job: openweatherSelector when set, else the shipped scrape job's.
    exporterSelector: if self.openweatherSelector == '' then 'job="openweather"' else self.openweatherSelector,
    // The dashboard's uid: the alerts' `dashboard` links open it.
    dashboardUid: 'openweather-exporter',
  },
}

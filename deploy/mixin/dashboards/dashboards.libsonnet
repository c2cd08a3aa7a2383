local selectors = import '../lib/selectors.libsonnet';

{
  grafanaDashboards+:: {
    'openweather.json': (import 'openweather.libsonnet')($._config, selectors($._config)),
  },
}

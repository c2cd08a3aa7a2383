// The Grafana dashboard, deploy/grafana/dashboards/openweather.json. Its queries are format strings
// of lib/selectors.libsonnet's fields, `metric{%(matchers)sjob=~"$job"}`, so _config's selector
// is in every one.
function(config, s)
  local ds = { type: 'prometheus', uid: '${datasource}' };
  local jobs = 'label_values(openweather_temperature_celsius%(selector)s, job)' % s;
  local locations = 'label_values(openweather_temperature_celsius{%(matchers)sjob=~"$job"}, location)' % s;
  // A place two exporters of the job poll is two series of one `location`, which would draw two
  // legends alike: those get the instance added to their location ("Paris on a:9755"), every other
  // place keeps its own. The query does it, as Grafana's legend prints a missing label's name.
  local perPlace(v) =
    local twice = 'count by (location) (count by (location, instance) (' + v + ')) > 1';
    '(label_join((' + v + ') and on(location) (' + twice + '), "location", " on ", "location", "instance")'
    + ' or ((' + v + ') unless on(location) (' + twice + ')))';
  {
    uid: config.dashboardUid,
    title: 'OpenWeather',
    description: "Weather and air quality per location from openweather-exporter, with its alert thresholds and the exporter's health per location and source.",
    tags: ['openweather', 'weather', 'prometheus'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    graphTooltip: 1,
    time: { from: 'now-24h', to: 'now' },
    timepicker: {},
    timezone: 'browser',
    refresh: '1m',
    fiscalYearStartMonth: 0,
    liveNow: false,
    weekStart: '',
    links: [],
    id: null,
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
        {
          datasource: ds,
          enable: true,
          hide: false,
          iconColor: 'red',
          name: 'Temperature, heat and wind chill alerts',
          expr: 'ALERTS{%(matchers)salertname=~"OpenWeather(Temperature(Above|Below)|HeatIndexAbove|WetBulbAbove|WindChillBelow)Threshold", alertstate="firing", job=~"$job", location=~"$location"}' % s,
          step: '1m',
          titleFormat: '{{alertname}}',
          textFormat: '{{location}}',
          useValueForTime: false,
        },
        {
          datasource: ds,
          enable: true,
          hide: false,
          iconColor: 'purple',
          name: 'Air quality alerts',
          expr: 'ALERTS{%(matchers)salertname=~"OpenWeatherAirQualityPoor|OpenWeatherPoorAirExpected", alertstate="firing", job=~"$job", location=~"$location"}' % s,
          step: '1m',
          titleFormat: '{{alertname}}',
          textFormat: '{{location}}',
          useValueForTime: false,
        },
        {
          datasource: ds,
          enable: true,
          hide: false,
          iconColor: 'orange',
          name: 'Official weather alerts',
          expr: 'ALERTS{%(matchers)salertname="OpenWeatherOfficialAlert", alertstate="firing", job=~"$job", location=~"$location"}' % s,
          step: '1m',
          titleFormat: '{{event}}',
          textFormat: '{{location}}: {{sender}}',
          useValueForTime: false,
        },
      ],
    },
    templating: {
      list: [
        {
          type: 'datasource',
          name: 'datasource',
          label: 'Data source',
          query: 'prometheus',
          current: {},
          hide: 0,
          refresh: 1,
          regex: '',
          includeAll: false,
          multi: false,
          options: [],
        },
        {
          type: 'query',
          name: 'job',
          label: 'Job',
          datasource: ds,
          definition: jobs,
          query: jobs,
          refresh: 2,
          sort: 1,
          multi: false,
          includeAll: false,
          hide: 0,
          current: {},
          options: [],
          regex: '',
        },
        {
          type: 'query',
          name: 'location',
          label: 'Location',
          datasource: ds,
          definition: locations,
          query: locations,
          refresh: 2,
          sort: 1,
          multi: true,
          includeAll: true,
          allValue: '.+',
          hide: 0,
          current: { selected: true, text: ['All'], value: ['$__all'] },
          options: [],
          regex: '',
        },
      ],
    },
    panels: [
      {
        id: 1,
        type: 'row',
        title: 'Now',
        collapsed: false,
        gridPos: { x: 0, y: 0, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 2,
        type: 'stat',
        title: 'Temperature',
        datasource: ds,
        gridPos: { x: 0, y: 1, w: 6, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_temperature_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            decimals: 1,
            color: { mode: 'thresholds' },
            thresholds: {
              mode: 'absolute',
              steps: [
                { color: 'blue', value: null },
                { color: 'green', value: 5 },
                { color: 'orange', value: 28 },
                { color: 'red', value: 35 },
              ],
            },
          },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
      },
      {
        id: 3,
        type: 'stat',
        title: 'Condition',
        datasource: ds,
        gridPos: { x: 6, y: 1, w: 6, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_condition_info{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}: {{description}}',
            instant: true,
            range: false,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_secondary_condition_info{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}: also {{description}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: { defaults: { color: { mode: 'fixed', fixedColor: 'text' } }, overrides: [] },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'name',
        },
        description: "OpenWeather's primary condition (weather[0]), then any reported beside it (\"also mist\"); the icon code is in the icon label.",
      },
      {
        id: 4,
        type: 'stat',
        title: 'Sunrise (local time)',
        datasource: ds,
        gridPos: { x: 12, y: 1, w: 4, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('(openweather_sunrise_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"} + openweather_timezone_offset_seconds{%(matchers)sjob=~"$job", location=~"$location"})' % s) + ' % 86400',
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'clocks', color: { mode: 'fixed', fixedColor: 'yellow' } },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
        description: 'Time of day at the location (UTC plus its time zone offset). Absent during polar day or night.',
      },
      {
        id: 5,
        type: 'stat',
        title: 'Sunset (local time)',
        datasource: ds,
        gridPos: { x: 16, y: 1, w: 4, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('(openweather_sunset_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"} + openweather_timezone_offset_seconds{%(matchers)sjob=~"$job", location=~"$location"})' % s) + ' % 86400',
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'clocks', color: { mode: 'fixed', fixedColor: 'orange' } },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
      },
      {
        id: 6,
        type: 'stat',
        title: 'Day length',
        datasource: ds,
        gridPos: { x: 20, y: 1, w: 4, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_sunset_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"} - openweather_sunrise_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'dtdurations', color: { mode: 'fixed', fixedColor: 'text' } },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
      },
      {
        id: 7,
        type: 'table',
        title: 'Locations',
        datasource: ds,
        gridPos: { x: 0, y: 6, w: 24, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'openweather_location_info{%(matchers)sjob=~"$job", location=~"$location"}' % s,
            legendFormat: '',
            instant: true,
            range: false,
            format: 'table',
          },
        ],
        fieldConfig: { defaults: {}, overrides: [] },
        options: { showHeader: true, cellHeight: 'sm' },
        description: "Where each configured location's data comes from: the coordinates polled, and the place's city, state and country (from the geocoder for places given by name, else from the weather answer).",
        transformations: [
          {
            id: 'organize',
            options: {
              excludeByName: { Time: true, Value: true, __name__: true, job: true, instance: true },
              indexByName: { location: 0, city: 1, state: 2, country: 3, latitude: 4, longitude: 5 },
              renameByName: {},
            },
          },
        ],
      },
      {
        id: 8,
        type: 'row',
        title: 'Temperature',
        collapsed: false,
        gridPos: { x: 0, y: 59, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 9,
        type: 'timeseries',
        title: 'Temperature, feels like, spread and alert thresholds',
        datasource: ds,
        gridPos: { x: 0, y: 60, w: 12, h: 9 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_temperature_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_feels_like_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} feels like',
            range: true,
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_temperature_min_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} min',
            range: true,
          },
          {
            datasource: ds,
            refId: 'D',
            expr: perPlace('openweather_temperature_max_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} max',
            range: true,
          },
          {
            datasource: ds,
            refId: 'E',
            expr: perPlace('openweather_temperature_alert_threshold_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} alert {{bound}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            decimals: 1,
            custom: { lineWidth: 2, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* feels like' },
              properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }],
            },
            {
              matcher: { id: 'byRegexp', options: '.* (min|max)' },
              properties: [{ id: 'custom.lineWidth', value: 1 }, { id: 'custom.fillOpacity', value: 5 }],
            },
            {
              matcher: { id: 'byRegexp', options: '.* alert above' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
            {
              matcher: { id: 'byRegexp', options: '.* alert below' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'blue' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: "min/max are OpenWeather's spread of the current observation over a large city, not the day's forecast. Thresholds are drawn only for locations that have them.",
      },
      {
        id: 34,
        type: 'timeseries',
        title: 'Heat index, humidex, wet bulb, wind chill and apparent temperature, with alert thresholds',
        description: "What the temperature feels like, by the published indices the exporter computes from the temperature, humidity and wind (each formula and its domain: the metrics reference): the NWS heat index, Environment Canada's humidex, Stull's wet-bulb temperature (absent outside its domain), the wind chill (the air temperature above 10 °C or in light wind, as the charts give it) and the Bureau of Meteorology's apparent temperature. OpenWeather's own feels like is on the temperature panel. Thresholds (heat_index=, wet_bulb=, wind_chill=) are drawn only for locations that have them.",
        datasource: ds,
        gridPos: { x: 12, y: 60, w: 12, h: 9 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_heat_index_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} heat index',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_humidex_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} humidex',
            range: true,
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_wet_bulb_temperature_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} wet bulb',
            range: true,
          },
          {
            datasource: ds,
            refId: 'D',
            expr: perPlace('openweather_wind_chill_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} wind chill',
            range: true,
          },
          {
            datasource: ds,
            refId: 'E',
            expr: perPlace('openweather_apparent_temperature_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} apparent',
            range: true,
          },
          {
            datasource: ds,
            refId: 'F',
            expr: perPlace('openweather_heat_index_alert_threshold_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} heat index alert',
            range: true,
          },
          {
            datasource: ds,
            refId: 'G',
            expr: perPlace('openweather_wet_bulb_alert_threshold_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} wet bulb alert',
            range: true,
          },
          {
            datasource: ds,
            refId: 'H',
            expr: perPlace('openweather_wind_chill_alert_threshold_celsius{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} wind chill alert',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            decimals: 1,
            custom: { lineWidth: 2, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* (heat index|wet bulb) alert' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
            {
              matcher: { id: 'byRegexp', options: '.* wind chill alert' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'blue' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
      },
      {
        id: 10,
        type: 'row',
        title: 'Atmosphere',
        collapsed: false,
        gridPos: { x: 0, y: 69, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 11,
        type: 'timeseries',
        title: 'Humidity',
        datasource: ds,
        gridPos: { x: 0, y: 70, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_humidity_ratio{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'percentunit', min: 0, max: 1, custom: { showPoints: 'never', spanNulls: true } },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
      },
      {
        id: 12,
        type: 'timeseries',
        title: 'Pressure',
        datasource: ds,
        gridPos: { x: 8, y: 70, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_pressure_pascals{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' / 100',
            legendFormat: '{{location}} sea level',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_ground_level_pressure_pascals{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' / 100',
            legendFormat: '{{location}} ground level',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'pressurehpa', custom: { showPoints: 'never', spanNulls: true } },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* ground level' },
              properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
      },
      {
        id: 13,
        type: 'timeseries',
        title: 'Clouds and visibility',
        datasource: ds,
        gridPos: { x: 16, y: 70, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_cloudiness_ratio{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} clouds',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_visibility_meters{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} visibility',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'percentunit', min: 0, custom: { showPoints: 'never', spanNulls: true } },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* visibility' },
              properties: [
                { id: 'unit', value: 'lengthm' },
                { id: 'custom.axisPlacement', value: 'right' },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'Visibility is capped at 10 km by OpenWeather.',
      },
      {
        id: 14,
        type: 'row',
        title: 'Wind and precipitation',
        collapsed: false,
        gridPos: { x: 0, y: 78, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 15,
        type: 'timeseries',
        title: 'Wind speed and gusts',
        datasource: ds,
        gridPos: { x: 0, y: 79, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_wind_speed_meters_per_second{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_wind_gust_meters_per_second{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} gusts',
            range: true,
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_wind_gust_alert_threshold_meters_per_second{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} gust alert',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'velocityms', min: 0, custom: { showPoints: 'never', spanNulls: true } },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* gusts' },
              properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } }],
            },
            {
              matcher: { id: 'byRegexp', options: '.* gust alert' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'Gust alert thresholds are drawn only for locations that have them (gust= in --location).',
      },
      {
        id: 16,
        type: 'timeseries',
        title: 'Wind direction (from)',
        datasource: ds,
        gridPos: { x: 8, y: 79, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_wind_direction_degrees{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'degree', min: 0, max: 360, custom: { drawStyle: 'points', pointSize: 5 } },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'Meteorological direction: where the wind comes from (0 = north, 90 = east).',
      },
      {
        id: 17,
        type: 'timeseries',
        title: 'Rain and snow (last hour, last 3 hours)',
        datasource: ds,
        gridPos: { x: 16, y: 79, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_rain_1h_meters{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}} rain',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_snow_1h_meters{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}} snow',
            range: true,
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_rain_3h_meters{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}} rain (3 h)',
            range: true,
          },
          {
            datasource: ds,
            refId: 'D',
            expr: perPlace('openweather_snow_3h_meters{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}} snow (3 h)',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'lengthmm', min: 0, custom: { drawStyle: 'bars', fillOpacity: 60 } },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'rain.1h and snow.1h, and rain.3h and snow.3h where the answer gives them (most give the last hour only): 0 when the answer has no rain or snow, no point when it has one without that span.',
      },
      {
        id: 26,
        type: 'row',
        title: 'Air quality',
        collapsed: false,
        gridPos: { x: 0, y: 87, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 27,
        type: 'stat',
        title: 'Air quality index',
        datasource: ds,
        gridPos: { x: 0, y: 88, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_quality_index{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: {
            mappings: [
              {
                type: 'value',
                options: {
                  '1': { text: 'Good', color: 'green', index: 0 },
                  '2': { text: 'Fair', color: 'yellow', index: 1 },
                  '3': { text: 'Moderate', color: 'orange', index: 2 },
                  '4': { text: 'Poor', color: 'red', index: 3 },
                  '5': { text: 'Very poor', color: 'purple', index: 4 },
                },
              },
            ],
            color: { mode: 'thresholds' },
            thresholds: {
              mode: 'absolute',
              steps: [
                { color: 'green', value: null },
                { color: 'yellow', value: 2 },
                { color: 'orange', value: 3 },
                { color: 'red', value: 4 },
                { color: 'purple', value: 5 },
              ],
            },
            min: 1,
            max: 5,
            decimals: 0,
          },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'value_and_name',
        },
        description: "OpenWeather's air quality index: 1 good, 2 fair, 3 moderate, 4 poor, 5 very poor. The air-quality alert fires after an hour at 4 or worse. From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).",
      },
      {
        id: 28,
        type: 'state-timeline',
        title: 'Air quality index over time',
        datasource: ds,
        gridPos: { x: 6, y: 88, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_quality_index{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            mappings: [
              {
                type: 'value',
                options: {
                  '1': { text: 'Good', color: 'green', index: 0 },
                  '2': { text: 'Fair', color: 'yellow', index: 1 },
                  '3': { text: 'Moderate', color: 'orange', index: 2 },
                  '4': { text: 'Poor', color: 'red', index: 3 },
                  '5': { text: 'Very poor', color: 'purple', index: 4 },
                },
              },
            ],
            color: { mode: 'thresholds' },
            thresholds: {
              mode: 'absolute',
              steps: [
                { color: 'green', value: null },
                { color: 'yellow', value: 2 },
                { color: 'orange', value: 3 },
                { color: 'red', value: 4 },
                { color: 'purple', value: 5 },
              ],
            },
          },
          overrides: [],
        },
        options: {
          showValue: 'auto',
          mergeValues: true,
          rowHeight: 0.8,
          legend: { displayMode: 'list', placement: 'bottom', showLegend: false },
        },
        description: 'The index is modelled hourly. From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).',
      },
      {
        id: 29,
        type: 'stat',
        title: 'Air quality observed',
        datasource: ds,
        gridPos: { x: 18, y: 88, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_pollution_observation_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'dateTimeFromNow', color: { mode: 'fixed', fixedColor: 'text' } },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
        description: 'When OpenWeather modelled the air quality shown (dt); it updates hourly. From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).',
      },
      {
        id: 30,
        type: 'timeseries',
        title: 'Particulate matter (PM2.5, PM10)',
        datasource: ds,
        gridPos: { x: 0, y: 96, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_pollutant_grams_per_cubic_meter{%(matchers)sjob=~"$job", location=~"$location", pollutant=~"pm2_5|pm10"}' % s) + ' * 1e6',
            legendFormat: '{{location}} {{pollutant}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'conμgm3', min: 0, custom: { showPoints: 'never', spanNulls: true } },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'Exported in g/m³ (base units), shown in µg/m³ (× 1e6). From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).',
      },
      {
        id: 31,
        type: 'timeseries',
        title: 'Gases (CO, NO, NO₂, O₃, SO₂, NH₃)',
        datasource: ds,
        gridPos: { x: 12, y: 96, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_pollutant_grams_per_cubic_meter{%(matchers)sjob=~"$job", location=~"$location", pollutant!~"pm2_5|pm10"}' % s) + ' * 1e6',
            legendFormat: '{{location}} {{pollutant}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'conμgm3',
            custom: { showPoints: 'never', spanNulls: true, scaleDistribution: { type: 'log', log: 10 } },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'Exported in g/m³ (base units), shown in µg/m³ (× 1e6), on a log scale: CO is in the hundreds, NH₃ and NO often near 1. From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).',
      },
      {
        id: 32,
        type: 'stat',
        title: 'Air quality index by scale',
        datasource: ds,
        gridPos: { x: 0, y: 104, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_air_quality_scale_index{%(matchers)sjob=~"$job", location=~"$location", scale!="openweather"}' % s),
            legendFormat: '{{location}} {{scale}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: { defaults: { decimals: 0, color: { mode: 'fixed', fixedColor: 'text' } }, overrides: [] },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
        description: "The index in the scales people read, computed by the exporter from the hour's concentrations: us_epa (US EPA AQI, 0-500; above 100 unhealthy for sensitive groups), eu_caqi (European CAQI, 0-100; above 75 high), uk_daqi (UK DAQI, 1-10; 7 and more high). Hourly values stand for the 8 h and 24 h means the scales define (deploy/docs/sources.md lists what each simplifies). From the air_pollution source: enable it with --collector.air_pollution (off by default; on in --demo).",
      },
      {
        id: 33,
        type: 'timeseries',
        title: 'Air quality expected (forecast)',
        datasource: ds,
        gridPos: { x: 12, y: 104, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_forecast_air_quality_max_index{%(matchers)sjob=~"$job", location=~"$location", window_hours="24"}' % s),
            legendFormat: '{{location}} worst in the next 24 h',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_forecast_air_quality_index{%(matchers)sjob=~"$job", location=~"$location", hours_ahead="24"}' % s),
            legendFormat: '{{location}} in 24 h',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            min: 1,
            max: 5,
            decimals: 0,
            color: { mode: 'palette-classic' },
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'green', value: null }, { color: 'red', value: 4 }],
            },
            custom: {
              showPoints: 'never',
              spanNulls: true,
              lineInterpolation: 'stepAfter',
              thresholdsStyle: { mode: 'dashed' },
            },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: "OpenWeather's index (1 good .. 5 very poor) that its hourly forecast gives: the worst hour of the next 24 hours (what OpenWeatherPoorAirExpected fires on, at 4) and the hour 24 hours ahead. From the air_pollution_forecast source: enable it with --collector.air_pollution_forecast (off by default; on in --demo).",
      },
      {
        id: 18,
        type: 'row',
        title: 'Exporter health',
        collapsed: false,
        gridPos: { x: 0, y: 112, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 19,
        type: 'stat',
        title: 'Exporter scraped',
        datasource: ds,
        gridPos: { x: 0, y: 113, w: 4, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'up{%(matchers)sjob=~"$job"}' % s,
            legendFormat: '{{instance}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: {
            mappings: [
              {
                type: 'value',
                options: { '0': { text: 'down', color: 'red' }, '1': { text: 'up', color: 'green' } },
              },
            ],
            color: { mode: 'thresholds' },
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'red', value: null }, { color: 'green', value: 1 }],
            },
          },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
      },
      {
        id: 20,
        type: 'state-timeline',
        title: 'Last poll per location and source',
        datasource: ds,
        gridPos: { x: 4, y: 113, w: 10, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_up{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} {{source}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            mappings: [
              {
                type: 'value',
                options: { '0': { text: 'failing', color: 'red' }, '1': { text: 'ok', color: 'green' } },
              },
            ],
            color: { mode: 'thresholds' },
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'red', value: null }, { color: 'green', value: 1 }],
            },
          },
          overrides: [],
        },
        options: {
          showValue: 'never',
          mergeValues: true,
          rowHeight: 0.8,
          legend: { displayMode: 'list', placement: 'bottom', showLegend: false },
        },
        description: 'openweather_up per location and source (weather, air_pollution, forecast, onecall, geocoding for places given by name). A place not found is 0 for geocoding and for every source it cannot poll yet.',
      },
      {
        id: 21,
        type: 'timeseries',
        title: 'Age of last successful poll per source, and of the weather observation',
        datasource: ds,
        gridPos: { x: 14, y: 113, w: 10, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('time() - openweather_last_success_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location", source!="geocoding"}' % s),
            legendFormat: '{{location}} {{source}} last success',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('time() - openweather_observation_timestamp_seconds{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} observation',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 's',
            min: 0,
            custom: { showPoints: 'never' },
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'green', value: null }, { color: 'red', value: 3600 }],
            },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* observation' },
              properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: "Per polled source (a place's geocoding succeeds once, so it is left out). The data-stale alert fires when the weather observation is over an hour old.",
      },
      {
        id: 22,
        type: 'timeseries',
        title: 'OpenWeather API requests per minute by source and code',
        datasource: ds,
        gridPos: { x: 0, y: 121, w: 10, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'sum by (source, code) (rate(openweather_api_requests_total{%(matchers)sjob=~"$job"}[$__rate_interval])) * 60' % s,
            legendFormat: '{{source}} {{code}}',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'short',
            min: 0,
            custom: { drawStyle: 'bars', stacking: { mode: 'normal' }, fillOpacity: 70 },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '^\\S+ 2..$' },
              properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'green' } }],
            },
            {
              matcher: { id: 'byRegexp', options: '^\\S+ (401|429)$' },
              properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'red' } }],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: 'source is the API (weather, air_pollution, forecast, onecall, geocoding); code is the HTTP status, or timeout, connect, dns, tls, decode for failures without one. 401: key rejected; 429: rate limited.',
      },
      {
        id: 23,
        type: 'timeseries',
        title: 'Poll duration per source',
        datasource: ds,
        gridPos: { x: 10, y: 121, w: 7, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_poll_duration_seconds{%(matchers)sjob=~"$job", location=~"$location"}' % s),
            legendFormat: '{{location}} {{source}}',
            range: true,
          },
        ],
        fieldConfig: { defaults: { unit: 's', min: 0, custom: { showPoints: 'never' } }, overrides: [] },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
      },
      {
        id: 24,
        type: 'timeseries',
        title: 'Exporter memory and CPU',
        datasource: ds,
        gridPos: { x: 17, y: 121, w: 7, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'process_resident_memory_bytes{%(matchers)sjob=~"$job"}' % s,
            legendFormat: '{{instance}} resident memory',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: 'rate(process_cpu_seconds_total{%(matchers)sjob=~"$job"}[$__rate_interval])' % s,
            legendFormat: '{{instance}} CPU',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: { unit: 'bytes', min: 0, custom: { showPoints: 'never' } },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* CPU' },
              properties: [{ id: 'unit', value: 'percentunit' }, { id: 'custom.axisPlacement', value: 'right' }],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
      },
      {
        id: 25,
        type: 'table',
        title: 'Exporter build and configuration',
        datasource: ds,
        gridPos: { x: 0, y: 129, w: 24, h: 5 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'openweather_exporter_build_info{%(matchers)sjob=~"$job"}' % s,
            legendFormat: '',
            instant: true,
            range: false,
            format: 'table',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: 'openweather_exporter_config_last_reload_successful{%(matchers)sjob=~"$job"}' % s,
            legendFormat: '',
            instant: true,
            range: false,
            format: 'table',
          },
          {
            datasource: ds,
            refId: 'C',
            expr: 'openweather_exporter_config_last_reload_success_timestamp_seconds{%(matchers)sjob=~"$job"} * 1000' % s,
            legendFormat: '',
            instant: true,
            range: false,
            format: 'table',
          },
        ],
        fieldConfig: {
          defaults: {},
          overrides: [
            {
              matcher: { id: 'byName', options: 'Value #B' },
              properties: [
                { id: 'displayName', value: 'last reload ok' },
                {
                  id: 'mappings',
                  value: [
                    {
                      type: 'value',
                      options: { '0': { text: 'no', color: 'red' }, '1': { text: 'yes', color: 'green' } },
                    },
                  ],
                },
              ],
            },
            {
              matcher: { id: 'byName', options: 'Value #C' },
              properties: [
                { id: 'displayName', value: 'last successful reload' },
                { id: 'unit', value: 'dateTimeAsIso' },
              ],
            },
          ],
        },
        options: { showHeader: true, cellHeight: 'sm' },
        transformations: [
          { id: 'merge', options: {} },
          {
            id: 'organize',
            options: { excludeByName: { Time: true, 'Value #A': true, __name__: true } },
          },
        ],
      },
      {
        id: 101,
        type: 'row',
        title: 'Forecast',
        collapsed: false,
        gridPos: { x: 0, y: 11, w: 24, h: 1 },
        panels: [],
      },
      {
        id: 102,
        type: 'timeseries',
        title: 'Temperature: measured, and what was forecast for now',
        description: "The measured temperature beside what the forecast said 3 and 24 hours earlier (a forecast series read back by its horizon), and the forecast's lowest and highest over the next 24 hours. The lines of what was forecast for now need Prometheus to hold 3 and 24 hours of forecast history: they start 3 h and 24 h after the forecast collector (--collector.forecast, or One Call) began.",
        datasource: ds,
        gridPos: { x: 0, y: 12, w: 12, h: 9 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} measured',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_forecast_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location",hours_ahead="3"} offset 3h' % s),
            legendFormat: '{{location}} forecast 3 h before',
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_forecast_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location",hours_ahead="24"} offset 24h' % s),
            legendFormat: '{{location}} forecast 24 h before',
          },
          {
            datasource: ds,
            refId: 'D',
            expr: perPlace('openweather_forecast_temperature_min_celsius{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}} lowest in the next 24 h',
          },
          {
            datasource: ds,
            refId: 'E',
            expr: perPlace('openweather_forecast_temperature_max_celsius{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}} highest in the next 24 h',
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 103,
        type: 'timeseries',
        title: 'Forecast error: measured minus forecast 24 h before',
        description: 'openweather_temperature_celsius - openweather_forecast_temperature_celsius{hours_ahead="24"} offset 24h: positive when it turned out warmer than forecast. Needs 24 hours of forecast history in Prometheus: empty until 24 h after the forecast collector (--collector.forecast, or One Call) began.',
        datasource: ds,
        gridPos: { x: 12, y: 12, w: 12, h: 9 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location"} - ignoring(hours_ahead) openweather_forecast_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location",hours_ahead="24"} offset 24h' % s),
            legendFormat: '{{location}}',
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'Needs 24 h of forecast history (--collector.forecast, or One Call)',
            unit: 'celsius',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 104,
        type: 'timeseries',
        title: 'UV index',
        description: "Now and forecast 3 hours ahead. Only One Call has the UV index: empty without it (needs --collector.onecall and OpenWeather's One Call 3.0 subscription); the free forecast has none.",
        datasource: ds,
        gridPos: { x: 0, y: 29, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_uv_index{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} now',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_forecast_uv_index{%(matchers)sjob=~"$job",location=~"$location",hours_ahead="3"}' % s),
            legendFormat: '{{location}} in 3 h',
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'Only from One Call: enable --collector.onecall (One Call 3.0 subscription)',
            unit: 'none',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: false },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 105,
        type: 'timeseries',
        title: 'Dew point',
        description: "Now and forecast 3 hours ahead; near the temperature means fog or dew. Only One Call has the dew point: empty without it (needs --collector.onecall and OpenWeather's One Call 3.0 subscription); the free weather and forecast have none.",
        datasource: ds,
        gridPos: { x: 6, y: 29, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_dew_point_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} now',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_forecast_dew_point_celsius{%(matchers)sjob=~"$job",location=~"$location",hours_ahead="3"}' % s),
            legendFormat: '{{location}} in 3 h',
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'Only from One Call: enable --collector.onecall (One Call 3.0 subscription)',
            unit: 'celsius',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: false },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 106,
        type: 'timeseries',
        title: 'Rain expected in the next 24 h',
        description: 'Forecast rain over the next 24 hours, in millimetres (its chance is the panel beside it).',
        datasource: ds,
        gridPos: { x: 12, y: 29, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_forecast_window_rain_meters{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s) + ' * 1000',
            legendFormat: '{{location}}',
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_rain_alert_threshold_meters{%(matchers)sjob=~"$job",location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}} alert mm',
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'lengthmm',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: false },
            min: 0,
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* alert mm' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 111,
        type: 'timeseries',
        title: 'Chance of rain in the next 24 h',
        description: 'The highest chance of precipitation in any forecast step of the next 24 hours.',
        datasource: ds,
        gridPos: { x: 18, y: 29, w: 6, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_forecast_precipitation_probability_max_ratio{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}}',
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'percentunit',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: false },
            min: 0,
            max: 1,
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* alert mm' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 108,
        type: 'stat',
        title: 'Rain starts in',
        description: "From One Call's minute forecast: the time until the first minute with precipitation within the next hour; 0 while it rains now. No value when none is forecast in the hour, and always without One Call (needs --collector.onecall and OpenWeather's One Call 3.0 subscription). OpenWeatherRainStartingSoon fires from 15 minutes ahead.",
        datasource: ds,
        gridPos: { x: 0, y: 21, w: 8, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('clamp_min(openweather_precipitation_next_start_timestamp_seconds{%(matchers)sjob=~"$job",location=~"$location"} - time(), 0)' % s),
            legendFormat: '{{location}}',
            instant: true,
            range: false,
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'No rain in the next hour, or One Call is off (--collector.onecall, One Call 3.0 subscription)',
            unit: 's',
            decimals: 0,
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'blue', value: null }, { color: 'green', value: 900 }],
            },
            color: { mode: 'thresholds' },
          },
          overrides: [],
        },
        options: {
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
          colorMode: 'value',
          graphMode: 'none',
          justifyMode: 'auto',
          orientation: 'auto',
          textMode: 'auto',
        },
      },
      {
        id: 109,
        type: 'timeseries',
        title: 'Precipitation in the next hour',
        description: "From One Call's minute forecast: the precipitation forecast from now to the end of the minute forecast (about an hour), in mm. Always empty without One Call (needs --collector.onecall and OpenWeather's One Call 3.0 subscription).",
        datasource: ds,
        gridPos: { x: 8, y: 21, w: 16, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_precipitation_next_hour_meters{%(matchers)sjob=~"$job",location=~"$location"}' % s) + ' * 1000',
            legendFormat: '{{location}}',
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'Only from One Call: enable --collector.onecall (One Call 3.0 subscription)',
            unit: 'lengthmm',
            decimals: 1,
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: false },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 107,
        type: 'table',
        title: 'Official weather alerts in force',
        description: "From One Call: the alerts national weather services have issued, until their end. Empty when none is in force, and always without One Call (needs --collector.onecall and OpenWeather's One Call 3.0 subscription).",
        datasource: ds,
        gridPos: { x: 0, y: 37, w: 24, h: 6 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'openweather_weather_alert_end_timestamp_seconds{%(matchers)sjob=~"$job",location=~"$location"} * 1000' % s,
            legendFormat: '',
            instant: true,
            range: false,
            format: 'table',
          },
        ],
        fieldConfig: {
          defaults: {
            noValue: 'None in force, or One Call is off (--collector.onecall, One Call 3.0 subscription)',
          },
          overrides: [
            {
              matcher: { id: 'byName', options: 'Value' },
              properties: [{ id: 'displayName', value: 'ends' }, { id: 'unit', value: 'dateTimeAsIso' }],
            },
          ],
        },
        options: { showHeader: true, cellHeight: 'sm' },
        transformations: [
          {
            id: 'organize',
            options: {
              excludeByName: { Time: true, __name__: true, job: true, instance: true },
              indexByName: { location: 0, event: 1, sender: 2, Value: 3 },
            },
          },
        ],
      },
      {
        id: 110,
        type: 'barchart',
        title: 'Temperature ahead, as forecast now, by hours ahead',
        description: 'The forecast temperature at every configured horizon (--collector.forecast.horizons), read now: the next hours as a curve. With One Call 4.0 (--collector.onecall4) horizons under the hour come from its 15-minute timeline: --collector.forecast.horizons=15m,30m,45m,1h,...,48h shows the next 48 hours at 15-minute resolution (each horizon is a series per forecast family and location).',
        datasource: ds,
        gridPos: { x: 0, y: 43, w: 24, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            instant: true,
            format: 'table',
            expr: 'openweather_forecast_temperature_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s,
          },
        ],
        transformations: [
          {
            id: 'groupingToMatrix',
            options: { columnField: 'location', rowField: 'hours_ahead', valueField: 'Value' },
          },
          {
            id: 'convertFieldType',
            options: { conversions: [{ targetField: 'hours_ahead\\location', destinationType: 'number' }] },
          },
          { id: 'sortBy', options: { sort: [{ field: 'hours_ahead\\location' }] } },
        ],
        fieldConfig: { defaults: { unit: 'celsius' }, overrides: [] },
        options: {
          xField: 'hours_ahead\\location',
          orientation: 'vertical',
          showValue: 'never',
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi' },
        },
      },
      {
        id: 113,
        type: 'timeseries',
        title: 'Heat index and wet bulb ahead: highest in the next 24 h',
        description: "The highest heat index and wet-bulb temperature of the forecast's steps over the next 24 hours, which OpenWeatherHeatIndexExpected and OpenWeatherWetBulbExpected compare with the place's thresholds (drawn only where set). Computed from each step's temperature and humidity by the same formulas as now; a step outside Stull's domain has no wet bulb.",
        datasource: ds,
        gridPos: { x: 0, y: 51, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_forecast_heat_index_max_celsius{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}} heat index',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_forecast_wet_bulb_temperature_max_celsius{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}} wet bulb',
          },
          {
            datasource: ds,
            refId: 'C',
            expr: perPlace('openweather_heat_index_alert_threshold_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} heat index alert',
          },
          {
            datasource: ds,
            refId: 'D',
            expr: perPlace('openweather_wet_bulb_alert_threshold_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} wet bulb alert',
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* (heat index alert|wet bulb alert)' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 114,
        type: 'timeseries',
        title: 'Wind chill ahead: lowest in the next 24 h',
        description: "The lowest wind chill of the forecast's steps over the next 24 hours, which OpenWeatherWindChillExpected compares with the place's threshold (drawn only where set). Computed from each step's temperature and wind by the same formula as now.",
        datasource: ds,
        gridPos: { x: 12, y: 51, w: 12, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: perPlace('openweather_forecast_wind_chill_min_celsius{%(matchers)sjob=~"$job",location=~"$location",window_hours="24"}' % s),
            legendFormat: '{{location}} wind chill',
          },
          {
            datasource: ds,
            refId: 'B',
            expr: perPlace('openweather_wind_chill_alert_threshold_celsius{%(matchers)sjob=~"$job",location=~"$location"}' % s),
            legendFormat: '{{location}} wind chill alert',
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'celsius',
            custom: { lineWidth: 1, fillOpacity: 0, showPoints: 'never', spanNulls: true },
          },
          overrides: [
            {
              matcher: { id: 'byRegexp', options: '.* wind chill alert' },
              properties: [
                { id: 'color', value: { mode: 'fixed', fixedColor: 'blue' } },
                { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
                { id: 'custom.lineWidth', value: 1 },
              ],
            },
          ],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'none' },
        },
      },
      {
        id: 112,
        type: 'timeseries',
        title: 'Answer fields missing, and list entries skipped, per minute',
        datasource: ds,
        gridPos: { x: 0, y: 134, w: 24, h: 8 },
        targets: [
          {
            datasource: ds,
            refId: 'A',
            expr: 'sum by (source, field) (rate(openweather_fields_missing_total{%(matchers)sjob=~"$job"}[$__rate_interval])) * 60' % s,
            legendFormat: '{{source}} {{field}}',
            range: true,
          },
          {
            datasource: ds,
            refId: 'B',
            expr: 'sum by (source, list) (rate(openweather_entries_skipped_total{%(matchers)sjob=~"$job"}[$__rate_interval])) * 60' % s,
            legendFormat: '{{source}} {{list}} entries skipped',
            range: true,
          },
        ],
        fieldConfig: {
          defaults: {
            unit: 'short',
            min: 0,
            custom: { drawStyle: 'bars', stacking: { mode: 'normal' }, fillOpacity: 70 },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        description: "Polls whose answer lacked an optional field (its series are left out for that place, never shown as 0), by source and field; and list entries (forecast steps, hours, days, alerts) skipped as unusable. A census, not an error: fields OpenWeather sends only sometimes (wind.gust, main.grnd_level) count too. The exporter's debug log names the first place and the reason for each.",
      },
    ],
  }

// Heat stress and wind chill: one rule now and one over the forecast's 24-hour window per index,
// written once here from each index's names, as the temperature rules are written for their bounds.
local indices = [
  {
    name: 'HeatIndex',
    what: 'heat index',
    index: 'heat_index',
    now: 'openweather_heat_index_celsius',
    forecast: 'openweather_forecast_heat_index_max_celsius',
    threshold: 'openweather_heat_index_alert_threshold_celsius',
    above: true,
  },
  {
    name: 'WetBulb',
    what: 'wet-bulb temperature',
    index: 'wet_bulb',
    now: 'openweather_wet_bulb_temperature_celsius',
    forecast: 'openweather_forecast_wet_bulb_temperature_max_celsius',
    threshold: 'openweather_wet_bulb_alert_threshold_celsius',
    above: true,
  },
  {
    name: 'WindChill',
    what: 'wind chill',
    index: 'wind_chill',
    now: 'openweather_wind_chill_celsius',
    forecast: 'openweather_forecast_wind_chill_min_celsius',
    threshold: 'openweather_wind_chill_alert_threshold_celsius',
    above: false,
  },
];

function(c)
  // What differs between an upper and a lower threshold, and the names of one index.
  local fields(i) = c + i + {
    bound: if i.above then 'above' else 'below',
    compare: if i.above then '>' else '<',
    // The bound moved back by the hysteresis: where a firing alert ends.
    margin: if i.above then '-' else '+',
    back: if i.above then 'below' else 'above',
    current: 'OpenWeather%sThreshold' % (i.name + (if i.above then 'Above' else 'Below')),
    expected: 'OpenWeather%sExpected' % i.name,
  };
  // An alert's text from tokens: «what», «now», «forecast», «threshold», «margin», «bound», «back»,
  // «way» (up or down);
  // «fahrenheit» is the info series that says the threshold was given in °F.
  local text(f, lines) = c.describe(std.foldl(
    function(t, pair) std.strReplace(t, pair[0], pair[1]),
    [
      ['«fahrenheit»', 'openweather_thermal_alert_threshold_info{«sel»index=\\"%s\\",unit=\\"fahrenheit\\"}' % f.index],
      ['«what»', f.what],
      ['«now»', f.now],
      ['«forecast»', f.forecast],
      ['«threshold»', f.threshold],
      ['«margin»', f.margin],
      ['«bound»', f.bound],
      ['«back»', f.back],
      ['«way»', if f.above then 'up' else 'down'],
    ],
    lines
  ));
  local current(f) = {
    alert: f.current,
    expr: |||
      %(now)s%(selector)s
        %(compare)s
      %(threshold)s%(selector)s
      or
      (
        %(now)s%(selector)s
          %(compare)s
        (
          %(threshold)s%(selector)s
            %(margin)s on(job, instance, location) group_left
          openweather_temperature_alert_hysteresis_celsius%(selector)s
        )
          and on(job, instance, location)
        ALERTS{%(matchers)salertname="%(current)s", alertstate="firing"}
      )
    ||| % f,
    'for': '15m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'The %s in {{ $labels.location }} is %s its alert threshold' % [f.what, f.bound],
      dashboard: c.dashboardLink,
    } + text(f, |||
      The «what» in {{ $labels.location }} went «bound» its threshold of
      {{ with printf "«threshold»{«sel»job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "«threshold»{«sel»job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location) «fahrenheit»" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
      at least 15 minutes ago and was
      {{ $value | printf "%.1f" }} °C{{ with printf "«now»{«sel»job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location) «fahrenheit»" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} at «time».{{ with printf "«threshold»{«sel»job=%q,instance=%q,location=%q} «margin» on(job, instance, location) openweather_temperature_alert_hysteresis_celsius«{sel}»" $labels.job $labels.instance $labels.location | query }}
      It ends when back to {{ . | first | value | printf "%.4g" }} °C{{ with printf "(«threshold»{«sel»job=%q,instance=%q,location=%q} «margin» on(job, instance, location) openweather_temperature_alert_hysteresis_celsius«{sel}») * 9 / 5 + 32 and on(job, instance, location) «fahrenheit»" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}
      or «back».{{ end }}
    |||),
  };
  local expected(f) = {
    alert: f.expected,
    expr: |||
      %(forecast)s{%(matchers)swindow_hours="24"}
        %(compare)s ignoring(window_hours)
      %(threshold)s%(selector)s
      or
      (
        %(forecast)s{%(matchers)swindow_hours="24"}
          %(compare)s ignoring(window_hours)
        (
          %(threshold)s%(selector)s
            %(margin)s on(job, instance, location) group_left
          openweather_temperature_alert_hysteresis_celsius%(selector)s
        )
          and on(job, instance, location)
        ALERTS{%(matchers)salertname="%(expected)s", alertstate="firing"}
      )
    ||| % f,
    'for': '15m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'The %s in {{ $labels.location }} is forecast to go %s its alert threshold within 24 hours' % [f.what, f.bound],
      dashboard: c.dashboardLink,
    } + text(f, |||
      At «time» the forecast «what» for {{ $labels.location }} went «way» to
      {{ $value | printf "%.1f" }} °C{{ with printf "«forecast»{«sel»job=%q,instance=%q,location=%q,window_hours=\"24\"} * 9 / 5 + 32 and on(job, instance, location) «fahrenheit»" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.1f" }} °F){{ end }} within the next 24 hours; its
      threshold is {{ with printf "«threshold»{«sel»job=%q,instance=%q,location=%q}" $labels.job $labels.instance $labels.location | query }}{{ . | first | value | printf "%.4g" }}{{ end }} °C{{ with printf "«threshold»{«sel»job=%q,instance=%q,location=%q} * 9 / 5 + 32 and on(job, instance, location) «fahrenheit»" $labels.job $labels.instance $labels.location | query }} ({{ . | first | value | printf "%.4g" }} °F){{ end }}.
    |||),
  };
  {
    name: 'openweather-thermal-indices',
    comment:: |||
      Heat stress and wind chill, from the indices the exporter computes from
      the temperature, humidity and wind (deploy/docs/metrics.md gives each
      formula): now, and the 24-hour forecast window's extreme (the highest
      heat index and wet-bulb temperature, the lowest wind chill), so a heat
      wave or a cold snap warns ahead as the temperature's forecast rules do.
      Each compares with the place's own threshold (--location
      ...,heat_index=,wet_bulb=,wind_chill=, in °C or °F; no default), exported
      only where set: a place without it has no series to compare with and
      never alerts. The wet-bulb temperature is absent outside Stull's domain,
      and so is its alert. Held within the place's temperature hysteresis, with
      `for: 15m`, as the temperature rules (see the top of this file);
      openweather_thermal_alert_threshold_info{index, unit="fahrenheit"} tells
      the descriptions to repeat a value in °F. Alertmanager mutes a forecast
      alert while the same place's current one fires
      (deploy/alertmanager/alertmanager.yml).
    |||,
    rules: std.flattenArrays([[current(fields(i)), expected(fields(i))] for i in indices]),
  }

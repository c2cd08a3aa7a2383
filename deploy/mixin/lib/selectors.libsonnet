// What the rules and the dashboard put into their queries, made once from _config.
// Expressions are jsonnet format strings: `metric%(selector)s`, `metric{%(matchers)sbound="above"}`,
// `up{%(upSelector)s}`. An alert's text queries from inside a Go template string, so there the
// same goes in escaped, through tokens that a literal % of printf cannot be confused with:
// «sel» (first in a metric's braces), «{sel}» (after a bare metric name), «up» (`up`'s matchers);
// «time» is the evaluation's time.
local matchers = import 'matchers.libsonnet';

function(config)
  local s = config.openweatherSelector;
  // Read for the errors alone: a selector that is not a list of matchers would break every rule.
  assert std.length(matchers.read('openweatherSelector', s)) >= 0;
  assert std.length(matchers.read('exporterSelector', config.exporterSelector, blank=false)) >= 0;
  // A Go string literal that is also printf's format.
  // The time of the evaluation that wrote an alert's text, HH:MM UTC: a resolved alert keeps the
  // text of its last firing evaluation, so its values are said as of then. (toTime, which could
  // format it at once, needs Prometheus 2.38.)
  local time = '{{ with query "hour()" }}{{ . | first | value | printf "%02.0f" }}{{ end }}:'
               + '{{ with query "minute()" }}{{ . | first | value | printf "%02.0f" }}{{ end }} UTC';
  local go(text) = std.strReplace(std.strReplace(std.strReplace(text, '\\', '\\\\'), '"', '\\"'), '%', '%%');
  {
    selector: if s == '' then '' else '{' + s + '}',
    matchers: if s == '' then '' else s + ', ',
    upSelector: config.exporterSelector,
    // Appended to the expression of a rule with no threshold series to join (those are absent for a
    // place with alerts=off): mutes it there, and mutes nothing where the series is absent.
    unlessAlertsOff: 'unless on(job, instance, location) openweather_location_alerts_enabled%s == 0'
                     % (if s == '' then '' else '{' + s + '}'),

    // For an alert's annotations: its description, written as lines (a ||| block) and folded into
    // one line as YAML's `>-` folds them; the lines are kept for the rules file's layout.
    describe(text):: {
      local replaced = std.foldl(
        function(t, pair) std.strReplace(t, pair[0], pair[1]),
        [
          ['«sel»', if s == '' then '' else go(s) + ','],
          ['«{sel}»', if s == '' then '' else '{' + go(s) + '}'],
          ['«up»', config.exporterSelector],
          ['«time»', time],
        ],
        text
      ),
      descriptionLines:: replaced,
      description: std.join(' ', std.split(std.rstripChars(replaced, '\n'), '\n')),
    },

    // The `dashboard` annotation: the dashboard at the alert's place.
    dashboardLink:
      '{{ with $externalLabels.grafana_url }}{{ . }}{{ else }}http://localhost:3000{{ end }}/d/' + config.dashboardUid
      + '?var-job={{ $labels.job | urlquery }}&var-location={{ $labels.location | urlquery }}',
  }

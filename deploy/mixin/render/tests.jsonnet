// The rules' promtool unit tests for the same config as the rules, so a rendering of your own comes
// with tests that pass against it:
//   jsonnet -S --tla-code "$config" deploy/mixin/render/tests.jsonnet >openweather.test.yml
//   promtool test rules openweather.test.yml       # beside the rules rendered as openweather.yml
// deploy/prometheus/rules/openweather.test.yml is written by hand for the default config, which
// gives it back unchanged (render.sh --check holds that). For a selector its series get the
// selector's labels, and the alerts expected carry them. A series can carry a label but cannot match
// a regular expression, so the selector must be equality matchers (job="weather", site="home") on
// labels the tests do not set themselves, with values that need no escaping in a URL.
local matchers = import '../lib/matchers.libsonnet';
local shipped = importstr '../../prometheus/rules/openweather.test.yml';

function(config={})
  local c = ((import '../mixin.libsonnet') + { _config+:: config })._config;
  local s = c.openweatherSelector;
  local given = matchers.read('openweatherSelector', s);
  local refuse(why) =
    error "the tests cannot be rendered for _config.openweatherSelector '%s': %s. Render the rules alone (render/rules.jsonnet) and check them with promtool check rules." % [s, why];
  local plain(value) = std.length(value) > 0 && [
    ch
    for ch in std.stringChars(value)
    if !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || std.member(['_', '.', '-', '~'], ch))
  ] == [];
  // Whether a series of the tests sets `name` (std.strReplace is native; std.findSubstr takes minutes here).
  local ownLabel(name) = name != 'job' && std.strReplace(shipped, ',' + name + '="', '') != shipped;
  local bad = [m for m in given if m.op != '=' || !plain(m.value) || ownLabel(m.name)];
  local job = [m.value for m in given if m.name == 'job'];
  local jobValue = if job == [] then 'openweather' else job[0];
  local others = [m for m in given if m.name != 'job'];
  // The selector's labels as a series has them, and as promtool's exp_labels (a YAML flow mapping).
  local series = std.join(',', ['job="%s"' % jobValue] + ['%s="%s"' % [m.name, m.value] for m in others]);
  local expected(withJob) = std.join(', ', (if withJob then ['job: ' + std.escapeStringJson(jobValue)] else [])
                                           + ['%s: %s' % [m.name, std.escapeStringJson(m.value)] for m in others]);
  local text =
    if c.exporterSelector != (if s == '' then 'job="openweather"' else s) then
      refuse("_config.exporterSelector is '%s', not the selector the tests expect of `up`" % c.exporterSelector)
    else if s == '' then shipped
    else if bad != [] then
      local m = bad[0];
      refuse(if m.op != '=' then '%s%s"%s" is not an equality, which a series could carry' % [m.name, m.op, m.value]
      else if ownLabel(m.name) then 'the tests set %s themselves' % m.name
      else 'the value of %s is not letters, digits, _ . - or ~' % m.name)
    else
      std.foldl(
        function(text, pair) std.strReplace(text, pair[0], pair[1]),
        [
          // OpenWeatherExporterAbsent: `absent` keeps only the selector's labels, and its text repeats it.
          ['{severity: critical, job: openweather}', '{severity: critical, %s}' % expected(job != [])],
          ['`up{job=\\"openweather\\"}`', '`up{%s}`' % std.strReplace(s, '"', '\\"')],
          ['job="openweather"', series],
          ['job: openweather', expected(true)],
          ['var-job=openweather&', 'var-job=%s&' % jobValue],
          ['(job openweather)', '(job %s)' % jobValue],
        ],
        shipped
      );
  // jsonnet -S ends the output with a newline of its own.
  std.substr(text, 0, std.length(text) - 1)

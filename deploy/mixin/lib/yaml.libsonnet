// Two YAML writers, because std.manifestYamlDoc keeps no comments, sorts every key and quotes
// every string:
// - rulesFile: the layout of deploy/prometheus/rules/openweather.yml, written for people: the
//   groups' and rules' hidden `comment::` (and `exprComment::`) as comments, expressions as
//   literal blocks, descriptions folded (`>-`) at the line breaks they were written with.
// - document: what PyYAML's dump (block style, multi-line strings as literal blocks, lines
//   folded past 1000 columns) writes, for the Kubernetes PrometheusRule.
// Both leave out the last newline, which `jsonnet -S` adds.
local chomp(text) = std.rstripChars(text, '\n');
local lines(text) = std.split(chomp(text), '\n');
local spaces(n) = std.repeat(' ', n);
local chars(s) = std.stringChars(s);
// (std.findSubstr, std.member on a string and std.format are slow in jsonnet 0.18: seconds.)
local multiline(s) = std.length(std.split(s, '\n')) > 1;
local hasPair(c, a, b) = std.length([i for i in std.range(0, std.length(c) - 2) if c[i] == a && c[i + 1] == b]) > 0;

// Keys in the order Prometheus' documentation and the rules file give them; others after, sorted.
local order = [
  'apiVersion',
  'kind',
  'metadata',
  'spec',
  'name',
  'groups',
  'rules',
  'alert',
  'record',
  'expr',
  'for',
  'keep_firing_for',
  'labels',
  'annotations',
  'summary',
  'description',
  'dashboard',
];
// (A string, compared by code point: std.format is slow in jsonnet 0.18.)
local rank(key) =
  local found = std.find(key, order);
  if std.length(found) > 0 then std.char(256 + found[0]) else std.char(512) + key;
local keys(obj) = std.sort(std.objectFields(obj), rank);

// Would YAML read `s` back as this string if written plain? (A conservative PyYAML analysis.)
local plainSafe(s) =
  local c = chars(s);
  local n = std.length(c);
  local numberish = std.member(chars('-+.0123456789'), c[0])
                    && std.length(std.filter(function(x) !std.member(chars('0123456789_.:eE+-xXabcdefABCDEFo'), x), c)) == 0;
  local special = ['true', 'false', 'yes', 'no', 'on', 'off', 'null', '~', 'y', 'n'];
  n > 0
  && c[0] != ' ' && c[n - 1] != ' '
  && !std.member(chars('#,[]{}&*!|>\'"%@`'), c[0])
  && !(std.member(chars('?:-'), c[0]) && (n == 1 || c[1] == ' '))
  && !std.startsWith(s, '---') && !std.startsWith(s, '...')
  && c[n - 1] != ':'
  && !hasPair(c, ':', ' ')
  && !hasPair(c, ' ', '#')
  && !multiline(s)
  && std.length(std.filter(function(x) x < ' ' || x == '\u007f', c)) == 0
  && !numberish
  && !std.member(special, std.asciiLower(s));

local doubleQuoted(s) = '"' + std.strReplace(std.strReplace(s, '\\', '\\\\'), '"', '\\"') + '"';
local singleQuoted(s) = "'" + std.strReplace(s, "'", "''") + "'";
local scalar(v) =
  if std.isString(v) then (if plainSafe(v) then v else doubleQuoted(v))
  else if v == null then 'null'
  else std.toString(v);

// A literal block: `|` and the lines at `indent`.
local literal(text, indent) =
  assert !std.startsWith(text, ' ') && !std.startsWith(text, '\n') && !std.endsWith(text, '\n\n')
         : 'a literal block starting with a space or a blank line, or ending in one: ' + text;
  ['|' + (if std.endsWith(text, '\n') then '' else '-')] + [if l == '' then '' else spaces(indent) + l for l in lines(text)];

local commentLines(text, indent) =
  if text == null then []
  else [spaces(indent) + (if l == '' then '#' else '# ' + l) for l in lines(text)];

{
  rulesFile(header, groups)::
    // Each value read once into a local or an array: jsonnet evaluates an object's field again at
    // each access, and the expressions and descriptions are formatted strings.
    local rule(r) =
      local expr = r.expr;
      local annotationKeys = keys(r.annotations);
      local annotations = [r.annotations[k] for k in annotationKeys];
      local written = std.get(r.annotations, 'descriptionLines', null);
      local annotation(i) =
        local k = annotationKeys[i];
        local v = annotations[i];
        if k == 'summary' then ['          summary: ' + doubleQuoted(v)]
        else if k == 'dashboard' then ['          dashboard: ' + singleQuoted(v)]
        else if k == 'description' && written != null && v == std.join(' ', lines(written)) then
          ['          description: >-'] + ['            ' + l for l in lines(written)]
        else ['          ' + k + ': ' + doubleQuoted(v)];
      local field(k) =
        if k == 'alert' || k == 'record' then []
        else if k == 'expr' then
          commentLines(std.get(r, 'exprComment', null), 8)
          + (if multiline(expr)
             then local l = literal(expr, 10); ['        expr: ' + l[0]] + l[1:]
             else ['        expr: ' + scalar(expr)])
        else if k == 'labels' then ['        labels:'] + ['          ' + l + ': ' + scalar(r.labels[l]) for l in keys(r.labels)]
        else if k == 'annotations' then
          ['        annotations:'] + std.flattenArrays([annotation(i) for i in std.range(0, std.length(annotations) - 1)])
        else ['        ' + k + ': ' + scalar(r[k])];
      commentLines(std.get(r, 'comment', null), 6)
      + ['      - ' + (if 'alert' in r then 'alert: ' + scalar(r.alert) else 'record: ' + scalar(r.record))]
      + std.flattenArrays([field(k) for k in keys(r)]);
    local group(g) =
      commentLines(std.get(g, 'comment', null), 2)
      + ['  - name: ' + scalar(g.name), '    rules:']
      + std.join([''], [rule(r) for r in g.rules]);
    std.join('\n', commentLines(header, 0) + ['', 'groups:'] + std.join([''], [group(g) for g in groups])),

  // PyYAML's yaml.dump(value, sort_keys=False, allow_unicode=True, width=1000) with multi-line
  // strings as literal blocks, keys in the order above.
  document(value)::
    local width = 1000;
    // A plain or single-quoted scalar after `prefix`, its lines past `width` folded at a space
    // onto lines at `indent`, as PyYAML does.
    local folded(prefix, text, indent) =
      local words = std.split(text, ' ');
      assert std.length(std.filter(function(w) w == '', words)) == 0 : 'two spaces in a row: ' + text;
      // [lines done, the line, its column]: an array, as jsonnet evaluates an object's field again
      // at each access.
      local step(state, word) =
        if state[2] > width
        then [state[0] + [state[1]], spaces(indent) + word, indent + std.length(word)]
        else [state[0], state[1] + ' ' + word, state[2] + 1 + std.length(word)];
      local last = std.foldl(step, words[1:], [[], prefix + words[0], std.length(prefix + words[0])]);
      last[0] + [last[1]];
    local valueLines(prefix, v, indent) =
      if std.isString(v) && multiline(v) then
        local l = literal(v, indent); [prefix + l[0]] + l[1:]
      else if std.isString(v) && !plainSafe(v) then
        folded(prefix, singleQuoted(v), indent)
      else if std.isString(v) then folded(prefix, v, indent)
      else [prefix + scalar(v)];
    local mapping(obj, indent) =
      std.flattenArrays([
        local v = obj[k];
        local pad = spaces(indent);
        if std.isObject(v) && std.length(v) > 0 then [pad + k + ':'] + mapping(v, indent + 2)
        else if std.isArray(v) && std.length(v) > 0 then [pad + k + ':'] + sequence(v, indent)
        else valueLines(pad + k + ': ', v, indent + 2)
        for k in keys(obj)
      ]),
          sequence(arr, indent) =
      std.flattenArrays([
        if std.isObject(item) then
          local l = mapping(item, indent + 2);
          [spaces(indent) + '- ' + l[0][indent + 2:]] + l[1:]
        else valueLines(spaces(indent) + '- ', item, indent + 2)
        for item in arr
      ]);
    std.join('\n', mapping(value, 0)),
}

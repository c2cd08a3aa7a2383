// JSON as Python's json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) writes it:
// jsonnet's own output indents by 3, writes `{ }` and prints 0.8 as 0.80000000000000004.
// Without the last newline, which `jsonnet -S` adds.
local spaces(n) = std.repeat(' ', n);

// std.escapeStringJson takes milliseconds a string in jsonnet 0.18 (minutes for a dashboard), and
// escapes what Python leaves as it is; std.strReplace is quick. Other control characters would
// need \u escapes: the check refuses them.
local escapes = [['\\', '\\\\'], ['"', '\\"'], ['\n', '\\n'], ['\t', '\\t'], ['\r', '\\r'], ['\b', '\\b'], ['\f', '\\f']];
local string(s) =
  local quoted = '"' + std.foldl(function(t, e) std.strReplace(t, e[0], e[1]), escapes, s) + '"';
  assert std.parseJson(quoted) == s : 'a control character in ' + quoted;
  quoted;

// The shortest decimal that reads back as the same number, as Python's repr.
local number(x) =
  if x == std.floor(x) && std.abs(x) < 1e16 then std.toString(x)
  else
    local tries = [std.format('%.' + std.toString(p) + 'g', x) for p in std.range(1, 17)];
    [t for t in tries if std.parseJson(t) == x][0];

// The lines of `v` at `indent`, `head` (a key) before its first and `tail` (a comma) after its last.
local value(v, indent, head, tail) =
  local pad = spaces(indent);
  local container(open, close, items) =
    local last = std.length(items) - 1;
    if last < 0 then [pad + head + open + close + tail]
    else [pad + head + open]
         + std.flattenArrays([value(items[i][1], indent + 2, items[i][0], if i < last then ',' else '') for i in std.range(0, last)])
         + [pad + close + tail];
  if std.isObject(v) then container('{', '}', [[string(k) + ': ', v[k]] for k in std.objectFields(v)])
  else if std.isArray(v) then container('[', ']', [['', x] for x in v])
  else [pad + head + (
    if std.isString(v) then string(v)
    else if std.isNumber(v) then number(v)
    else if v == null then 'null'
    else std.toString(v)
  ) + tail];

{
  document(v):: std.join('\n', value(v, 0, '', '')),
}

// A selector of _config read as PromQL reads the inside of a series selector's braces: label
// matchers separated by commas, each NAME OP VALUE with OP one of = != =~ !~ and VALUE quoted with
// " or ' (backslash escapes) or ` (raw). The rules put the selector before their own matchers, so a
// trailing comma, a blank or a stray word would break every rule: such a selector is refused here,
// at render time, with what is wrong.
local within(c, set) = std.length(std.findSubstr(c, set)) > 0;
local nameStart(c) = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
local nameChar(c) = nameStart(c) || (c >= '0' && c <= '9');

// {matchers: [{name, op, value}]} of `s`, or {why}.
local parse(s) =
  local n = std.length(s);
  local space(i) = if i < n && within(s[i], ' \t\n') then space(i + 1) else i;
  local nameEnd(i) = if i < n && nameChar(s[i]) then nameEnd(i + 1) else i;
  local at(i) = 'at character %d' % (i + 1);
  // The quoted value that opens at i: {end, value}, or {why}.
  local quoted(i) =
    local q = s[i];
    local go(j, acc) =
      if j >= n then { why: 'a value opened with %s %s is not closed' % [q, at(i)] }
      else if s[j] == q then { end: j + 1, value: acc }
      else if s[j] == '\\' && q != '`' && j + 1 < n then go(j + 2, acc + s[j + 1])
      else go(j + 1, acc + s[j]);
    go(i + 1, '');
  local matcher(i, found) =
    if i >= n then { why: 'it ends with a comma, where a matcher should follow' }
    else if !nameStart(s[i]) then { why: 'a label name (like job) should come %s, not "%s"' % [at(i), s[i]] }
    else
      local e = nameEnd(i);
      local o = space(e);
      local op = if std.member(['=~', '!~', '!='], std.substr(s, o, 2)) then std.substr(s, o, 2)
      else if std.substr(s, o, 1) == '=' then '='
      else '';
      local v = space(o + std.length(op));
      if op == '' then { why: 'the label %s needs one of = != =~ !~ and a quoted value %s' % [s[i:e], at(o)] }
      else if v >= n || !within(s[v], '"\'`') then { why: 'the value of %s should be quoted, like %s%s"weather", %s' % [s[i:e], s[i:e], op, at(v)] }
      else
        local value = quoted(v);
        if std.objectHas(value, 'why') then value
        else
          local next = space(value.end);
          local all = found + [{ name: s[i:e], op: op, value: value.value }];
          if next == n then { matchers: all }
          else if s[next] == ',' then matcher(space(next + 1), all)
          else { why: 'a comma should come between matchers %s, not "%s"' % [at(next), s[next]] };
  matcher(space(0), []);

{
  // The matchers of _config's `field` (its value `s`), [] for '', or a render-time error that says
  // what is wrong and what a selector looks like.
  read(field, s, blank=true)::
    local refuse(why) =
      error "_config.%s is '%s', which is not a list of label matchers: %s. Write matchers as in a series selector's braces, like 'job=\"weather\"' or 'cluster=\"eu\", job=\"weather\"'%s." % [field, s, why, if blank then ", or '' for none" else ''];
    if s == '' && blank then []
    else if std.stripChars(s, ' \t\n') == '' then refuse('it is blank')
    else
      local parsed = parse(s);
      if std.objectHas(parsed, 'why') then refuse(parsed.why) else parsed.matchers,
}

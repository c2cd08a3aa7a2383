#!/usr/bin/env bash
# Installs the .deb on this machine, checks what it put where, runs the installed binary as
# the package's user with the package's config, then removes and purges it and checks that
# nothing is left. Root only. The machine is shared, so it touches nothing it did not create:
# it refuses to start if any trace of the package, its user or its paths already exists.
#
#   bash Tests/release/check_deb.sh .build/artifacts/openweather-exporter_*.deb "EXPECTED --version LINE"
set -euo pipefail
deb="${1:?usage: check_deb.sh PACKAGE.deb EXPECTED_VERSION_LINE}"
expected_version="${2:?usage: check_deb.sh PACKAGE.deb EXPECTED_VERSION_LINE}"
NAME=openweather-exporter
UNIT=/lib/systemd/system/$NAME.service
SOCKET=/lib/systemd/system/$NAME.socket
DROPIN=/usr/share/$NAME/socket-activation.conf
WANTS=/etc/systemd/system/multi-user.target.wants/$NAME.service
[ "$(id -u)" = 0 ] || { echo "check_deb: needs root (dpkg -i)"; exit 1; }

failures=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; failures=$((failures + 1)); }
expect() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# Everything the package may create; "before" and "after purge" must find none of it.
traces() {
    local path
    dpkg-query -W -f='${db:Status-Abbrev}' "$NAME" 2>/dev/null | grep -q '^[a-z]' && echo "dpkg knows $NAME ($(dpkg-query -W -f='${db:Status-Abbrev}' "$NAME"))"
    getent passwd "$NAME" >/dev/null && echo "user $NAME"
    getent group "$NAME" >/dev/null && echo "group $NAME"
    for path in /usr/bin/$NAME /etc/$NAME /var/lib/$NAME $UNIT $SOCKET /usr/share/$NAME /usr/share/doc/$NAME /usr/share/man/man1/$NAME.1.gz \
        /usr/share/lintian/overrides/$NAME; do
        [ -e "$path" ] || [ -L "$path" ] && echo "$path"
    done
    find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
        -name "*$NAME*" 2>/dev/null
    return 0
}

# One check at a time on this machine (CI runs of other branches share it); bounded.
exec 9>/var/lock/$NAME-deb-check.lock
flock -w 900 9 || { echo "check_deb: another check held the lock for 15 minutes"; exit 1; }

before=$(traces)
if [ -n "$before" ]; then
    echo "check_deb: refusing to run, these exist already and this check did not make them:"
    echo "$before" | sed 's/^/  /'
    echo "(after a crashed run: dpkg --purge $NAME)"
    exit 1
fi

installed=""
pid=""
cleanup() {
    [ -n "$pid" ] && { kill -KILL "$pid" 2>/dev/null || true; }
    rm -rf "/etc/systemd/system/$NAME.service.d" "/etc/systemd/system/sockets.target.wants/$NAME.socket"
    [ -n "$installed" ] && { dpkg --purge "$NAME" >/dev/null 2>&1 || true; }
    rm -f "${log:-}"
}
trap cleanup EXIT

echo "install:"
installed=yes
dpkg -i "$deb" >/dev/null
expect "dpkg reports it installed" test "$(dpkg-query -W -f='${db:Status-Abbrev}' "$NAME")" = "ii "
expect "openweather-exporter --version: $expected_version" test "$(openweather-exporter --version)" = "$expected_version"
expect "/usr/bin/$NAME is root's, mode 0755" test "$(stat -c '%U %a' /usr/bin/$NAME)" = "root 755"
expect "the unit runs /usr/bin/$NAME" grep -q "^ExecStart=/usr/bin/$NAME " "$UNIT"
grep -q "^User=$NAME$" "$UNIT" && grep -q "^StateDirectory=$NAME$" "$UNIT" && ! grep -q '^DynamicUser=yes' "$UNIT" &&
    ok "the unit: User=$NAME, StateDirectory=$NAME, no DynamicUser" || bad "the unit: User=$NAME, StateDirectory=$NAME, no DynamicUser"
expect "without a key the unit is skipped, not restarted in a loop" \
    grep -q "^ConditionPathExists=/etc/$NAME/api-key$" "$UNIT"
if command -v systemd-analyze >/dev/null; then
    out=$(systemd-analyze verify "$UNIT" 2>&1 | grep -v 'Failed to .* bus\|running in a chroot\|System has not been booted' || true)
    expect "systemd-analyze verify: nothing to say${out:+ (said: $out)}" test -z "$out"
fi

# Socket activation, turned on by the one command the socket unit's comment gives (the docs give the
# same), then checked and turned off again. Nothing may start on this shared machine (or systemd
# may not run at all): systemctl works on the files (--root=/), and what needs a running systemd
# (daemon-reload, restart) is left out.
command=$(sed -n 's/^#   \(install -D .*\)$/\1/p' "$SOCKET")
expect "the socket unit says how to turn it on: ${command:-nothing}" test -n "$command"
expect "the drop-in says the same" grep -qxF "#   $command" "$DROPIN"
expect "so does the installed REFERENCE.md (deploy/docs/install.md)" \
    sh -c 'zcat "$1" | grep -qxF "$2"' _ /usr/share/doc/$NAME/REFERENCE.md.gz "$command"
expect "the drop-in runs /usr/bin/$NAME with --web.systemd-socket" \
    sh -c "grep -q '^ExecStart=/usr/bin/$NAME ' '$DROPIN' && grep -q -- '--web.systemd-socket' '$DROPIN' && ! grep -q /usr/local/ '$DROPIN'"
ran=$(bash -ec 'systemctl() {
    case "$1" in
        daemon-reload | restart) echo "(systemctl $*: left out, it needs a running systemd)" ;;
        *) command systemctl --root=/ "$@" ;;
    esac
}
eval "$1"' _ "$command" 2>&1) && ok "ran it: $(echo $ran)" || bad "it failed: $ran"
expect "the drop-in is in /etc/systemd/system/$NAME.service.d" cmp -s "$DROPIN" "/etc/systemd/system/$NAME.service.d/socket-activation.conf"
expect "the socket is enabled: sockets.target.wants/$NAME.socket -> $SOCKET" \
    test "$(readlink -f "/etc/systemd/system/sockets.target.wants/$NAME.socket")" = "$(readlink -f "$SOCKET")"
if command -v systemd-analyze >/dev/null; then
    out=$(systemd-analyze verify "$SOCKET" "$UNIT" 2>&1 | grep -v 'Failed to .* bus\|running in a chroot\|System has not been booted' || true)
    expect "systemd-analyze verify of the socket and the service with the drop-in: nothing to say${out:+ (said: $out)}" test -z "$out"
fi
systemctl --root=/ disable "$NAME.socket" >/dev/null 2>&1
rm -r "/etc/systemd/system/$NAME.service.d"

expect "/etc/$NAME/config.yml is a conffile" \
    sh -c "dpkg-query -W -f='\${Conffiles}' $NAME | grep -q ' /etc/$NAME/config.yml '"
expect "user $NAME: a system user, no login shell, home /var/lib/$NAME" \
    sh -c "getent passwd $NAME | awk -F: '\$3 < 1000 && \$6 == \"/var/lib/$NAME\" && \$7 ~ /nologin\$/ {f=1} END {exit !f}'"
expect "group $NAME exists" sh -c "getent group $NAME >/dev/null"
expect "/var/lib/$NAME is $NAME's, mode 0700" test "$(stat -c '%U %G %a' /var/lib/$NAME)" = "$NAME $NAME 700"
expect "the unit keeps its state there" grep -q -- "--storage.path=%S/$NAME" "$UNIT"
# Through /usr/lib on Debian 13, where /lib is a link to it.
expect "enabled: $WANTS -> $UNIT" test "$(readlink -f "$WANTS")" = "$(readlink -f "$UNIT")"
running=$(for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "/usr/bin/$NAME" ] && echo "${p#/proc/}"; done || true)
expect "not started (no process runs /usr/bin/$NAME)" test -z "$running"
expect "no API key was created (the admin puts it there)" test ! -e /etc/$NAME/api-key

# The installed binary, as the package's user, with the package's config: it must start and
# serve its build info. The key is a dummy and the API a closed loopback port.
log=$(mktemp)
chmod 0644 "$log"
runuser -u "$NAME" -- env -i OPENWEATHER_API_KEY=0123456789abcdef0123456789abcdef \
    /usr/bin/$NAME --config.file=/etc/$NAME/config.yml --web.listen-address=127.0.0.1:0 \
    --openweather.url=http://127.0.0.1:9 2>"$log" &
pid=$!
port=""
for _ in $(seq 100); do
    port=$(grep -o 'address=127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -n "$port" ]; then
    metrics=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" || true)
    version=$(sed -n 's/^openweather-exporter \([^ ]*\) (revision \([^,]*\),.*/\1/p' <<<"$expected_version")
    revision=$(sed -n 's/^openweather-exporter \([^ ]*\) (revision \([^,]*\),.*/\2/p' <<<"$expected_version")
    expect "runs as $NAME with /etc/$NAME/config.yml; build_info says version=\"$version\",revision=\"$revision\"" \
        grep -q "^openweather_exporter_build_info{version=\"$version\",revision=\"$revision\"," <<<"$metrics"
    expect "the config's locations are polled (London)" grep -q 'openweather_up{location="London",source="weather"}' <<<"$metrics"
else
    bad "the installed binary did not start as $NAME: $(cat "$log")"
fi
kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
wait "$pid" 2>/dev/null || true
pid=""

echo "remove:"
dpkg --remove "$NAME" >/dev/null
expect "binary and unit gone" test ! -e /usr/bin/$NAME -a ! -e "$UNIT"
expect "config, user and state kept until purge" test -e /etc/$NAME/config.yml -a -d /var/lib/$NAME
getent passwd "$NAME" >/dev/null && ok "user kept until purge" || bad "user kept until purge"

echo "purge:"
dpkg --purge "$NAME" >/dev/null
installed=""
left=$(traces)
expect "nothing left${left:+: $(echo $left)}" test -z "$left"

# An upgrade from a release whose config was /etc/$NAME/config.json (JSON, camelCase keys): a stand-in
# for that release owns the old conffile; the admin changed it; the upgrade must carry the change
# over to config.yml, which the unit reads now, and the exporter must read it.
echo "upgrade from a release with config.json:"
old=$(mktemp -d)
mkdir -p "$old/pkg/DEBIAN" "$old/pkg/etc/$NAME"
printf '{"locations": [{"name": "London", "latitude": 51.51, "longitude": -0.13}],\n "alerts": {"temperatureAboveCelsius": 35}}\n' \
    > "$old/pkg/etc/$NAME/config.json"
printf 'Package: %s\nVersion: 0.0.0~json\nArchitecture: all\nMaintainer: test <test@localhost>\nDescription: the release before the YAML config\n' \
    "$NAME" > "$old/pkg/DEBIAN/control"
echo "/etc/$NAME/config.json" > "$old/pkg/DEBIAN/conffiles"
dpkg-deb --root-owner-group --build "$old/pkg" "$old/old.deb" >/dev/null
installed=yes
dpkg -i "$old/old.deb" >/dev/null
sed -i 's/"London"/"Edited by the admin"/' /etc/$NAME/config.json
dpkg -i "$deb" >/dev/null
expect "the changed config.json is now config.yml" grep -q '"Edited by the admin"' /etc/$NAME/config.yml
expect "config.json is gone" test ! -e /etc/$NAME/config.json
expect "the new example waits beside it as config.yml.dpkg-new" test -e /etc/$NAME/config.yml.dpkg-new
log=$(mktemp)
OPENWEATHER_API_KEY=0123456789abcdef0123456789abcdef /usr/bin/$NAME --config.file=/etc/$NAME/config.yml \
    --web.listen-address=127.0.0.1:0 --openweather.url=http://127.0.0.1:9 2>"$log" &
pid=$!
for _ in $(seq 100); do grep -q 'address=127.0.0.1:[0-9]' "$log" && break; sleep 0.1; done
expect "the exporter reads it, warning about the old key" \
    grep -q 'alerts.temperatureAboveCelsius. is the old name of .alerts.temperature_above_celsius' "$log"
kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pid=""
rm -rf "$old" "$log"
dpkg --purge "$NAME" >/dev/null
installed=""
left=$(traces)
expect "nothing left after the upgrade's purge${left:+: $(echo $left)}" test -z "$left"

[ "$failures" = 0 ] || { echo "check_deb: $failures check(s) failed"; exit 1; }
echo "check_deb: all checks passed"

#!/usr/bin/env bash
# The runtime stage of deploy/docker/Dockerfile, verified without Docker: a Debian minbase root
# (what debian:SUITE-slim is made from) with exactly the packages that stage installs, the binary
# and the health check where the Dockerfile puts them, run in a chroot as uid 65532 with /proc
# mounted (as a container runtime does) in private mount and PID namespaces. It must answer
# /metrics in demo mode and the health check; without /proc it must exit 2 naming /proc.
# Root only. The root is cached as a tar under $IMAGE_CACHE (default /var/cache/openweather-exporter-ci),
# keyed by suite, architecture and packages: cold about 2 minutes (debootstrap), warm seconds.
#
#   bash Tests/release/check_image.sh BINARY "EXPECTED --version LINE"
set -euo pipefail
cd "$(dirname "$0")/../.."
binary="${1:?usage: check_image.sh BINARY EXPECTED_VERSION_LINE}"
expected_version="${2:?usage: check_image.sh BINARY EXPECTED_VERSION_LINE}"
binary=$(realpath "$binary")
CACHE="${IMAGE_CACHE:-/var/cache/openweather-exporter-ci}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DOCKERFILE=deploy/docker/Dockerfile
[ "$(id -u)" = 0 ] || { echo "check_image: needs root (debootstrap, chroot)"; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }

failures=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; failures=$((failures + 1)); }

# The runtime stage is everything after the last FROM: its base and its apt-get install line.
stage=$(awk '/^FROM /{s=""} {s=s $0 "\n"} END{printf "%s", s}' "$DOCKERFILE")
suite=$(sed -n 's/^FROM debian:\([a-z]*\)-slim.*/\1/p' <<<"$stage")
packages=$(tr '\\\n' '  ' <<<"$stage" | grep -o 'apt-get -q install -y --no-install-recommends [^&]*' |
    sed 's/.*--no-install-recommends//' | xargs -n1 | sort | xargs)
[ -n "$suite" ] && [ -n "$packages" ] || { echo "check_image: cannot find the runtime stage's base and packages in $DOCKERFILE"; exit 1; }
grep -q '^COPY --from=build /out/openweather-exporter /usr/local/bin/openweather-exporter$' <<<"$stage" &&
    grep -q '^COPY deploy/docker/healthcheck.sh /usr/local/bin/healthcheck$' <<<"$stage" &&
    grep -q '^USER 65532:65532$' <<<"$stage" ||
    { echo "check_image: the runtime stage's COPY or USER lines changed; adapt this check"; exit 1; }
arch=$(dpkg --print-architecture)
key=$(printf '%s %s %s' "$suite" "$arch" "$packages" | sha256sum | cut -c1-12)
cached="$CACHE/$suite-minbase-$arch-$key.tar"
echo "image: debian $suite minbase ($arch) + $packages"

started=$(date +%s)
if [ ! -f "$cached" ]; then
    mkdir -p "$CACHE"
    build=$(mktemp -d "$CACHE/.build.XXXXXX")
    echo "image: no cached root, debootstrap into $build (a couple of minutes)"
    if ! timeout 900 debootstrap --variant=minbase --arch="$arch" --include="${packages// /,}" \
        "$suite" "$build/root" "$MIRROR" >"$build/debootstrap.log" 2>&1; then
        tail -20 "$build/debootstrap.log"
        rm -rf "$build"
        echo "check_image: debootstrap failed"
        exit 1
    fi
    rm -rf "$build/root/var/lib/apt/lists/"* "$build/root/var/cache/apt/archives/"*.deb
    tar -C "$build/root" -cf "$build/root.tar" .
    mv "$build/root.tar" "$cached"   # atomic: a concurrent run sees all of it or nothing
    rm -rf "$build"
fi
work=$(mktemp -d /tmp/openweather-exporter-image.XXXXXX)
upid=""
cleanup() {
    [ -n "$upid" ] && { kill -KILL "$upid" 2>/dev/null || true; wait "$upid" 2>/dev/null || true; }
    # The namespaces were private: nothing is mounted in $work once they are gone.
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$cached"
echo "image: root ready in $(( $(date +%s) - started )) s"
install -m 0755 "$binary" "$root/usr/local/bin/openweather-exporter"
install -m 0755 deploy/docker/healthcheck.sh "$root/usr/local/bin/healthcheck"
for package in $packages; do
    chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' "$package" 2>/dev/null | grep -q '^ii' ||
        bad "$package is installed in the root"
done

# As Docker runs the entrypoint: uid and gid 65532, no passwd entry, PATH and HOME only.
as_image=(chroot --userspec=65532:65532 "$root" /usr/bin/env -i
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/)

echo "runtime stage:"
missing=$(chroot "$root" /usr/bin/ldd /usr/local/bin/openweather-exporter | grep 'not found' || true)
[ -z "$missing" ] && ok "every library the binary needs is in the image" ||
    bad "libraries missing from the runtime stage (add their packages to $DOCKERFILE): $missing"

# Without /proc: a clear exit 2 that names /proc, not a complaint about the configuration.
set +e
out=$(timeout 20 unshare --mount --fork "${as_image[@]}" /usr/local/bin/openweather-exporter --demo 2>&1)
status=$?
set -e
[ "$status" = 2 ] && grep -q '/proc is not mounted' <<<"$out" &&
    ok "without /proc: exit 2, \"${out:0:90}...\"" || bad "without /proc: exit $status, said: $out"

log="$work/exporter.log"
unshare --mount --pid --fork --kill-child --mount-proc="$root/proc" \
    "${as_image[@]}" /usr/local/bin/openweather-exporter --demo --web.listen-address=127.0.0.1:0 2>"$log" &
upid=$!
port=""
for _ in $(seq 150); do
    port=$(grep -o 'address=127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    bad "the exporter did not start in the chroot: $(cat "$log")"
else
    # Ready once every place's every source has had its first answer: the demo's first round is paced
    # by the request budget (4 places x 3 sources at 60 a minute: about 12 s).
    for _ in $(seq 300); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/ready")" = 200 ] && break
        sleep 0.1
    done
    metrics=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" || true)
    version=$(sed -n 's/^openweather-exporter \([^ ]*\) (revision \([^,]*\),.*/\1/p' <<<"$expected_version")
    grep -q 'openweather_temperature_celsius{location="Sydney"}' <<<"$metrics" &&
        ok "as uid 65532 with /proc: /metrics answers with the demo's weather" || bad "/metrics without the demo's weather"
    grep -q "^openweather_exporter_build_info{version=\"$version\"," <<<"$metrics" &&
        ok "build_info says version=\"$version\"" || bad "build_info does not say version=\"$version\""
    grep -q '^process_resident_memory_bytes [1-9]' <<<"$metrics" &&
        ok "process metrics from /proc" || bad "no process_resident_memory_bytes"
    exporter_uid=$(awk '/^Uid:/{print $2}' "/proc/$(cat "/proc/$upid/task/$upid/children" | cut -d' ' -f1)/status" 2>/dev/null || true)
    [ "$exporter_uid" = 65532 ] && ok "the exporter runs as uid 65532" || bad "the exporter runs as uid '$exporter_uid'"
    if timeout 10 unshare --mount --fork "${as_image[@]}" HEALTHCHECK_PORT="$port" /usr/local/bin/healthcheck; then
        ok "the health check script passes (uid 65532, in the image)"
    else
        bad "the health check script failed against a running exporter"
    fi
    # And it does fail when nothing answers, or it would prove nothing.
    if timeout 10 unshare --mount --fork "${as_image[@]}" HEALTHCHECK_PORT=9 /usr/local/bin/healthcheck 2>/dev/null; then
        bad "the health check passes with nothing listening"
    else
        ok "the health check fails with nothing listening"
    fi
fi
# SIGTERM to the exporter (PID 1 of its namespace) as `docker stop` does; unshare returns its status.
child=$(cut -d' ' -f1 "/proc/$upid/task/$upid/children" 2>/dev/null || true)
[ -n "$child" ] && kill -TERM "$child" 2>/dev/null || true
status=""
for _ in $(seq 100); do
    kill -0 "$upid" 2>/dev/null || { set +e; wait "$upid"; status=$?; set -e; break; }
    sleep 0.1
done
upid_done="$upid"
[ -n "$status" ] || { kill -KILL "$upid" 2>/dev/null || true; wait "$upid" 2>/dev/null || true; }
upid=""
[ "$status" = 0 ] && ok "SIGTERM: clean exit 0" || bad "SIGTERM: exit status '${status:-none within 10 s}' (pid $upid_done)"
grep -q 'level=error' "$log" && bad "errors in the log: $(grep 'level=error' "$log")"

echo "image: checked in $(( $(date +%s) - started )) s"
[ "$failures" = 0 ] || { echo "check_image: $failures check(s) failed"; exit 1; }
echo "check_image: all checks passed"

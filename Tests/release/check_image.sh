#!/usr/bin/env bash
# deploy/docker/Dockerfile built and run by a real Docker engine, with no registry:
#   - Debian's docker.io, installed when missing; a dockerd of its own (its own socket, data and exec
#     roots in a temporary directory; no bridge, no iptables, no IP forwarding), stopped at the end
#     with every container it ran. A dockerd already on the machine is never used or touched.
#   - the runtime base (ARG RUNTIME_BASE, where the image's files are gathered before they go into
#     an image FROM scratch): a debootstrap minbase root of the Dockerfile's Debian release with that
#     stage's packages, loaded as a one-layer image; the root is cached as a tar (debian_root.sh).
#   - --arch arm64: the image for linux/arm64, its runtime base Debian 13 (the release the arm64 binary
#     is built on, build.sh --arch arm64), every step of the build and every run of the binary
#     emulated by qemu-user-static through binfmt_misc (need_binfmt).
#   - the binary: BINARY=prebuilt with the stamped release binary given (the Swift image is never
#     pulled); the build runs with --network host for the runtime stage's apt-get.
# The image must hold no shell and weigh at most 25 MB (its files are listed); it must then run the
# demo as uid 65532 with a read-only root and no capabilities, turn healthy, serve /metrics with the
# demo's weather and this build's build_info, and exit 0 on `docker stop`; with
# --web.listen-address=127.0.0.1:PORT it must turn healthy too, stay healthy through a flood of 1,500
# slow connections, and its health check must fail while the exporter is frozen. Without /proc (a
# chroot of the same root) the exporter must exit 2 naming /proc.
# Containers use --network host (loopback addresses only) or none. Root only.
# About 1 minute with the root cached, 2 to 3 more cold (debootstrap); arm64: 5 with the root cached,
# 15 more cold (debootstrap and apt under emulation).
#
#   bash Tests/release/check_image.sh [--arch arm64] BINARY "EXPECTED --version LINE"
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/TestSupport/processes.sh
source Tests/release/debian_root.sh
export DEBIAN_FRONTEND=noninteractive
host_arch=$(dpkg --print-architecture)
arch=$host_arch
if [ "${1:-}" = --arch ]; then
    arch="${2:?--arch needs an architecture}"
    shift 2
fi
binary="${1:?usage: check_image.sh BINARY EXPECTED_VERSION_LINE}"
expected_version="${2:?usage: check_image.sh BINARY EXPECTED_VERSION_LINE}"
binary=$(realpath "$binary")
DOCKERFILE=$IMAGE_DOCKERFILE
[ "$(id -u)" = 0 ] || { echo "check_image: needs root (dockerd, debootstrap, chroot)"; exit 1; }

failures=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; failures=$((failures + 1)); }
started=$(now_ms)
elapsed() { echo "$(( ($(now_ms) - started) / 1000 )) s"; }

# --- tools: Debian's docker.io (dockerd, containerd, runc, and the client that matches them) --------
missing=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing+=(docker.io)
if [ ${#missing[@]} -gt 0 ]; then
    echo "image: installing ${missing[*]} from Debian"
    # policy-rc.d's 101 keeps the package from starting the machine's own dockerd.
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
    fi
    installed=0
    { timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
        { timeout 300 apt-get update -qq && timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; } ||
        installed=$?
    [ -n "$policy" ] && rm -f "$policy"
    [ "$installed" = 0 ] || { echo "check_image: apt-get install ${missing[*]} failed"; exit 1; }
fi
# /usr/bin/docker is the client of the same release as /usr/sbin/dockerd (another client may come
# first on PATH and speak a newer API).
PATH="/usr/bin:$PATH"
export DOCKER_BUILDKIT=1

# --- the root the Dockerfile's runtime stage starts from --------------------------------------------
platform=linux/$arch
cached=$(image_root tar "$arch") || { echo "check_image: no runtime base root"; exit 1; }
root_name=$(basename "$cached" .tar)   # SUITE-minbase-ARCH-KEY
echo "image: runtime base $root_name: $(image_root_packages)"
echo "image: root ready ($(elapsed))"

# --- a dockerd of our own ---------------------------------------------------------------------------
# Short path: containerd's sockets live under the exec root and a socket path has 108 bytes at most.
work=$(mktemp -d /tmp/owe-image.XXXXXX)
export DOCKER_HOST="unix://$work/docker.sock"
dockerd_pid=""
containers=()
context_binary=.build/docker/openweather-exporter
cleanup() {
    set +e
    if [ -n "$dockerd_pid" ]; then
        for c in "${containers[@]}"; do timeout 30 docker rm -f "$c" >/dev/null 2>&1; done
        # dockerd stops its own containerd on SIGTERM.
        stop_process "$dockerd_pid" 30 >/dev/null 2>&1
    fi
    # Anything still mounted under the work directory (a dockerd that was killed) goes first.
    awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
    rm -rf --one-file-system "$work" "$context_binary"
    end_children
}
trap cleanup EXIT
forwarding=$(cat /proc/sys/net/ipv4/ip_forward)
/usr/sbin/dockerd --host "unix://$work/docker.sock" --data-root "$work/data" --exec-root "$work/exec" \
    --pidfile "$work/dockerd.pid" --bridge=none --iptables=false --ip6tables=false --ip-forward=false \
    --ip-masq=false >"$work/dockerd.log" 2>&1 &
dockerd_pid=$!
wait_for 60 docker version >/dev/null 2>&1 || { tail -20 "$work/dockerd.log"; echo "check_image: dockerd did not start within 60 s"; exit 1; }
echo "image: dockerd $(docker version --format '{{.Server.Version}}') on $work/docker.sock ($(elapsed))"

base="openweather-exporter-ci/debian-${root_name%-*}:${root_name##*-}"
# The root as a one-layer image of its architecture, loaded as `docker save` writes images: `docker
# import` (20.10) marks an image with the daemon's own architecture whatever --platform says, and
# BuildKit would then look for an arm64 base in a registry.
python3 - "$cached" "$base" "$arch" <<'PY' | timeout 300 docker load >/dev/null
import hashlib, io, json, sys, tarfile
root, ref, arch = sys.argv[1:4]
digest = hashlib.sha256()
with open(root, "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
config = json.dumps({"architecture": arch, "os": "linux", "config": {}, "history": [{"created_by": "debootstrap"}],
                     "rootfs": {"type": "layers", "diff_ids": ["sha256:" + digest.hexdigest()]}}).encode()
config_name = hashlib.sha256(config).hexdigest() + ".json"
manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": ["root/layer.tar"]}]).encode()
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as out:
    for name, data in ((config_name, config), ("manifest.json", manifest)):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        out.addfile(info, io.BytesIO(data))
    out.add(root, arcname="root/layer.tar")
PY
mkdir -p "$(dirname "$context_binary")"
install -m 0755 "$binary" "$context_binary"
version=$(sed -n 's/^openweather-exporter \([^ ]*\) (revision \([^,]*\),.*/\1/p' <<<"$expected_version")
image="openweather-exporter:check-image"
echo "runtime image:"
if timeout 1200 docker build --platform "$platform" --network host -f "$DOCKERFILE" -t "$image" \
    --build-arg BINARY=prebuilt --build-arg RUNTIME_BASE="$base" . >"$work/build.log" 2>&1; then
    ok "docker build --platform $platform -f $DOCKERFILE --build-arg BINARY=prebuilt --build-arg RUNTIME_BASE=$base ($(elapsed))"
else
    tail -30 "$work/build.log"
    echo "check_image: docker build failed"
    exit 1
fi
said=$(docker image inspect -f '{{.Os}}/{{.Architecture}}' "$image")
[ "$said" = "$platform" ] && ok "the image is for $said" || bad "the image is for $said, not $platform"
size=$(docker image inspect -f '{{.Size}}' "$image")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
max_size=25000000
[ "$size" -le "$max_size" ] && ok "image size $size bytes ($(mb "$size")), at most $(mb "$max_size")" ||
    bad "image size $size bytes ($(mb "$size")), more than $(mb "$max_size")"
# Every file in the image, with its size: what a user pulls and scans.
containers+=(owe-check-files)
docker create --platform "$platform" --name owe-check-files "$image" >/dev/null
# Left out: what Docker adds to every container (.dockerenv, dev/console, etc/hostname, hosts, mtab, resolv.conf).
docker export owe-check-files | tar --numeric-owner -tvf - >"$work/export"
awk '$1 !~ /^d/ && $6 !~ /^(\.dockerenv|dev\/console|etc\/(hostname|hosts|mtab|resolv\.conf))$/ {print "       " $3 "\t" $6 ($7 == "->" ? " -> " $8 : "")}' "$work/export" >"$work/files"
docker rm owe-check-files >/dev/null
echo "  the image's files (docker export of a container, without what Docker adds to each):"
cat "$work/files"
if grep -qE '	(bin|usr/bin|sbin|usr/sbin)/' "$work/files"; then
    bad "programs besides the exporter in the image: $(grep -E '	(bin|usr/bin|sbin|usr/sbin)/' "$work/files" | xargs)"
else
    ok "no /bin/sh, nor any other program but the exporter, in the image"
fi
# The state directory (compose.yaml's named volume starts out as the image's directory).
state_dir=$(awk '$6 ~ /^var\/lib\/openweather-exporter\/?$/ {print $1, $2}' "$work/export")
[ "$state_dir" = "drwx------ 65532/65532" ] && ok "/var/lib/openweather-exporter: $state_dir" ||
    bad "/var/lib/openweather-exporter is '$state_dir', not drwx------ 65532/65532"
docker run --rm --platform "$platform" --network none --entrypoint /bin/sh "$image" -c true >/dev/null 2>&1 && bad "/bin/sh runs in the image" ||
    ok "docker run --entrypoint /bin/sh fails"
[ "$(docker image inspect -f '{{.Config.User}}' "$image")" = 65532:65532 ] && ok "USER 65532:65532" || bad "the image's user is not 65532:65532"

# The loader and every library the binary needs are there (the build's ldd listed them): it runs.
said=$(docker run --rm --platform "$platform" --network none "$image" --version 2>&1 || true)
[ "$said" = "$expected_version" ] && ok "the binary runs in the image: $said" ||
    bad "the binary in the image says '$said', not '$expected_version' (a library missing from the runtime stage?)"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
health() { docker inspect -f '{{.State.Health.Status}}' "$1" 2>/dev/null; }
# run NAME ARGS...: the demo in the image as it ships (its user, entrypoint and health check), read-only
# root, no capabilities, host network on a loopback port; the check every second so a test takes seconds.
run() {
    local name=$1; shift
    containers+=("$name")
    docker run -d --platform "$platform" --name "$name" --network host --read-only --cap-drop ALL --security-opt no-new-privileges \
        --health-interval 1s --health-start-period 60s "$image" --demo "$@" >/dev/null
}

wait_healthy() {
    wait_for 60 bash -c '[ "$(docker inspect -f "{{.State.Health.Status}}" "$1")" = healthy ]' _ "$1"
}

port=$(free_port)
run owe-check-demo --web.listen-address="127.0.0.1:$port"
if wait_healthy owe-check-demo; then
    ok "the container turns healthy (--read-only, --cap-drop ALL; its own HEALTHCHECK) ($(elapsed))"
else
    bad "the container is '$(health owe-check-demo)', not healthy: $(docker inspect -f '{{json .State.Health}}' owe-check-demo | head -c 600)"
    docker logs owe-check-demo 2>&1 | tail -10
fi
# No program in the image to ask: the host reads the container's process and root.
cpid=$(docker inspect -f '{{.State.Pid}}' owe-check-demo)
uid=$(awk '/^Uid:/{print $2}' "/proc/$cpid/status")
[ "$uid" = 65532 ] && ok "the exporter (PID 1) runs as uid 65532" || bad "the exporter runs as uid '$uid'"
if touch "/proc/$cpid/root/usr/local/bin/x" 2>/dev/null; then bad "the root filesystem is writable"; else ok "the root filesystem is read-only"; fi
# Ready once every place's every source has had its first answer, paced by the request budget (~20 s for its 5 places).
wait_http "http://127.0.0.1:$port/-/ready" 60 || bad "/-/ready did not answer 200 within 60 s"
metrics=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" || true)
grep -q 'openweather_temperature_celsius{location="Sydney"}' <<<"$metrics" &&
    ok "/metrics answers with the demo's weather" || bad "/metrics without the demo's weather"
grep -q "^openweather_exporter_build_info{version=\"$version\"," <<<"$metrics" &&
    ok "build_info says version=\"$version\"" || bad "build_info does not say version=\"$version\""
if [ "$arch" = "$host_arch" ]; then
    grep -q '^process_resident_memory_bytes [1-9]' <<<"$metrics" &&
        ok "process metrics from /proc" || bad "no process_resident_memory_bytes"
else
    # qemu-user answers /proc/self/stat itself, with zeros for memory and CPU; the rest is the kernel's.
    grep -q '^process_max_fds [1-9]' <<<"$metrics" && grep -q '^process_open_fds [1-9]' <<<"$metrics" &&
        ok "process metrics from /proc (memory and CPU read 0 under qemu-user, which answers /proc/self/stat)" ||
        bad "no process_max_fds or process_open_fds"
fi
timeout 60 docker stop -t 10 owe-check-demo >/dev/null
status=$(docker inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' owe-check-demo)
[ "$status" = "0 false" ] && ok "docker stop: exit 0" || bad "docker stop: exit code and OOM-killed '$status'"
docker logs owe-check-demo 2>&1 | grep -q 'level=error' && bad "errors in the log: $(docker logs owe-check-demo 2>&1 | grep 'level=error')"

# The health check follows the listen address it is given, here on a port that is not 9755.
port=$(free_port)
run owe-check-address --web.listen-address="127.0.0.1:$port"
if wait_healthy owe-check-address; then
    ok "with --web.listen-address=127.0.0.1:$port the container turns healthy"
else
    bad "with --web.listen-address=127.0.0.1:$port the container is '$(health owe-check-address)': $(docker inspect -f '{{json .State.Health}}' owe-check-address | head -c 600)"
fi
# And the check fails when the exporter does not answer, or it would prove nothing: paused (frozen),
# the exporter keeps its socket but answers nothing within the check's 5 s. `docker exec` refuses a
# paused container, so the check runs in the container's namespaces through nsenter, as its user.
cpid=$(docker inspect -f '{{.State.Pid}}' owe-check-address)
in_container() { timeout 20 nsenter --target "$cpid" --mount --net --pid --setuid 65532 --setgid 65532 "$@"; }
check() { in_container /usr/local/bin/openweather-exporter healthcheck; }
said=$(check) && ok "openweather-exporter healthcheck in the container: $said" ||
    bad "the health check fails through nsenter while the exporter runs: $said"
docker pause owe-check-address >/dev/null
if said=$(check); then
    bad "the health check passes while the exporter is frozen"
else
    ok "the health check fails while the exporter cannot answer (paused): $said"
fi
docker unpause owe-check-address >/dev/null

# A flood of 1,500 slow connections (each sends a byte of a request a second; those the server
# closes are opened again) must not make a healthy container unhealthy: the shell script this check
# replaced forked once per descriptor and took 4.9 s of Docker's 5.
python3 - "$port" "$work/flood" <<'PY' &
import resource, socket, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
def open_one():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.setblocking(False)
    s.send(b"GET / HTTP/1.1\r\nHost: x\r\n")
    return s
conns = [open_one() for _ in range(1500)]
open(ready, "w").close()
end = time.monotonic() + 25
while time.monotonic() < end:
    for i, s in enumerate(conns):
        try:
            s.send(b"X-Slow: 1\r\n")
        except OSError:
            s.close()
            try:
                conns[i] = open_one()
            except OSError:
                pass
    time.sleep(1)
PY
flood_pid=$!
if wait_for 60 test -e "$work/flood"; then
    flood_started=$(date -u +%s)
    established=$(awk -v p=":$(printf '%04X' "$port")" '$4 == "01" && substr($2, length($2) - 4) == p' "/proc/$cpid/net/tcp" | wc -l)
    checked=$(now_ms)
    said=$(check) && ok "during the flood ($established connections open to the exporter): $said in $(( $(now_ms) - checked )) ms" ||
        bad "the health check fails during the flood ($established connections): $said"
    # Docker's own checks (every second) that started during the flood: at least 3.
    docker_runs() {
        docker inspect -f '{{range .State.Health.Log}}{{.Start.Unix}} {{.ExitCode}} {{.End.Sub .Start}}{{"\n"}}{{end}}' owe-check-address |
            awk -v t="$flood_started" '$1 > t'
    }
    export -f docker_runs
    export flood_started
    wait_for 20 bash -c '[ "$(docker_runs | wc -l)" -ge 3 ]' || true
    runs=$(docker_runs)
    if [ -n "$runs" ] && ! awk '$2 != 0' <<<"$runs" | grep -q . && [ "$(health owe-check-address)" = healthy ]; then
        ok "Docker's health checks during the flood: $(awk '{print "exit " $2 " in " $3}' <<<"$runs" | paste -sd, | sed 's/,/, /g'); the container stays healthy"
    else
        bad "Docker's health checks during the flood: '$(tr '\n' ';' <<<"$runs")', status $(health owe-check-address)"
    fi
else
    bad "the flood of 1,500 connections could not be opened"
fi
kill "$flood_pid" 2>/dev/null; wait "$flood_pid" 2>/dev/null || true
timeout 60 docker stop -t 10 owe-check-address >/dev/null

# Without /proc (a chroot of the same root as the base): a clear exit 2 that names /proc.
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$cached"
install -m 0755 "$binary" "$root/usr/local/bin/openweather-exporter"
set +e
out=$(timeout 20 unshare --mount --fork chroot --userspec=65532:65532 "$root" /usr/bin/env -i \
    PATH=/usr/local/bin:/usr/bin:/bin HOME=/ /usr/local/bin/openweather-exporter --demo 2>&1)
status=$?
set -e
[ "$status" = 2 ] && grep -q '/proc is not mounted' <<<"$out" &&
    ok "without /proc: exit 2, \"${out:0:90}...\"" || bad "without /proc: exit $status, said: $out"

# dockerd turns IPv4 forwarding on unless told not to: this machine must route nothing.
[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$forwarding" ] && ok "net.ipv4.ip_forward left at $forwarding" ||
    bad "dockerd changed net.ipv4.ip_forward from $forwarding"
echo "image: checked in $(elapsed)"
[ "$failures" = 0 ] || { echo "check_image: $failures check(s) failed"; exit 1; }
echo "check_image: all checks passed"

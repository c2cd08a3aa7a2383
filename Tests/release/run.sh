#!/usr/bin/env bash
# The release artifacts, built and checked (CI runs this; root only):
#   build.sh          tarball, .deb and checksums, stamped from git
#   here              checksums, the tarball's contents and binary, lintian
#   check_deb.sh      the .deb installed on this machine and in a Debian 13 root, run, removed, purged, nothing left
#   check_image.sh    deploy/docker/Dockerfile built and run by Debian's docker.io on a dockerd of its own
# About 2 minutes when the image's base root is cached (/var/cache/openweather-exporter-ci), 2 more cold.
#
#   bash Tests/release/run.sh --arch arm64 [--no-image]
# arm64's artifacts, built on this amd64 machine (build.sh --arch arm64), checked the same way where
# the check can run here (Tests/README.md#arm64): checksums, tarball, lintian; the .deb's files and
# modes are the amd64 .deb's of the same version in $OUT (when there is one) and its dependencies the
# arm64 Debian 13 packages; instead of the .deb installed, the binary serves the demo under
# qemu-user-static with a Debian 13 arm64 root for its libraries (the image's runtime root) and its
# scrape passes promtool, and again with Debian 12's arm64 libraries (bookworm, for Raspberry Pi OS 12);
# the image is check_image.sh --arch arm64. With --no-image (CI, where the
# emulated debootstrap of that root and the image would cost 8 minutes more) no image, and the
# libraries are the build root's: the same Debian 13 arm64 packages, installed beside amd64's.
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/TestSupport/processes.sh
source Tests/release/debian_root.sh
export DEBIAN_FRONTEND=noninteractive
OUT="${OUT:-$PWD/.build/artifacts}"
export OUT
NAME=openweather-exporter
started=$(date +%s)
step() { printf -- '--- %s (%s s)\n' "$*" "$(( $(date +%s) - started ))"; }
host_arch=$(dpkg --print-architecture)
arch=$host_arch
image=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch="${2:?--arch needs an architecture}"; shift ;;
        --no-image) image="" ;;
        *) echo "usage: $0 [--arch arm64] [--no-image]"; exit 2 ;;
    esac
    shift
done
cross=""
[ "$arch" = "$host_arch" ] || cross=yes
# "${run[@]}" PROGRAM ARGS...: PROGRAM here, or under qemu-user-static with a Debian 13 root of its
# architecture for its libraries. QEMU_LD_PREFIX, not -L: the exporter runs itself again at start
# (crash reports without registers), through binfmt_misc, and that qemu reads the variable too.
run=()
if [ -n "$cross" ]; then
    [ "$arch" = arm64 ] || { echo "run.sh: --arch $arch: only arm64 is built here"; exit 2; }
    step "a Debian 13 root with $arch's libraries"
    if [ -n "$image" ]; then arch_root=$(image_root dir "$arch"); else arch_root=$(build_root); fi
    echo "$arch_root"
    run=(env QEMU_LD_PREFIX="$arch_root" qemu-aarch64-static)
fi

# demo LIBRARIES: the tarball's binary serves the demo under qemu-user-static with LIBRARIES' shared
# libraries; its scrape passes promtool.
demo() {
    local run=(env QEMU_LD_PREFIX="$1" qemu-aarch64-static) log="$unpacked/demo.log" pid port lint
    "${run[@]}" "$unpacked/$dir/$NAME" --demo --web.listen-address=127.0.0.1:0 2>"$log" &
    pid=$!
    port=$(port_from_log "$log" 'address=127.0.0.1:' "$pid" 60) || { cat "$log"; echo "the demo did not start"; exit 1; }
    # Every demo source's first round, paced by the budget (20 requests, one a second), before ready.
    wait_http "http://127.0.0.1:$port/-/ready" 90 || { cat "$log"; echo "the demo did not become ready"; exit 1; }
    curl -sf --max-time 10 "http://127.0.0.1:$port/metrics" >"$unpacked/scrape.prom"
    grep -q 'openweather_temperature_celsius{location="Sydney"}' "$unpacked/scrape.prom" || { echo "no demo data"; exit 1; }
    grep -q "^openweather_exporter_build_info{version=\"$version\"," "$unpacked/scrape.prom" ||
        { echo "build_info does not say version=\"$version\""; exit 1; }
    lint=$(promtool check metrics <"$unpacked/scrape.prom" 2>&1) || { echo "$lint"; exit 1; }
    [ -z "$lint" ] || { echo "promtool check metrics printed:"; echo "$lint"; exit 1; }
    echo "promtool check metrics: clean ($(grep -vc '^#' "$unpacked/scrape.prom") series from the $arch binary)"
    stop_process "$pid" 10 || { cat "$log"; echo "the demo did not exit 0 within 10 s of SIGTERM"; exit 1; }
    ! grep 'level=error' "$log" || { echo "errors in the demo's log"; exit 1; }
}

step "build"
bash Tests/release/build.sh ${cross:+--arch "$arch"}
tarball=$(ls "$OUT"/$NAME-*.linux-"$arch".tar.gz)
deb=$(ls "$OUT"/${NAME}_*_"$arch".deb)

step "checksums"
(cd "$OUT" && sha256sum --strict -c sha256sums.txt)

step "tarball"
dir=$(basename "$tarball" .tar.gz)
listed=$(tar -tzf "$tarball" | sort | xargs)
want="$dir/ $dir/LICENSE $dir/README.md $dir/REFERENCE.md $dir/$NAME $dir/$NAME.service $dir/$NAME.socket $dir/$NAME.yml $dir/socket-activation.conf"
[ "$listed" = "$want" ] || { echo "the tarball holds: $listed"; echo "expected:          $want"; exit 1; }
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"; end_children' EXIT
tar -xzf "$tarball" -C "$unpacked"
version_line=$("${run[@]}" "$unpacked/$dir/$NAME" --version)
echo "$version_line"
# The stamp is the commit being built, never the "dev" of a plain build.
version="${dir#"$NAME"-}"
version="${version%.linux-"$arch"}"
[[ "$version_line" == "$NAME $version (revision $(git rev-parse HEAD), swift "* ]] ||
    { echo "the tarball's binary says '$version_line', not version $version at revision $(git rev-parse HEAD)"; exit 1; }
! readelf -d "$unpacked/$dir/$NAME" | grep NEEDED | grep -q 'libswift\|libdispatch' || { echo "the binary links Swift libraries dynamically"; exit 1; }
echo "tarball: $(wc -c <"$tarball") bytes, binary $(wc -c <"$unpacked/$dir/$NAME") bytes (stripped, Swift runtime inside)"

step "lintian"
command -v lintian >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends lintian >/dev/null; }
# Every tag down to pedantic fails the build unless overridden with its reason (Tests/release/lintian-overrides).
status=0
lint=$(lintian --pedantic -E --display-level '>=pedantic' --fail-on error,warning,info,pedantic "$deb" 2>&1) || status=$?
grep -v 'running with root privileges is not recommended' <<<"$lint" || true
[ "$status" = 0 ] || { echo "lintian is not clean (status $status)"; exit 1; }
echo "lintian: clean ($(grep -c '^openweather-exporter:' Tests/release/lintian-overrides) overridden tags, each explained)"

if [ -z "$cross" ]; then
    step "the .deb on this machine"
    timeout 1200 bash Tests/release/check_deb.sh "$deb" "$version_line"

    # This machine may run another release: the same checks on Debian 13 too, in a root made by
    # debootstrap (procps for the unit's /bin/kill), changed only on an overlay that ends with them.
    step "the .deb in a Debian 13 root"
    deb13=$(debian_root dir "$CROSS_SUITE" "$host_arch" "systemd procps adduser curl") || { echo "no Debian 13 root"; exit 1; }
    overlay=$(mktemp -d)
    status=0
    timeout 1200 unshare --mount --propagation private --fork bash -c '
        set -e
        root=$1 overlay=$2 merged=$2/merged
        mkdir "$overlay/upper" "$overlay/work" "$merged"
        mount -t overlay overlay -o "lowerdir=$root,upperdir=$overlay/upper,workdir=$overlay/work" "$merged"
        mount -t proc proc "$merged/proc"
        mount --rbind /dev "$merged/dev"
        mount -t tmpfs -o mode=1777 tmpfs "$merged/tmp"
        mount --bind "$PWD" "$merged/src"
        mount --bind "$(dirname "$3")" "$merged/out"
        exec chroot "$merged" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root \
            bash /src/Tests/release/check_deb.sh "/out/$(basename "$3")" "$4"' _ "$deb13" "$overlay" "$deb" "$version_line" ||
        status=$?
    rm -rf --one-file-system "$overlay"
    [ "$status" = 0 ] || exit 1
else
    step "the .deb: the amd64 one's files, arm64's dependencies"
    files() { dpkg-deb -c "$1" | awk '{print $1, $2, $6}'; }
    native="${deb%_"$arch".deb}_$host_arch.deb"
    if [ -f "$native" ]; then
        diff <(files "$native") <(files "$deb") && echo "the same files, modes and owners as $(basename "$native")" ||
            { echo "the $arch .deb's files differ from the $host_arch one's"; exit 1; }
    else
        echo "no $(basename "$native") in $OUT to compare with (bash Tests/release/build.sh makes it)"
    fi
    [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || { echo "Architecture: is not $arch"; exit 1; }
    depends=$(dpkg-deb -f "$deb" Depends)
    echo "Depends: $depends"
    for package in libc6 libssl3t64 zlib1g; do
        grep -q "\b$package (>= " <<<"$depends" || { echo "Depends: names no $package (>= VERSION)"; exit 1; }
    done

    step "the demo under qemu-user-static, its scrape through promtool"
    if ! command -v promtool >/dev/null; then
        # Debian's prometheus package would start its service: policy-rc.d's 101 keeps it from starting.
        policy=""
        [ -e /usr/sbin/policy-rc.d ] || { policy=/usr/sbin/policy-rc.d; printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; }
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; } || true
        [ -z "$policy" ] || rm -f "$policy"
        command -v promtool >/dev/null || { echo "apt-get install prometheus (for promtool) failed"; exit 1; }
    fi
    demo "$arch_root"

    # Debian 12 (bookworm), Raspberry Pi OS's release before 13: only its libraries, not a whole root,
    # since they are all the binary loads (the first stage of debootstrap: no emulation, 2 minutes).
    step "the same on Debian 12's libraries (bookworm)"
    bookworm=$(libraries_root bookworm "$arch" "libssl3 libstdc++6") || { echo "no Debian 12 $arch libraries"; exit 1; }
    demo "$bookworm"
fi

if [ -n "$image" ]; then
    step "the image, built and run by Docker"
    timeout 2400 bash Tests/release/check_image.sh ${cross:+--arch "$arch"} "$unpacked/$dir/$NAME" "$version_line"
fi

step "release artifacts: all checks passed"

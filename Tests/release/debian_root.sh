# Debian roots made by debootstrap, cached; sourced by check_image.sh (the image's runtime base),
# build.sh (the Debian 13 root the arm64 release is built in) and run.sh. Root only.
#
#   debian_root tar|dir SUITE ARCH "PACKAGES" ["SETUP"]
#       prints the path of a root: `debootstrap --variant=minbase` of SUITE for ARCH, then in it
#       `apt-get install --no-install-recommends PACKAGES` (apt, not debootstrap's --include, which
#       cannot pick a provider: trixie's libssl3 is libssl3t64) and the shell snippet SETUP; apt's
#       lists and downloaded packages removed. As a tar (the image's base) or an unpacked directory
#       (for in_root; either is made from the other without a second debootstrap). Cached under
#       $ROOT_CACHE (default /var/cache/openweather-exporter-ci: CI runs in a fresh clone, so .build/
#       would be empty every time), keyed by suite, architecture, packages and setup; one run builds
#       a root while the others wait for it, and it is moved into place whole.
#   image_root tar|dir ARCH
#       the root deploy/docker/Dockerfile's runtime stage starts from (ARG RUNTIME_BASE=debian:SUITE-slim)
#       for ARCH: that Debian release (CROSS_SUITE for another architecture than this machine's, the
#       release its binary is built on) with the stage's packages (image_root_packages) and the
#       official Debian images' apt setting. Also where an arm64 binary finds its libraries under qemu.
#   build_root
#       the Debian 13 amd64 root build.sh --arch arm64 builds in: Debian's Swift 6.0.3 and the C
#       libraries' headers, then cross_root.sh (arm64's libraries beside amd64's, arm64's Swift
#       runtime, the Swift SDK). Its arm64 libraries also serve the arm64 binary under qemu.
#   libraries_root SUITE ARCH "PACKAGES"
#       prints the path of SUITE's shared libraries for ARCH, for qemu-user's QEMU_LD_PREFIX: what the
#       first stage of `debootstrap --foreign --variant=minbase` unpacks (the required packages; it runs
#       nothing, so nothing is emulated: a minute and a half), and PACKAGES unpacked beside them. No
#       package is configured: a root to load libraries from, not to chroot into. Cached as above.
#   in_root ROOT [--bind DIR:PATH]... -- COMMAND...
#       runs COMMAND in a directory root, mounted read-only in a mount namespace of its own with
#       /proc, /dev, tmpfs on /tmp and /root, and each DIR writable at PATH (/src or /out): the mounts
#       end with it.
#   need_binfmt ARCH
#       makes ARCH's programs run here through qemu-user-static and binfmt_misc, registered with the
#       F flag (the interpreter opened once, so it works in chroots and containers too).
ROOT_CACHE="${ROOT_CACHE:-/var/cache/openweather-exporter-ci}"
# Debian 13, the first release with Swift (swiftlang, 6.0.3) for amd64 and arm64: other architectures'
# releases are built on it (build.sh --arch), and their images gathered on it (check_image.sh --arch).
CROSS_SUITE=trixie
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

debian_root() (
    form=$1 suite=$2 arch=$3 packages=$(xargs <<<"$4") setup=${5:-}
    key=$(printf '%s %s %s %s' "$suite" "$arch" "$packages" "$setup" | sha256sum | cut -c1-12)
    name="$ROOT_CACHE/$suite-minbase-$arch-$key"
    path=$name
    [ "$form" = tar ] && path=$name.tar
    [ -e "$path" ] && { echo "$path"; exit 0; }
    mkdir -p "$ROOT_CACHE"
    exec 8>"$name.lock"
    flock -w 3600 8 || { echo "debian_root: $name.lock held for an hour" >&2; exit 1; }
    [ -e "$path" ] && { echo "$path"; exit 0; }   # made by another run while this one waited
    build=$(mktemp -d "$ROOT_CACHE/.build.XXXXXX")
    trap 'rm -rf --one-file-system "$build"' EXIT
    made=""
    if [ ! -e "$name.tar" ] && [ ! -e "$name" ]; then
        status=0
        [ "$arch" = "$(dpkg --print-architecture)" ] || need_binfmt "$arch" >&2 || exit 1
        command -v debootstrap >/dev/null ||
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } || exit 1
        echo "debian_root: no cached $suite $arch root: debootstrap, then $packages (minutes; log in $build/log)" >&2
        timeout 1800 debootstrap --variant=minbase --arch="$arch" "$suite" "$build/root" "$DEBIAN_MIRROR" >"$build/log" 2>&1 ||
            status=$?
        # policy-rc.d's 101: no package starts a service in the chroot.
        if [ "$status" = 0 ]; then
            printf '#!/bin/sh\nexit 101\n' >"$build/root/usr/sbin/policy-rc.d"
            chmod 755 "$build/root/usr/sbin/policy-rc.d"
            unshare --mount --propagation private --fork bash -c '
                set -e
                mount -t proc proc "$1/proc"
                mount --rbind /dev "$1/dev"
                exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
                    LC_ALL=C.UTF-8 HOME=/root bash -ec "$2"' _ "$build/root" "apt-get update -qq
                apt-get install -y -qq --no-install-recommends $packages
                $setup" >>"$build/log" 2>&1 || status=$?
        fi
        if [ "$status" != 0 ]; then
            tail -20 "$build/log" >&2
            echo "debian_root: making the $suite $arch root failed ($status)" >&2
            exit 1
        fi
        rm -f "$build/root/usr/sbin/policy-rc.d"
        rm -rf "$build/root/var/lib/apt/lists/"* "$build/root/var/cache/apt/archives/"*.deb "$build/root/var/cache/apt/"*.bin
        made=$build/root
    fi
    # The form asked for, from the root just made or from the other form.
    if [ "$form" = tar ]; then
        tar -C "${made:-$name}" -cf "$build/root.tar" . && mv "$build/root.tar" "$name.tar" || exit 1
    else
        if [ -z "$made" ]; then
            made=$build/root
            mkdir "$made" && tar -C "$made" -xf "$name.tar" || exit 1
        fi
        mkdir -p "$made/src" "$made/out"   # in_root's mount points
        mv "$made" "$name" || exit 1
    fi
    echo "$path"
)

libraries_root() (
    suite=$1 arch=$2 packages=$(xargs <<<"$3")
    name="$ROOT_CACHE/$suite-libraries-$arch-$(printf '%s %s %s' "$suite" "$arch" "$packages" | sha256sum | cut -c1-12)"
    [ -e "$name" ] && { echo "$name"; exit 0; }
    mkdir -p "$ROOT_CACHE"
    exec 8>"$name.lock"
    flock -w 3600 8 || { echo "libraries_root: $name.lock held for an hour" >&2; exit 1; }
    [ -e "$name" ] && { echo "$name"; exit 0; }
    build=$(mktemp -d "$ROOT_CACHE/.build.XXXXXX")
    trap 'rm -rf --one-file-system "$build"' EXIT
    command -v debootstrap >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } || exit 1
    echo "libraries_root: no cached $suite $arch libraries: debootstrap --foreign, then $packages (log in $build/log)" >&2
    timeout 1800 debootstrap --foreign --variant=minbase --arch="$arch" --include="${packages// /,}" "$suite" \
        "$build/root" "$DEBIAN_MIRROR" >"$build/log" 2>&1 || {
        tail -20 "$build/log" >&2
        echo "libraries_root: debootstrap of $suite $arch failed" >&2
        exit 1
    }
    for package in $packages; do
        dpkg-deb -x "$(ls "$build/root/var/cache/apt/archives/${package}_"*"_$arch.deb")" "$build/root" ||
            { echo "libraries_root: cannot unpack $package" >&2; exit 1; }
    done
    rm -f "$build/root/var/cache/apt/archives/"*.deb
    mv "$build/root" "$name" || exit 1
    echo "$name"
)

IMAGE_DOCKERFILE=deploy/docker/Dockerfile

image_root_packages() {
    local stage
    stage=$(awk '/^FROM /{keep = ($0 ~ /^FROM \$\{RUNTIME_BASE\}/)} keep' "$IMAGE_DOCKERFILE")
    grep -q '^FROM ${RUNTIME_BASE} AS root$' <<<"$stage" && tr '\\\n' '  ' <<<"$stage" |
        grep -o 'apt-get -q install -y --no-install-recommends [^&]*' | sed 's/.*--no-install-recommends//' | xargs -n1 | sort | xargs
}

image_root() {
    local form=$1 arch=$2 suite packages docker_clean
    suite=$(sed -n 's/^ARG RUNTIME_BASE=debian:\([a-z]*\)-slim$/\1/p' "$IMAGE_DOCKERFILE")
    packages=$(image_root_packages)
    [ -n "$suite" ] && [ -n "$packages" ] || {
        echo "image_root: cannot find the runtime stage's base (ARG RUNTIME_BASE=debian:SUITE-slim) and packages in $IMAGE_DOCKERFILE" >&2
        return 1
    }
    # The arm64 binary is built on Debian 13 (its glibc), so its files are gathered on Debian 13 too.
    [ "$arch" = "$(dpkg --print-architecture)" ] || suite=$CROSS_SUITE
    # The official Debian images' apt setting that keeps apt's caches out of every image layer: without
    # it the runtime stage's `apt-get update` leaves 78 MB of /var/cache/apt/*.bin in the image here.
    docker_clean='DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";'
    debian_root "$form" "$suite" "$arch" "$packages" "cat >/etc/apt/apt.conf.d/docker-clean <<'EOF'
$docker_clean
EOF"
}

build_root() {
    debian_root dir "$CROSS_SUITE" "$(dpkg --print-architecture)" "swiftlang libstdc++-14-dev libssl-dev zlib1g-dev \
        libcrypt-dev dpkg-dev python3-minimal binutils-aarch64-linux-gnu" "$(cat Tests/release/cross_root.sh)"
}

in_root() {
    local root=$1 binds=()
    shift
    while [ "$1" != -- ]; do
        [ "$1" = --bind ] || { echo "in_root: unknown option $1" >&2; return 2; }
        binds+=("$2")
        shift 2
    done
    shift
    unshare --mount --propagation private --fork bash -c '
        set -e
        root=$1 count=$2
        shift 2
        mount --bind "$root" "$root"
        mount -o remount,bind,ro "$root"
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
        mount -t tmpfs -o mode=0700 tmpfs "$root/root"   # where SwiftPM keeps its user-level caches
        for ((i = 0; i < count; i++)); do
            mount --bind "${1%%:*}" "$root${1#*:}"
            shift
        done
        exec chroot "$root" "$@"' _ "$root" "${#binds[@]}" "${binds[@]}" "$@"
}

need_binfmt() {
    local arch=$1 cpu entry
    case "$arch" in
        arm64) cpu=aarch64 ;;
        *) echo "need_binfmt: no qemu name for $arch" >&2; return 2 ;;
    esac
    entry=/proc/sys/fs/binfmt_misc/qemu-$cpu
    # Mounted first: the package registers its formats when it is installed.
    if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
            { echo "need_binfmt: cannot mount binfmt_misc on /proc/sys/fs/binfmt_misc" >&2; return 1; }
    fi
    if [ ! -x /usr/bin/qemu-$cpu-static ] || ! command -v update-binfmts >/dev/null; then
        echo "need_binfmt: installing qemu-user-static and binfmt-support from Debian" >&2
        { apt-get install -y -qq --no-install-recommends qemu-user-static binfmt-support >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-user-static binfmt-support >/dev/null; }; } ||
            { echo "need_binfmt: apt-get install qemu-user-static binfmt-support failed" >&2; return 1; }
    fi
    [ -e "$entry" ] || update-binfmts --enable "qemu-$cpu" >&2 ||
        { echo "need_binfmt: update-binfmts --enable qemu-$cpu failed" >&2; return 1; }
    grep -qx enabled "$entry" && grep -q '^flags: .*F' "$entry" || {
        echo "need_binfmt: $entry is not enabled with the F flag:" >&2
        cat "$entry" >&2
        return 1
    }
}

#!/usr/bin/env bash
# Builds the release artifacts for this machine's architecture, or for arm64 on amd64:
#   openweather-exporter-VERSION.linux-ARCH.tar.gz   binary, LICENSE, README, REFERENCE (deploy/README.md and deploy/docs/), example config, systemd units
#   openweather-exporter_DEBVERSION_ARCH.deb         built with dpkg-deb
#   sha256sums.txt                                   of every architecture's artifacts in $OUT
# into $OUT (default .build/artifacts), replacing that architecture's. The Swift runtime is linked
# statically; the binary needs glibc, libstdc++, OpenSSL 3 and zlib of Debian 12 or newer (arm64 too,
# through Tests/release/glibc236.c; its .deb depends on Debian 13's libssl3t64).
#
#   bash Tests/release/build.sh                      # the artifacts
#   bash Tests/release/build.sh --arch arm64         # arm64's, beside them (root only; see below)
#   bash Tests/release/build.sh --binary-only DIR    # only the stamped binary, into DIR (the Dockerfile)
#
# --arch arm64 runs this script again in a Debian 13 amd64 root with Debian's Swift 6.0.3 and arm64's
# libraries beside amd64's (cross_root.sh; made by debootstrap and cached, debian_root.sh), which
# builds with `swift build --swift-sdk debian13-arm64` and packs as here. The arm64 binary runs
# there through qemu-user-static and binfmt_misc (--version, --help for the man page).
#
# VERSION is `git describe --tags --match 'v[0-9]*' --dirty` without the "v" (0.0.0-N-gHASH before
# the first tag), REVISION the commit. Without .git (a Docker build context) set both through
# OPENWEATHER_EXPORTER_VERSION and OPENWEATHER_EXPORTER_REVISION. They reach the binary as C
# defines of the CBuildInfo target: no tracked file is edited, and a plain `swift build` says "dev".
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
NAME=openweather-exporter
OUT="${OUT:-$PWD/.build/artifacts}"
host_arch=$(dpkg --print-architecture)
arch=$host_arch
binary_only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary-only) binary_only="${2:?--binary-only needs a directory}" ;;
        --arch) arch="${2:?--arch needs an architecture}" ;;
        *) echo "usage: $0 [--arch arm64 | --binary-only DIR]" >&2; exit 2 ;;
    esac
    shift 2
done
cross=""
[ "$arch" = "$host_arch" ] || cross=yes
# Its own scratch path: the stamped flags would otherwise rebuild the everyday release build
# (and another architecture's, with another Swift, its own again).
SCRATCH="${SCRATCH:-$PWD/.build/release-stamped${cross:+-$arch}}"

fail() { echo "release: $*" >&2; exit 1; }
# Only what the full build needs, installed when missing (apt-get, as CI does).
need() {
    local missing=() pair
    for pair in "$@"; do command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}"); done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# --- what is being built ---------------------------------------------------------------------
version="${OPENWEATHER_EXPORTER_VERSION:-}"
revision="${OPENWEATHER_EXPORTER_REVISION:-}"
if [ -z "$version" ] || [ -z "$revision" ]; then
    git rev-parse --git-dir >/dev/null 2>&1 ||
        fail "not a git checkout: set OPENWEATHER_EXPORTER_VERSION and OPENWEATHER_EXPORTER_REVISION"
    if [ -z "$version" ]; then
        if described=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
            version="${described#v}"
        else
            version="0.0.0-$(git rev-list --count HEAD)-g$(git rev-parse --short=12 HEAD)"
            git diff --quiet HEAD -- || version+="-dirty"
        fi
    fi
    [ -n "$revision" ] || revision=$(git rev-parse HEAD)
fi
# They end up inside C string literals, file names and the Debian version.
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ || ( "$version" = dev && -n "$binary_only" ) ]] || fail "version '$version' must start with a digit and hold only A-Z a-z 0-9 . + ~ -"
[[ "$revision" =~ ^[A-Za-z0-9._-]+$ ]] || fail "revision '$revision' may hold only A-Z a-z 0-9 . _ -"
# 1.2.0-rc1 sorts before 1.2.0 in Debian only as 1.2.0~rc1; describe's -N-gHASH becomes +N.gHASH.
maintainer="${DEB_MAINTAINER:-openweather-exporter maintainers <maintainers@users.noreply.github.com>}"
deb_version=$(sed -E 's/-(rc|beta|alpha)/~\1/; s/-/+/; s/-/./g' <<<"$version")
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
export SOURCE_DATE_EPOCH

# --- another architecture: this script again, in the Debian 13 root --------------------------------
if [ -n "$cross" ] && [ -z "${IN_CROSS_ROOT:-}" ]; then
    [ "$arch" = arm64 ] && [ "$host_arch" = amd64 ] || fail "--arch $arch: only arm64 is built here, on amd64"
    [ -z "$binary_only" ] || fail "--binary-only builds for this machine's architecture only"
    [ "$(id -u)" = 0 ] || fail "--arch $arch needs root (debootstrap, chroot, binfmt_misc)"
    source Tests/release/debian_root.sh
    need_binfmt "$arch"
    root=$(build_root) || fail "no $CROSS_SUITE build root"
    mkdir -p "$OUT"
    echo "release: building in $root"
    in_root "$root" --bind "$PWD:/src" --bind "$(realpath "$OUT"):/out" -- /usr/bin/env -i IN_CROSS_ROOT=1 \
        PATH=/usr/libexec/swift/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LC_ALL=C.UTF-8 OUT=/out \
        OPENWEATHER_EXPORTER_VERSION="$version" OPENWEATHER_EXPORTER_REVISION="$revision" \
        SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" DEB_MAINTAINER="$maintainer" \
        bash -c 'cd /src && exec bash Tests/release/build.sh --arch "$1"' _ "$arch"
    exit
fi

# --- the binary ------------------------------------------------------------------------------
echo "release: building $NAME $version (revision $revision) for $arch"
sdk=()
if [ -n "$cross" ]; then
    sdk=(--swift-sdks-path /opt/swift-sdks --swift-sdk "debian13-$arch")
    # Debian 12's glibc (2.36) lacks six functions the binary would otherwise need from 2.38.
    mkdir -p "$SCRATCH"
    clang --target=aarch64-linux-gnu -std=gnu17 -O2 -Wall -Werror -c Tests/release/glibc236.c -o "$SCRATCH/glibc236.o"
    sdk+=(-Xlinker "$SCRATCH/glibc236.o")
    rm -f "$SCRATCH"/aarch64-*/release/"$NAME"   # SwiftPM would not relink for a new glibc236.o
fi
swift build -c release --static-swift-stdlib --product "$NAME" --scratch-path "$SCRATCH" "${sdk[@]}" \
    -Xcc "-DOPENWEATHER_EXPORTER_VERSION=\"$version\"" -Xcc "-DOPENWEATHER_EXPORTER_REVISION=\"$revision\"" \
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
built="$(swift build -c release --scratch-path "$SCRATCH" "${sdk[@]}" --show-bin-path)/$NAME"
stamped=$("$built" --version)
[[ "$stamped" == "$NAME $version (revision $revision,"* ]] || fail "the binary says '$stamped', not version $version"
# No Swift shared library may be left: the tarball and the image have no Swift installed.
if readelf -d "$built" | grep 'NEEDED' | grep -q 'libswift\|libdispatch\|libFoundation'; then
    readelf -d "$built" | grep NEEDED >&2
    fail "the binary links Swift libraries dynamically"
fi
strip=strip
if [ -n "$cross" ]; then
    strip=aarch64-linux-gnu-strip
    # The newest version the binary needs of each library must be Debian 12's (bookworm) at most.
    needs=$(aarch64-linux-gnu-objdump -T "$built" | grep -o '(\(GLIBC\|GLIBCXX\|CXXABI\|OPENSSL\)_[0-9.]*)' | tr -d '()' | sort -uV)
    for newest in GLIBC_2.36 GLIBCXX_3.4.30 CXXABI_1.3.13 OPENSSL_3.0.0; do
        for needed in $(grep "^${newest%_*}_[0-9]" <<<"$needs" || true); do
            [ "$(printf '%s\n' "$needed" "$newest" | sort -V | tail -1)" = "$newest" ] ||
                fail "the $arch binary needs $needed, newer than Debian 12's $newest: see Tests/release/glibc236.c"
        done
    done
fi

# Stripped as dh_strip does, the same binary everywhere: Debian wants it, and it saves 6 of 15
# MB. Crash reports then show addresses and the Swift runtime's frames, not our names.
if [ -n "$binary_only" ]; then
    install -D -m 0755 "$built" "$binary_only/$NAME"
    "$strip" --remove-section=.comment --remove-section=.note "$binary_only/$NAME"
    echo "release: $binary_only/$NAME: $stamped"
    exit 0
fi

need dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev strip:binutils
mkdir -p "$OUT"
rm -f "$OUT/$NAME"-*.linux-"$arch".tar.gz "$OUT/${NAME}"_*_"$arch".deb
work=$(mktemp -d "$OUT/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

install -m 0755 "$built" "$work/$NAME"
"$strip" --remove-section=.comment --remove-section=.note "$work/$NAME"

# --- the tarball, as Prometheus' exporters ship them -------------------------------------------
tardir="$NAME-$version.linux-$arch"
mkdir -p "$work/$tardir"
install -m 0755 "$work/$NAME" "$work/$tardir/$NAME"
install -m 0644 LICENSE "$work/$tardir/"
# README.md is the newcomer's path; every flag, limit and failure is in the deploy reference
# (deploy/README.md and deploy/docs/), shipped beside it as one REFERENCE.md, so the links between
# them are rewritten to match.
sed -E 's#\(deploy/(README|docs/[a-z0-9-]+)\.md#(REFERENCE.md#g' README.md > "$work/$tardir/README.md"
python3 Tests/release/reference.py deploy > "$work/$tardir/REFERENCE.md"
chmod 0644 "$work/$tardir/README.md" "$work/$tardir/REFERENCE.md"
install -m 0644 deploy/config/openweather-exporter.yml "$work/$tardir/openweather-exporter.yml"
install -m 0644 deploy/systemd/openweather-exporter.service deploy/systemd/openweather-exporter.socket \
    deploy/systemd/socket-activation.conf "$work/$tardir/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$work" -cf - "$tardir" | gzip -9n > "$OUT/$tardir.tar.gz"

# --- the Debian package --------------------------------------------------------------------
root="$work/deb"
doc="$root/usr/share/doc/$NAME"
install -D -m 0755 "$work/$NAME" "$root/usr/bin/$NAME"
install -D -m 0644 deploy/config/openweather-exporter.yml "$root/etc/$NAME/config.yml"
install -d -m 0755 "$doc" "$root/usr/share/man/man1" "$root/DEBIAN"
install -m 0644 "$work/$tardir/README.md" "$work/$tardir/REFERENCE.md" "$doc/"
gzip -9n "$doc/README.md" "$doc/REFERENCE.md"

# The units of deploy/systemd are the one text of each; the package's copies differ only in the
# binary's path, their opening comment (how to install them by hand) and the service's user.
# $socket_command, the one command that turns socket activation on, is in the socket's and the
# drop-in's comments, and check_deb.sh runs it from there.
package_unit() {
    local from=$1 to=$2
    shift 2
    install -d -m 0755 "$(dirname "$to")"
    { printf '# %s\n' "$@"; sed -n '/^\[Unit\]/,$p' "$from"; } | sed "s|/usr/local/bin/$NAME|/usr/bin/$NAME|" > "$to"
    chmod 0644 "$to"
}
dropin=/usr/share/$NAME/socket-activation.conf
socket_command="install -D -m 0644 -t /etc/systemd/system/$NAME.service.d $dropin && systemctl daemon-reload && systemctl enable $NAME.socket && systemctl restart $NAME"
unit="$root/lib/systemd/system/$NAME.service"
package_unit deploy/systemd/openweather-exporter.service "$unit" \
    "Installed by the $NAME package; change it with \`systemctl edit $NAME\`." \
    "Put the API key in /etc/$NAME/api-key (mode 0600, root), the locations in" \
    "/etc/$NAME/config.yml, then: systemctl start $NAME"
# A DynamicUser would keep its state under /var/lib/private, which the package could not own or purge.
sed -i -e "s|^DynamicUser=yes$|User=$NAME\nGroup=$NAME\nRemoveIPC=yes|" "$unit"
grep -q '^StateDirectory=' "$unit" || sed -i "s|^User=$NAME$|StateDirectory=$NAME\nStateDirectoryMode=0700\n&|" "$unit"
grep -q "^ExecStart=/usr/bin/$NAME " "$unit" && grep -q "^User=$NAME$" "$unit" && grep -q "^StateDirectory=" "$unit" ||
    fail "deploy/systemd/openweather-exporter.service changed shape: adapt the .deb's rewrite of it"
package_unit deploy/systemd/openweather-exporter.socket "$root/lib/systemd/system/$NAME.socket" \
    "Installed by the $NAME package, off until socket activation is turned on, as root:" \
    "  $socket_command" \
    "The drop-in $dropin runs the service with --web.systemd-socket; see REFERENCE.md.gz."
# Not in /lib/systemd/system/$NAME.service.d: there it would always apply, and the service would
# need the socket even when it is not enabled.
package_unit deploy/systemd/socket-activation.conf "$root$dropin" \
    "Drop-in for $NAME.service, installed by the $NAME package: socket activation," \
    "off until it is copied to /etc/systemd/system/$NAME.service.d/, as root:" \
    "  $socket_command"
grep -q "^ExecStart=/usr/bin/$NAME " "$root$dropin" ||
    fail "deploy/systemd/socket-activation.conf changed shape: its ExecStart is not /usr/bin/$NAME"

# The man page is --help, so it cannot drift from the flags.
{
    echo ".TH OPENWEATHER-EXPORTER 1 \"$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)\" \"$NAME $version\" \"User Commands\""
    echo ".SH NAME"
    echo "openweather-exporter \\- Prometheus exporter for the OpenWeather API"
    echo ".SH SYNOPSIS"
    echo ".B openweather-exporter"
    echo "[\\fIFLAGS\\fR]"
    echo ".SH DESCRIPTION"
    echo "Polls the OpenWeather current weather API for the configured locations within the"
    echo "request budget of the key and serves the readings as Prometheus metrics."
    echo "The package's service reads /etc/$NAME/config.yml and the key in /etc/$NAME/api-key."
    echo ".SH OPTIONS"
    echo ".nf"
    "$work/$NAME" --help | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"
    echo ".fi"
    echo ".SH SEE ALSO"
    echo "/usr/share/doc/$NAME/README.md.gz, /usr/share/doc/$NAME/REFERENCE.md.gz"
} | gzip -9n > "$root/usr/share/man/man1/$NAME.1.gz"

cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: $NAME

Files: *
Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) The $NAME authors
License: Apache-2.0
 On Debian systems the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
cat > "$work/changelog" <<EOF
$NAME ($deb_version) unstable; urgency=medium

  * Built from revision $revision.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
gzip -9n -c "$work/changelog" > "$doc/changelog.gz"

install -D -m 0644 Tests/release/lintian-overrides "$root/usr/share/lintian/overrides/$NAME"
install -m 0755 Tests/release/debian/preinst Tests/release/debian/postinst Tests/release/debian/prerm Tests/release/debian/postrm "$root/DEBIAN/"
# The move of config.json to config.yml applies to upgrades from any version before this one.
sed -i "s/@CONFIG_MOVED_IN@/$deb_version/" "$root/DEBIAN/preinst" "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
echo "/etc/$NAME/config.yml" > "$root/DEBIAN/conffiles"

# dpkg-shlibdeps wants a source tree's debian/control; a stub one is enough.
mkdir -p "$work/shlibs/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$NAME" "$NAME" > "$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && DEB_HOST_ARCH="$arch" dpkg-shlibdeps -O "$root/usr/bin/$NAME" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || fail "dpkg-shlibdeps found no dependencies for the binary"
cat > "$root/DEBIAN/control" <<EOF
Package: $NAME
Version: $deb_version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $shlibs, adduser, init-system-helpers (>= 1.54~)
Section: net
Priority: optional
Description: Prometheus exporter for the OpenWeather API
 Polls the OpenWeather current weather API for the places you configure,
 spread evenly within your plan's request budget, and serves the latest
 readings as Prometheus gauges in base units: temperature, humidity,
 pressure, wind, clouds, rain, snow, sunrise and sunset, with the
 exporter's own health.
 .
 The service is enabled on installation but not started: it needs an API
 key in /etc/openweather-exporter/api-key first.
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
deb="$OUT/${NAME}_${deb_version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null

(cd "$OUT" && sha256sum -- *.tar.gz *.deb > sha256sums.txt)
echo "release: $stamped"
(cd "$OUT" && ls -l -- *.tar.gz *.deb sha256sums.txt | awk '{print "release: " $5 " bytes  " $9}')

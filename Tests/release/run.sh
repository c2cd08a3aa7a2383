#!/usr/bin/env bash
# The release artifacts, built and checked (CI runs this; root only):
#   build.sh          tarball, .deb and checksums, stamped from git
#   here              checksums, the tarball's contents and binary, lintian
#   check_deb.sh      the .deb installed on this machine, run, removed, purged, nothing left
#   check_image.sh    deploy/docker/Dockerfile built and run by Debian's docker.io on a dockerd of its own
# About 2 minutes when the image's base root is cached (/var/cache/openweather-exporter-ci), 2 more cold.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
OUT="${OUT:-$PWD/.build/artifacts}"
export OUT
NAME=openweather-exporter
started=$(date +%s)
step() { printf -- '--- %s (%s s)\n' "$*" "$(( $(date +%s) - started ))"; }

step "build"
bash Tests/release/build.sh
arch=$(dpkg --print-architecture)
tarball=$(ls "$OUT"/$NAME-*.linux-"$arch".tar.gz)
deb=$(ls "$OUT"/${NAME}_*_"$arch".deb)

step "checksums"
(cd "$OUT" && sha256sum --strict -c sha256sums.txt)

step "tarball"
dir=$(basename "$tarball" .tar.gz)
listed=$(tar -tzf "$tarball" | sort | xargs)
want="$dir/ $dir/LICENSE $dir/README.md $dir/REFERENCE.md $dir/$NAME $dir/$NAME.service $dir/$NAME.yml"
[ "$listed" = "$want" ] || { echo "the tarball holds: $listed"; echo "expected:          $want"; exit 1; }
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$tarball" -C "$unpacked"
version_line=$("$unpacked/$dir/$NAME" --version)
echo "$version_line"
# The stamp is the commit being built, never the "dev" of a plain build.
version="${dir#"$NAME"-}"
version="${version%.linux-"$arch"}"
[[ "$version_line" == "$NAME $version (revision $(git rev-parse HEAD), swift "* ]] ||
    { echo "the tarball's binary says '$version_line', not version $version at revision $(git rev-parse HEAD)"; exit 1; }
! ldd "$unpacked/$dir/$NAME" | grep -q 'libswift\|libdispatch' || { echo "the binary links Swift libraries dynamically"; exit 1; }
echo "tarball: $(wc -c <"$tarball") bytes, binary $(wc -c <"$unpacked/$dir/$NAME") bytes (stripped, Swift runtime inside)"

step "lintian"
command -v lintian >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends lintian >/dev/null; }
# Every tag down to pedantic fails the build unless overridden with its reason (Tests/release/lintian-overrides).
status=0
lint=$(lintian --pedantic -E --display-level '>=pedantic' --fail-on error,warning,info,pedantic "$deb" 2>&1) || status=$?
grep -v 'running with root privileges is not recommended' <<<"$lint" || true
[ "$status" = 0 ] || { echo "lintian is not clean (status $status)"; exit 1; }
echo "lintian: clean ($(grep -c '^openweather-exporter:' Tests/release/lintian-overrides) overridden tags, each explained)"

step "the .deb on this machine"
timeout 1200 bash Tests/release/check_deb.sh "$deb" "$version_line"

step "the image, built and run by Docker"
timeout 900 bash Tests/release/check_image.sh "$unpacked/$dir/$NAME" "$version_line"

step "release artifacts: all checks passed"

#!/usr/bin/env bash
# The shard proof (Tests/README.md "Sharding"): 300 locations run unsharded, as 3 shards and as
# 4 shards on loopback, each exporter in --demo mode, with a real Prometheus scraping the
# unsharded one and the 3 shards. See proof.py for the checks.
#
#   bash Tests/shards/run.sh            # from any directory; about 2 minutes
#
# EXPORTER_BIN overrides the binary (default: .build/release/openweather-exporter of this
# checkout, built when missing). SHARDS_TEST_TIMEOUT bounds the run (seconds, default 600).
# Installs prometheus, python3 and curl from Debian when missing. Stops only what it starts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${EXPORTER_BIN:-$ROOT/.build/release/openweather-exporter}"
LIMIT="${SHARDS_TEST_TIMEOUT:-600}"

missing=()
command -v prometheus >/dev/null || missing+=(prometheus)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || { timeout 300 apt-get update -qq && timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
if [[ ! -x "$BIN" ]]; then
    (cd "$ROOT" && swift build -c release)
fi
echo "shard proof: exporter $BIN, $(prometheus --version 2>&1 | head -1), limit ${LIMIT}s"
# proof.py stops its own children on exit; timeout's SIGKILL fallback bounds a hang.
exec timeout -k 15 "$LIMIT" python3 "$HERE/proof.py" --bin "$BIN" "$@"

#!/usr/bin/env bash
# Locking.Locked (pthread_mutex_t, which ThreadSanitizer sees) against Synchronization.Mutex, built
# -O as in a release build (Locking its own module, as SwiftPM builds it). Run by hand:
#   Tests/bench/locking.sh [OPERATIONS per thread and round, default 2000000]
# Prints ns per withLock for each, uncontended and with two threads, and the ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/owe-locking.XXXXXX)
trap 'rm -rf "$work"' EXIT
swiftc -O -parse-as-library -module-name Locking -emit-module -emit-module-path "$work/Locking.swiftmodule" \
    -c "$ROOT/Sources/Locking/Locked.swift" -o "$work/Locked.o"
swiftc -O -I "$work" "$ROOT/Tests/bench/locking/main.swift" "$work/Locked.o" -o "$work/locking"
"$work/locking" "$@"

#!/usr/bin/env bash
# The state file (--storage.path) under abuse, outside `swift test`: kill -9 at random moments of
# writing, KILLS times (default 300). A child process writes ever newer states as fast as it can
# (state/crash.swift, the exporter's own StateStorage and StateFile); after each kill the file must
# load, hold a whole state, and be the same or a newer generation than after the previous kill.
# Its decoder is fuzzed by Tests/fuzz/run.sh state-file. Usage: state.sh; KILLS=N. About 60 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/Tests/reliability/state"
source "$ROOT/Tests/TestSupport/processes.sh"
kills=${KILLS:-300}
work=$(mktemp -d /tmp/owe-state.XXXXXX)
writer=""
trap '[ -n "$writer" ] && kill -KILL "$writer" 2>/dev/null; rm -rf "$work"; end_children' EXIT

state_sources=("$ROOT/Sources/Exporter/State/StateFile.swift" "$ROOT/Sources/Exporter/State/SavedState.swift")
# Files.swift imports Platform (errnoText): built as a module of its own, as the exporter's build does.
mkdir -p "$work/Platform"
swiftc -O -parse-as-library -wmo -module-name Platform -emit-module -emit-module-path "$work/Platform/Platform.swiftmodule" \
    "$ROOT/Sources/Platform"/*.swift -c -o "$work/Platform/Platform.o"
swiftc -O -parse-as-library -I "$work/Platform" "$HERE/crash.swift" "${state_sources[@]}" \
    "$ROOT/Sources/Exporter/State/StateStorage.swift" "$ROOT/Sources/Exporter/Support/Files.swift" \
    "$work/Platform/Platform.o" -o "$work/crash"

echo "--- kill -9 at random moments of writing, $kills times"
rm -rf "$work/dir"
previous=0
for round in $(seq "$kills"); do
    "$work/crash" "$work/dir" write & writer=$!
    # A random kill point, not a wait: 5-100 ms, a few writes (each a few hundred KB, fsynced) and
    # a kill in the middle of one.
    sleep "0.$(printf '%03d' $((5 + RANDOM % 96)))"
    kill -KILL "$writer"; wait "$writer" 2>/dev/null || true; writer=""
    result=$("$work/crash" "$work/dir" check) || { echo "round $round: $result"; exit 1; }
    if [ "$result" = none ]; then continue; fi
    if [ "$result" -lt "$previous" ]; then echo "round $round: generation $result after $previous"; exit 1; fi
    previous=$result
done
echo "PASS: $kills kills while writing; every start found a whole state, the newest written or the one before (last generation $previous)"

#!/usr/bin/env bash
# The state file (--storage.path) under abuse, outside `swift test`:
#  1. a bounded libFuzzer run of its decoder with AddressSanitizer (state/fuzz.swift);
#  2. kill -9 at random moments of writing, KILLS times (default 300): a child process writes
#     ever newer states as fast as it can (state/crash.swift, the exporter's own StateStorage and
#     StateFile); after each kill the file must load, hold a whole state, and be the same or a
#     newer generation than after the previous kill.
# Usage: state.sh [FUZZ_SECONDS] (default $FUZZ_SECONDS or 60); KILLS=N. About FUZZ_SECONDS + 60 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/Tests/reliability/state"
source "$ROOT/Tests/TestSupport/processes.sh"
seconds=${1:-${FUZZ_SECONDS:-60}}
kills=${KILLS:-300}
work=$(mktemp -d /tmp/owe-state.XXXXXX)
writer=""
trap '[ -n "$writer" ] && kill -KILL "$writer" 2>/dev/null; rm -rf "$work"; end_children' EXIT

state_sources=("$ROOT/Sources/Exporter/State/StateFile.swift" "$ROOT/Sources/Exporter/State/SavedState.swift")
swiftc -sanitize=fuzzer,address -parse-as-library -O "$HERE/fuzz.swift" "${state_sources[@]}" \
    -o "$work/state-fuzz" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
# Files.swift imports Platform (errnoText): built as a module of its own, as the exporter's build does.
mkdir -p "$work/Platform"
swiftc -O -parse-as-library -wmo -module-name Platform -emit-module -emit-module-path "$work/Platform/Platform.swiftmodule" \
    "$ROOT/Sources/Platform"/*.swift -c -o "$work/Platform/Platform.o"
swiftc -O -parse-as-library -I "$work/Platform" "$HERE/crash.swift" "${state_sources[@]}" \
    "$ROOT/Sources/Exporter/State/StateStorage.swift" "$ROOT/Sources/Exporter/Support/Files.swift" \
    "$work/Platform/Platform.o" -o "$work/crash"

echo "--- fuzzing the decoder for ${seconds}s"
mkdir -p "$work/corpus" "$work/dir" /tmp/owe-fuzz-artifacts
"$work/crash" "$work/dir" write & writer=$!
# A seed for the fuzzer: the first file it wrote.
wait_for 30 test -s "$work/dir/openweather-exporter.state" || { echo "FAIL: the writer wrote no state file within 30 s"; exit 1; }
kill -KILL "$writer"; wait "$writer" 2>/dev/null || true; writer=""
cp "$work/dir/openweather-exporter.state" "$work/corpus/written"
# Seeds for the payload parser: a written file's payload (past the 24-byte header), and bits of it.
tail -c +25 "$work/dir/openweather-exporter.state" > "$work/corpus/payload"
head -c 3000 "$work/corpus/payload" > "$work/corpus/payload-head"
status=0
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$work/state-fuzz" \
    -max_total_time="$seconds" -max_len=65536 -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix=/tmp/owe-fuzz-artifacts/state- "$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log" || true
if [ "$status" != 0 ]; then
    grep -v '^#' "$work/fuzz.log" | tail -40
    exit 1
fi

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

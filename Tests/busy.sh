#!/usr/bin/env bash
# The suite on a busy machine: `swift test` beside two CPU-bound processes (a shared CI machine's
# neighbours), RUNS times in a row (1). Arguments go to `swift test`, so the sanitizers run as CI
# runs them, each built apart:
#   bash Tests/busy.sh                                   # the whole suite
#   RUNS=3 bash Tests/busy.sh --filter EndToEndTests     # one target, three times
#   swift build --build-tests --sanitize=thread --scratch-path .build/thread
#   bash Tests/busy.sh --skip-build --disable-xctest --sanitize=thread --scratch-path .build/thread
# Prints each run's result, time and failed tests (and the sanitizers' reports, which fail a run as
# in CI); exits 1 when any run failed. Logs are kept in BUSY_LOGS (a new directory under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.."
source Tests/TestSupport/processes.sh

runs=${RUNS:-1}
logs=${BUSY_LOGS:-$(mktemp -d /tmp/owe-busy.XXXXXX)}
mkdir -p "$logs"
# Two busy loops at the tests' own priority: every test shares the cores with them.
for _ in 1 2; do
    ( while :; do :; done ) &
done
echo "two CPU hogs running (pids $(jobs -pr | tr '\n' ' ')); logs in $logs"

failed=0
for run in $(seq "$runs"); do
    reports="$logs/run-$run-sanitizer"
    mkdir -p "$reports"
    start=$(now_ms)
    status=0
    # A sanitizer's reports from every process of the run (ChildProcess passes the options on).
    env TSAN_OPTIONS="log_path=$reports/report" ASAN_OPTIONS="log_path=$reports/report" \
        timeout "${BUSY_TIMEOUT:-3600}" swift test "$@" > "$logs/run-$run.log" 2>&1 || status=$?
    seconds=$(( ($(now_ms) - start) / 1000 ))
    count=$(ls "$reports" | wc -l)
    if [ "$status" = 0 ] && [ "$count" = 0 ]; then
        echo "run $run: passed in ${seconds} s ($(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$logs/run-$run.log" | tail -1))"
    else
        failed=1
        echo "run $run: FAILED (status $status, $count sanitizer report(s)) in ${seconds} s; log: $logs/run-$run.log"
        grep -E '✘ Test .*(failed|recorded an issue)|error: |Fatal error|SUMMARY:' "$logs/run-$run.log" | head -40 | sed 's/^/  /'
        [ "$count" = 0 ] || cat "$reports"/report* | sed 's/^/  /'
    fi
done
exit "$failed"

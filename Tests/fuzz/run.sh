#!/usr/bin/env bash
# libFuzzer over every door the exporter reads from outside (Tests/fuzz/Sources/<target>/Fuzz.swift).
#   run.sh --list                          the targets, one a line
#   run.sh [TARGET...] [--seconds N]       build, then run each for N seconds (default 60); all without TARGET
#   run.sh [TARGET...] --cpu-minutes N     run each until it has had N minutes of CPU (a campaign on a busy machine)
#   run.sh [TARGET...] --merge             minimise what runs found into the committed corpus
# A crash, a sanitizer report, an input slower than 5 s or over 2 GB, or a broken invariant fails the
# run (exit 1); the input is kept under .build/fuzz/findings/TARGET/ and named. What each run found
# stays in .build/fuzz/corpus/TARGET (the next run starts from it); the committed seeds are corpus/TARGET.
# Environment: FUZZ_JOBS (targets at once, default 1), FUZZ_NICE (default 0), FUZZ_TIMEOUT (seconds an
# input may take, default 5; wall time, so a run at nice 19 on a busy machine needs more).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD="$ROOT/.build/fuzz"
mapfile -t all < <(ls "$HERE/Sources" | grep -v FuzzSupport)

seconds=60
cpu_minutes=""
merge=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    --list) printf '%s\n' "${all[@]}"; exit 0 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift ;;
    --cpu-minutes) cpu_minutes=${2:?--cpu-minutes needs a number}; shift ;;
    --merge) merge=1 ;;
    -*) echo "unknown option $1: use --list, --seconds N, --cpu-minutes N or --merge" >&2; exit 2 ;;
    *)
        [ -d "$HERE/Sources/$1" ] || { echo "unknown target $1: run.sh --list names them" >&2; exit 2; }
        targets+=("$1")
        ;;
    esac
    shift
done
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "--seconds takes whole seconds, not $seconds" >&2; exit 2; }
[[ "$cpu_minutes" =~ ^[0-9]*$ ]] || { echo "--cpu-minutes takes whole minutes, not $cpu_minutes" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

# Release with testing enabled: @testable import reaches internals, and optimised code runs many times
# as many inputs a second as a debug build.
echo "building ${#targets[@]} target(s) with libFuzzer and AddressSanitizer"
mkdir -p "$BUILD/logs"
# --sanitize alone instruments only the root package's targets, and the doors are the dependency's
# (they would run without coverage counters): -Xswiftc reaches every module, --sanitize links libFuzzer's main.
build=(swift build --package-path "$HERE" --scratch-path "$BUILD" -c release -Xswiftc -enable-testing
    -Xswiftc -sanitize=fuzzer,address --sanitize=fuzzer --sanitize=address)
# Every product at once, even when some are named: the products share their modules, and building one
# product after another made SwiftPM compile those modules again for each.
if ! "${build[@]}" > "$BUILD/logs/build.log" 2>&1; then
    grep -v "Cannot export local symbol '__asan" "$BUILD/logs/build.log" | tail -30
    echo "the fuzz build failed (log $BUILD/logs/build.log)" >&2
    exit 1
fi
bin=$("${build[@]}" --show-bin-path)

# Runs a target until /proc says it has had cpu_minutes of CPU, then interrupts it: libFuzzer prints its
# final stats and exits 72 (its -interrupted_exitcode), which here means the time was used up.
campaign() {
    local target=$1 log=$2
    shift 2
    local tick pid used=0 interrupted=0
    tick=$(getconf CLK_TCK)
    nice -n "${FUZZ_NICE:-0}" "$bin/$target" "$@" > "$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2> /dev/null; do
        # Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks (the name field has no space).
        used=$(awk -v tick="$tick" '{print int(($14 + $15) / tick)}' "/proc/$pid/stat" 2> /dev/null || echo "$used")
        if [ "$used" -ge $((cpu_minutes * 60)) ]; then
            kill -INT "$pid" 2> /dev/null && interrupted=1
            break
        fi
        sleep 5
    done
    local status=0
    wait "$pid" || status=$?
    echo "$used" > "$log.cpu"
    if [ "$interrupted" = 1 ] && [ "$status" = 72 ]; then status=0; fi
    return "$status"
}

run() {
    local target=$1
    local corpus="$BUILD/corpus/$target" findings="$BUILD/findings/$target" log="$BUILD/logs/$target.log"
    mkdir -p "$corpus" "$findings" "$(dirname "$log")" "$HERE/corpus/$target"
    local options=(-timeout="${FUZZ_TIMEOUT:-5}" -rss_limit_mb=2048 -max_len="$(cat "$HERE/max_len/$target" 2>/dev/null || echo 4096)"
        -print_final_stats=1 -artifact_prefix="$findings/")
    [ -f "$HERE/dict/$target.dict" ] && options+=(-dict="$HERE/dict/$target.dict")
    # The Swift backtracer would take the crash signal before libFuzzer could save the input.
    export SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0
    if [ "$merge" = 1 ]; then
        local merged="$BUILD/merged/$target"
        rm -rf "$merged" && mkdir -p "$merged" "$HERE/corpus/$target"
        "$bin/$target" -merge=1 "${options[@]}" "$merged" "$HERE/corpus/$target" "$corpus" > "$log" 2>&1
        rm -rf "$HERE/corpus/$target" && mv "$merged" "$HERE/corpus/$target"
        echo "$target: $(ls "$HERE/corpus/$target" | wc -l) inputs, $(du -sk "$HERE/corpus/$target" | cut -f1) KB"
        return 0
    fi
    local status=0 cpu=""
    if [ -n "$cpu_minutes" ]; then
        campaign "$target" "$log" "${options[@]}" "$corpus" "$HERE/corpus/$target" || status=$?
        cpu=$(awk '{printf ", %.2f CPU-min", $1 / 60}' "$log.cpu")
    else
        # CPU time, not wall time, is what a shared machine gives a run: /usr/bin/time measures it.
        local timer=()
        [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "cpu_seconds %U %S" -o "$log.cpu")
        ${timer[@]+"${timer[@]}"} nice -n "${FUZZ_NICE:-0}" "$bin/$target" -max_total_time="$seconds" "${options[@]}" \
            "$corpus" "$HERE/corpus/$target" > "$log" 2>&1 || status=$?
        [ -f "$log.cpu" ] && cpu=$(awk '/^cpu_seconds/ {printf ", %.2f CPU-min", ($2 + $3) / 60}' "$log.cpu")
    fi
    local last
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    echo "$target: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs, $(echo "$last" | sed -E 's/^#[0-9]+[[:space:]]+[A-Z]+[[:space:]]+//')$cpu (log $log)"
    if [ "$status" != 0 ]; then
        grep -v '^#' "$log" | grep -v '^INFO' | tail -30
        local file
        for file in "$findings"/*; do [ -f "$file" ] && echo "FINDING in $target, input kept: $file"; done
        return 1
    fi
}

failed=()
jobs=${FUZZ_JOBS:-1}
if [ "$jobs" -le 1 ] || [ "$merge" = 1 ]; then
    for target in "${targets[@]}"; do run "$target" || failed+=("$target"); done
else
    declare -A pids=()
    for target in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        run "$target" > "$BUILD/logs/$target.summary" 2>&1 &
        pids[$target]=$!
    done
    for target in "${targets[@]}"; do
        wait "${pids[$target]}" || failed+=("$target")
        cat "$BUILD/logs/$target.summary"
    done
fi
[ ${#failed[@]} = 0 ] || { echo "findings in: ${failed[*]}"; exit 1; }

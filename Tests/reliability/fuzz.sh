#!/usr/bin/env bash
# A bounded libFuzzer run of the HTTP request parser, with AddressSanitizer (the parser works
# on raw pointers). Usage: fuzz.sh [SECONDS] (default $FUZZ_SECONDS or 60). A crash, a
# sanitizer report, an input that takes over 5 s or a broken invariant (fuzz/main.swift) fails
# the run; the input is printed and kept under .build/fuzz-artifacts/ of the checkout (nothing is
# left in /tmp).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-${FUZZ_SECONDS:-60}}
work=$(mktemp -d /tmp/owe-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

swiftc -sanitize=fuzzer,address -parse-as-library -O \
    "$ROOT/Tests/reliability/fuzz/main.swift" \
    "$ROOT/Sources/HTTPServer/RequestParser.swift" "$ROOT/Sources/HTTPServer/HTTPMessage.swift" \
    -o "$work/parser-fuzz" 2> >(grep -v "Cannot export local symbol '__asan" >&2)

mkdir -p "$work/corpus" "$work/artifacts"
printf 'GET /metrics HTTP/1.1\r\nHost: localhost:9755\r\nUser-Agent: Prometheus/2.51\r\nAccept: text/plain\r\n\r\n' > "$work/corpus/scrape"
printf 'POST /-/reload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello' > "$work/corpus/post"
printf 'GET http://h/metrics?x=1 HTTP/1.0\nConnection: keep-alive\n\n' > "$work/corpus/absolute"
printf 'OPTIONS * HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx' > "$work/corpus/options"
printf 'GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n' > "$work/corpus/smuggle"
printf 'GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n' > "$work/corpus/pipelined"

# The Swift backtracer would take the crash signal before libFuzzer could save the input.
status=0
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$work/parser-fuzz" \
    -max_total_time="$seconds" -max_len=8192 -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log" || true
if [ "$status" != 0 ]; then
    grep -v '^#' "$work/fuzz.log" | tail -40
    mkdir -p "$ROOT/.build/fuzz-artifacts"
    for file in "$work"/artifacts/*; do
        [ -f "$file" ] || continue
        cp "$file" "$ROOT/.build/fuzz-artifacts/"
        echo "input: .build/fuzz-artifacts/$(basename "$file")"; xxd "$file" | head -20
    done
    exit 1
fi

#!/usr/bin/env bash
# A bounded libFuzzer run with AddressSanitizer. Usage: fuzz.sh [TARGET] [SECONDS]; TARGET is
# request-parser (default; the HTTP request parser, which works on raw pointers), yaml (the config
# reader), tls (the server's TLS transport fed a client's bytes) or upstream-headers (Retry-After,
# the 429 pause it makes, the duration formatter); SECONDS defaults to $FUZZ_SECONDS or 60. A crash, a sanitizer report, an input that takes
# over 5 s or a broken invariant (fuzz/TARGET.swift) fails the run; the input is kept under
# .build/fuzz-artifacts/ of the checkout and printed (nothing is left in /tmp).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
target=request-parser
if [ $# -gt 0 ] && ! [[ "$1" =~ ^[0-9]+$ ]]; then target=$1; shift; fi
seconds=${1:-${FUZZ_SECONDS:-60}}
work=$(mktemp -d /tmp/owe-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
artifacts="$ROOT/.build/fuzz-artifacts"
mkdir -p "$work/corpus" "$artifacts"
extra=()
includes=()

# The CLinux shim as a module (built with clang and the same sanitizers), for sources that import it.
add_clinux() {
    mkdir -p "$work/clinux"
    printf 'module CLinux {\n    header "%s"\n    export *\n}\n' "$ROOT/Sources/CLinux/include/CLinux.h" > "$work/clinux/module.modulemap"
    clang -c -O1 -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CLinux/include" "$ROOT/Sources/CLinux/shim.c" -o "$work/clinux/shim.o"
    extra+=(-I "$work/clinux" "$work/clinux/shim.o")
    includes+=(-I "$work/clinux")
}

# Targets of the package the sources import, each built as a module of its own with the same sanitizers.
add_modules() {
    local module
    for module in "$@"; do
        mkdir -p "$work/$module"
        swiftc -sanitize=fuzzer,address -parse-as-library -O -wmo -module-name "$module" -package-name fuzz -emit-module \
            ${includes[@]+"${includes[@]}"} -emit-module-path "$work/$module/$module.swiftmodule" "$ROOT/Sources/$module"/*.swift \
            -c -o "$work/$module/$module.o" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
        extra+=(-I "$work/$module" "$work/$module/$module.o")
        includes+=(-I "$work/$module")
    done
}

case "$target" in
request-parser)
    # A response may carry a KeptBody (a sealed memfd, made through the CLinux shim).
    sources=("$ROOT/Sources/HTTPServer/RequestParser.swift" "$ROOT/Sources/HTTPServer/HTTPMessage.swift"
             "$ROOT/Sources/HTTPServer/KeptBody.swift")
    add_clinux
    max_len=8192
    printf 'GET /metrics HTTP/1.1\r\nHost: localhost:9755\r\nUser-Agent: Prometheus/2.51\r\nAccept: text/plain\r\n\r\n' > "$work/corpus/scrape"
    printf 'POST /-/reload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello' > "$work/corpus/post"
    printf 'GET http://h/metrics?x=1 HTTP/1.0\nConnection: keep-alive\n\n' > "$work/corpus/absolute"
    printf 'OPTIONS * HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx' > "$work/corpus/options"
    printf 'GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n' > "$work/corpus/smuggle"
    printf 'GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n' > "$work/corpus/pipelined"
    ;;
yaml)
    sources=("$ROOT"/Sources/YAML/*.swift)
    max_len=4096
    # Every YAML file of the repository is a seed, plus the shapes the parser has branches for.
    n=0
    while IFS= read -r file; do n=$((n + 1)); cp "$file" "$work/corpus/seed-$n"; done \
        < <(find "$ROOT/deploy" "$ROOT/Tests/deploy" -name '*.yml' -o -name '*.yaml' 2>/dev/null)
    printf 'a: |+2\n   x\n\n b: >-\n  y\n  z\n' > "$work/corpus/block"
    printf -- '- [a, {b: c, "d":e}, [f: g]]\n- '"'"'q''q'"'"'\n- "\\u263A\\x41\\\n  x"\n' > "$work/corpus/flow"
    printf -- '%%YAML 1.2\n---\na:\n- 1\n- 2\nb: {c: d}\n...\n--- x\n' > "$work/corpus/documents"
    printf 'k: v # c\n  more\n"q" : 1\n' > "$work/corpus/plain"
    ;;
tls)
    # The server side of TLS: the transport over a socket pair, OpenSSL and the CTLS shim (built with
    # clang and the same sanitizers), a throwaway certificate.
    sources=("$ROOT/Sources/HTTPServer/Transport/ConnectionTransport.swift" "$ROOT/Sources/HTTPServer/Transport/TLSTransport.swift"
             "$ROOT/Sources/HTTPServer/TLSServerConfiguration.swift" "$ROOT/Sources/HTTPServer/HTTPServerError.swift"
             "$ROOT/Sources/HTTPServer/MonotonicTime.swift")
    max_len=16384
    mkdir -p "$work/ctls"
    printf 'module CTLS {\n    header "%s"\n    link "ssl"\n    link "crypto"\n    export *\n}\n' "$ROOT/Sources/CTLS/include/CTLS.h" > "$work/ctls/module.modulemap"
    clang -c -O1 -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CTLS/include" "$ROOT/Sources/CTLS/shim.c" -o "$work/ctls/shim.o"
    extra=(-I "$work/ctls" "$work/ctls/shim.o" -lssl -lcrypto)
    includes=(-I "$work/ctls")
    # The transports import CLinux; TLSServerConfiguration imports Locking, Platform and TLS (the
    # SSL_CTX owner, over CTLS).
    add_clinux
    add_modules Locking Platform TLS
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
        -days 2 -subj /CN=fuzz 2>/dev/null
    export FUZZ_TLS_CERT="$work/cert.pem" FUZZ_TLS_KEY="$work/key.pem"
    # Seeds: real ClientHellos (TLS 1.2 and 1.3 offers) as one flight each, and a few record shapes.
    python3 - "$work/corpus" <<'PY'
import ssl, sys
out = sys.argv[1]
def hello(maximum):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.maximum_version = maximum
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = context.wrap_bio(incoming, outgoing)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()
for name, maximum in (("hello13", ssl.TLSVersion.TLSv1_3), ("hello12", ssl.TLSVersion.TLSv1_2)):
    data = hello(maximum)
    with open(f"{out}/{name}", "wb") as f:
        f.write(bytes([255]) + data)
with open(f"{out}/records", "wb") as f:
    f.write(bytes([0, 0x16, 3, 1, 0, 4, 1, 0, 0, 0, 2, 0x17, 3, 3, 0, 5, 1, 2, 3, 4, 5, 0, 0x15]))
PY
    ;;
upstream-headers)
    sources=("$ROOT/Sources/OpenWeather/RetryAfter.swift" "$ROOT/Sources/Exporter/Polling/PollSchedule.swift"
             "$ROOT/Sources/Exporter/Polling/PollSchedule+Jobs.swift" "$ROOT/Sources/Exporter/Polling/PollSchedule+Backoff.swift"
             "$ROOT/Sources/Exporter/Polling/RequestBudget.swift" "$ROOT/Sources/Exporter/Polling/DueQueue.swift"
             "$ROOT/Sources/Exporter/Polling/DailyBudget.swift" "$ROOT/Sources/Exporter/Polling/Tally.swift" "$ROOT/Sources/Exporter/Polling/SlotOrder.swift" "$ROOT/Sources/Exporter/State/SavedState.swift" "$ROOT/Sources/Exporter/Polling/JobID.swift"
             "$ROOT/Sources/Exporter/Config/PrometheusDuration.swift")
    # The duration conversions live in Platform.
    add_modules Platform
    max_len=128
    # A first byte with the low bit clear: no clock in the input, the rest is the header.
    for value in 120 0 1e18 1e300 1000000000000 -1 1.5 "Sun, 06 Nov 1994 08:49:37 GMT" "Sunday, 06-Nov-94 08:49:37 GMT" \
        "Sun Nov  6 08:49:37 1994" "Fri, 31 Dec 9999 23:59:59 GMT"; do
        n=$((${n:-0} + 1)); printf '\x00%s' "$value" > "$work/corpus/header-$n"
    done
    # With a clock: odd first byte, 8 bytes of a little-endian Double (1.8e9), then a date.
    printf '\x01\x00\x00\x00\x80\x74\xd2\xda\x41Fri, 31 Dec 9999 23:59:59 GMT' > "$work/corpus/clock"
    ;;
*)
    echo "unknown fuzz target $target: use request-parser, yaml, tls or upstream-headers" >&2
    exit 2
    ;;
esac

swiftc -sanitize=fuzzer,address -parse-as-library -O -package-name fuzz \
    "$ROOT/Tests/reliability/fuzz/$target.swift" "${sources[@]}" ${extra[@]+"${extra[@]}"} \
    -o "$work/fuzz" 2> >(grep -v "Cannot export local symbol '__asan" >&2)

# The Swift backtracer would take the crash signal before libFuzzer could save the input.
status=0
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$work/fuzz" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?
grep -E '^#[0-9]+' "$work/fuzz.log" | tail -1 || true  # coverage (cov:) and corpus size at the end
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log" || true
if [ "$status" != 0 ]; then
    grep -v '^#' "$work/fuzz.log" | tail -40
    for file in "$artifacts"/*; do [ -f "$file" ] && { echo "input: $file"; xxd "$file" | head -20; }; done
    exit 1
fi

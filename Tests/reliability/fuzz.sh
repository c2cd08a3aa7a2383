#!/usr/bin/env bash
# A bounded libFuzzer run of the server's TLS transport (fed a client's bytes) with AddressSanitizer,
# built with swiftc from the sources it needs. Usage: fuzz.sh [tls] [SECONDS]; SECONDS defaults to
# $FUZZ_SECONDS or 60. A crash, a sanitizer report, an input that takes over 5 s or a broken
# invariant (fuzz/tls.swift) fails the run; the input is kept under .build/fuzz-artifacts/ of the
# checkout and printed (nothing is left in /tmp). Every parser is fuzzed by Tests/fuzz/run.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
target=tls
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
*)
    echo "unknown fuzz target $target: only tls here; the parsers are in Tests/fuzz (run.sh --list)" >&2
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

#!/usr/bin/env python3
"""Seeds for the fuzz targets, from the repository's fixtures, deploy files and a demo run's state.

Usage: seed.py OUT [STATE_DIR]. Writes OUT/TARGET/NAME; `run.sh --merge` then minimises them, with
what runs found, into the committed corpus (Tests/fuzz/corpus). STATE_DIR: a --storage.path the
exporter wrote (its state and day files become seeds).
"""
import glob
import gzip
import hashlib
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
out = sys.argv[1]
state_dir = sys.argv[2] if len(sys.argv) > 2 else None


def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


fixtures = sorted(glob.glob(os.path.join(ROOT, "Tests/Fixtures/openweather/*.json")))
shared = os.path.join(ROOT, "..", "shared", "openweather", "fixtures")
for extra in ("/work/shared/openweather/fixtures", shared):
    fixtures += sorted(glob.glob(os.path.join(extra, "*.json")))
bodies = {read(path) for path in fixtures}
for body in bodies:
    seed("json", body)
    seed("openweather", body)
    # The first byte of these targets picks the piece sizes.
    seed("gzip", b"\x07" + gzip.compress(body))
seed("gzip", b"\x00" + gzip.compress(b"a") + gzip.compress(b"b"))
small = min(bodies, key=len)

requests = [
    "GET /metrics HTTP/1.1\r\nHost: localhost:9755\r\nUser-Agent: Prometheus/2.51\r\nAccept: text/plain\r\n\r\n",
    "POST /-/reload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
    "GET http://h/metrics?x=1 HTTP/1.0\nConnection: keep-alive\n\n",
    "OPTIONS * HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx",
    "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
    "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nHEAD /c HTTP/1.1\r\nConnection: close\r\n\r\n",
    "GET /probe?target=London&module=current HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"
    "Accept-Encoding: gzip\r\nExpect: 100-continue\r\n\r\n",
]
for index, request in enumerate(requests):
    seed("http-request", bytes([index * 37 % 256]) + request.encode())

head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
chunked = b"".join(b"%x;n=v\r\n%s\r\n" % (len(small[i:i + 100]), small[i:i + 100]) for i in range(0, len(small), 100))
responses = [
    head + b"Content-Length: %d\r\n\r\n" % len(small) + small,
    head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\nX-Trailer: 1\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\n" + head + b"Content-Length: 2\r\n\r\n{}",
    head + b"Content-Length: 2\r\n\r\n{}" + b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\n" + small,
    b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
]
for index, response in enumerate(responses):
    seed("http-response", bytes([index * 53 % 256]) + response)

for text in ["a%20b+c%2", "%E2%98%BA", "dXNlcjpwYXNz", "YQ==", "-_8=", "&#57;&#x39;&#X3a&amp;&lt;&quot;&#0;&#xD800;",
             "0123456789abcdefABCDEF"]:
    seed("encoding", text)

for value in ["120", "0", "1e18", "1e300", "1000000000000", "-1", "1.5", "Sun, 06 Nov 1994 08:49:37 GMT",
              "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Fri, 31 Dec 9999 23:59:59 GMT"]:
    seed("retry-after", b"\x00" + value.encode())
# With a clock: odd first byte, 8 bytes of a little-endian Double (1.8e9), then a date.
seed("retry-after", b"\x01\x00\x00\x00\x80\x74\xd2\xda\x41Fri, 31 Dec 9999 23:59:59 GMT")

yamls = [path for path in glob.glob(os.path.join(ROOT, "deploy/**/*.y*ml"), recursive=True)]
yamls += glob.glob(os.path.join(ROOT, "Tests/deploy/**/*.y*ml"), recursive=True)
for path in yamls:
    seed("yaml", read(path))
seed("yaml", "a: |+2\n   x\n\n b: >-\n  y\n  z\n")
seed("yaml", "- [a, {b: c, \"d\":e}, [f: g]]\n- 'q''q'\n- \"\\u263A\\x41\\\n  x\"\n")
seed("yaml", "%YAML 1.2\n---\na:\n- 1\n- 2\nb: {c: d}\n...\n--- x\n")
for path in glob.glob(os.path.join(ROOT, "deploy/config/openweather-exporter*.yml")):
    seed("config", read(path))
seed("config", "locations:\n  - name: Zocca\n    latitude: 44.35\n    longitude: 10.99\n"
     "openweather:\n  poll_interval: 10m\n  url: http://127.0.0.1:1\nweb:\n  listen_address: ':9755'\n")
seed("config", '{"locations": [{"name": "London", "query": "London,GB"}], "logLevel": "debug"}')
for path in glob.glob(os.path.join(ROOT, "deploy/config/web-config*.yml")):
    seed("web-config", read(path))
seed("web-config", "basic_auth_users:\n  alice: $2y$10$abcdefghijklmnopqrstuv\nhttp_server_config:\n  headers:\n"
     "    X-Frame-Options: deny\ntls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS12\n")

for pid, fds in [("42", "1"), ("42", "64"), ("42", "65"), ("1", "3"), ("42", "+1"), ("0x2a", "1 "), ("42", "9999999999999999999999")]:
    seed("listen-fds", f"{pid}\0{fds}")

if state_dir:
    for name, target in [("openweather-exporter.state", "state-file"), ("openweather-exporter.day", "day-file")]:
        path = os.path.join(state_dir, name)
        if os.path.exists(path):
            data = read(path)
            seed(target, data)
            seed(target, data[24:])  # the payload alone (the target also seals it)
for target in ["state-file", "day-file"]:
    seed(target, b"OWXSTATE")

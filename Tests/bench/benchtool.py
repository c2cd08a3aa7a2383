#!/usr/bin/env python3
"""Small helpers for run.sh (python3 standard library only).

Subcommands:
  free-port                         print a free loopback TCP port
  config N FILE                     write a config file with N locations
  wait URL SECONDS                  wait until URL answers 200; exit 1 on timeout
  startup BINARY RUNS ARGS...       median milliseconds from exec to the first 200 on /-/healthy
  push GATEWAY_URL FILE             push an exposition (minus process_*) to the pushgateway under one job
  rss PID                           resident memory of PID in bytes
  cpu PID                           user and system CPU seconds of PID so far
  metric URL NAME                   the value of an unlabelled series on URL
  wrk FILE                          parse wrk --latency output: rps p50_ms p99_ms requests
  nginx-conf DIR PORT [TLS_PORT CERT KEY]
                                    write DIR/nginx.conf: DIR/root served on PORT as nginx serves a
                                    file at its best (sendfile, tcp_nopush, open_file_cache), and over
                                    TLS on TLS_PORT when given
"""
import gzip
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_status(port, path):
    """Status of one GET, or None if the connection fails."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
            return int(head.split()[1]) if head.startswith(b"HTTP/") else None
    except OSError:
        return None


def config(count, path):
    """Spread over the globe; names sort in a different order than they are listed."""
    locations = [
        {"name": f"Location {(i * 7919) % count:05d}", "latitude": round(-89 + (i * 0.0179) % 178, 4),
         "longitude": round(-179 + (i * 0.0359) % 358, 4)}
        for i in range(count)
    ]
    with open(path, "w") as f:
        json.dump({"locations": locations}, f)


def wait(url, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return 0
        except Exception:
            pass
        time.sleep(0.05)
    return 1


def startup(binary, runs, args):
    times = []
    for _ in range(runs):
        port = free_port()
        begin = time.perf_counter()
        child = subprocess.Popen([binary, f"--web.listen-address=127.0.0.1:{port}", *args],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while get_status(port, "/-/healthy") != 200:
                if child.poll() is not None or time.perf_counter() - begin > 10:
                    raise SystemExit("the exporter did not become healthy")
            times.append((time.perf_counter() - begin) * 1000)
        finally:
            child.terminate()
            child.wait()
    times.sort()
    print(f"{times[len(times) // 2]:.1f} {times[0]:.1f}")


def push(gateway, path):
    kept, skip = [], False
    for line in open(path, encoding="utf-8"):
        name = line.split()[2] if line.startswith("# ") else re.split(r"[{ ]", line, 1)[0]
        if not name.startswith("process_"):
            kept.append(line)
    body = "".join(kept).encode()
    request = urllib.request.Request(f"{gateway}/metrics/job/openweather", data=body, method="PUT",
                                     headers={"Content-Type": "text/plain; version=0.0.4"})
    with urllib.request.urlopen(request, timeout=120) as r:
        assert r.status in (200, 202), r.status


def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            print(int(line.split()[1]) * 1024)


def cpu(pid):
    # Fields after the command name, which may hold spaces; utime and stime are the 12th and 13th.
    fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    print((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))


def cpu_tree(pid):
    """CPU seconds of a process and its children (nginx: the master and its workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = open(f"/proc/{entry}/stat").read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    print(total / os.sysconf("SC_CLK_TCK"))


def rounds(path):
    """Lines of "server rps requests cpu_seconds" from interleaved rounds: per server the median
    requests/s and CPU microseconds per request, and the median of the per-round ratios exporter/nginx."""
    import statistics
    rows = [line.split() for line in open(path) if line.strip()]
    by = {}
    for server, rps, requests, cpu in rows:
        by.setdefault(server, []).append((float(rps), int(requests), float(cpu)))
    out = []
    for server in ("nginx", "exporter"):
        runs = by[server]
        rps = statistics.median(r[0] for r in runs)
        cpu_us = sum(r[2] for r in runs) / max(1, sum(r[1] for r in runs)) * 1e6
        out.append(f"{rps:.0f} {cpu_us:.1f}")
    ratios = [e[0] / n[0] for n, e in zip(by["nginx"], by["exporter"])]
    out.append(f"{statistics.median(ratios):.2f} {min(ratios):.2f} {max(ratios):.2f}")
    print(" ".join(out))


def metric(url, name):
    # Like Prometheus: accept gzip, so a large exporter answers with the bytes it keeps.
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                print(line.split()[1])
                return
    raise SystemExit(f"{name} not found")


def to_ms(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def wrk(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p50 = to_ms(re.search(r"\s50%\s+(\S+)", text).group(1))
    p99 = to_ms(re.search(r"\s99%\s+(\S+)", text).group(1))
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: .*", text)
    print(f"{rps:.0f} {p50:.3f} {p99:.3f} {requests} {'errors' if errors else 'ok'}")


def nginx_conf(directory, port, tls_port=None, cert=None, key=None):
    tls = ""
    if tls_port:
        tls = f"""
    server {{
        listen 127.0.0.1:{tls_port} ssl; root {directory}/root; open_file_cache max=16;
        ssl_certificate {cert}; ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:SSL:1m;
    }}"""
    with open(os.path.join(directory, "nginx.conf"), "w") as f:
        f.write(f"""worker_processes auto;
pid {directory}/nginx.pid;
error_log {directory}/error.log;
daemon off;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    default_type "text/plain; version=0.0.4; charset=utf-8";
    keepalive_requests 1000000000;
    client_body_temp_path {directory}; proxy_temp_path {directory}; fastcgi_temp_path {directory};
    uwsgi_temp_path {directory}; scgi_temp_path {directory};
    server {{ listen 127.0.0.1:{port}; root {directory}/root; sendfile on; tcp_nopush on; open_file_cache max=16; }}{tls}
}}
""")


if __name__ == "__main__":
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "free-port":
        print(free_port())
    elif command == "config":
        config(int(rest[0]), rest[1])
    elif command == "wait":
        sys.exit(wait(rest[0], float(rest[1])))
    elif command == "startup":
        startup(rest[0], int(rest[1]), rest[2:])
    elif command == "push":
        push(rest[0], rest[1])
    elif command == "rss":
        rss(int(rest[0]))
    elif command == "cpu":
        cpu(int(rest[0]))
    elif command == "cpu-tree":
        cpu_tree(int(rest[0]))
    elif command == "rounds":
        rounds(rest[0])
    elif command == "metric":
        metric(rest[0], rest[1])
    elif command == "wrk":
        wrk(rest[0])
    elif command == "nginx-conf":
        nginx_conf(*rest)
    else:
        raise SystemExit(__doc__)

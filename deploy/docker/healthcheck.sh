#!/bin/bash
# Container health check: exit 0 when GET /-/healthy answers 200.
# Uses bash's /dev/tcp so the image needs neither curl nor wget.
# HEALTHCHECK_PORT overrides the port when --web.listen-address is changed.
set -u
port="${HEALTHCHECK_PORT:-9755}"
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'GET /-/healthy HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3 || exit 1
IFS= read -r -t 5 status <&3 || exit 1
[[ "${status}" == HTTP/1.[01]" 200"* ]]

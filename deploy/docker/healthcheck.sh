#!/bin/bash
# Container health check: exit 0 when GET /-/healthy answers 200 on the address the exporter
# listens on. The address is asked of the process, not configured twice: the exporter's listening
# sockets (its /proc/PID/fd) are looked up in /proc/net/tcp and tcp6, so --web.listen-address, its
# variable and the config file's web.listen_address all work, and so does --network host (the
# sockets of other processes are never tried). Uses bash's /dev/tcp: no curl or wget in the image.
# HEALTHCHECK_PID names the process (a test on a machine with several exporters); default: every
# process named openweather-exporter this user can see. Plain HTTP only: with TLS or basic auth in
# --web.config.file, turn this check off (`docker run --no-healthcheck`) and probe from outside.
set -u

pids=()
if [[ -n "${HEALTHCHECK_PID:-}" ]]; then
    pids=("$HEALTHCHECK_PID")
else
    # By executable, not comm: the exporter re-executes itself through /proc/self/exe, so its comm is "exe".
    for exe in /proc/[0-9]*/exe; do
        [[ "$(readlink "$exe" 2>/dev/null)" == */openweather-exporter ]] || continue
        pid="${exe#/proc/}"
        pids+=("${pid%/exe}")
    done
fi
[[ ${#pids[@]} -gt 0 ]] || { echo "healthcheck: no openweather-exporter process" >&2; exit 1; }

declare -A inodes=()
for pid in "${pids[@]}"; do
    for fd in /proc/"$pid"/fd/*; do
        link=$(readlink "$fd" 2>/dev/null) || continue
        [[ "$link" =~ ^socket:\[([0-9]+)\]$ ]] && inodes[${BASH_REMATCH[1]}]=1
    done
done

# The address to connect to for a listening socket's hex local address: the wildcard as loopback.
ipv4() { printf '%d.%d.%d.%d' "0x${1:6:2}" "0x${1:4:2}" "0x${1:2:2}" "0x${1:0:2}"; }
ipv6() {
    local hex="$1" words=() i w
    [[ "$hex" == 00000000000000000000000000000000 ]] && { echo 127.0.0.1; return; }
    [[ "$hex" == 0000000000000000FFFF0000* ]] && { ipv4 "${hex:24:8}"; return; }
    for i in 0 8 16 24; do
        w="${hex:i:8}"   # each 32-bit word in the kernel's (little-endian) byte order
        words+=("${w:6:2}${w:4:2}" "${w:2:2}${w:0:2}")
    done
    local IFS=:
    echo "${words[*]}"
}

targets=()
for table in /proc/net/tcp /proc/net/tcp6; do
    [[ -r "$table" ]] || continue
    while read -r _ local _ state _ _ _ _ _ inode _; do
        # 0A: LISTEN.
        [[ "$state" == 0A && -n "${inodes[$inode]:-}" ]] || continue
        address="${local%:*}"
        port=$((16#${local##*:}))
        if [[ "$table" == */tcp ]]; then
            host=$(ipv4 "$address")
            [[ "$host" == 0.0.0.0 ]] && host=127.0.0.1
        else
            host=$(ipv6 "$address")
        fi
        targets+=("$host/$port")
    done < <(tail -n +2 "$table")
done
[[ ${#targets[@]} -gt 0 ]] || { echo "healthcheck: process ${pids[*]} listens on no TCP port" >&2; exit 1; }

for target in "${targets[@]}"; do
    (
        exec 3<>"/dev/tcp/$target" || exit 1
        printf 'GET /-/healthy HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3 || exit 1
        IFS= read -r -t 5 status <&3 || exit 1
        [[ "$status" == HTTP/1.[01]" 200"* ]]
    ) 2>/dev/null && exit 0
done
echo "healthcheck: GET /-/healthy did not answer 200 on ${targets[*]}" >&2
exit 1

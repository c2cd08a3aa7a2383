#!/usr/bin/env bash
# Applies each breakage of mutations.txt to a scratch worktree of HEAD, one at a time, runs the
# tests named for it and reports those the suite misses (the tests still pass). Run by hand: about
# half a minute per mutation on two cores, after a first full build of about five minutes; never in
# CI. The checkout you run it from is not touched: the scratch worktree is removed at the end,
# whatever happens (killed mid-build, compiler processes it started may finish a little later).
#
#   bash Tests/mutations/run.sh              # every mutation
#   bash Tests/mutations/run.sh NAME...      # only these
#   bash Tests/mutations/run.sh --stale      # only whether each substitution still matches (seconds; CI)
#
# Exit status: 0 when every mutation was caught, 1 otherwise (missed, stale or not building).
set -uo pipefail
# Whether every substitution still changes its file, without building: a reformatted or renamed line
# leaves a mutation that tests nothing, which only the full run would otherwise notice.
if [ "${1:-}" = --stale ]; then
    cd "$(dirname "$0")/../.." || exit 1
    copy=$(mktemp)
    stale=0; count=0
    while IFS='|' read -r name file substitution _; do
        name=$(echo "$name" | xargs); file=$(echo "$file" | xargs)
        substitution=$(echo "$substitution" | sed 's/^ *//; s/ *$//')
        case "$name" in ''|\#*) continue ;; esac
        count=$((count + 1))
        if [ ! -f "$file" ]; then echo "STALE   $name: $file is gone"; stale=$((stale + 1)); continue; fi
        cp "$file" "$copy"
        perl -0pi -e "$substitution" "$copy"
        if cmp -s "$file" "$copy"; then echo "STALE   $name: the substitution no longer matches $file"; stale=$((stale + 1)); fi
    done < Tests/mutations/mutations.txt
    rm -f "$copy"
    echo "$count mutations, $stale stale"
    [ "$stale" = 0 ]; exit
fi
# Bash reads a script as it runs: run from a copy, so editing this file meanwhile is safe.
if [ -z "${MUTATIONS_ROOT:-}" ]; then
    export MUTATIONS_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
    copy=$(mktemp /tmp/owe-mutations-run.XXXXXX.sh)
    cp "$0" "$copy"
    bash "$copy" "$@"
    status=$?
    rm -f "$copy"
    exit $status
fi
ROOT=$MUTATIONS_ROOT
LIST="$ROOT/Tests/mutations/mutations.txt"
SCRATCH=$(mktemp -d /tmp/owe-mutations.XXXXXX)
cleanup() {
    git -C "$ROOT" worktree remove --force "$SCRATCH/tree" >/dev/null 2>&1 || true
    git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
    rm -rf "$SCRATCH"
    # SwiftPM's lock files for that build directory, named after its path.
    rm -f "/tmp/$(echo "$SCRATCH/tree/.build" | tr '/' '_')"*.lock
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git -C "$ROOT" worktree add --detach "$SCRATCH/tree" HEAD >/dev/null 2>&1 || { echo "cannot create a scratch worktree"; exit 1; }
cd "$SCRATCH/tree"
echo "mutations of $(git rev-parse --short HEAD) in $SCRATCH/tree"
echo "first build (unmutated) ..."
if ! timeout 1800 swift build --build-tests >"$SCRATCH/build.log" 2>&1; then
    tail -20 "$SCRATCH/build.log"; echo "the unmutated tree does not build"; exit 1
fi

caught=0; missed=(); broken=()
while IFS='|' read -r name file substitution filter promise; do
    name=$(echo "$name" | xargs); file=$(echo "$file" | xargs)
    substitution=$(echo "$substitution" | sed 's/^ *//; s/ *$//'); filter=$(echo "$filter" | xargs)
    filter=${filter//,/|}
    promise=$(echo "$promise" | sed 's/^ *//; s/ *$//')
    case "$name" in ''|\#*) continue ;; esac
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    before=$(sha1sum "$file" | cut -d' ' -f1)
    perl -0pi -e "$substitution" "$file"
    if [ "$(sha1sum "$file" | cut -d' ' -f1)" = "$before" ]; then
        echo "STALE   $name: the substitution no longer matches $file"
        broken+=("$name (stale)"); continue
    fi
    start=$(date +%s)
    if ! timeout 1800 swift build --build-tests >"$SCRATCH/$name.build.log" 2>&1; then
        echo "NOBUILD $name: the mutated tree does not build (see the substitution)"
        broken+=("$name (does not build)")
    elif timeout 900 swift test --skip-build --filter "$filter" >"$SCRATCH/$name.test.log" 2>&1; then
        echo "MISSED  $name: '$filter' still passes; promise: $promise ($(( $(date +%s) - start )) s)"
        missed+=("$name")
    else
        failing=$(grep -oE '✘ Test [A-Za-z_][A-Za-z0-9_]*\([^)]*\)' "$SCRATCH/$name.test.log" | sort -u | head -3 | sed 's/✘ Test //' | paste -sd, -)
        echo "caught  $name by ${failing:-a failing test} ($(( $(date +%s) - start )) s)"
        caught=$((caught + 1))
    fi
    git checkout -q -- "$file"
done < "$LIST"

echo
echo "caught ${caught}; missed ${#missed[@]}: ${missed[*]:-none}; stale or not building ${#broken[@]}: ${broken[*]:-none}"
[ ${#missed[@]} -eq 0 ] && [ ${#broken[@]} -eq 0 ]

#!/usr/bin/env bash
# Spelling of the prose users and contributors read: every Markdown file, deploy/ (configs and their
# comments), the sources (comments, messages, help) and .ci, with codespell (PyPI, pinned, installed
# here into $CODESPELL_DIR, default .build/deploy-tools), which knows common misspellings and
# not words it has never seen (names of places and flags pass). Tests/ is left out but for its
# Markdown: its tests misspell on purpose (`lattitude`, `colector`) to check the suggestions.
# Then a word written twice without a space (`makesmakes`), which no dictionary of misspellings has.
#
#   bash Tests/deploy/spelling.sh
#
# Exits 1 with each finding (file:line: word ==> suggestion) when any.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VERSION=2.4.3
TOOLS="${CODESPELL_DIR:-$ROOT/.build/deploy-tools/codespell-$VERSION}"
cd "$ROOT"

if ! PYTHONPATH="$TOOLS" python3 -c 'import codespell_lib' 2>/dev/null; then
    rm -rf "$TOOLS"
    log=$(mktemp)
    timeout 300 python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLS" "codespell==$VERSION" >"$log" 2>&1 \
        || { cat "$log"; rm -f "$log"; echo "FAIL pip install codespell==$VERSION"; exit 1; }
    rm -f "$log"
fi

# Words that are right here: Swift's `inout`, the city of Linz (a rules test), `inForce` (a field).
mapfile -t files < <(git ls-files '*.md' 'deploy/*' 'Sources/*' '.ci/*' | grep -vE '\.(png|jpg|ico)$')
status=0
PYTHONPATH="$TOOLS" python3 -m codespell_lib --ignore-words-list inout,linz,inforce "${files[@]}" || status=$?
glued=$(git ls-files '*.md' | xargs grep -nE '\b([a-z]{3,})\1\b' || true)
if [ -n "$glued" ]; then
    echo "a word written twice without a space:"; echo "$glued"
    status=1
fi
if [ "$status" = 0 ]; then
    echo "ok   codespell $VERSION on ${#files[@]} files (Markdown, deploy/, Sources/, .ci/): no misspelling; no word written twice"
fi
exit "$status"

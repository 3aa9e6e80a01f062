#!/usr/bin/env bash
# Boots one guest and runs tests/guest/rnull_bio.sh (bio-mode splitting,
# counters, memory-backed data integrity).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/rnull_bio
rm -rf "$out"; mkdir -p "$out"
scripts/vm.sh --cpus 2 --mem 3072 --out "$out" --timeout 1200 -- tests/guest/rnull_bio.sh > "$out/vm.log" 2>&1
rc=$?
cat "$out/rnull_bio.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 30 "$out/vm.log" | sed 's/^/#   /'; }
exit $rc

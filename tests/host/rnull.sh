#!/usr/bin/env bash
# Boots one guest and runs tests/guest/rnull.sh (rnull_split on blk-mq).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/rnull
rm -rf "$out"; mkdir -p "$out"
scripts/vm.sh --cpus 2 --out "$out" --timeout 900 -- tests/guest/rnull.sh > "$out/vm.log" 2>&1
rc=$?
cat "$out/rnull.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 30 "$out/vm.log" | sed 's/^/#   /'; }
exit $rc

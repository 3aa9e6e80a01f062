#!/usr/bin/env bash
# Boots one guest and runs tests/guest/rnull_configfs.sh (rnull_split configfs devices).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/rnull_configfs
rm -rf "$out"; mkdir -p "$out"
scripts/vm.sh --cpus 2 --out "$out" --timeout 900 -- tests/guest/rnull_configfs.sh > "$out/vm.log" 2>&1
rc=$?
cat "$out/rnull_configfs.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 30 "$out/vm.log" | sed 's/^/#   /'; }
exit $rc

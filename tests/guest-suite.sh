#!/usr/bin/env bash
# Boot one guest and run tests/guest/SUITE.sh in it; print its KTAP lines
# (from $OUT_DIR/SUITE/SUITE.tap) and, if the guest failed, the console tail.
# Used by the tests/host/*.sh that need no host-side preparation.
#   tests/guest-suite.sh SUITE [scripts/vm.sh options...]
set -uo pipefail
cd "$(dirname "$0")/.."
suite=$1; shift
out=${OUT_DIR:-out}/$suite
rm -rf "$out"; mkdir -p "$out"
scripts/vm.sh --cpus 2 --out "$out" "$@" -- "tests/guest/$suite.sh" > "$out/vm.log" 2>&1
rc=$?
cat "$out/$suite.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 30 "$out/vm.log" | sed 's/^/#   /'; }
exit $rc

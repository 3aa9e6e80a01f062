#!/usr/bin/env bash
# rnull_split lifecycle abuse and bad parameters (tests/guest/rnull_abuse.sh)
# in three guests, each under its own timeout and starting from a healthy
# kernel: bad parameters; load/unload cycles, configfs cycles under fio and
# rmmod under an open file; rmmod under running fio. kmemleak checks need
# the debug kernel (make check-debug); elsewhere they are SKIPs.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/rnull_abuse
rm -rf "$out"; mkdir -p "$out"
rc=0
# guest OUTDIR PARTS...
guest() {
    local dir=$1; shift
    mkdir -p "$dir"
    scripts/vm.sh --cpus 2 --out "$dir" --timeout 1200 -- \
        env ABUSE_CYCLES="${ABUSE_CYCLES:-100}" ABUSE_CFS_CYCLES="${ABUSE_CFS_CYCLES:-30}" \
        tests/guest/rnull_abuse.sh "$@" \
        > "$dir/vm.log" 2>&1
    local r=$?
    [[ $r == 0 ]] || { rc=1; echo "# guest ($*) exit status $r; console tail:"; tail -n 30 "$dir/vm.log" | sed 's/^/#   /'; }
}
guest "$out" kmemleak-control params
guest "$out/cycles" cycles configfs open-fd
guest "$out/fio" open-fio
# One KTAP stream, renumbered.
cat "$out/rnull_abuse.tap" "$out/cycles/rnull_abuse.tap" "$out/fio/rnull_abuse.tap" 2>/dev/null | awk '
    /^1\.\./ { next }
    /^(not )?ok [0-9]+ / { n++; sub(/ok [0-9]+ /, "ok " n " ") }
    { print }
    END { print "1.." n }'
exit $rc

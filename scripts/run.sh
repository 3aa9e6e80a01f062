#!/usr/bin/env bash
# `make run`: boot one guest, benchmark the Rust drivers against the C ones
# side by side (interleaved samples, medians, ratios) and write results/:
# <section>.json (every sample + summary), <section>.md (table), <section>.png.
#   SAMPLES=5 RUNTIME=5 scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
SAMPLES=${SAMPLES:-5} RUNTIME=${RUNTIME:-5}
mkdir -p results out/bench
log "null drivers: $SAMPLES interleaved samples of ${RUNTIME}s per driver and workload"
scripts/vm.sh --cpus 2 --out out/bench --timeout 1800 -- bench/null.sh "$SAMPLES" "$RUNTIME" \
    > out/bench/vm.log 2>&1 || { tail -n 40 out/bench/vm.log; die "null benchmark guest failed"; }
echo
scripts/report.py out/bench/null.jsonl results/null --baseline null_blk \
    --baseline seqread-1m-msk16-bio=bio-deep \
    --title "rnull_split vs C null_blk vs upstream rnull (TCG, 2 vCPUs, same boot)"
if [[ -x scripts/bench-virtio.sh ]]; then
    echo
    scripts/bench-virtio.sh
fi
echo
log "results in results/ (json, md, png)"

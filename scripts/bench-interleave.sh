#!/usr/bin/env bash
# C null_blk and rnull_split at irqmode=2 with completion_nsec swept around
# the matrix's 10000 (bench/plan.py interleave): randread 4 KiB psync QD1,
# one job and two, memory-backed and not, in icount guests.
#
#   scripts/bench-interleave.sh          (make bench-interleave)
#
# Why: the matrix's two-job QD1 irqmode=2 cells swing from one guest to the
# next and sit either side of C. In icount the two vCPUs take turns and
# guest time counts both vCPUs' instructions, so whether a job's timer
# fires before the job has gone to sleep depends on where the other vCPU's
# turns fall; fio's context switches per I/O (ctx/IO in the report) show
# how often each driver's jobs slept. A sweep of completion_nsec moves the
# timers against the turns: one-job cells should hold their ratio over it,
# and a two-job cell whose ratio swings with it measures the interleaving,
# not the driver's path.
#
# Results: results/interleave.{json,md,png}; the guests' logs in
# out/bench-interleave/. BENCH_GUESTS (the host's CPUs) guests side by side,
# each the loads of some completion_nsec values (both drivers of a value in
# one guest). RUNTIME_MS (500) is fio's measured guest time per cell;
# INTERLEAVE_NSEC (comma-separated) other completion_nsec points, with
# INTERLEAVE_RES a directory for their results instead of results/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. bench/lib.sh
RUNTIME_MS=${RUNTIME_MS:-500} BENCH_GUESTS=${BENCH_GUESTS:-$NPROC}
res=${INTERLEAVE_RES:-results}
export BENCH_COMMAND=${BENCH_COMMAND:-"RUNTIME_MS=$RUNTIME_MS${INTERLEAVE_NSEC:+ INTERLEAVE_NSEC=$INTERLEAVE_NSEC} scripts/bench-interleave.sh"}
o=out/bench-interleave
rm -rf "$o"; mkdir -p "$o" "$res"
python3 bench/plan.py interleave - "$RUNTIME_MS" > "$o/plan.json"
mapfile -t shards < <(python3 bench/plan.py shard "$o/plan.json" "$BENCH_GUESTS")
log "interleave, icount: $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(len(g["cells"]) for g in p["groups"]))' "$o/plan.json") fio runs of ${RUNTIME_MS} ms guest time, in ${#shards[@]} guest(s) side by side"
bench_meta icount "$RUNTIME_MS" > "$o/meta.json"
bench_shards "$o" 3600 rows.jsonl "" "${shards[@]}" || die "interleave benchmark failed"
cat "$o"/g*/rows.jsonl > "$o/rows.jsonl"
echo
scripts/report.py interleave "$o/rows.jsonl" "$res" --meta "$o/meta.json"
log "results in $res/interleave.{json,md,png} after $(bench_elapsed)"

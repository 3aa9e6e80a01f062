#!/usr/bin/env bash
# `make run` (subset) and `make bench-full` (full): the Rust drivers against
# the C ones, in deterministic guest time.
#
#   scripts/run.sh [subset|full|confirm|interleave]
#
# confirm: the same-settings cells of the last full run (results/full/null.json)
# below 0.99x C null_blk, with C's, run again in fresh guests with the
# modules as they are now (bench/plan.py confirm); results/full/null-confirm.*
# show both runs, a cell is below only if it is in both. The second run is
# CONFIRM_ROUNDS (3) rounds of fresh guests; its ratio is the median of the
# rounds' (each C against Rust in one guest). Null drivers only.
# CONFIRM_IDS=irq2-mem0 CONFIRM_LABELS=rnull_split narrows it down to those
# groups (with C's), CONFIRM_CELLS (cell keys, comma-separated) to those cells,
# reported in out/bench/confirm-narrowed/.
#
# interleave (`make bench-interleave`): C null_blk and rnull_split at
# irqmode=2 with completion_nsec swept around the matrix's 10000
# (bench/plan.py interleave; INTERLEAVE_NSEC, comma-separated, for other
# points, and INTERLEAVE_RES for a results directory other than results/):
# randread 4 KiB psync QD1, one job and two, memory-backed and not. In icount
# the two vCPUs take turns and guest time counts both vCPUs' instructions, so
# whether a job's timer fires before the job has gone to sleep depends on
# where the other vCPU's turns fall; fio's context switches per I/O (ctx/IO)
# show how often each driver's jobs slept. One-job cells hold their ratio
# over the sweep; a two-job cell whose ratio swings with it measures the
# interleaving, not the driver's path. results/interleave.{json,md,png}.
#
# 1. One guest in QEMU icount mode (VM_ACCEL=icount: single-threaded TCG,
#    1 ns of guest time per instruction, idle time skipped): rnull_split
#    (queue_mode=2 and 0), C null_blk and 7.3's rnull, same settings and
#    load-time defaults, then the seed curve (bio mode, fast vs deep clones
#    over max_sectors_kb). bench/plan.py says which cells; bench/guest.py
#    runs them. One sample per cell: icount repeats itself (a few cells run
#    twice to show it). BENCH_GUESTS (the host's CPUs) guests run side by
#    side, each a share of the plan (bench/plan.py shard: the loads of one
#    setting together); icount's figures do not depend on the host's load.
# 2. scripts/bench-virtio.sh: rvirtio_blk vs C virtio_blk, also in icount.
# 3. With no other QEMU guest on the host (WALLCLOCK=auto), a few cells in
#    multi-threaded TCG, wall-clock time, SAMPLES interleaved loads per driver:
#    min/median/max. WALLCLOCK=1 runs it anyway, 0 never.
#
# Results (JSON, Markdown, PNG; the command that made them is in each):
# results/ for the subset, results/full/ for the full matrix; the guest logs
# in out/bench*/. RUNTIME_MS (500) is fio's measured time per cell, in guest
# time; VIRTIO=0 leaves out the virtio section.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
kind=${1:-subset}
# The knobs given in the environment, which a result's command line shows
# before a make target's name (BENCH_COMMAND from the Makefile).
knobs=
for v in RUNTIME_MS SAMPLES WALLCLOCK VIRTIO BENCH_GUESTS NULL_ABBA NULL_PIN NULL_HUGE CONFIRM_ROUNDS \
         CONFIRM_ABBA CONFIRM_IDS CONFIRM_LABELS CONFIRM_CELLS INTERLEAVE_NSEC INTERLEAVE_RES; do
    [[ -n ${!v:-} ]] && knobs+="$v=${!v@Q} "
done
[[ -n ${BENCH_COMMAND:-} ]] && BENCH_COMMAND="$knobs$BENCH_COMMAND"
case $kind in
    subset) res=results timeout=1800 ;;
    full) res=results/full timeout=$((8 * 3600)) ;;
    confirm) res=results/full timeout=$((4 * 3600)) VIRTIO=0 WALLCLOCK=0
             [[ -f $res/null.json ]] || die "no $res/null.json: run 'make bench-full' first"
             first=$res/null.json
             # A narrowed confirm (CONFIRM_IDS / CONFIRM_LABELS, bench/plan.py)
             # reports to out/, not over the whole confirm's results.
             if [[ -n ${CONFIRM_IDS:-}${CONFIRM_LABELS:-}${CONFIRM_CELLS:-} ]]; then
                 res=out/bench/confirm-narrowed
                 export CONFIRM_IDS=${CONFIRM_IDS:-} CONFIRM_LABELS=${CONFIRM_LABELS:-} CONFIRM_CELLS=${CONFIRM_CELLS:-}
             fi
             # The first run's fio time per cell, unless told otherwise.
             RUNTIME_MS=${RUNTIME_MS:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["meta"]["runtime_ms"])' "$first")} ;;
    interleave) res=${INTERLEAVE_RES:-results} timeout=3600 VIRTIO=0 WALLCLOCK=0 ;;
    *) die "usage: $0 [subset|full|confirm|interleave]" ;;
esac
RUNTIME_MS=${RUNTIME_MS:-500} WALLCLOCK=${WALLCLOCK:-auto} SAMPLES=${SAMPLES:-3} VIRTIO=${VIRTIO:-1}
BENCH_GUESTS=${BENCH_GUESTS:-$NPROC}
export BENCH_COMMAND=${BENCH_COMMAND:-"RUNTIME_MS=$RUNTIME_MS WALLCLOCK=$WALLCLOCK SAMPLES=$SAMPLES${INTERLEAVE_NSEC:+ INTERLEAVE_NSEC=$INTERLEAVE_NSEC} scripts/run.sh $kind"}
mkdir -p "$res" out/bench
. bench/lib.sh

if [[ $kind == confirm ]]; then
    python3 -c 'import json,sys; [print(json.dumps(r)) for r in json.load(open(sys.argv[1]))["rows"]]' \
        "$first" > out/bench/first.jsonl
    # (the confirm makes its own ABBA passes, CONFIRM_ABBA: none here)
    NULL_ABBA=0 python3 bench/plan.py null full "$RUNTIME_MS" > out/bench/plan-full.json
    python3 bench/plan.py confirm out/bench/plan-full.json out/bench/first.jsonl > out/bench/plan-null.json
elif [[ $kind == interleave ]]; then
    python3 bench/plan.py interleave - "$RUNTIME_MS" > out/bench/plan-null.json
else
    python3 bench/plan.py null "$kind" "$RUNTIME_MS" > out/bench/plan-null.json
fi
# confirm: CONFIRM_ROUNDS (3) rounds, each in fresh guests. How a two-job
# cell's jobs interleave on icount's turn-taking vCPUs is a state of the
# guest that can last a whole load (two-job cells swing 1-8% from one guest
# to the next, each guest's three runs agreeing), so the confirm takes each
# cell's ratio to C in every round (C's cell ran in the same guest) and
# counts the median over the rounds.
rounds=1
[[ $kind == confirm ]] && rounds=${CONFIRM_ROUNDS:-3}
rm -rf out/bench/plan-null-*.json out/bench/g[0-9]* out/bench/r[0-9]*
mapfile -t shards < <(python3 bench/plan.py shard out/bench/plan-null.json "$BENCH_GUESTS")
log "null drivers, icount ($kind): $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(len(g["cells"]) for g in p["groups"]))' out/bench/plan-null.json) fio runs of ${RUNTIME_MS} ms guest time, in ${#shards[@]} guest(s) side by side$( ((rounds == 1)) || echo ", $rounds rounds of fresh guests")"
bench_meta icount "$RUNTIME_MS" > out/bench/meta.json
rm -f out/bench/null.jsonl
for ((round = 1; round <= rounds; round++)); do
    # One round's guests in out/bench/g<i> (out/bench/r<round>/g<i> with rounds).
    dir=out/bench tag=
    ((rounds == 1)) || { dir=out/bench/r$round tag=r$round/; log "round $round of $rounds"; }
    bench_shards "$dir" "$timeout" null.jsonl "$tag" "${shards[@]}" || die "null benchmark failed"
    # Each row says which round (fresh guests) it came from.
    cat "$dir"/g*/null.jsonl | python3 -c 'import json, sys
for l in sys.stdin:
    if l.strip():
        print(json.dumps(dict(json.loads(l), round=int(sys.argv[1]))))' "$round" >> out/bench/null.jsonl
done
echo
if [[ $kind == confirm ]]; then
    scripts/report.py confirm out/bench/null.jsonl "$res" --first "$first" --meta out/bench/meta.json
elif [[ $kind == interleave ]]; then
    scripts/report.py interleave out/bench/null.jsonl "$res" --meta out/bench/meta.json
else
    scripts/report.py null out/bench/null.jsonl "$res" --meta out/bench/meta.json
fi

if [[ $VIRTIO == 1 ]]; then
    echo
    scripts/bench-virtio.sh "$kind"
fi

if [[ $WALLCLOCK == 1 || ( $WALLCLOCK == auto && $(pgrep -c qemu-system-x86 || true) == 0 ) ]]; then
    echo
    mkdir -p out/bench-wall
    SAMPLES=$SAMPLES python3 bench/plan.py wallclock "$kind" 2000 > out/bench-wall/plan.json
    log "wall-clock (multi-threaded TCG): $SAMPLES interleaved samples of 2 s per driver and cell"
    bench_meta tcg 2000 > out/bench-wall/meta.json
    rm -f out/bench-wall/wallclock.jsonl
    bench_guest tcg out/bench-wall 1800 -- python3 bench/guest.py "$REPO/out/bench-wall/plan.json" \
        "$REPO/out/bench-wall/wallclock.jsonl" || die "wall-clock benchmark guest failed (out/bench-wall/console.log)"
    scripts/report.py wallclock out/bench-wall/wallclock.jsonl "$res" --meta out/bench-wall/meta.json
elif [[ $WALLCLOCK == auto ]]; then
    echo
    log "wall-clock table skipped: another QEMU guest is running, its load would be in the numbers (WALLCLOCK=1 forces it)"
fi
echo
log "results in $res/ (json, md, png) after $(bench_elapsed)"

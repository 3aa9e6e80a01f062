#!/usr/bin/env bash
# Where rnull_split spends more guest instructions per I/O than C null_blk
# with the same settings: one icount guest with the insn_profile TCG plugin
# (bench/insn-profile/), both drivers loaded, one fio run each cut into
# phases at sync(2) (bench/profile-null-guest.sh), mapped to functions by
# bench/insn-profile/report.py and divided by fio's I/O count.
#
#   PROFILE_RW=randread PROFILE_BS=32k PROFILE_QD=32 PROFILE_IRQ=0 PROFILE_LOAD=both \
#       scripts/profile-null.sh [RUNTIME_MS]
#
# PROFILE_LOAD=both loads the two drivers side by side; alone loads one at a
# time, null_blk first, as the benchmark does. PROFILE_JOBS (default 1) fio
# jobs; PROFILE_RUST_QUEUE_MODE=0 loads rnull_split bio-based (against
# request-based C null_blk, which has no bio mode in 7.3); PROFILE_MEM=1
# memory-backed disks (written through once first, as the benchmark does).
#
# Results: results/profiles/insn-profile-null-<rw>-<bs>-qd<qd>-irq<irq>.{md,json}
# (qd<qd>x<jobs> with PROFILE_JOBS > 1; -mem1, -bio, -alone appended for
# PROFILE_MEM=1, PROFILE_RUST_QUEUE_MODE=0, PROFILE_LOAD=alone); raw data in
# out/profile-null/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runtime=${1:-${RUNTIME_MS:-500}}
rw=${PROFILE_RW:-randread} bs=${PROFILE_BS:-32k} qd=${PROFILE_QD:-32} irq=${PROFILE_IRQ:-0}
load=${PROFILE_LOAD:-both} jobs=${PROFILE_JOBS:-1} rust_qm=${PROFILE_RUST_QUEUE_MODE:-2} mem=${PROFILE_MEM:-0}
name=insn-profile-null-$rw-$bs-qd$qd
[[ $jobs == 1 ]] || name+=x$jobs
name+=-irq$irq
[[ $mem == 0 ]] || name+=-mem$mem
[[ $rust_qm == 2 ]] || name+=-bio
[[ $load == both ]] || name+=-$load
outdir=$REPO/out/profile-null
. bench/lib.sh
mark=$(profile_mark)
[[ -f ${MODDIR:-$REPO}/rnull_split/rnull_split.ko ]] || die "no rnull_split.ko: run 'make modules' first"
make -s -C bench/insn-profile >&2
mkdir -p "$outdir" results/profiles
rm -f "$outdir"/{profile.txt,kallsyms*,fio-*.json,disks.json,phases.json}
qemu=(--qemu "-plugin" --qemu "file=$REPO/bench/insn-profile/insn_profile.so,mark=0x$mark,out=$outdir/profile.txt")
log "icount guest with insn_profile, fio $rw $bs QD$qd irqmode=$irq, loaded $load, ${runtime} ms per driver"
VM_ACCEL=icount scripts/vm.sh --cpus 2 --out "$outdir" --timeout "${PROFILE_TIMEOUT:-900}" "${qemu[@]}" \
    -- bash bench/profile-null-guest.sh "$runtime" "$rw" "$bs" "$qd" "$irq" "$load" "$jobs" "$rust_qm" "$mem" > "$outdir/vm.log" 2>&1 \
    || { tail -n 30 "$outdir/vm.log" >&2; die "profile guest failed ($outdir/vm.log)"; }
sed -n 's/\r$//; /^BENCH /p' "$outdir/vm.log" >&2
python3 bench/insn-profile/report.py "$outdir" "results/profiles/$name"

#!/usr/bin/env bash
# Where rvirtio_blk spends more guest instructions per I/O than C
# virtio_blk: one icount guest as scripts/bench-virtio.sh boots it (two
# null-co virtio-blk-pci disks, 2 queues each, serials bench-r / bench-c),
# with the insn_profile TCG plugin (bench/insn-profile/) counting the
# kernel's executed instructions per translation block, cut into phases at
# every sync(2) of the guest (bench/profile-guest.sh: sync, fio 4 KiB
# randread libaio 2 jobs x QD32 on C virtio_blk, sync, the same on
# rvirtio_blk, sync). bench/insn-profile/report.py maps the blocks to the
# functions of the guest's /proc/kallsyms and divides by fio's I/O count.
#
#   scripts/profile-virtio.sh [RUNTIME_MS]     (500 ms of guest time)
#   PROFILE_BS=256k scripts/profile-virtio.sh  (another block size; 4k default)
#   PROFILE_ORDER=rust-first ...               (rvirtio_blk's whole run and window first)
#   PROFILE_RW=randwrite ...                   (writes; randread default)
#   PROFILE_SHARED=1 ...                       (every fio run's buffers in the
#       same tmpfs pages: both drivers' requests get the same segments)
#
# Results: results/profiles/insn-profile.{md,json}
# (results/profiles/insn-profile-<BS>.* for another block size, -<RW> and
# -shared added likewise), or PROFILE_OUT (a path without .md/.json); raw
# data in out/profile-virtio/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runtime=${1:-${RUNTIME_MS:-500}}
bs=${PROFILE_BS:-4k}
rw=${PROFILE_RW:-randread}
shared=${PROFILE_SHARED:-0}
name=insn-profile
[[ $rw == randread ]] || name+=-$rw
[[ $bs == 4k ]] || name+=-$bs
[[ $shared == 0 ]] || name+=-shared
dest=${PROFILE_OUT:-results/profiles/$name}
outdir=$REPO/out/profile-virtio
. bench/lib.sh
mark=$(profile_mark)
[[ -f rvirtio_blk/rvirtio_blk.ko ]] || die "no rvirtio_blk/rvirtio_blk.ko: run 'make modules' first"
make -s -C bench/insn-profile >&2
mkdir -p "$outdir"
rm -f "$outdir"/{profile.txt,kallsyms,fio-*.json,disks.json,phases.json}
ioeventfd=
[[ ${VIRTIO_IOEVENTFD:-1} == 0 ]] && ioeventfd=,ioeventfd=off
qemu=(--qemu "-plugin" --qemu "file=$REPO/bench/insn-profile/insn_profile.so,mark=0x$mark,out=$outdir/profile.txt")
for d in r c; do
    qemu+=(--qemu -drive --qemu "if=none,id=$d,driver=null-co,size=1G,read-zeroes=off")
    qemu+=(--qemu -device --qemu "virtio-blk-pci,drive=$d,serial=bench-$d,num-queues=2$ioeventfd")
done
log "icount guest with insn_profile (mark __x64_sys_sync at 0x$mark), fio ${runtime} ms per driver, $rw bs $bs$( [[ $shared == 0 ]] || echo ', shared buffers')"
VM_ACCEL=icount scripts/vm.sh --cpus 2 --out "$outdir" --timeout "${PROFILE_TIMEOUT:-900}" "${qemu[@]}" \
    -- bash bench/profile-guest.sh "$runtime" "$bs" "${PROFILE_ORDER:-c-first}" "$rw" "$shared" > "$outdir/vm.log" 2>&1 \
    || { tail -n 30 "$outdir/vm.log" >&2; die "profile guest failed ($outdir/vm.log)"; }
# The guest's progress lines; none is not an error (the report checks the data).
sed -n 's/\r$//; /^BENCH /p' "$outdir/vm.log" >&2
mkdir -p "$(dirname "$dest")"
python3 bench/insn-profile/report.py "$outdir" "$dest"

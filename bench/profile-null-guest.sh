#!/bin/bash
# Guest side of scripts/profile-null.sh: C null_blk and rnull_split with the
# benchmark's same settings, loaded side by side, one fio run each, with
# sync(2) between the phases (the insn_profile plugin cuts its table at
# every sync(2)): warm-up on both; sync; fio on null_blk (phase 1); sync;
# fio on rnull_split (phase 2); sync. fio's JSON goes to $OUT afterwards, so
# that no 9p write falls in a measured phase.
#
#   bench/profile-null-guest.sh RUNTIME_MS RW BS QD IRQMODE
set -euo pipefail
runtime=$1 rw=$2 bs=$3 qd=$4 irq=$5
say() { echo "BENCH $*"; }
same="gb=4 bs=512 submit_queues=1 hw_queue_depth=256 completion_nsec=10000 queue_mode=2 poll_queues=0 irqmode=$irq memory_backed=0"
insmod "$KDIR/drivers/block/null_blk/null_blk.ko" $same
insmod "$MODDIR/rnull_split/rnull_split.ko" $same
for _ in $(seq 100); do [[ -e /dev/nullb0 && -e /dev/rnullb0 ]] && break; sleep 0.05; done
for d in nullb0 rnullb0; do echo none > "/sys/block/$d/queue/scheduler"; done
echo 0 > /proc/sys/kernel/kptr_restrict
cat /proc/kallsyms > "$OUT/kallsyms"
cat > "$OUT/disks.json" <<JSON
{"c": "nullb0", "rust": "rnullb0", "runtime_ms": $runtime, "bs": "$bs", "modules": ["null_blk", "rnull_split"],
 "workload": "From \`scripts/profile-null.sh\` (the insn_profile TCG plugin in an icount guest): $rw $bs, fio 1 job x QD$qd, --direct=1, buffers in huge pages; both drivers loaded side by side with the benchmark's same settings ($same), scheduler none."}
JSON
# fio's buffers in huge pages, as the benchmark's same-settings cells
echo 256 > /proc/sys/vm/nr_hugepages
engine=io_uring
[[ $qd == 1 ]] && engine=psync
job() { # DEV NAME RUNTIME_MS
    fio --name="$2" --filename="/dev/$1" --rw="$rw" --bs="$bs" --ioengine=$engine --iodepth="$qd" \
        --numjobs=1 --direct=1 --time_based --runtime="${3}ms" --size=256M \
        --iomem=mmaphuge --hugepage-size=2097152 \
        --group_reporting --randrepeat=1 --norandommap --disk_util=0 \
        --output-format=json --output="/tmp/fio-$2.json" --eta=never
}
job nullb0 warm 100
job rnullb0 warm 100
sync                # phase 1: C null_blk
job nullb0 c "$runtime"
sync                # phase 2: rnull_split
job rnullb0 rust "$runtime"
sync
cp /tmp/fio-c.json /tmp/fio-rust.json "$OUT/"
printf '{"whole": {"c": 1, "rust": 2}}\n' > "$OUT/phases.json"
say "fio done: C $(grep -m1 '"total_ios"' /tmp/fio-c.json | tr -dc 0-9), Rust $(grep -m1 '"total_ios"' /tmp/fio-rust.json | tr -dc 0-9) I/Os"
rmmod rnull_split
rmmod null_blk

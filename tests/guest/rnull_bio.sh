#!/bin/bash
# rnull_split's driver-side splitting (queue_mode=0, split_clone=fast|deep),
# its debugfs counters, and memory-backed data integrity in both queue
# modes: fio crc32c write+verify across block sizes and max_sectors_kb,
# zeroes for never-written ranges, discard; timer completions (irqmode=2)
# in bio mode.
. "$REPO/tests/lib.sh"
. "$REPO/tests/timer-checks.sh"
KO=$MODDIR/rnull_split/rnull_split.ko
DBG=/sys/kernel/debug/rnull_split

counters() { # counters DEV: "bios splits fast deep requests bytes"
    local d=$DBG/$1
    echo "$(cat $d/bios) $(cat $d/splits) $(cat $d/fast_clones) $(cat $d/deep_clones) $(cat $d/requests) $(cat $d/bytes)"
}
delta() { # delta "A..." "B...": B - A per field
    local -a a=($1) b=($2); local i out=()
    for i in "${!a[@]}"; do out+=($((b[i] - a[i]))); done
    echo "${out[*]}"
}

# --- exact counters for one 1 MiB direct read at max_sectors_kb=16 ---------
for mode in fast deep; do
    if insmod "$KO" queue_mode=0 gb=1 split_clone=$mode; then
        echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
        before=$(counters rnullb0)
        dd if=/dev/rnullb0 of=/dev/null bs=1M count=1 skip=3 iflag=direct status=none
        after=$(counters rnullb0)
        if [[ $mode == fast ]]; then want="64 63 63 0 64 1048576"; else want="64 63 0 63 64 1048576"; fi
        expect_eq "bio mode, split_clone=$mode: 1 MiB read at 16 KiB = 64 bios, 63 $mode splits, 64 pieces, 1 MiB (bios splits fast deep pieces bytes)" \
            "$(delta "$before" "$after")" "$want"
        before=$(counters rnullb0)
        dd if=/dev/zero of=/dev/rnullb0 bs=64k count=4 oflag=direct status=none
        after=$(counters rnullb0)
        if [[ $mode == fast ]]; then want="16 12 12 0 16 262144"; else want="16 12 0 12 16 262144"; fi
        expect_eq "bio mode, split_clone=$mode: 4 x 64 KiB writes = 16 pieces" "$(delta "$before" "$after")" "$want"
        echo 124 > /sys/block/rnullb0/queue/max_sectors_kb
        before=$(counters rnullb0)
        dd if=/dev/rnullb0 of=/dev/null bs=1M count=1 skip=5 iflag=direct status=none
        after=$(counters rnullb0)
        expect_eq "bio mode, split_clone=$mode: 1 MiB read at 124 KiB = 9 pieces" \
            "$(delta "$before" "$after" | cut -d' ' -f5-6)" "9 1048576"
        check "rmmod (bio mode, $mode)" rmmod rnull_split
    else
        not_ok "insmod queue_mode=0 split_clone=$mode"
    fi
done
if insmod "$KO" gb=1; then
    echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
    before=$(counters rnullb0)
    dd if=/dev/rnullb0 of=/dev/null bs=1M count=1 skip=3 iflag=direct status=none
    after=$(counters rnullb0)
    expect_eq "blk-mq mode: the block layer splits, the driver sees 64 requests, 1 MiB, no bios or splits of its own" \
        "$(delta "$before" "$after")" "0 0 0 0 64 1048576"
    rmmod rnull_split
else
    not_ok "insmod queue_mode=2"
fi
dmesg_clean "counters"

# --- memory-backed data integrity ---------------------------------------------
verify() { # verify LABEL DEV BSSPLIT
    local label=$1 dev=$2 bss=$3
    if fio_json --name=v --filename=/dev/$dev --direct=1 --ioengine=libaio --iodepth=8 \
            --rw=randwrite --bssplit="$bss" --size=48M --io_size=24M \
            --verify=crc32c --do_verify=1 --verify_fatal=1 --randseed=42; then
        local errs
        errs=$(fio_field error)
        expect_eq "$label: crc32c write+verify, 0 errors" "$errs" 0
    else
        not_ok "$label: crc32c write+verify failed"
    fi
}
BSS512="512/10:4k/20:16k/20:124k/10:1m/30:4m/10"
BSS4K="4k/30:16k/20:124k/10:1m/30:4m/10"
for qm in 0 2; do
    clones=(fast); [[ $qm == 0 ]] && clones=(fast deep)
    for clone in "${clones[@]}"; do
        for bs in 512 4096; do
            insmod "$KO" queue_mode=$qm split_clone=$clone bs=$bs gb=1 memory_backed=1 max_sectors=2048 \
                || { not_ok "insmod memory_backed queue_mode=$qm bs=$bs"; continue; }
            for msk in 4 16 124 1024; do
                echo $msk > /sys/block/rnullb0/queue/max_sectors_kb
                bss=$BSS512; [[ $bs == 4096 ]] && bss=$BSS4K
                verify "queue_mode=$qm split_clone=$clone bs=$bs max_sectors_kb=$msk" rnullb0 "$bss"
            done
            rmmod rnull_split
        done
    done
done
dmesg_clean "memory-backed verify"

for qm in 0 2; do
    if insmod "$KO" queue_mode=$qm gb=1 memory_backed=1 discard=1; then
        check "queue_mode=$qm: never-written range reads as zeroes" \
            cmp -n $((8 << 20)) /dev/rnullb0 /dev/zero
        head -c $((4 << 20)) /dev/urandom > /tmp/pat
        dd if=/tmp/pat of=/dev/rnullb0 bs=1M seek=2 oflag=direct status=none
        check "queue_mode=$qm: written data reads back" \
            cmp -n $((4 << 20)) -i 0:$((2 << 20)) /tmp/pat /dev/rnullb0
        expect_eq "queue_mode=$qm: discard granularity is the block size" \
            "$(sysblk rnullb0 queue/discard_granularity)" 512
        if blkdiscard -o $((3 << 20)) -l $((1 << 20)) /dev/rnullb0; then
            check "queue_mode=$qm: discarded MiB reads as zeroes" \
                cmp -n $((1 << 20)) -i $((3 << 20)):0 /dev/rnullb0 /dev/zero
            check "queue_mode=$qm: data around the discard is intact" \
                bash -c "cmp -n $((1 << 20)) /tmp/pat -i 0:$((2 << 20)) /dev/rnullb0 && cmp -n $((2 << 20)) -i $((2 << 20)):$((4 << 20)) /tmp/pat /dev/rnullb0"
        else
            not_ok "queue_mode=$qm: blkdiscard"
        fi
        rmmod rnull_split
    else
        not_ok "insmod memory_backed discard queue_mode=$qm"
    fi
done
dmesg_clean "zeroes and discard"

# --- irqmode=2 in bio mode: every piece ends from its own timer, -------------
# completion_nsec after it was queued (old C null_blk's bio mode: a timer per
# command, commands from a pool of submit_queues * hw_queue_depth).
if insmod "$KO" queue_mode=0 irqmode=2 completion_nsec=2000000 submit_queues=2 hw_queue_depth=8 gb=1; then
    timer_checks "bio mode irqmode=2" bio timers
    # A split bio ends once its last piece has: 1 MiB at 16 KiB pieces,
    # 64 pieces, no sooner than 2 ms.
    echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
    if fio_json --name=big --filename=/dev/rnullb0 --direct=1 --rw=read --bs=1M \
            --ioengine=libaio --iodepth=4 --size=64M --io_size=16M; then
        expect_eq "bio mode irqmode=2: 16 MiB of 1 MiB reads split at 16 KiB completed" "$(fio_field read.io_bytes)" $((16 << 20))
        lat=$(fio_field read.lat_ns.min)
        check "bio mode irqmode=2: no split 1 MiB read done in under 2 ms (fastest: $lat ns)" test "$lat" -ge 2000000
    else
        not_ok "bio mode irqmode=2: fio 1 MiB split reads"
    fi
    check "bio mode irqmode=2: rmmod" rmmod rnull_split
else
    not_ok "insmod queue_mode=0 irqmode=2"
fi
dmesg_clean "bio mode irqmode=2"

# Memory-backed, timer completions: the data moves at submission, the bio
# ends later; what was written reads back, split either way.
for clone in fast deep; do
    if insmod "$KO" queue_mode=0 irqmode=2 completion_nsec=100000 split_clone=$clone gb=1 \
            memory_backed=1 max_sectors=2048; then
        for msk in 16 124; do
            echo $msk > /sys/block/rnullb0/queue/max_sectors_kb
            verify "queue_mode=0 irqmode=2 split_clone=$clone max_sectors_kb=$msk" rnullb0 "$BSS512"
        done
        check "bio mode irqmode=2 memory_backed=1 split_clone=$clone: rmmod" rmmod rnull_split
    else
        not_ok "insmod queue_mode=0 irqmode=2 memory_backed=1 split_clone=$clone"
    fi
done
dmesg_clean "bio mode irqmode=2 memory-backed verify"

# irqmode=1 in bio mode completes inline, as old null_blk's bio mode did.
if insmod "$KO" queue_mode=0 irqmode=1 gb=1; then
    dd if=/dev/rnullb0 of=/dev/null bs=1M count=4 iflag=direct status=none
    check "queue_mode=0 irqmode=1: 4 MiB read" test $? = 0
    rmmod rnull_split
else
    not_ok "insmod queue_mode=0 irqmode=1"
fi
dmesg_clean "bio mode irqmode=1"

# --- REQ_NOWAIT (RWF_NOWAIT, io_uring inline issue) ---------------------------
# The bio-mode disk takes REQ_NOWAIT bios (BLK_FEAT_NOWAIT). One that fits
# is served; one that needs a split ends with EAGAIN untouched, as the block
# layer ends it on a blk-mq disk, and the submitter retries without it.
direct_io() { # direct_io DEV OFF LEN read|write [nowait]: bytes done, or the errno name; writes LEN bytes of 0x5a, reads print a checksum too
    python3 - "$@" <<'PY'
import errno, mmap, os, sys, zlib
dev, off, ln, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
flags = os.RWF_NOWAIT if sys.argv[5:] == ["nowait"] else 0
buf = mmap.mmap(-1, ln)
fd = os.open("/dev/" + dev, (os.O_RDWR if op == "write" else os.O_RDONLY) | os.O_DIRECT)
try:
    if op == "write":
        buf.write(b"\x5a" * ln)
        print(os.pwritev(fd, [buf], off, flags))
    else:
        n = os.preadv(fd, [buf], off, flags)
        print(n, "%08x" % zlib.crc32(buf[:n]))
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}
crc_5a() { python3 -c "import zlib,sys; print('%08x' % zlib.crc32(b'\x5a' * int(sys.argv[1])))" "$1"; }
for qm in 0 2; do
    if insmod "$KO" queue_mode=$qm gb=1 memory_backed=1; then
        expect_eq "queue_mode=$qm: RWF_NOWAIT 4 KiB write is served" "$(direct_io rnullb0 8192 4096 write nowait)" 4096
        expect_eq "queue_mode=$qm: RWF_NOWAIT 4 KiB read returns what was written" \
            "$(direct_io rnullb0 8192 4096 read nowait)" "4096 $(crc_5a 4096)"
        check "queue_mode=$qm: 64 KiB write (no RWF_NOWAIT)" test "$(direct_io rnullb0 65536 65536 write)" = 65536
        echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
        before=$(counters rnullb0)
        expect_eq "queue_mode=$qm: RWF_NOWAIT 64 KiB read at max_sectors_kb=16 (needs a split) fails with EAGAIN" \
            "$(direct_io rnullb0 65536 65536 read nowait)" EAGAIN
        after=$(counters rnullb0)
        if [[ $qm == 0 ]]; then want="1 0 0 0 0 0"; else want="0 0 0 0 0 0"; fi
        expect_eq "queue_mode=$qm: the EAGAIN bio was not split or served (bios splits fast deep pieces bytes)" \
            "$(delta "$before" "$after")" "$want"
        expect_eq "queue_mode=$qm: the same read without RWF_NOWAIT is split and served" \
            "$(direct_io rnullb0 65536 65536 read)" "65536 $(crc_5a 65536)"
        check "queue_mode=$qm RWF_NOWAIT: rmmod" rmmod rnull_split
    else
        not_ok "insmod queue_mode=$qm memory_backed=1 (RWF_NOWAIT)"
    fi
done
# irqmode=2: a REQ_NOWAIT bio takes a free timer or ends with EAGAIN; io_uring
# issues inline and retries those from its worker, and every I/O completes.
if insmod "$KO" queue_mode=0 irqmode=2 completion_nsec=20000 gb=1 hw_queue_depth=4; then
    expect_eq "queue_mode=0 irqmode=2: RWF_NOWAIT 4 KiB read is served from a timer" \
        "$(direct_io rnullb0 0 4096 read nowait | cut -d' ' -f1)" 4096
    if fio_json --name=nowait --filename=/dev/rnullb0 --rw=randread --bs=4k --direct=1 \
            --ioengine=io_uring --iodepth=32 --size=64M --io_size=16M; then
        expect_eq "queue_mode=0 irqmode=2 hw_queue_depth=4: fio io_uring QD32 (more I/Os than timers) reads 16 MiB, no errors" \
            "$(fio_field error) $(fio_field read.io_bytes)" "0 16777216"
    else
        not_ok "queue_mode=0 irqmode=2: fio io_uring QD32"
    fi
    check "queue_mode=0 irqmode=2 RWF_NOWAIT: rmmod" rmmod rnull_split
else
    not_ok "insmod queue_mode=0 irqmode=2 hw_queue_depth=4"
fi
dmesg_clean "REQ_NOWAIT"

# --- dma_alignment=1, as C null_blk: direct I/O from 2-byte aligned buffers ----
# C null_blk sets the queue's dma_alignment to 1, so a direct I/O's vectors
# need only be 2-byte aligned in address and length: a sector may straddle
# two vectors, and bvecs end inside sectors. Written from such vectors, read
# back with page-aligned and with other unaligned vectors, at
# max_sectors_kb=16 so that both queue modes split inside those bvecs.
unaligned_io() { # unaligned_io DEV OFF: "written aligned-read unaligned-read odd-address"
    python3 - "$@" <<'PY'
import errno, mmap, os, sys
dev, off = sys.argv[1], int(sys.argv[2])
PAGE = mmap.PAGESIZE
def vecs(buf, parts):  # parts: (offset into buf, length)
    return [memoryview(buf)[o:o + n] for o, n in parts]
data = os.urandom(65536)
fd = os.open("/dev/" + dev, os.O_RDWR | os.O_DIRECT)
out = []
try:
    w = mmap.mmap(-1, 64 * PAGE)
    # 1000 bytes at page offset 2, then 64536 at page offset 6 of another page
    wparts = [(2, 1000), (3 * PAGE + 6, 64536)]
    w[2:1002] = data[:1000]
    w[3 * PAGE + 6:3 * PAGE + 6 + 64536] = data[1000:]
    out.append(str(os.pwritev(fd, vecs(w, wparts), off)))
    a = mmap.mmap(-1, 65536)
    n = os.preadv(fd, [a], off)
    out.append("same" if n == 65536 and a[:] == data else "differs")
    r = mmap.mmap(-1, 64 * PAGE)
    rparts = [(4, 510), (2 * PAGE + 1022, 4096), (5 * PAGE + 2, 60930)]
    n = os.preadv(fd, vecs(r, rparts), off)
    got = b"".join(bytes(r[o:o + ln]) for o, ln in rparts)
    out.append("same" if n == 65536 and got == data else "differs")
    try:
        os.preadv(fd, vecs(r, [(1, 512)]), off)
        out.append("accepted")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
finally:
    os.close(fd)
print(" ".join(out))
PY
}
for cfg in "0 fast" "0 deep" "2 fast"; do
    read -r qm clone <<<"$cfg"
    if insmod "$KO" queue_mode=$qm split_clone=$clone gb=1 memory_backed=1; then
        expect_eq "queue_mode=$qm: dma_alignment 1, as C null_blk" "$(sysblk rnullb0 queue/dma_alignment)" 1
        echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
        before=$(counters rnullb0)
        expect_eq "queue_mode=$qm split_clone=$clone: 64 KiB written from 2-byte aligned vectors reads back exactly (aligned and unaligned vectors); an odd address is EINVAL" \
            "$(unaligned_io rnullb0 12288)" "65536 same same EINVAL"
        after=$(counters rnullb0)
        read -r _ splits _ <<<"$(delta "$before" "$after")"
        if [[ $qm == 0 ]]; then
            check "queue_mode=0 split_clone=$clone: the unaligned I/O was split by the driver ($splits splits)" test "$splits" -ge 8
        fi
        check "queue_mode=$qm split_clone=$clone unaligned direct I/O: rmmod" rmmod rnull_split
    else
        not_ok "insmod queue_mode=$qm split_clone=$clone memory_backed=1 (unaligned direct I/O)"
    fi
done
dmesg_clean "unaligned direct I/O"

finish

#!/bin/bash
# rnull_split on blk-mq: geometry from parameters, I/O larger than
# max_sectors split by the block layer with exact byte counts, refused bad
# parameters, load/unload cycles, clean kernel log. Zoned reads past the
# write pointer and `rotational` also run on C null_blk when its module is
# there.
. "$REPO/tests/lib.sh"
. "$REPO/tests/timer-checks.sh"
KO=$MODDIR/rnull_split/rnull_split.ko

loaded() { grep -q '^rnull_split ' /proc/modules; }
unload() { rmmod rnull_split 2>/dev/null; ! loaded; }

# --- defaults are null_blk's -------------------------------------------------
if insmod "$KO"; then
    ok "insmod with default parameters"
    check "/dev/rnullb0 is a block device" test -b /dev/rnullb0
    expect_eq "default size is 250 GiB" "$(sysblk rnullb0 size)" $((250 << 21))
    expect_eq "default logical block size 512" "$(sysblk rnullb0 queue/logical_block_size)" 512
    expect_eq "default max_hw_sectors_kb (block layer default 255 sectors)" \
        "$(sysblk rnullb0 queue/max_hw_sectors_kb)" 127
    expect_eq "two hardware queues: submit_queues=1 + poll_queues=1, as null_blk" \
        "$(ls /sys/block/rnullb0/mq | wc -l)" 2
    expect_eq "64 tags per hardware queue" "$(cat /sys/block/rnullb0/mq/*/nr_tags | sort -u)" 64
    expect_eq "queue 0 default, queue 1 poll (blk-mq debugfs)" \
        "$(cat /sys/kernel/debug/block/rnullb0/hctx0/type /sys/kernel/debug/block/rnullb0/hctx1/type | tr '\n' ' ')" \
        "default poll "
    expect_eq "polling is on (io_poll 1)" "$(sysblk rnullb0 queue/io_poll)" 1
    check "no I/O scheduler by default, as null_blk with two hardware queues" \
        grep -q '\[none\]' /sys/block/rnullb0/queue/scheduler
    expect_eq "not rotational by default (rotational=0), as null_blk" "$(sysblk rnullb0 queue/rotational)" 0
    check "rmmod" unload
else
    not_ok "insmod with default parameters"
fi
if insmod "$KO"; then
    polled() { cat /sys/kernel/debug/rnull_split/rnullb0/polled; }
    p0=$(polled)
    if fio_json --name=hipri --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --size=8M --ioengine=io_uring --hipri=1 --iodepth=8; then
        expect_eq "io_uring hipri: 8 MiB read" "$(fio_field read.io_bytes)" $((8 << 20))
        expect_eq "io_uring hipri: all 2048 requests completed by polling" $(( $(polled) - p0 )) 2048
    else
        not_ok "fio io_uring hipri"
    fi
    p0=$(polled)
    if fio_json --name=irq --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --size=4M --ioengine=io_uring --iodepth=8; then
        expect_eq "io_uring without hipri: none polled" $(( $(polled) - p0 )) 0
    else
        not_ok "fio io_uring without hipri"
    fi
    check "only one device by default" test ! -e /sys/block/rnullb1
    check "rmmod" unload
    check "rmmod removes the disk" test ! -e /sys/block/rnullb0
else
    not_ok "insmod with default parameters"
fi
dmesg_clean "defaults"

# --- poll_queues=0: one hardware queue, no polling ----------------------------
if insmod "$KO" poll_queues=0; then
    expect_eq "poll_queues=0: one hardware queue" "$(ls /sys/block/rnullb0/mq | wc -l)" 1
    expect_eq "poll_queues=0: io_poll 0" "$(sysblk rnullb0 queue/io_poll)" 0
    check "poll_queues=0: mq-deadline by default, as null_blk with one queue" \
        grep -q '\[mq-deadline\]' /sys/block/rnullb0/queue/scheduler
    # io_uring refuses IOPOLL on a queue that cannot poll (EOPNOTSUPP)
    if fio_json --name=hipri --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --size=4M --ioengine=io_uring --hipri=1 --iodepth=8; then
        not_ok "poll_queues=0: io_uring hipri is refused (it ran)"
    else
        ok "poll_queues=0: io_uring hipri is refused"
    fi
    expect_eq "poll_queues=0: none polled" "$(cat /sys/kernel/debug/rnull_split/rnullb0/polled)" 0
    check "poll_queues=0: rmmod" unload
else
    not_ok "insmod poll_queues=0"
fi
if insmod "$KO" poll_queues=2 submit_queues=2 memory_backed=1 gb=1; then
    expect_eq "poll_queues=2 submit_queues=2: four hardware queues" "$(ls /sys/block/rnullb0/mq | wc -l)" 4
    expect_eq "queues 2 and 3 poll" \
        "$(cat /sys/kernel/debug/block/rnullb0/hctx{2,3}/type | tr '\n' ' ')" "poll poll "
    p0=$(cat /sys/kernel/debug/rnull_split/rnullb0/polled)
    if fio_json --name=wv --filename=/dev/rnullb0 --direct=1 --rw=randwrite --bs=4k \
            --size=8M --offset_increment=8M --ioengine=io_uring --hipri=1 --iodepth=8 \
            --numjobs=2 --group_reporting \
            --verify=crc32c --verify_fatal=1 --do_verify=1 --verify_state_save=0; then
        expect_eq "polled memory-backed writes, read back and verified by 2 jobs" \
            "$(fio_field read.io_bytes)" $((16 << 20))
        check "polled requests counted" test $(( $(cat /sys/kernel/debug/rnull_split/rnullb0/polled) - p0 )) -ge 8192
    else
        not_ok "polled memory-backed writes verified"
    fi
    check "poll_queues=2: rmmod" unload
else
    not_ok "insmod poll_queues=2 submit_queues=2 memory_backed=1"
fi
dmesg_clean "poll queues"

# --- tag set flags: blocking, shared_tag_bitmap, no_sched, shared_tags ---------
hflags() { cat "/sys/kernel/debug/block/$1/hctx0/flags"; }
if insmod "$KO" blocking=1 gb=1; then
    check "blocking=1: the hardware queues are BLOCKING" bash -c "grep -q BLOCKING <<<'$(hflags rnullb0)'"
    check "blocking=1: I/O" dd if=/dev/rnullb0 of=/dev/null bs=64k count=64 iflag=direct status=none
    unload
else
    not_ok "insmod blocking=1"
fi
if insmod "$KO" gb=1; then
    check "by default not BLOCKING" bash -c "! grep -q BLOCKING <<<'$(hflags rnullb0)'"
    unload
fi
if insmod "$KO" memory_backed=1 gb=1; then
    check "memory_backed=1 implies BLOCKING, as null_blk" bash -c "grep -q BLOCKING <<<'$(hflags rnullb0)'"
    unload
fi
if insmod "$KO" shared_tag_bitmap=1 submit_queues=2 gb=1; then
    check "shared_tag_bitmap=1: TAG_HCTX_SHARED" bash -c "grep -q TAG_HCTX_SHARED <<<'$(hflags rnullb0)'"
    check "shared_tag_bitmap=1: I/O on both queues" fio_json --name=s --filename=/dev/rnullb0 \
        --direct=1 --rw=randread --bs=4k --size=8M --ioengine=io_uring --iodepth=16 --numjobs=2
    unload
else
    not_ok "insmod shared_tag_bitmap=1"
fi
if insmod "$KO" no_sched=1 poll_queues=0 gb=1; then
    check "no_sched=1: no scheduler even with one hardware queue" \
        grep -q '\[none\]' /sys/block/rnullb0/queue/scheduler
    unload
else
    not_ok "insmod no_sched=1"
fi
if insmod "$KO" shared_tags=1 nr_devices=2 hw_queue_depth=16 gb=1; then
    check "shared_tags=1: rnullb0's queues share their tags (TAG_QUEUE_SHARED)" \
        bash -c "grep -q TAG_QUEUE_SHARED <<<'$(hflags rnullb0)'"
    check "shared_tags=1: so do rnullb1's" bash -c "grep -q TAG_QUEUE_SHARED <<<'$(hflags rnullb1)'"
    expect_eq "shared_tags=1: 16 tags" "$(cat /sys/block/rnullb1/mq/0/nr_tags)" 16
    if fio_json --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k --size=8M \
            --ioengine=io_uring --iodepth=32 --name=b --filename=/dev/rnullb1; then
        expect_eq "shared_tags=1: 8 MiB read on each disk" "$(fio_field read.io_bytes)" $((8 << 20))
    else
        not_ok "shared_tags=1: I/O on both disks"
    fi
    mkdir /sys/kernel/config/rnull_split/st
    echo 1 > /sys/kernel/config/rnull_split/st/shared_tags
    echo 1 > /sys/kernel/config/rnull_split/st/memory_backed
    dmesg -C
    check "shared_tags=1 memory_backed=1 on a non-blocking shared set: power=1 refused" \
        bash -c '! echo 1 > /sys/kernel/config/rnull_split/st/power'
    check "... with a message naming it" bash -c "dmesg | grep -q 'invalid memory_backed=1 with shared_tags=1'"
    echo 0 > /sys/kernel/config/rnull_split/st/memory_backed
    check "a configfs disk with shared_tags=1 joins the set" \
        bash -c 'echo 1 > /sys/kernel/config/rnull_split/st/power && grep -q TAG_QUEUE_SHARED /sys/kernel/debug/block/st/hctx0/flags'
    expect_eq "... with the module parameters' 16 tags" "$(cat /sys/block/st/mq/0/nr_tags)" 16
    rmdir /sys/kernel/config/rnull_split/st
    check "shared_tags=1: rmmod" unload
else
    not_ok "insmod shared_tags=1 nr_devices=2"
fi
dmesg_clean "tag set flags"

# --- fault injection: timeout and requeue (C null_blk's format) ------------------
dstat() { cat "/sys/kernel/debug/rnull_split/rnullb0/$1"; }
if insmod "$KO" timeout=1,100,0,-1 gb=1; then
    ok "insmod timeout=1,100,0,-1 (every request left to time out)"
    t0=$(date +%s)
    out=$(dd if=/dev/rnullb0 of=/dev/null bs=4k count=1 iflag=direct 2>&1)
    rc=$?
    t1=$(date +%s)
    check "a read that timed out fails with ETIMEDOUT" \
        bash -c "[[ $rc != 0 ]] && grep -q 'timed out' <<<'$out'"
    check "... after the 5 s request timeout" test $((t1 - t0)) -ge 4
    check "... ended by the driver's timeout handler" test "$(dstat timed_out)" -ge 1
    check "... which says so in the log" bash -c "dmesg | grep -q 'rnull_split: rq at sector 0 timed out'"
    check "timeout=...: rmmod" unload
else
    not_ok "insmod timeout=1,100,0,-1"
fi
if insmod "$KO" timeout=1,50,0,-1 gb=1; then
    for i in $(seq 20); do dd if=/dev/rnullb0 of=/dev/null bs=4k count=4 iflag=direct status=none 2>/dev/null & done
    wait
    check "timeout=1,50,0,-1: 20 parallel readers all return" true
    check "... some requests timed out" test "$(dstat timed_out)" -ge 1
    check "... the rest completed" test "$(dstat requests)" -ge 1
    check "timeout=1,50,0,-1: rmmod" unload
else
    not_ok "insmod timeout=1,50,0,-1"
fi
# the requeue injection: partition scanning at add_disk takes some of the
# 100, the fio job the rest
if insmod "$KO" requeue=1,100,0,100 memory_backed=1 gb=1; then
    if fio_json --name=rq --filename=/dev/rnullb0 --direct=1 --rw=randwrite --bs=4k --size=4M \
            --ioengine=io_uring --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
            --verify_state_save=0; then
        expect_eq "requeue=1,100,0,100: 4 MiB written, read back and verified" \
            "$(fio_field read.io_bytes)" $((4 << 20))
    else
        not_ok "requeue=1,100,0,100: write and verify"
    fi
    expect_eq "... exactly 100 requests requeued (times=100)" "$(dstat requeued)" 100
    check "requeue=...: rmmod" unload
else
    not_ok "insmod requeue=1,100,0,100"
fi
# init_hctx: hardware queue set-ups fail (as C null_blk's null_init_hctx,
# -EFAULT); its count runs over the module, not a device
if insmod "$KO" init_hctx=1,100,0,1 2>/dev/null; then
    not_ok "init_hctx=1,100,0,1: the first queue set-up fails, and insmod with it (it loaded)"
    unload
else
    check "init_hctx=1,100,0,1: the first queue set-up fails, and insmod with it" bash -c '! loaded'
    check "... leaving no disk" test ! -e /sys/block/rnullb0
fi
if insmod "$KO" nr_devices=0 init_hctx=1,100,5,1; then
    H=/sys/kernel/config/rnull_split/hx
    nr_hctx() { ls /sys/block/hx/mq | wc -l; }
    # blk-mq sets up every hardware queue anew when their number changes:
    # power=1 sets up 2 (submit_queues=1 + poll_queues=1), submit_queues=2
    # then 3, of which the new third is the 5th set-up: space=5 lets 4
    # pass, times=1 fails the 5th only.
    mkdir "$H"
    check "init_hctx=1,100,5,1: power=1 (set-ups 1-2 pass)" sh -c "echo 1 > $H/power"
    expect_eq "... 2 hardware queues" "$(nr_hctx)" 2
    dmesg -C
    if out=$( (echo 2 > "$H/submit_queues") 2>&1 ); then
        not_ok "submit_queues=2: set-up 5, of the new queue, fails (accepted)"
    else
        check "submit_queues=2: set-up 5, of the new queue, fails: ENOMEM" \
            grep -q 'Cannot allocate memory' <<<"$out"
    fi
    check "... blk-mq falls back to the queues it had" \
        bash -c "dmesg | grep -q 'Increasing nr_hw_queues to 3 fails, fallback to 2'"
    expect_eq "... 2 hardware queues" "$(nr_hctx)" 2
    expect_eq "... submit_queues still reads 1" "$(cat "$H/submit_queues")" 1
    if dd if=/dev/hx of=/dev/null bs=4k count=256 iflag=direct status=none; then
        ok "... and the disk serves reads"
    else
        not_ok "... and the disk serves reads"
    fi
    check "submit_queues=2 again (times=1 is used up)" sh -c "echo 2 > $H/submit_queues"
    expect_eq "... 3 hardware queues" "$(nr_hctx)" 3
    echo 0 > "$H/power"; rmdir "$H"
    check "init_hctx=...: rmmod" unload
else
    not_ok "insmod nr_devices=0 init_hctx=1,100,5,1"
fi
dmesg_clean "fault injection"

# --- mbps: a bandwidth limit, as C null_blk's ----------------------------------
if insmod "$KO" mbps=10 gb=1; then
    t0=$(date +%s%N)
    if dd if=/dev/rnullb0 of=/dev/null bs=64k count=320 iflag=direct status=none; then
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        check "mbps=10: 20 MiB read in 1.7 s or more (took $ms ms)" test $ms -ge 1700
        check "... and in 10 s at most" test $ms -le 10000
    else
        not_ok "mbps=10: 20 MiB read"
    fi
    check "... requests waited for bandwidth (throttled)" test "$(dstat throttled)" -ge 1
    check "mbps=10: rmmod" unload
else
    not_ok "insmod mbps=10"
fi
if insmod "$KO" gb=1; then
    dd if=/dev/rnullb0 of=/dev/null bs=64k count=320 iflag=direct status=none
    expect_eq "no mbps: no request waits" "$(dstat throttled)" 0
    check "rmmod" unload
else
    not_ok "insmod gb=1"
fi
dmesg_clean "mbps"

# --- cache_size: a write-back cache in front of the memory, as C null_blk's -----
if insmod "$KO" memory_backed=1 cache_size=1 gb=1; then
    expect_eq "cache_size=1: queue/write_cache write back" "$(sysblk rnullb0 queue/write_cache)" "write back"
    expect_eq "... queue/fua 1 (fua=1 by default)" "$(sysblk rnullb0 queue/fua)" 1
    head -c 4M /dev/urandom > /tmp/cpat
    dd if=/tmp/cpat of=/dev/rnullb0 bs=64k oflag=direct status=none
    wb=$(dstat cache_writebacks)
    check "... 4 MiB written through a 1 MiB cache: at least 768 pages written back ($wb)" test "$wb" -ge 768
    dd if=/dev/rnullb0 of=/tmp/cgot bs=64k count=64 iflag=direct status=none
    check "... and all 4 MiB read back (cache and store)" cmp /tmp/cpat /tmp/cgot
    f0=$(dstat flushes)
    check "an fsync of the disk" dd if=/tmp/cpat of=/dev/rnullb0 bs=64k count=1 seek=100 oflag=direct conv=fsync status=none
    check "... reaches the driver as a flush" test "$(dstat flushes)" -gt "$f0"
    check "... which writes the whole cache back" test "$(dstat cache_writebacks)" -ge $((wb + 16))
    dd if=/dev/rnullb0 of=/tmp/cgot bs=64k count=64 iflag=direct status=none
    check "... and the data reads back the same" cmp /tmp/cpat /tmp/cgot
    if fio_json --name=fua --filename=/dev/rnullb0 --direct=1 --rw=randwrite --bs=4k --size=8M \
            --ioengine=io_uring --iodepth=8 --fsync=7 --verify=crc32c --do_verify=1 \
            --verify_fatal=1 --verify_state_save=0; then
        expect_eq "fio random writes with fsyncs over the cache, verified" "$(fio_field read.io_bytes)" $((8 << 20))
    else
        not_ok "fio random writes with fsyncs over the cache"
    fi
    check "cache_size: rmmod" unload
else
    not_ok "insmod memory_backed=1 cache_size=1"
fi
if insmod "$KO" memory_backed=1 cache_size=1 fua=0 gb=1; then
    expect_eq "fua=0: queue/fua 0" "$(sysblk rnullb0 queue/fua)" 0
    check "fua=0: rmmod" unload
else
    not_ok "insmod memory_backed=1 cache_size=1 fua=0"
fi
if insmod "$KO" memory_backed=1 gb=1; then
    expect_eq "no cache_size: queue/write_cache write through" "$(sysblk rnullb0 queue/write_cache)" "write through"
    dd if=/dev/zero of=/dev/rnullb0 bs=64k count=1 oflag=direct conv=fsync status=none
    expect_eq "... an fsync sends no flush to the driver" "$(dstat flushes)" 0
    check "rmmod" unload
else
    not_ok "insmod memory_backed=1 gb=1"
fi
dmesg_clean "cache_size"

# --- zoned=1: a host-managed zoned disk, as C null_blk's ------------------------
zsec=$((64 << 11))     # zone_size=64 MiB in sectors
if insmod "$KO" zoned=1 gb=1 zone_size=64 zone_nr_conv=2 zone_max_open=4 memory_backed=1; then
    ok "insmod zoned=1 gb=1 zone_size=64 zone_nr_conv=2 zone_max_open=4 memory_backed=1"
    expect_eq "zoned: host-managed" "$(sysblk rnullb0 queue/zoned)" host-managed
    expect_eq "zoned: 16 zones" "$(sysblk rnullb0 queue/nr_zones)" 16
    expect_eq "zoned: chunk_sectors = zone size" "$(sysblk rnullb0 queue/chunk_sectors)" $zsec
    expect_eq "zoned: max_open_zones 4" "$(sysblk rnullb0 queue/max_open_zones)" 4
    expect_eq "zoned: 16 zones reported" "$(blkzone report /dev/rnullb0 | wc -l)" 16
    expect_eq "zoned: 2 conventional zones first" \
        "$(blkzone report -c 3 /dev/rnullb0 | grep -c CONVENTIONAL)" 2
    check "zoned: zone 2 empty, write pointer at its start" \
        bash -c "blkzone report -o $((2 * zsec)) -c 1 /dev/rnullb0 | grep -q 'wptr 0x000000 .*(em)'"
    head -c 1048576 /dev/urandom > /tmp/z1
    check "zoned: 1 MiB written at zone 2's write pointer" \
        dd if=/tmp/z1 of=/dev/rnullb0 bs=1M seek=$((2 * 64)) oflag=direct status=none
    check "zoned: write pointer moved 2048 sectors, zone implicitly open" \
        bash -c "blkzone report -o $((2 * zsec)) -c 1 /dev/rnullb0 | grep -q 'wptr 0x000800 .*(oi)'"
    check "zoned: a write not at the write pointer fails" \
        bash -c "! dd if=/tmp/z1 of=/dev/rnullb0 bs=1M seek=$((2 * 64)) oflag=direct status=none 2>/dev/null"
    dd if=/dev/rnullb0 of=/tmp/z2 bs=1M skip=$((2 * 64)) count=1 iflag=direct status=none
    check "zoned: the data reads back" cmp /tmp/z1 /tmp/z2
    check "zoned: a conventional zone takes writes anywhere" \
        dd if=/tmp/z1 of=/dev/rnullb0 bs=1M seek=7 oflag=direct status=none
    check "zoned: zone reset" blkzone reset -o $((2 * zsec)) -c 1 /dev/rnullb0
    dd if=/dev/rnullb0 of=/tmp/z2 bs=1M skip=$((2 * 64)) count=1 iflag=direct status=none
    head -c 1048576 /dev/zero | tr '\0' '\377' > /tmp/zff
    check "zoned: a reset zone reads as 0xFF bytes (all past its write pointer), as null_blk" \
        cmp /tmp/zff /tmp/z2
    check "zoned: zone open -> explicitly open" \
        bash -c "blkzone open -o $((3 * zsec)) -c 1 /dev/rnullb0 && blkzone report -o $((3 * zsec)) -c 1 /dev/rnullb0 | grep -q '(oe)'"
    check "zoned: zone finish -> full" \
        bash -c "blkzone finish -o $((3 * zsec)) -c 1 /dev/rnullb0 && blkzone report -o $((3 * zsec)) -c 1 /dev/rnullb0 | grep -q '(fu)'"
    check "zoned: zone close of a full zone fails" \
        bash -c "! blkzone close -o $((3 * zsec)) -c 1 /dev/rnullb0 2>/dev/null"
    check "zoned: 4 explicit opens fit zone_max_open=4" \
        blkzone open -o $((4 * zsec)) -c 4 /dev/rnullb0
    out=$(blkzone open -o $((8 * zsec)) -c 1 /dev/rnullb0 2>&1)
    rc=$?
    check "zoned: a 5th open is refused (open zones exceeded: ETOOMANYREFS)" \
        bash -c "[[ $rc != 0 ]] && grep -qi 'too many references' <<<'$out'"
    check "zoned: ... and that zone stays empty" \
        bash -c "blkzone report -o $((8 * zsec)) -c 1 /dev/rnullb0 | grep -q '(em)'"
    check "zoned: reset all" bash -c "blkzone reset /dev/rnullb0 && [[ \$(blkzone report /dev/rnullb0 | grep -c '(em)') == 14 ]]"
    if fio_json --name=z --filename=/dev/rnullb0 --direct=1 --zonemode=zbd --rw=write --bs=64k \
            --offset=$((2 * 64))M --size=256M --ioengine=psync --verify=crc32c --do_verify=1 \
            --verify_fatal=1 --verify_state_save=0; then
        expect_eq "zoned: fio zonemode=zbd 256 MiB sequential writes, read back and verified" \
            "$(fio_field read.io_bytes)" $((256 << 20))
    else
        not_ok "zoned: fio zonemode=zbd write and verify"
    fi
    check "zoned: rmmod" unload
else
    not_ok "insmod zoned=1 ..."
fi
if insmod "$KO" zoned=1 gb=1 zone_size=64 zone_append_max_sectors=0 zone_capacity=32; then
    check "zoned: zone_capacity=32 reported" \
        bash -c "blkzone report -c 1 /dev/rnullb0 | grep -q 'cap 0x010000'"
    check "zoned: a write past the capacity fails" \
        bash -c "! dd if=/dev/zero of=/dev/rnullb0 bs=1M count=33 oflag=direct status=none 2>/dev/null"
    check "zoned, zone_capacity: rmmod" unload
else
    not_ok "insmod zoned=1 zone_capacity=32"
fi
dmesg_clean "zoned"

# --- past a zone's write pointer, a memory-backed disk reads 0xFF bytes ------------
# As C null_blk (null_zone_valid_read_len() and its 0xFF fill): the bytes of
# a read below a sequential zone's write pointer are the data, those from it
# on 0xFF; a conventional zone reads as any disk. The same checks run on C
# null_blk when its module is there.
# zoned_reads DISK LABEL: on memory-backed /dev/DISK, zone_size=64 with one
# conventional zone (zone 1 the first sequential one, empty).
zoned_reads() {
    local disk=$1 label=$2 zs=$((64 << 11)) got=/tmp/zr_got
    rd8k() { dd if=/dev/$disk of=$got bs=8k skip=$(($1 / 16)) count=1 iflag=direct status=none; }
    head -c 4096 /dev/urandom > /tmp/zr_data
    head -c 4096 /dev/zero > /tmp/zr_zero
    head -c 4096 /dev/zero | tr '\0' '\377' > /tmp/zr_ff
    cat /tmp/zr_ff /tmp/zr_ff > /tmp/zr_ff8k
    cat /tmp/zr_zero /tmp/zr_zero > /tmp/zr_zero8k
    cat /tmp/zr_data /tmp/zr_ff > /tmp/zr_data_ff
    cat /tmp/zr_data /tmp/zr_zero > /tmp/zr_data_zero
    if rd8k 0; then
        check "$label: an unwritten conventional zone reads zeroes" cmp /tmp/zr_zero8k $got
    else
        not_ok "$label: 8 KiB direct read of the conventional zone"
    fi
    if rd8k $zs; then
        check "$label: an empty sequential zone reads 0xFF bytes" cmp /tmp/zr_ff8k $got
    else
        not_ok "$label: 8 KiB direct read of an empty sequential zone"
    fi
    check "$label: 4 KiB written at the start of sequential zone 1" \
        dd if=/tmp/zr_data of=/dev/$disk bs=4k seek=$((zs / 8)) count=1 oflag=direct status=none
    check "$label: ... write pointer 8 sectors in" \
        bash -c "blkzone report -o $zs -c 1 /dev/$disk | grep -q 'wptr 0x000008 '"
    if rd8k $zs; then
        check "$label: 8 KiB read from the zone's start: the 4 KiB written, then 4 KiB of 0xFF" \
            cmp /tmp/zr_data_ff $got
        diag "$label: bytes 4090-4101 read: $(od -An -tx1 -j 4090 -N 12 $got)"
    else
        not_ok "$label: 8 KiB direct read at the write pointer"
    fi
    if dd if=/dev/$disk of=$got bs=4k skip=$((zs / 8 + 1)) count=1 iflag=direct status=none; then
        check "$label: 4 KiB read at the write pointer: all 0xFF" cmp /tmp/zr_ff $got
    else
        not_ok "$label: 4 KiB direct read at the write pointer"
    fi
    check "$label: 4 KiB written at the start of conventional zone 0" \
        dd if=/tmp/zr_data of=/dev/$disk bs=4k count=1 oflag=direct status=none
    if rd8k 0; then
        check "$label: ... reads back, then zeroes" cmp /tmp/zr_data_zero $got
    else
        not_ok "$label: 8 KiB direct read of the conventional zone"
    fi
    check "$label: zone 1 finished" blkzone finish -o $zs -c 1 /dev/$disk
    if rd8k $zs; then
        check "$label: a finished zone (write pointer at its end) reads its data, then zeroes" \
            cmp /tmp/zr_data_zero $got
    else
        not_ok "$label: 8 KiB direct read of the finished zone"
    fi
    check "$label: zone 1 reset" blkzone reset -o $zs -c 1 /dev/$disk
    if rd8k $zs; then
        check "$label: the reset zone reads 0xFF bytes again" cmp /tmp/zr_ff8k $got
    else
        not_ok "$label: 8 KiB direct read of the reset zone"
    fi
}
if insmod "$KO" zoned=1 gb=1 zone_size=64 zone_nr_conv=1 memory_backed=1; then
    zoned_reads rnullb0 "zoned reads"
    check "zoned reads: rmmod" unload
else
    not_ok "insmod zoned=1 gb=1 zone_size=64 zone_nr_conv=1 memory_backed=1"
fi
dmesg_clean "zoned reads past the write pointer"
CKO=${KDIR:-}/drivers/block/null_blk/null_blk.ko
if ! c_null_blk_ready "zoned reads past the write pointer"; then
    :
elif insmod "$CKO" zoned=1 gb=1 zone_size=64 zone_nr_conv=1 memory_backed=1; then
    zoned_reads nullb0 "C null_blk zoned reads"
    check "rmmod C null_blk" rmmod null_blk
    dmesg_clean "C null_blk zoned reads"
else
    not_ok "insmod $CKO zoned=1 gb=1 zone_size=64 zone_nr_conv=1 memory_backed=1"
fi

# --- polled writes to a zoned disk: io_uring IOPOLL of writes a zone write plug holds
# blk_zone_plug_bio() keeps a plugged write's segment count where the poll
# cookie was; 7.3's bio_poll() took it for a hardware-queue index (KASAN
# slab-out-of-bounds in blk_mq_poll(), then ->poll() with a bogus hctx:
# found by make fuzz, patch 0062). 16 sequential 64 KiB polled writes in
# flight in one zone, on both drivers.
zoned_poll() { # MODULE DISK WHO
    local m=$1 d=$2 who=$3
    if insmod "$m" zoned=1 gb=1 zone_size=64 submit_queues=1 poll_queues=1; then
        check "$who: 16 polled zoned writes in flight (io_uring hipri, zonemode=zbd)" \
            fio --name=zpoll --filename="/dev/$d" --ioengine=io_uring --hipri=1 --direct=1 \
            --rw=write --bs=64k --iodepth=16 --zonemode=zbd --size=256m --runtime=5 \
            --time_based --output=/dev/null
        check "$who: zoned poll: rmmod" rmmod "$(basename "$m" .ko)"
    else
        not_ok "insmod $m zoned=1 gb=1 zone_size=64 submit_queues=1 poll_queues=1"
    fi
    dmesg_clean "$who: polled zoned writes"
}
zoned_poll "$KO" rnullb0 rnull_split
if c_null_blk_ready "polled zoned writes"; then
    zoned_poll "$CKO" nullb0 "C null_blk"
fi

# --- max_sectors past 2560: the queue's max_hw_sectors, as C null_blk's ---------
# No upper bound: max_sectors=8192 gives 4 MiB requests (max_hw_sectors_kb
# and, up to the block layer's cap, max_sectors_kb); a 4 MiB direct read
# then reaches the driver whole.
big_sectors() { # MODULE DISK WHO
    local m=$1 d=$2 who=$3
    if insmod "$m" gb=1 max_sectors=8192; then
        expect_eq "$who max_sectors=8192: queue/max_hw_sectors_kb" "$(sysblk $d queue/max_hw_sectors_kb)" 4096
        expect_eq "$who max_sectors=8192: queue/max_sectors_kb" "$(sysblk $d queue/max_sectors_kb)" 4096
        check "$who max_sectors=8192: max_sectors_kb set to 4096" \
            bash -c "echo 4096 > /sys/block/$d/queue/max_sectors_kb"
        check "$who max_sectors=8192: a 4 MiB direct read" \
            dd if=/dev/$d of=/dev/null bs=4M count=1 iflag=direct status=none
        check "$who max_sectors=8192: rmmod" rmmod "$(basename "$m" .ko)"
    else
        not_ok "insmod $m gb=1 max_sectors=8192"
    fi
}
big_sectors "$KO" rnullb0 rnull_split
if c_null_blk_ready "max_sectors=8192"; then
    big_sectors "$CKO" nullb0 "C null_blk"
fi

# --- rotational: BLK_FEAT_ROTATIONAL, queue/rotational, as C null_blk's ------------
if insmod "$KO" rotational=1 gb=1; then
    expect_eq "rotational=1: queue/rotational 1" "$(sysblk rnullb0 queue/rotational)" 1
    check "rotational=1: rmmod" unload
else
    not_ok "insmod rotational=1 gb=1"
fi
if insmod "$KO" rotational=1 queue_mode=0 gb=1; then
    expect_eq "rotational=1 queue_mode=0 (bio-based): queue/rotational 1" \
        "$(sysblk rnullb0 queue/rotational)" 1
    check "rotational=1 queue_mode=0: rmmod" unload
else
    not_ok "insmod rotational=1 queue_mode=0 gb=1"
fi
if insmod "$KO" rotational=0 gb=1; then
    expect_eq "rotational=0: queue/rotational 0" "$(sysblk rnullb0 queue/rotational)" 0
    check "rotational=0: rmmod" unload
else
    not_ok "insmod rotational=0 gb=1"
fi
if c_null_blk_ready "rotational"; then
    # (no parameter: the default, 0)
    for rot in "" 0 1; do
        arg=${rot:+rotational=$rot}
        if insmod "$CKO" gb=1 $arg; then
            expect_eq "C null_blk ${arg:-(default)}: queue/rotational ${rot:-0}, as ours" \
                "$(sysblk nullb0 queue/rotational)" "${rot:-0}"
            check "rmmod C null_blk" rmmod null_blk
        else
            not_ok "insmod $CKO gb=1 $arg"
        fi
    done
fi
dmesg_clean "rotational"

# --- configured geometry -------------------------------------------------------
if insmod "$KO" gb=2 bs=4096 nr_devices=2 submit_queues=2 hw_queue_depth=32 max_sectors=256; then
    ok "insmod gb=2 bs=4096 nr_devices=2 submit_queues=2 hw_queue_depth=32 max_sectors=256"
    expect_eq "size is 2 GiB" "$(blockdev --getsize64 /dev/rnullb0)" $((2 << 30))
    expect_eq "logical block size 4096" "$(sysblk rnullb0 queue/logical_block_size)" 4096
    expect_eq "physical block size 4096" "$(sysblk rnullb0 queue/physical_block_size)" 4096
    expect_eq "max_hw_sectors_kb = max_sectors/2" "$(sysblk rnullb0 queue/max_hw_sectors_kb)" 128
    expect_eq "max_sectors_kb starts at max_hw_sectors_kb" "$(sysblk rnullb0 queue/max_sectors_kb)" 128
    expect_eq "three hardware queues (two + a poll queue)" "$(ls /sys/block/rnullb0/mq | wc -l)" 3
    expect_eq "32 tags on each hardware queue" "$(cat /sys/block/rnullb0/mq/*/nr_tags | sort -u)" 32
    check "second device rnullb1 exists" test -b /dev/rnullb1
    expect_eq "rnullb1 has the same size" "$(blockdev --getsize64 /dev/rnullb1)" $((2 << 30))

    # max_sectors_kb is capped by max_hw_sectors_kb and can lower the limit;
    # the block layer then splits.
    echo 256 > /sys/block/rnullb0/queue/max_sectors_kb
    expect_eq "max_sectors_kb=256 is capped at max_hw_sectors_kb" "$(sysblk rnullb0 queue/max_sectors_kb)" 128
    echo 16 > /sys/block/rnullb0/queue/max_sectors_kb
    expect_eq "max_sectors_kb lowered to 16" "$(sysblk rnullb0 queue/max_sectors_kb)" 16

    read0=$(awk '{print $1}' /sys/block/rnullb0/stat)
    if fio_json --name=r --filename=/dev/rnullb0 --direct=1 --rw=read --bs=1M \
            --size=32M --ioengine=io_uring --iodepth=8; then
        expect_eq "1 MiB direct reads: exactly 32 MiB read" "$(fio_field read.io_bytes)" $((32 << 20))
        read1=$(awk '{print $1}' /sys/block/rnullb0/stat)
        expect_eq "each 1 MiB read reached the driver as 64 requests of 16 KiB" \
            $((read1 - read0)) $((32 * 64))
    else
        not_ok "fio 1 MiB direct reads"
    fi
    write0=$(awk '{print $5}' /sys/block/rnullb0/stat)
    if fio_json --name=w --filename=/dev/rnullb0 --direct=1 --rw=write --bs=1M \
            --size=8M --ioengine=libaio --iodepth=4; then
        expect_eq "1 MiB direct writes: exactly 8 MiB written" "$(fio_field write.io_bytes)" $((8 << 20))
        write1=$(awk '{print $5}' /sys/block/rnullb0/stat)
        expect_eq "each 1 MiB write reached the driver as 64 requests" \
            $((write1 - write0)) $((8 * 64))
    else
        not_ok "fio 1 MiB direct writes"
    fi
    if fio_json --name=rr --filename=/dev/rnullb1 --direct=1 --rw=randrw --bs=4k \
            --size=64M --io_size=16M --ioengine=io_uring --iodepth=32 --numjobs=2 \
            --group_reporting; then
        expect_eq "4 KiB random I/O on rnullb1 over 2 queues: 32 MiB moved" \
            $(( $(fio_field read.io_bytes) + $(fio_field write.io_bytes) )) $((32 << 20))
    else
        not_ok "fio 4 KiB random I/O on rnullb1"
    fi
    check "rmmod removes both devices" bash -c 'rmmod rnull_split && ! test -e /sys/block/rnullb0 && ! test -e /sys/block/rnullb1'
else
    not_ok "insmod with configured geometry"
fi
dmesg_clean "configured geometry"

# --- irqmode=1 completes through the block layer's softirq path -------------
if insmod "$KO" irqmode=1 submit_queues=2 gb=1; then
    if fio_json --name=s --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --size=64M --io_size=8M --ioengine=io_uring --iodepth=16 --numjobs=2 --group_reporting; then
        expect_eq "irqmode=1: 16 MiB of 4 KiB reads completed" "$(fio_field read.io_bytes)" $((16 << 20))
    else
        not_ok "irqmode=1: fio"
    fi
    unload
else
    not_ok "insmod irqmode=1"
fi
dmesg_clean "irqmode=1"

# --- irqmode=2: completion from a timer, completion_nsec after queueing ------
if insmod "$KO" irqmode=2 completion_nsec=2000000 submit_queues=2 hw_queue_depth=8 gb=1; then
    timer_checks "irqmode=2" request tags
    check "irqmode=2: rmmod" unload
else
    not_ok "insmod irqmode=2"
fi
dmesg_clean "irqmode=2"

# --- bad parameters are refused with EINVAL and a message ---------------------
refuse() {
    local param=$1 shown=$2; shift 2
    local out
    dmesg -C
    out=$(insmod "$KO" "$@" 2>&1)
    local rc=$?
    if [[ $rc != 0 ]] && grep -q "Invalid param" <<<"$out" && ! loaded \
            && ! test -e /sys/block/rnullb0 && dmesg | grep -q "rnull_split: .*$shown"; then
        ok "refused: $* ($param)"
    else
        not_ok "refused: $* (rc=$rc, out='$out', log='$(dmesg | tail -n 2 | tr '\n' ' ')')"
        unload
    fi
}
refuse gb "invalid gb=0" gb=0
refuse gb "invalid gb=-1" gb=-1
refuse gb "invalid gb=1048577" gb=1048577
refuse gb "invalid for parameter .gb" gb=abc
refuse bs "invalid bs=1000: must be a power of two" bs=1000
refuse bs "invalid bs=256" bs=256
refuse bs "invalid bs=8192" bs=8192
refuse bs "invalid bs=0" bs=0
refuse submit_queues "invalid submit_queues=0" submit_queues=0
refuse submit_queues "invalid submit_queues=99" submit_queues=99
refuse poll_queues "invalid poll_queues=-1" poll_queues=-1
refuse poll_queues "invalid poll_queues=99" poll_queues=99
refuse timeout "invalid timeout: must be <interval>,<probability>,<space>,<times>" timeout=1,50
refuse requeue "invalid requeue: must be <interval>" requeue=x
refuse zone_size "invalid zone_size=3: must be a non-zero power of two" zoned=1 gb=1 zone_size=3
refuse zoned "invalid zoned=1: must be 0 unless queue_mode=2" zoned=1 queue_mode=0
refuse init_hctx "invalid init_hctx: must be <interval>" init_hctx=1,2
refuse mbps "invalid mbps=40961: must be from 0 (no limit) to 40960" mbps=40961
refuse mbps "invalid mbps=10: must be 0 unless queue_mode=2" mbps=10 queue_mode=0
refuse cache_size "invalid cache_size=1: must be 0 unless memory_backed=1" cache_size=1
refuse cache_size "invalid cache_size=1: must be 0 unless queue_mode=2" cache_size=1 memory_backed=1 queue_mode=0
refuse zone_nr_conv "invalid zone_nr_conv=4" zoned=1 gb=1 zone_nr_conv=4
refuse hw_queue_depth "invalid hw_queue_depth=0" hw_queue_depth=0
refuse hw_queue_depth "invalid hw_queue_depth=10241" hw_queue_depth=10241
refuse max_sectors "invalid max_sectors=4" max_sectors=4
refuse max_sectors "invalid max_sectors=12" bs=4096 max_sectors=12
refuse max_sectors "invalid max_sectors=-8" max_sectors=-8
refuse queue_mode "invalid queue_mode=1" queue_mode=1
refuse queue_mode "invalid queue_mode=7" queue_mode=7
refuse irqmode "invalid irqmode=3" irqmode=3
refuse irqmode "invalid irqmode=-1" irqmode=-1
refuse nr_devices "invalid nr_devices=1025" nr_devices=1025
refuse nr_devices "invalid for parameter .nr_devices" nr_devices=-1
refuse split_clone "invalid split_clone: must be fast or deep" split_clone=slow
refuse discard "invalid discard=1" discard=1
refuse completion_nsec "invalid completion_nsec=10000000001" completion_nsec=10000000001
dmesg_clean "bad parameters"

# --- an open disk pins the module ---------------------------------------------
if insmod "$KO" gb=1; then
    exec 3</dev/rnullb0
    out=$(rmmod rnull_split 2>&1)
    rc=$?
    check "rmmod while /dev/rnullb0 is open is refused (in use)" \
        bash -c "[[ $rc != 0 ]] && grep -qi 'in use' <<<'$out' && grep -q '^rnull_split ' /proc/modules"
    check "the open disk still reads" dd if=/dev/rnullb0 of=/dev/null bs=4k count=4 status=none
    exec 3<&-
    check "rmmod once the disk is closed" unload
else
    not_ok "insmod gb=1"
fi
dmesg_clean "open disk pins the module"

# --- 20 load/unload cycles leave nothing behind --------------------------------
cycles=0
for i in $(seq 20); do
    insmod "$KO" nr_devices=2 gb=1 || break
    dd if=/dev/rnullb1 of=/dev/null bs=64k count=16 iflag=direct status=none || break
    rmmod rnull_split || break
    cycles=$i
done
expect_eq "20 insmod/rmmod cycles with I/O" "$cycles" 20
check "no rnullb device left after the cycles" bash -c '! ls /sys/block | grep -q rnullb'
check "module not loaded after the cycles" bash -c '! grep -q "^rnull_split " /proc/modules'
dmesg_clean "load/unload cycles"

# --- the same driver built as null_blk.ko, with C null_blk's names -------------
NKO=$MODDIR/rnull_split/null_blk.ko
if grep -q '^null_blk ' /proc/modules; then
    not_ok "null_blk build: C null_blk is loaded already"
elif insmod "$NKO" gb=1 memory_backed=1; then
    ok "insmod null_blk.ko (rnull_split's null_blk build)"
    check "/sys/module/null_blk exists" test -d /sys/module/null_blk
    check "its disk is /dev/nullb0" test -b /dev/nullb0
    check "no rnullb0" test ! -e /sys/block/rnullb0
    check "configfs subsystem nullb with features" test -r /sys/kernel/config/nullb/features
    check "modinfo lists its parameters under C null_blk's names" \
        bash -c "modinfo -F parm '$NKO' | grep -q '^poll_queues:'"
    if fio_json --name=v --filename=/dev/nullb0 --direct=1 --rw=randwrite --bs=4k --size=8M \
            --ioengine=io_uring --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
            --verify_state_save=0; then
        expect_eq "nullb0: 8 MiB written, read back and verified" "$(fio_field read.io_bytes)" $((8 << 20))
    else
        not_ok "nullb0: write and verify"
    fi
    check "mkdir /sys/kernel/config/nullb/nullb0 is refused (a load-time disk)" \
        bash -c '! mkdir /sys/kernel/config/nullb/nullb0 2>/dev/null'
    mkdir /sys/kernel/config/nullb/b1 && echo 64 > /sys/kernel/config/nullb/b1/size \
        && echo 1 > /sys/kernel/config/nullb/b1/power
    expect_eq "configfs nullb/b1: a 64 MiB disk b1" "$(blockdev --getsize64 /dev/b1 2>&1)" $((64 << 20))
    rmdir /sys/kernel/config/nullb/b1
    check "rmdir removes b1" test ! -e /sys/block/b1
    check "rmmod null_blk" rmmod null_blk
    check "rmmod removes nullb0 and the configfs subsystem" \
        bash -c '! test -e /sys/block/nullb0 && ! test -e /sys/kernel/config/nullb'
else
    not_ok "insmod null_blk.ko"
fi
dmesg -C
if insmod "$NKO" submit_queues=99 gb=1; then
    ok "null_blk build: submit_queues=99 loads, as C null_blk"
    expect_eq "... with nr_cpu_ids submission queues + 1 poll queue" \
        "$(ls /sys/block/nullb0/mq | wc -l)" $(( $(cat /sys/devices/system/cpu/possible | awk -F- '{print $NF + 1}') + 1 ))
    check "... and says so in the log" bash -c "dmesg | grep -q 'null_blk: submit_queues=99 adjusted to'"
    check "rmmod null_blk" rmmod null_blk
else
    not_ok "null_blk build: submit_queues=99 (C null_blk adjusts it)"
fi
dmesg_clean "null_blk build"

# --- configfs shows the values in force after power=1, as C null_blk's ----------
# in_force_run KO ROOT: on module KO (nr_devices=0 poll_queues=1), a
# memory-backed disk (blocking left 0) and a disk asking for 2 poll queues;
# a line each for what configfs shows.
in_force_run() {
    local ko=$1 r=$2
    insmod "$ko" nr_devices=0 poll_queues=1 || { echo "insmod $ko failed"; return; }
    mkdir $r/f1 && echo 16 > $r/f1/size && echo 1 > $r/f1/memory_backed && echo 1 > $r/f1/power
    echo "memory_backed: blocking $(cat $r/f1/blocking) after power=1"
    echo 0 > $r/f1/power
    echo "... $(cat $r/f1/blocking) after power=0"
    mkdir $r/f2 && echo 2 > $r/f2/poll_queues && echo 1 > $r/f2/power
    echo "poll_queues=2 on a module with 1: $(cat $r/f2/poll_queues) after power=1"
    echo 0 > $r/f2/power
    rmdir $r/f1 $r/f2
    rmmod "$(basename "$ko" .ko)"
}
in_force_c="memory_backed: blocking 1 after power=1
... 1 after power=0
poll_queues=2 on a module with 1: 1 after power=1"
dmesg -C
expect_eq "null_blk build: configfs shows the values in force, as C null_blk" \
    "$(in_force_run "$NKO" /sys/kernel/config/nullb)" "$in_force_c"
check "... and logs the poll_queues it lowered" \
    bash -c "dmesg | grep -q 'f2: poll_queues=2 adjusted to 1, as C null_blk does'"
# rnull_split keeps the poll queues it was given (docs/rnull_split.md)
expect_eq "rnull_split: configfs shows the values in force" \
    "$(in_force_run "$KO" /sys/kernel/config/rnull_split)" "${in_force_c%1 after power=1}2 after power=1"
if c_null_blk_ready "values in force"; then
    expect_eq "C null_blk: the same lines" "$(in_force_run "$CKO" /sys/kernel/config/nullb)" "$in_force_c"
fi
dmesg_clean "values in force"


# --- device numbers: the module's own major, minor = index, as C null_blk ------
# C null_blk registers the major "nullb" and gives disk N minor N, the
# lowest free index; a configfs disk takes the lowest free one at power=1.
# With the extended range (major 259, shared by all drivers) a stale open
# could reach another driver's disk (found by make fuzz, patch 0066).
devnums_run() { # KO CONFIGFS-ROOT DISK-PREFIX MAJOR-NAME
    local ko=$1 r=$2 d=$3 name=$4 maj x
    insmod "$ko" nr_devices=2 || { echo "insmod $ko failed"; return; }
    maj=$(awk -v n="$name" '$2 == n {print $1}' /proc/devices)
    echo "/proc/devices lists ${maj:+the major}"
    for x in ${d}0 ${d}1; do
        [[ $(cat /sys/block/$x/dev) == "$maj":* ]] && echo "$x: minor $(cut -d: -f2 /sys/block/$x/dev)"
    done
    mkdir $r/f1 && echo 7 > $r/f1/index && echo "f1: index $(cat $r/f1/index) written"
    echo 1 > $r/f1/power && echo "f1: $(cat /sys/block/f1/dev | sed "s/^$maj:/minor /"), index $(cat $r/f1/index)"
    echo 3 2>/dev/null > $r/f1/index && echo "f1: index written while powered" || echo "f1: index refused while powered"
    echo 0 > $r/f1/power && rmdir $r/f1
    mkdir $r/f2 && echo 1 > $r/f2/power && echo "f2, after f1 went: $(cat /sys/block/f2/dev | sed "s/^$maj:/minor /")"
    echo 0 > $r/f2/power && rmdir $r/f2
    rmmod "$(basename "$ko" .ko)"
    echo "after rmmod: $(awk -v n="$name" '$2 == n' /proc/devices | wc -l) lines"
}
devnums_want() { printf '%s\n' "/proc/devices lists the major" "${1}0: minor 0" "${1}1: minor 1" \
    "f1: index 7 written" "f1: minor 2, index 2" "f1: index refused while powered" \
    "f2, after f1 went: minor 2" "after rmmod: 0 lines"; }
expect_eq "null_blk build: major nullb, minor = index, as C null_blk" \
    "$(devnums_run "$NKO" /sys/kernel/config/nullb nullb nullb)" "$(devnums_want nullb)"
expect_eq "rnull_split: major rnullb, minor = index" \
    "$(devnums_run "$KO" /sys/kernel/config/rnull_split rnullb rnullb)" "$(devnums_want rnullb)"
if c_null_blk_ready "device numbers"; then
    expect_eq "C null_blk: the same numbers" \
        "$(devnums_run "$CKO" /sys/kernel/config/nullb nullb nullb)" "$(devnums_want nullb)"
fi
dmesg_clean "device numbers"


# --- /sys/module/<module>/parameters: the values in force, as C null_blk's ------
# Every parameter has a file (mode 0444, as C's: patch 0068), showing what
# insmod gave or the default (C's format: integers in decimal, bools Y/N).
params_run() { # KO
    local m
    m=$(basename "$1" .ko)
    insmod "$1" gb=1 bs=512 irqmode=2 completion_nsec=20000 hw_queue_depth=32 \
        memory_backed=1 timeout=1,100,0,1 || { echo "insmod $1 failed"; return; }
    for f in /sys/module/$m/parameters/*; do
        echo "${f##*/}=$(cat "$f") $(stat -c %a "$f")"
    done
    rmmod "$m"
}
n_params=$(params_run "$NKO")
expect_eq "null_blk build: a 0444 file for each of its 32 parameters" \
    "$(grep -c ' 444$' <<<"$n_params")" 32
expect_eq "... showing what insmod gave" \
    "$(grep -E '^(gb|bs|irqmode|completion_nsec|hw_queue_depth|memory_backed|timeout|blocking)=' <<<"$n_params" | tr '\n' ' ')" \
    "blocking=N 444 bs=512 444 completion_nsec=20000 444 gb=1 444 hw_queue_depth=32 444 irqmode=2 444 memory_backed=Y 444 timeout=1,100,0,1 444 "
check "rnull_split.ko: its parameters too" bash -c "insmod $KO gb=1 && grep -qx 1 /sys/module/rnull_split/parameters/gb && rmmod rnull_split"
if c_null_blk_ready "module parameters"; then
    c_params=$(params_run "$CKO")
    # the parameters both have: C's home_node, use_per_node_hctx and
    # virt_boundary are not ours, our split_clone is not C's, and C has
    # timeout, requeue and init_hctx only with its fault injection config.
    # Two types differ (docs/rnull_split.md): no_sched is a bool here (N),
    # an int in C (0); zone_append_max_sectors a u32 (default 2^32-1), an
    # int in C (INT_MAX).
    both() {
        grep -vE '^(home_node|use_per_node_hctx|virt_boundary|split_clone|timeout|requeue|init_hctx)=' <<<"$1" |
            sed -E 's/^no_sched=(N|0) /no_sched=off /; s/^zone_append_max_sectors=(4294967295|2147483647) /zone_append_max_sectors=max /'
    }
    expect_eq "C null_blk: the same files with the same values" "$(both "$n_params")" "$(both "$c_params")"
fi
dmesg_clean "module parameters"

finish

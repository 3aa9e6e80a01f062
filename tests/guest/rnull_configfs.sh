#!/bin/bash
# rnull_split's configfs devices (/sys/kernel/config/rnull_split, like C
# null_blk's nullb): mkdir takes the module parameters as defaults, attributes
# read back, power=1 creates /dev/<name> with the configured geometry and moves
# exact bytes, every store is refused with EBUSY while powered (but the
# queue counts, which change the live disk), numbers and booleans are read as
# C null_blk reads them (kstrtouint/kstrtoul(.., 0), kstrtobool; the same
# cases on C null_blk when its module is there), bad values with EINVAL and a
# message naming the attribute and the value, power=0 and rmdir remove the
# disk, rmmod waits for rmdir; clean kernel log after each group. rotational
# and the attribute names are compared with C null_blk's too.
. "$REPO/tests/lib.sh"
KO=${MODDIR:-$REPO}/rnull_split/rnull_split.ko
CFS=/sys/kernel/config/rnull_split
# C null_blk, to compare with when its module is there
CKO=${KDIR:-}/drivers/block/null_blk/null_blk.ko
CCFS=/sys/kernel/config/nullb

loaded() { grep -q '^rnull_split ' /proc/modules; }
unload() {
    local d
    for d in "$CFS"/*/; do [[ -d $d ]] && rmdir "$d"; done 2>/dev/null
    rmmod rnull_split 2>/dev/null
    ! loaded
}

# set DIR ATTR VALUE: write VALUE to DIR/ATTR; the write's error (if any)
# lands in $werr.
set_attr() { werr=$( (echo "$3" > "$CFS/$1/$2") 2>&1 ); }
get() { cat "$CFS/$1/$2"; }

# expect_set DIR ATTR VALUE: the write succeeds and reads back.
expect_set() {
    if set_attr "$@" && [[ $(get "$1" "$2") == "$3" ]]; then ok "$1: $2=$3"; else
        not_ok "$1: $2=$3 (error '$werr', reads '$(get "$1" "$2")')"
    fi
}

# expect_refused DIR ATTR VALUE ERRNO_TEXT [LOG_PATTERN]: the write fails with
# ERRNO_TEXT, the value does not change, and LOG_PATTERN (if given) is logged
# as an rnull_split message.
expect_refused() {
    local dir=$1 attr=$2 val=$3 err=$4 log=${5:-} before
    before=$(get "$dir" "$attr")
    dmesg -C
    if set_attr "$dir" "$attr" "$val"; then
        not_ok "$dir: $attr=$val refused with $err (accepted)"; return
    fi
    if ! grep -q "$err" <<<"$werr"; then
        not_ok "$dir: $attr=$val refused with $err (got '$werr')"; return
    fi
    if [[ $(get "$dir" "$attr") != "$before" ]]; then
        not_ok "$dir: $attr=$val refused with $err (value changed to '$(get "$dir" "$attr")')"; return
    fi
    if [[ -n $log ]] && ! dmesg | grep -q "rnull_split: $dir: $log"; then
        not_ok "$dir: $attr=$val refused with $err (no message '$log'; log: $(dmesg | tail -n 2 | tr '\n' ' '))"
        return
    fi
    ok "$dir: $attr=$val refused with $err${log:+ and \"$log\"}"
}

EINVAL="Invalid argument"
EBUSY="Device or resource busy"

# c_null_blk WHAT CMD...: load C null_blk (nr_devices=0), run CMD (checks
# that compare C's results with ours), unload it; SKIP without its module.
c_null_blk() {
    local what=$1; shift
    if ! c_null_blk_ready "$what"; then
        :
    elif insmod "$CKO" nr_devices=0; then
        "$@"
        check "rmmod C null_blk ($what)" rmmod null_blk
        dmesg_clean "C null_blk: $what"
    else
        not_ok "insmod $CKO nr_devices=0 ($what)"
    fi
}

# --- the subsystem appears with the module; defaults are the parameters' ---------
if insmod "$KO" nr_devices=0 gb=2 bs=4096 hw_queue_depth=32 split_clone=deep irqmode=0 rotational=1; then
    ok "insmod nr_devices=0 gb=2 bs=4096 hw_queue_depth=32 split_clone=deep irqmode=0 rotational=1"
    check "nr_devices=0 creates no disk" bash -c '! ls /sys/block | grep -q rnullb'
    check "$CFS exists" test -d "$CFS"
    expect_eq "features lists the attributes, like null_blk's" "$(cat "$CFS/features")" \
        "size,blocksize,max_sectors,queue_mode,irqmode,completion_nsec,memory_backed,discard,submit_queues,hw_queue_depth,split_clone,power,poll_queues,blocking,shared_tags,shared_tag_bitmap,no_sched,zoned,zone_size,zone_capacity,zone_nr_conv,zone_max_open,zone_max_active,zone_append_max_sectors,zone_full,badblocks,badblocks_once,badblocks_partial_io,zone_readonly,zone_offline,mbps,cache_size,fua,rotational,index"
    check "mkdir $CFS/cfg0" mkdir "$CFS/cfg0"
    expect_eq "attribute files and fault directories are null_blk's (+ split_clone)" \
        "$(ls "$CFS/cfg0" | sort | tr '\n' ' ')" \
        "badblocks badblocks_once badblocks_partial_io blocking blocksize cache_size completion_nsec discard fua hw_queue_depth index init_hctx_fault_inject irqmode max_sectors mbps memory_backed no_sched poll_queues power queue_mode requeue_inject rotational shared_tag_bitmap shared_tags size split_clone submit_queues timeout_inject zone_append_max_sectors zone_capacity zone_full zone_max_active zone_max_open zone_nr_conv zone_offline zone_readonly zone_size zoned "
    expect_eq "default size from gb=2: 2048 MiB" "$(get cfg0 size)" 2048
    expect_eq "default blocksize from bs" "$(get cfg0 blocksize)" 4096
    expect_eq "default hw_queue_depth from the parameter" "$(get cfg0 hw_queue_depth)" 32
    expect_eq "default split_clone from the parameter" "$(get cfg0 split_clone)" deep
    expect_eq "default queue_mode 2" "$(get cfg0 queue_mode)" 2
    expect_eq "default irqmode from the parameter" "$(get cfg0 irqmode)" 0
    expect_eq "default completion_nsec 10000" "$(get cfg0 completion_nsec)" 10000
    expect_eq "default submit_queues 1" "$(get cfg0 submit_queues)" 1
    expect_eq "default poll_queues 1" "$(get cfg0 poll_queues)" 1
    expect_eq "default max_sectors 0" "$(get cfg0 max_sectors)" 0
    expect_eq "default memory_backed 0, discard 0" "$(get cfg0 memory_backed)$(get cfg0 discard)" 00
    expect_eq "default rotational from the parameter" "$(get cfg0 rotational)" 1
    expect_eq "power reads 0 after mkdir" "$(get cfg0 power)" 0
    check "no disk before power=1" test ! -e /sys/block/cfg0
    check "rmdir an unpowered directory" rmdir "$CFS/cfg0"
    check "rmmod" unload
    check "rmmod removes $CFS" test ! -e "$CFS"
else
    not_ok "insmod nr_devices=0"
fi
dmesg_clean "defaults"

# --- configure, power on, geometry, I/O, EBUSY, power off ------------------------
if insmod "$KO" nr_devices=0; then
    mkdir "$CFS/cfg0"
    expect_eq "default rotational 0 (the parameter's default)" "$(get cfg0 rotational)" 0
    expect_set cfg0 size 1024
    expect_set cfg0 blocksize 4096
    expect_set cfg0 max_sectors 256
    expect_set cfg0 submit_queues 2
    expect_set cfg0 hw_queue_depth 32
    expect_set cfg0 irqmode 1
    expect_set cfg0 completion_nsec 20000
    expect_set cfg0 split_clone deep
    expect_set cfg0 split_clone fast
    expect_set cfg0 queue_mode 2
    expect_set cfg0 memory_backed 0
    expect_set cfg0 discard 0
    check "power=1" set_attr cfg0 power 1
    expect_eq "power reads 1" "$(get cfg0 power)" 1
    check "/dev/cfg0 is a block device" test -b /dev/cfg0
    expect_eq "size 1024 MiB" "$(blockdev --getsize64 /dev/cfg0)" $((1 << 30))
    expect_eq "logical_block_size 4096" "$(sysblk cfg0 queue/logical_block_size)" 4096
    expect_eq "physical_block_size 4096" "$(sysblk cfg0 queue/physical_block_size)" 4096
    expect_eq "max_hw_sectors_kb = max_sectors/2" "$(sysblk cfg0 queue/max_hw_sectors_kb)" 128
    expect_eq "three hardware queues (submit_queues=2 + poll_queues=1)" "$(ls /sys/block/cfg0/mq | wc -l)" 3
    expect_eq "32 tags per hardware queue" "$(cat /sys/block/cfg0/mq/*/nr_tags | sort -u)" 32
    expect_eq "not rotational (rotational=0)" "$(sysblk cfg0 queue/rotational)" 0
    check "power=1 again is a no-op" set_attr cfg0 power 1

    echo 16 > /sys/block/cfg0/queue/max_sectors_kb
    read0=$(awk '{print $1}' /sys/block/cfg0/stat)
    if fio_json --name=r --filename=/dev/cfg0 --direct=1 --rw=read --bs=1M \
            --size=16M --ioengine=io_uring --iodepth=8; then
        expect_eq "fio 1 MiB direct reads on cfg0: exactly 16 MiB" "$(fio_field read.io_bytes)" $((16 << 20))
        read1=$(awk '{print $1}' /sys/block/cfg0/stat)
        expect_eq "each 1 MiB read reached cfg0 as 64 requests" $((read1 - read0)) $((16 * 64))
    else
        not_ok "fio 1 MiB direct reads on cfg0"
    fi
    if fio_json --name=rw --filename=/dev/cfg0 --direct=1 --rw=randrw --bs=4k \
            --size=64M --io_size=8M --ioengine=io_uring --iodepth=16 --numjobs=2 --group_reporting; then
        expect_eq "fio 4 KiB random I/O on cfg0 over 2 queues (irqmode=1): 16 MiB" \
            $(( $(fio_field read.io_bytes) + $(fio_field write.io_bytes) )) $((16 << 20))
    else
        not_ok "fio 4 KiB random I/O on cfg0"
    fi

    # every store but power's is refused while powered; nothing changes
    expect_refused cfg0 size 2048 "$EBUSY"
    expect_refused cfg0 blocksize 512 "$EBUSY"
    expect_refused cfg0 max_sectors 8 "$EBUSY"
    expect_refused cfg0 queue_mode 0 "$EBUSY"
    expect_refused cfg0 irqmode 0 "$EBUSY"
    expect_refused cfg0 completion_nsec 1 "$EBUSY"
    expect_refused cfg0 memory_backed 1 "$EBUSY"
    expect_refused cfg0 discard 1 "$EBUSY"
    expect_refused cfg0 hw_queue_depth 64 "$EBUSY"
    expect_refused cfg0 split_clone deep "$EBUSY"
    expect_refused cfg0 rotational 1 "$EBUSY"
    expect_eq "the disk still has its size" "$(blockdev --getsize64 /dev/cfg0)" $((1 << 30))

    # ... but submit_queues and poll_queues, which change the live disk's
    # hardware queues (C null_blk's nullb_update_nr_hw_queues)
    nr_hctx() { ls /sys/block/cfg0/mq | wc -l; }
    hctx_types() { cat /sys/kernel/debug/block/cfg0/hctx*/type | tr '\n' ' '; }
    expect_set cfg0 submit_queues 1
    expect_eq "submit_queues=1 on the powered disk: 2 hardware queues" "$(nr_hctx)" 2
    expect_eq "submit_queues=1: queue 0 default, queue 1 poll" "$(hctx_types)" "default poll "
    expect_set cfg0 poll_queues 0
    expect_eq "poll_queues=0 on the powered disk: 1 hardware queue" "$(nr_hctx)" 1
    expect_eq "poll_queues=0: io_poll 0" "$(sysblk cfg0 queue/io_poll)" 0
    expect_refused cfg0 poll_queues 2 "$EINVAL" "invalid poll_queues=2: at most 1"
    expect_refused cfg0 submit_queues 0 "$EINVAL" "invalid submit_queues=0"
    expect_set cfg0 poll_queues 1
    expect_set cfg0 submit_queues 2
    expect_eq "submit_queues=2 poll_queues=1 again: 3 hardware queues" "$(nr_hctx)" 3
    expect_eq "queues 0-1 default, queue 2 poll" "$(hctx_types)" "default default poll "
    polled0=$(cat /sys/kernel/debug/rnull_split/cfg0/polled)
    if fio_json --name=hipri --filename=/dev/cfg0 --direct=1 --rw=randread --bs=4k \
            --size=4M --ioengine=io_uring --hipri=1 --iodepth=8; then
        expect_eq "after the changes, io_uring hipri: 1024 requests completed by polling" \
            $(( $(cat /sys/kernel/debug/rnull_split/cfg0/polled) - polled0 )) 1024
    else
        not_ok "fio io_uring hipri after the queue changes"
    fi
    dmesg_clean "submit_queues/poll_queues on a powered disk"

    check "power=0" set_attr cfg0 power 0
    check "power=0 removes the disk" test ! -e /sys/block/cfg0
    check "power=0 removes /dev/cfg0" test ! -e /dev/cfg0
    expect_eq "power reads 0" "$(get cfg0 power)" 0
    expect_set cfg0 size 2048
    check "power=1 with the new size" set_attr cfg0 power 1
    expect_eq "cfg0 is now 2 GiB" "$(blockdev --getsize64 /dev/cfg0)" $((2 << 30))
    check "rmmod is refused while a directory exists" bash -c '! rmmod rnull_split 2>/dev/null'
    check "rmdir of a powered directory" rmdir "$CFS/cfg0"
    check "rmdir removes the disk" test ! -e /sys/block/cfg0
    check "rmmod after rmdir" unload
else
    not_ok "insmod nr_devices=0"
fi
dmesg_clean "configure, power, EBUSY, power off"

# --- several devices, a load-time device's name, bio mode ----------------------------
if insmod "$KO" gb=1; then
    dmesg -C
    check "mkdir rnullb0 (a load-time disk's name) is refused" bash -c "! mkdir $CFS/rnullb0 2>/dev/null"
    check "... with a message" bash -c "dmesg | grep -q 'rnull_split: rnullb0: name of a load-time device'"
    mkdir "$CFS/a" "$CFS/b" "$CFS/rnullb1"
    set_attr a size 64; set_attr b size 128; set_attr rnullb1 size 32
    check "power=1 on a, b and rnullb1" bash -c "echo 1 > $CFS/a/power && echo 1 > $CFS/b/power && echo 1 > $CFS/rnullb1/power"
    expect_eq "a is 64 MiB" "$(blockdev --getsize64 /dev/a)" $((64 << 20))
    expect_eq "b is 128 MiB" "$(blockdev --getsize64 /dev/b)" $((128 << 20))
    expect_eq "rnullb1 is 32 MiB" "$(blockdev --getsize64 /dev/rnullb1)" $((32 << 20))
    expect_eq "load-time rnullb0 untouched" "$(blockdev --getsize64 /dev/rnullb0)" $((1 << 30))
    check "rmdir a, b, rnullb1" rmdir "$CFS/a" "$CFS/b" "$CFS/rnullb1"
    check "their disks are gone, rnullb0 stays" bash -c 'test ! -e /sys/block/a && test ! -e /sys/block/b && test ! -e /sys/block/rnullb1 && test -e /sys/block/rnullb0'

    mkdir "$CFS/bio0"
    expect_set bio0 queue_mode 0
    expect_set bio0 split_clone deep
    expect_set bio0 max_sectors 32
    expect_set bio0 size 256
    if set_attr bio0 power 1; then
        ok "bio0: power=1 with queue_mode=0"
        if fio_json --name=b --filename=/dev/bio0 --direct=1 --rw=read --bs=1M \
                --size=16M --ioengine=io_uring --iodepth=4; then
            expect_eq "fio 1 MiB direct reads on bio-mode bio0: exactly 16 MiB" \
                "$(fio_field read.io_bytes)" $((16 << 20))
        else
            not_ok "fio on bio-mode bio0"
        fi
    else
        not_ok "bio0: power=1 with queue_mode=0 ($werr; $(dmesg | tail -n 1))"
    fi
    check "rmdir bio0" rmdir "$CFS/bio0"
    check "rmmod with configfs devices gone" unload
    check "no disk left" bash -c '! ls /sys/block | grep -qE "^(rnullb|a$|b$|bio0)"'
else
    not_ok "insmod gb=1"
fi
dmesg_clean "several devices"

# --- rotational (C null_blk's): BLK_FEAT_ROTATIONAL, queue/rotational --------------
# rot_cycle ROOT NAME: on the unpowered ROOT/NAME, for each value a store of
# rotational, power=1, what the attribute and /sys/block/NAME/queue/rotational
# read, power=0; one line per value.
rot_cycle() {
    local root=$1 name=$2 v
    for v in 1 0 yes n; do
        if ! (echo "$v" > "$root/$name/rotational" && echo 1 > "$root/$name/power") 2>/dev/null; then
            echo "$v: refused"; continue
        fi
        echo "$v: attribute $(cat "$root/$name/rotational"), queue/rotational $(sysblk "$name" queue/rotational)"
        echo 0 > "$root/$name/power"
    done
}
rot_want="1: attribute 1, queue/rotational 1
0: attribute 0, queue/rotational 0
yes: attribute 1, queue/rotational 1
n: attribute 0, queue/rotational 0"
rnull_features=
if insmod "$KO" nr_devices=0; then
    rnull_features=$(cat "$CFS/features")
    mkdir "$CFS/rot"
    set_attr rot size 64
    expect_eq "rot: rotational=1, 0, yes, n, each then power=1: queue/rotational follows" \
        "$(rot_cycle "$CFS" rot)" "$rot_want"
    expect_set rot rotational 1
    expect_set rot queue_mode 0
    check "rot: power=1, bio-based" set_attr rot power 1
    expect_eq "rot: a bio-based disk is rotational too" "$(sysblk rot queue/rotational)" 1
    expect_refused rot rotational 0 "$EBUSY"
    check "rmdir rot" rmdir "$CFS/rot"
    check "rmmod" unload
else
    not_ok "insmod nr_devices=0 (rotational)"
fi
dmesg_clean "rotational"
c_rotational() {
    # the attributes of both, as their features files list them
    tr ',' '\n' <<<"$rnull_features" | sort > /tmp/features_rnull
    tr ',' '\n' < "$CCFS/features" | sort > /tmp/features_c
    expect_eq "C null_blk's attributes that rnull_split lacks" \
        "$(comm -13 /tmp/features_rnull /tmp/features_c | tr '\n' ' ')" \
        "home_node use_per_node_hctx virt_boundary "
    expect_eq "rnull_split's attributes that C null_blk lacks" \
        "$(comm -23 /tmp/features_rnull /tmp/features_c | tr '\n' ' ')" "split_clone "
    mkdir "$CCFS/rot"
    echo 64 > "$CCFS/rot/size"
    expect_eq "C null_blk: rotational=1, 0, yes, n, each then power=1: as ours" \
        "$(rot_cycle "$CCFS" rot)" "$rot_want"
    rmdir "$CCFS/rot"
}
c_null_blk "rotational" c_rotational

# --- memory-backed device with discard and timer completions ------------------------
if insmod "$KO" nr_devices=0; then
    mkdir "$CFS/mem0"
    expect_set mem0 size 64
    expect_set mem0 blocksize 4096
    expect_set mem0 memory_backed 1
    expect_set mem0 discard 1
    expect_set mem0 irqmode 2
    expect_set mem0 completion_nsec 100000
    if set_attr mem0 power 1; then
        ok "mem0: power=1 with memory_backed=1 discard=1 irqmode=2"
        # (no /dev/fd in the guest: compare files, not process substitutions)
        head -c 4M /dev/urandom > /tmp/pat
        head -c 2M /dev/zero > /tmp/zero2m
        rd() { dd if=/dev/mem0 of="$1" bs=1M skip="$2" count="$3" iflag=direct status=none; }
        dd if=/tmp/pat of=/dev/mem0 bs=1M seek=2 oflag=direct status=none
        rd /tmp/got 2 4
        check "mem0 reads back what was written" cmp /tmp/got /tmp/pat
        rd /tmp/got 0 2
        check "mem0: a never-written range reads as zeroes" cmp /tmp/got /tmp/zero2m
        if blkdiscard -o $((3 << 20)) -l $((1 << 20)) /dev/mem0; then
            rd /tmp/got 2 4
            head -c 1M /tmp/pat > /tmp/want; head -c 1M /dev/zero >> /tmp/want
            tail -c 2M /tmp/pat >> /tmp/want
            check "mem0: a discarded MiB reads as zeroes, the rest keeps its data" cmp /tmp/got /tmp/want
        else
            not_ok "blkdiscard on mem0"
        fi
        expect_refused mem0 memory_backed 0 "$EBUSY"
    else
        not_ok "mem0: power=1 with memory_backed=1 discard=1 irqmode=2 ($werr; $(dmesg | tail -n 1))"
    fi
    check "rmdir mem0" rmdir "$CFS/mem0"
    check "rmmod" unload
else
    not_ok "insmod nr_devices=0"
fi
dmesg_clean "memory-backed"

# --- power=0 keeps a memory-backed disk's data, not its cache's (C null_blk's) ---
# keep_run ROOT NAME: a memory-backed disk ROOT/NAME of 16 MiB; a line per
# step. C null_blk frees the data only at rmdir, and the cache's pages at
# power=0 (how power-fail tests lose a volatile cache).
keep_run() {
    local d=$1/$2 dev=/dev/$2 r
    rd() { dd if="$dev" bs=64k skip="$1" count=1 iflag=direct status=none | cmp -s - "$2"; }
    head -c 64K /dev/urandom > /tmp/keep1; head -c 64K /dev/urandom > /tmp/keep2
    head -c 64K /dev/zero > /tmp/keep0
    mkdir "$d" && echo 16 > "$d/size" && echo 1 > "$d/memory_backed" && echo 1 > "$d/power" &&
        dd if=/tmp/keep1 of="$dev" bs=64k oflag=direct status=none || { echo "setup failed"; return 1; }
    echo 0 > "$d/power"; echo 1 > "$d/power"
    if rd 0 /tmp/keep1; then echo "kept across power=0, power=1"; else echo "lost at power=0"; fi
    echo 0 > "$d/power"; echo 32 > "$d/size"; echo 1 > "$d/power"
    if rd 0 /tmp/keep1; then r=kept; else r=lost; fi
    echo "$r when the size grows to 32 MiB ($(blockdev --getsize64 "$dev") bytes)"
    echo 0 > "$d/power"; echo 1 > "$d/cache_size"; echo 1 > "$d/power"
    dd if=/tmp/keep2 of="$dev" bs=64k seek=1 oflag=direct status=none
    if rd 1 /tmp/keep2; then echo "cache: a write reads back"; else echo "cache: a write is lost"; fi
    echo 0 > "$d/power"; echo 1 > "$d/power"
    if rd 1 /tmp/keep0; then r="lost (zeroes)"; elif rd 1 /tmp/keep2; then r=kept; else r=other; fi
    echo "cache: a write not flushed at power=0: $r"
    dd if=/tmp/keep2 of="$dev" bs=64k seek=1 oflag=direct conv=fsync status=none
    echo 0 > "$d/power"; echo 1 > "$d/power"
    if rd 1 /tmp/keep2; then r=kept; else r=lost; fi
    echo "cache: a flushed write at power=0: $r; the first write: $(rd 0 /tmp/keep1 && echo kept || echo lost)"
    echo 0 > "$d/power"; rmdir "$d"; mkdir "$d"
    echo 16 > "$d/size"; echo 1 > "$d/memory_backed"; echo 1 > "$d/power"
    if rd 0 /tmp/keep0; then r="gone (zeroes)"; else r=kept; fi
    echo "after rmdir and mkdir: $r"
    echo 0 > "$d/power"; rmdir "$d"
}
keep_want="kept across power=0, power=1
kept when the size grows to 32 MiB (33554432 bytes)
cache: a write reads back
cache: a write not flushed at power=0: lost (zeroes)
cache: a flushed write at power=0: kept; the first write: kept
after rmdir and mkdir: gone (zeroes)"
if insmod "$KO" nr_devices=0; then
    expect_eq "keep: memory-backed data across power=0 and power=1, not the cache's" \
        "$(keep_run "$CFS" keep)" "$keep_want"
    check "keep: rmmod" unload
else
    not_ok "insmod nr_devices=0 (keep)"
fi
dmesg_clean "power=0 keeps data"
c_keep() {
    expect_eq "C null_blk: memory-backed data across power cycles: as ours" \
        "$(keep_run "$CCFS" keep)" "$keep_want"
}
c_null_blk "power=0 keeps data" c_keep

# --- badblocks, badblocks_once, badblocks_partial_io (C null_blk's) ------------------
# bb_once_run ROOT NAME: a memory-backed disk ROOT/NAME with badblocks_once=1
# and, once powered, badblocks +0-1023, which the kernel's list stores as two
# records of 512 sectors (0-511, 512-1023); then 4 KiB direct reads at
# sectors 0, 0, 600, 600. A line for the list, then one per read: its
# result and the list after it. C null_blk's badblocks_once clears only the
# record a request met (badblocks_clear(first_bad, bad_sectors)), so the
# read at 600 meets the second record after the first is gone.
bb_once_run() {
    local root=$1 name=$2 d=$1/$2 s r
    mkdir "$d" || return 1
    echo 16 > "$d/size" && echo 1 > "$d/memory_backed" && echo 1 > "$d/badblocks_once" &&
        echo 1 > "$d/power" && echo +0-1023 > "$d/badblocks" || { rmdir "$d"; return 1; }
    echo "badblocks '$(tr '\n' ',' < "$d/badblocks")'"
    for s in 0 0 600 600; do
        if dd if="/dev/$name" of=/dev/null bs=4k skip=$((s / 8)) count=1 iflag=direct \
                status=none 2>/dev/null; then r=ok; else r=EIO; fi
        echo "read at $s: $r, badblocks '$(tr '\n' ',' < "$d/badblocks")'"
    done
    echo 0 > "$d/power"
    rmdir "$d"
}
bb_once_want="badblocks '0 512,512 512,'
read at 0: EIO, badblocks '512 512,'
read at 0: ok, badblocks '512 512,'
read at 600: EIO, badblocks ''
read at 600: ok, badblocks ''"
if insmod "$KO" nr_devices=0; then
    sec() { dd if=/dev/$1 of=/dev/null bs=512 skip=$2 count=$3 iflag=direct status=none 2>/dev/null; }
    nosec() { ! sec "$@"; }
    badwrite() { ! dd if=/tmp/bbpat of=/dev/bb bs=16k count=1 oflag=direct status=none 2>/dev/null; }
    mkdir "$CFS/bb"
    expect_set bb size 16
    expect_set bb memory_backed 1
    check "bb: power=1" set_attr bb power 1
    expect_eq "bb: no bad blocks at first" "$(get bb badblocks)" ""
    expect_refused bb zone_readonly 0 "$EINVAL" "not a zoned disk"
    check "badblocks +16-23, the disk powered" set_attr bb badblocks "+16-23"
    check "badblocks +100-1123 (0x64-0x463)" set_attr bb badblocks "+0x64-0x463"
    expect_eq "badblocks lists START LENGTH, a line per record of at most 512 sectors" \
        "$(get bb badblocks | tr '\n' ' ')" "16 8 100 512 612 512 "
    check "a read of sector 16 fails" nosec bb 16 1
    check "... and again (badblocks_once=0)" nosec bb 20 8
    check "a read of sectors 0-15 succeeds" sec bb 0 16
    check "a read of sectors 24-99 succeeds" sec bb 24 76
    check "a read of sectors 1124-2047 succeeds" sec bb 1124 924
    check "badblocks -100-1123 clears" set_attr bb badblocks "-100-1123"
    check "badblocks -18-19 splits" set_attr bb badblocks "-18-19"
    expect_eq "badblocks now 16-17 and 20-23" "$(get bb badblocks | tr '\n' ' ')" "16 2 20 4 "
    check "a read of sectors 18-19 succeeds" sec bb 18 2
    expect_refused bb badblocks "+9-0" "$EINVAL" "invalid badblocks '+9-0'"
    expect_refused bb badblocks "16-23" "$EINVAL" "invalid badblocks"
    expect_refused bb badblocks "+1-x" "$EINVAL" "invalid badblocks"
    expect_refused bb badblocks_once 1 "$EBUSY"
    check "badblocks +16-23 again" set_attr bb badblocks "+16-23"
    check "bb: power=0" set_attr bb power 0
    expect_eq "the bad blocks stay with the directory" "$(get bb badblocks | tr '\n' ' ')" "16 8 "
    expect_set bb badblocks_once 1
    expect_set bb badblocks_partial_io 1
    check "bb: power=1 with badblocks_once=1 badblocks_partial_io=1" set_attr bb power 1
    head -c 16K /dev/urandom > /tmp/bbpat
    check "a 16 KiB write over sectors 0-31 fails (bad 16-23)" \
        badwrite
    dd if=/dev/bb of=/tmp/bbgot bs=16k count=1 iflag=direct status=none
    head -c 8K /tmp/bbpat > /tmp/bbwant; head -c 8K /tmp/bbgot > /tmp/bbhead
    tail -c 8K /tmp/bbgot > /tmp/bbtail; head -c 8K /dev/zero > /tmp/bbzero
    check "... badblocks_partial_io: sectors 0-15 were written" cmp /tmp/bbwant /tmp/bbhead
    check "... and not sectors 16-31 (they read as zeroes)" cmp /tmp/bbzero /tmp/bbtail
    expect_eq "... badblocks_once: the record met is cleared" "$(get bb badblocks)" ""
    check "the same write again succeeds" \
        dd if=/tmp/bbpat of=/dev/bb bs=16k count=1 oflag=direct status=none
    dd if=/dev/bb of=/tmp/bbgot bs=16k count=1 iflag=direct status=none
    check "... and all 16 KiB read back" cmp /tmp/bbpat /tmp/bbgot
    check "bb: power=0" set_attr bb power 0
    expect_refused bb zone_offline 0 "$EINVAL" "zone_offline: the disk is not powered"
    rmdir "$CFS/bb"
    # a bio-based disk checks its bios the same way
    mkdir "$CFS/bbio"
    expect_set bbio queue_mode 0
    expect_set bbio size 16
    check "bbio: power=1" set_attr bbio power 1
    check "bbio: badblocks +8-8" set_attr bbio badblocks "+8-8"
    check "bbio (queue_mode=0): a read of sector 8 fails" nosec bbio 8 1
    check "bbio: a read of sectors 0-7 succeeds" sec bbio 0 8
    check "bbio: power=0" set_attr bbio power 0
    rmdir "$CFS/bbio"
    # badblocks_once clears the record met, not the whole range written
    expect_eq "bbonce: +0-1023 with badblocks_once=1: reads at 0 and 600 fail once each" \
        "$(bb_once_run "$CFS" bbonce)" "$bb_once_want"
    check "badblocks: rmmod" unload
else
    not_ok "insmod nr_devices=0 (badblocks)"
fi
dmesg_clean "badblocks"
c_bb_once() {
    expect_eq "C null_blk: +0-1023 with badblocks_once=1: as ours" \
        "$(bb_once_run "$CCFS" bbonce)" "$bb_once_want"
}
c_null_blk "badblocks_once" c_bb_once

# --- fault injection directories: timeout_inject/, requeue_inject/, init_hctx_fault_inject/
if insmod "$KO" nr_devices=0 requeue=1,100,0,7; then
    F=$CFS/fi
    mkdir "$F"
    check "fi: timeout_inject/, requeue_inject/ and init_hctx_fault_inject/, as C null_blk's" \
        test -d "$F/timeout_inject" -a -d "$F/requeue_inject" -a -d "$F/init_hctx_fault_inject"
    expect_eq "fi: the fault attributes" "$(ls "$F/requeue_inject" | tr '\n' ' ')" \
        "interval probability space times verbose "
    fattrs() { (cd "$F/$1" && cat probability interval space times verbose | tr '\n' ' '); }
    expect_eq "requeue_inject/ starts as the module's requeue=1,100,0,7" "$(fattrs requeue_inject)" "100 1 0 7 2 "
    expect_eq "timeout_inject/ starts as C's default (probability 0)" "$(fattrs timeout_inject)" "0 1 0 1 2 "
    echo 20 > "$F/requeue_inject/times"
    expect_set fi memory_backed 1
    expect_set fi size 64
    check "fi: power=1" set_attr fi power 1
    if fio_json --name=rq --filename=/dev/fi --direct=1 --rw=randwrite --bs=4k --size=4M \
            --ioengine=io_uring --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
            --verify_state_save=0; then
        expect_eq "requeue_inject/times=20: 4 MiB written, read back and verified" \
            "$(fio_field read.io_bytes)" $((4 << 20))
    else
        not_ok "requeue_inject/times=20: write and verify"
    fi
    expect_eq "... exactly 20 requests requeued" "$(cat /sys/kernel/debug/rnull_split/fi/requeued)" 20
    expect_eq "... requeue_inject/times counted down to 0" "$(cat "$F/requeue_inject/times")" 0
    # set on the powered disk: the next request times out
    echo 1 > "$F/timeout_inject/times"; echo 100 > "$F/timeout_inject/probability"
    t0=$(date +%s)
    check "timeout_inject/probability=100 times=1 on the powered disk: a read fails" \
        bash -c "! dd if=/dev/fi of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null"
    check "... after the 5 s request timeout" test $(( $(date +%s) - t0 )) -ge 4
    expect_eq "... ended by the timeout handler" "$(cat /sys/kernel/debug/rnull_split/fi/timed_out)" 1
    check "... and the next read succeeds (times=1)" \
        dd if=/dev/fi of=/dev/null bs=4k count=1 iflag=direct status=none
    dmesg -C
    check "timeout_inject/probability=abc is refused" \
        bash -c "! echo abc > $F/timeout_inject/probability 2>/dev/null"
    check "... with a message naming it" \
        bash -c "dmesg | grep -q 'rnull_split: fi/timeout_inject: invalid probability'"
    check "timeout_inject/interval=-1 is refused" \
        bash -c "! echo -1 > $F/timeout_inject/interval 2>/dev/null"
    check "timeout_inject/times=-1 (no limit) is taken" sh -c "echo -1 > $F/timeout_inject/times"
    expect_eq "... and reads back" "$(cat "$F/timeout_inject/times")" -1
    check "fi: power=0" set_attr fi power 0
    check "rmdir removes the directory and its fault directories" rmdir "$F"
    check "fault directories: rmmod" unload
else
    not_ok "insmod nr_devices=0 requeue=1,100,0,7"
fi
dmesg_clean "fault injection directories"

# --- bad values: EINVAL, a message naming the attribute, value unchanged -------------
if insmod "$KO" nr_devices=0; then
    mkdir "$CFS/bad"
    expect_refused bad size abc "$EINVAL" "invalid size 'abc': not a number of type unsigned long"
    expect_refused bad size 0 "$EINVAL" "invalid size=0"
    expect_refused bad size 1073741825 "$EINVAL" "invalid size=1073741825"
    expect_refused bad size 99999999999999999999 "$EINVAL" \
        "invalid size '99999999999999999999': out of range for type unsigned long"
    expect_refused bad size -1 "$EINVAL" "invalid size '-1': not a number of type unsigned long"
    expect_refused bad blocksize 1000 "$EINVAL" "invalid blocksize=1000: must be a power of two"
    expect_refused bad blocksize 0 "$EINVAL" "invalid blocksize=0"
    expect_refused bad blocksize 256 "$EINVAL" "invalid blocksize=256"
    expect_refused bad blocksize 8192 "$EINVAL" "invalid blocksize=8192"
    expect_refused bad blocksize 4096x "$EINVAL" "invalid blocksize '4096x': not a number of type unsigned int"
    expect_refused bad max_sectors 4 "$EINVAL" "invalid max_sectors=4"
    expect_refused bad queue_mode 1 "$EINVAL" "invalid queue_mode=1"
    expect_refused bad queue_mode 7 "$EINVAL" "invalid queue_mode=7"
    expect_refused bad irqmode 3 "$EINVAL" "invalid irqmode=3"
    expect_refused bad completion_nsec 10000000001 "$EINVAL" "invalid completion_nsec=10000000001"
    expect_refused bad submit_queues 0 "$EINVAL" "invalid submit_queues=0"
    expect_refused bad submit_queues 99 "$EINVAL" "invalid submit_queues=99"
    expect_refused bad poll_queues 99 "$EINVAL" "invalid poll_queues=99"
    expect_refused bad hw_queue_depth 0 "$EINVAL" "invalid hw_queue_depth=0"
    expect_refused bad hw_queue_depth 10241 "$EINVAL" "invalid hw_queue_depth=10241"
    expect_refused bad split_clone slow "$EINVAL" "invalid split_clone: must be fast or deep"
    expect_refused bad memory_backed 2 "$EINVAL" "invalid memory_backed '2': must be 1/y/t/e/on or 0/n/f/d/off"
    expect_refused bad discard maybe "$EINVAL" "invalid discard 'maybe': must be 1/y/t/e/on or 0/n/f/d/off"
    expect_refused bad power 2 "$EINVAL" "invalid power '2': must be 1/y/t/e/on or 0/n/f/d/off"
    expect_refused bad mbps 40961 "$EINVAL" "invalid mbps=40961: must be from 0 (no limit) to 40960"
    expect_set bad mbps 0

    # every number attribute x negative, non-numeric, empty, trailing
    # garbage, white space before, bad hex and octal, and huge values (2^64
    # and more do not fit any of them; 2^32 does not fit the 32-bit ones),
    # every boolean one x what kstrtobool() refuses (it reads only the first
    # one or two characters: "1x" is true): EINVAL, a message naming it and
    # the value, value unchanged
    nbad=0
    for attr in size blocksize max_sectors queue_mode irqmode completion_nsec \
            submit_queues poll_queues hw_queue_depth zone_size zone_capacity \
            zone_nr_conv zone_max_open zone_max_active zone_append_max_sectors \
            mbps cache_size; do
        for v in -1 abc "" 1x " 1" 0x 08 0x1g 99999999999999999999; do
            expect_refused bad "$attr" "$v" "$EINVAL" "invalid $attr '$v'"; nbad=$((nbad + 1))
        done
    done
    for attr in memory_backed discard power blocking shared_tags shared_tag_bitmap \
            no_sched zoned zone_full badblocks_once badblocks_partial_io fua rotational; do
        for v in -1 abc "" 2 o ox " 1" 99999999999999999999; do
            expect_refused bad "$attr" "$v" "$EINVAL" "invalid $attr '$v'"; nbad=$((nbad + 1))
        done
    done
    for attr in blocksize max_sectors queue_mode irqmode submit_queues poll_queues \
            hw_queue_depth zone_nr_conv zone_max_open zone_max_active \
            zone_append_max_sectors mbps; do
        expect_refused bad "$attr" 4294967296 "$EINVAL" \
            "invalid $attr '4294967296': out of range for type unsigned int"; nbad=$((nbad + 1))
    done
    for v in "" -1 1 "fast deep"; do
        expect_refused bad split_clone "$v" "$EINVAL" "invalid split_clone"; nbad=$((nbad + 1))
    done
    diag "$nbad malformed values refused over all 31 value attributes"

    # rules between attributes are checked at power=1
    set_attr bad blocksize 4096; set_attr bad max_sectors 12
    expect_refused bad power 1 "$EINVAL" "invalid max_sectors=12: must be .* multiple of the block size"
    check "no disk after the refused power=1" test ! -e /sys/block/bad
    set_attr bad max_sectors 16; set_attr bad discard 1
    expect_refused bad power 1 "$EINVAL" "invalid discard=1: must be 0 unless memory_backed=1"
    check "no disk after the refused power=1" test ! -e /sys/block/bad
    set_attr bad discard 0
    set_attr bad zoned 1; set_attr bad zone_size 3
    expect_refused bad power 1 "$EINVAL" "invalid zone_size=3: must be a non-zero power of two"
    set_attr bad zone_size 524288
    expect_refused bad power 1 "$EINVAL" "invalid zone_size=524288: must be at most the device size"
    set_attr bad zone_size 64; set_attr bad queue_mode 0
    expect_refused bad power 1 "$EINVAL" "invalid zoned=1: must be 0 unless queue_mode=2"
    set_attr bad queue_mode 2
    check "power=1 once the configuration is consistent (zoned, 64 MiB zones)" set_attr bad power 1
    expect_eq "configfs zoned=1: host-managed" "$(sysblk bad queue/zoned)" host-managed
    expect_eq "configfs zoned=1 zone_size=64: $(( $(get bad size) / 64 )) zones" \
        "$(sysblk bad queue/nr_zones)" $(( $(get bad size) / 64 ))
    # zone_readonly / zone_offline (write-only): a zone's condition, as C's
    zsec=$((64 << 11))
    zcond() { blkzone report -o $(($1 * zsec)) -c 1 /dev/bad | grep -o '([a-z][a-z])'; }
    zio() { dd if=$2 of=$3 bs=4k count=1 $4=$((zsec * $1 / 8)) $5=direct status=none 2>/dev/null; }
    nozio() { ! zio "$@"; }
    expect_eq "zone_readonly and zone_offline are write-only (0200)" \
        "$(stat -c %a "$CFS/bad/zone_readonly" "$CFS/bad/zone_offline" | tr '\n' ' ')" "200 200 "
    check "zone_readonly=$zsec (zone 1)" set_attr bad zone_readonly $zsec
    expect_eq "... blkzone reports zone 1 read-only" "$(zcond 1)" "(ro)"
    check "... a write to it fails" nozio 1 /dev/zero /dev/bad seek oflag
    check "... a read of it succeeds" zio 1 /dev/bad /dev/null skip iflag
    check "zone_readonly=$zsec again" set_attr bad zone_readonly $zsec
    expect_eq "... zone 1 is empty again" "$(zcond 1)" "(em)"
    check "... and takes writes" zio 1 /dev/zero /dev/bad seek oflag
    check "zone_offline=$((2 * zsec)) (zone 2, in hex)" set_attr bad zone_offline "$(printf '0x%x' $((2 * zsec)))"
    expect_eq "... blkzone reports zone 2 offline" "$(zcond 2)" "(of)"
    check "... a read of it fails" nozio 2 /dev/bad /dev/null skip iflag
    check "zone_readonly on the offline zone 2" set_attr bad zone_readonly $((2 * zsec))
    expect_eq "... makes it read-only" "$(zcond 2)" "(ro)"
    expect_refused bad zone_offline $(( $(get bad size) << 11 )) "$EINVAL" \
        "sector $(( $(get bad size) << 11 )) is past the end or in a conventional zone"
    expect_refused bad zone_readonly abc "$EINVAL" \
        "invalid zone_readonly 'abc': not a number of type unsigned long"
    long=disk_name_longer_than_the_32_bytes_of_disk_name
    mkdir "$CFS/$long"
    expect_refused "$long" power 1 "" "cannot create the disk"
    check "no disk and a clean refusal for a name too long for a disk" test ! -e "/sys/block/$long"
    rmdir "$CFS/$long"
    check "rmdir" rmdir "$CFS/bad"
    check "rmmod" unload
else
    not_ok "insmod nr_devices=0"
fi
dmesg_clean "bad values"

# --- numbers and booleans as C null_blk reads them ------------------------------------
# kstrtobool() for booleans (only the first one or two characters count),
# kstrtouint(.., 0) / kstrtoul(.., 0) for numbers (0x hex, 0 octal, an
# optional +), exactly one trailing newline. Each case: ATTR VALUE WANT, in
# order on one directory kx: WANT is what ATTR reads after VALUE was written
# (echo, so with a newline), or EINVAL for a write refused with the value
# unchanged. VALUE '' is the empty string; \x20 and \n are a space and an
# extra newline. The same cases run on C null_blk's configfs when its module
# is there, which must give the same results.
KX_CASES="
memory_backed on 1
memory_backed off 0
memory_backed y 1
memory_backed n 0
memory_backed Y 1
memory_backed N 0
memory_backed true 1
memory_backed false 0
memory_backed yes 1
memory_backed no 0
memory_backed t 1
memory_backed f 0
memory_backed e 1
memory_backed d 0
memory_backed ON 1
memory_backed oFf 0
memory_backed 1 1
memory_backed 0 0
memory_backed 10 1
memory_backed 01 0
memory_backed o EINVAL
memory_backed ox EINVAL
memory_backed 2 EINVAL
memory_backed -1 EINVAL
memory_backed '' EINVAL
memory_backed \x201 EINVAL
discard yes 1
discard no 0
blocking On 1
blocking oF 0
no_sched T 1
no_sched F 0
fua off 0
fua on 1
rotational yes 1
rotational Off 0
rotational e 1
rotational 2 EINVAL
rotational d 0
zoned y 1
zoned n 0
size 0x40 64
size +0X100 256
size 0200 128
size 0x EINVAL
size 0x1g EINVAL
size 08 EINVAL
size -1 EINVAL
size +-1 EINVAL
size 1x EINVAL
size '' EINVAL
size \x20128 EINVAL
size 128\n EINVAL
blocksize 0x1000 4096
blocksize 01000 512
blocksize 0x EINVAL
max_sectors 0x100 256
max_sectors 010 8
max_sectors 09 EINVAL
hw_queue_depth 040 32
completion_nsec 0x4e20 20000
completion_nsec 00 0
poll_queues 00 0
poll_queues +1 1
poll_queues -1 EINVAL
mbps 0x10 16
mbps 0 0
power x EINVAL
power 2 EINVAL
power on 1
power off 0
"

# kx_run ROOT: the cases on ROOT/kx, one line each: ATTR VALUE -> what ATTR
# reads after the write, or the write's error and whether ATTR kept its value.
kx_run() {
    local root=$1 attr raw want val before err
    while read -r attr raw want; do
        [[ -n $attr ]] || continue
        if [[ $raw == "''" ]]; then val=; else printf -v val '%b' "$raw"; fi
        before=$(cat "$root/kx/$attr")
        if err=$( (echo "$val" > "$root/kx/$attr") 2>&1 ); then
            echo "$attr $raw -> $(cat "$root/kx/$attr")"
        else
            case $err in
                *"$EINVAL") err=EINVAL ;;
                *"Numerical result out of range") err=ERANGE ;;
            esac
            if [[ $(cat "$root/kx/$attr") == "$before" ]]; then
                echo "$attr $raw -> $err (unchanged)"
            else
                echo "$attr $raw -> $err (changed to $(cat "$root/kx/$attr"))"
            fi
        fi
    done <<<"$KX_CASES"
}

kx_rnull=()
if insmod "$KO" nr_devices=0; then
    mkdir "$CFS/kx"
    # (Here-strings: process substitution gave empty arrays in the guest.)
    mapfile -t kx_rnull <<<"$(kx_run "$CFS")"
    mapfile -t kx_want <<<"$(while read -r attr raw want; do
        [[ -n $attr ]] || continue
        [[ $want == EINVAL ]] && want="EINVAL (unchanged)"
        echo "$attr $raw -> $want"
    done <<<"$KX_CASES")"
    for i in "${!kx_want[@]}"; do
        expect_eq "kx: ${kx_want[i]%% -> *}" "${kx_rnull[i]:-}" "${kx_want[i]}"
    done
    # what was parsed makes the disk: 128 MiB (0200), 512-byte blocks
    # (01000), 8-sector requests (010)
    check "kx: power=yes" set_attr kx power yes
    expect_eq "kx: power reads 1" "$(get kx power)" 1
    expect_eq "kx: size 0200 MiB" "$(blockdev --getsize64 /dev/kx)" $((128 << 20))
    expect_eq "kx: blocksize 01000" "$(sysblk kx queue/logical_block_size)" 512
    expect_eq "kx: max_sectors 010 (4 KiB)" "$(sysblk kx queue/max_hw_sectors_kb)" 4
    check "kx: power=n" set_attr kx power n
    check "kx: power=n removes the disk" test ! -e /sys/block/kx
    # a refused value names the attribute and the value
    expect_refused kx size 0x "$EINVAL" "invalid size '0x': not a number of type unsigned long"
    expect_refused kx size 18446744073709551616 "$EINVAL" \
        "invalid size '18446744073709551616': out of range for type unsigned long"
    expect_refused kx blocksize 0x100000000 "$EINVAL" \
        "invalid blocksize '0x100000000': out of range for type unsigned int"
    expect_refused kx memory_backed o "$EINVAL" \
        "invalid memory_backed 'o': must be 1/y/t/e/on or 0/n/f/d/off"
    expect_refused kx power x "$EINVAL" "invalid power 'x': must be 1/y/t/e/on or 0/n/f/d/off"
    check "rmdir kx" rmdir "$CFS/kx"
    check "rmmod" unload
else
    not_ok "insmod nr_devices=0 (C's parsing)"
fi
dmesg_clean "numbers and booleans as C null_blk reads them"

# the same cases on C null_blk (nr_devices=0: no disk but the one powered)
c_parsing() {
    mkdir "$CCFS/kx"
    mapfile -t kx_c <<<"$(kx_run "$CCFS")"
    for i in "${!kx_rnull[@]}"; do
        expect_eq "C null_blk: ${kx_rnull[i]%% -> *}" "${kx_c[i]:-}" "${kx_rnull[i]}"
    done
    rmdir "$CCFS/kx"
}
c_null_blk "numbers and booleans" c_parsing

# --- power=0 / rmdir while a process holds the disk open, then close ----------------
# The disk's block_device_operations must outlive the device: a process that
# holds /dev/<name> open keeps the gendisk past power=0 (or rmdir), and closing
# it reads disk->fops (bdev_release, the final put_disk). On the 6.12 series
# the table was freed with the device: the close below jumped through freed
# memory (an oops; on the debug kernel a KASAN report). The configfs churn in
# between reuses the freed memory. The file is held by a child, so an oops
# kills only the child.
held_close() { # held_close NAME HOW: open /dev/NAME, HOW (power0|rmdir), churn, close
    local name=$1 how=$2 i
    mkdir "$CFS/$name" && set_attr "$name" size 16 && set_attr "$name" power 1 || return 1
    rm -f "/tmp/go.$name" "/tmp/held.$name"; mkfifo "/tmp/go.$name" || return 1
    bash -c 'exec 3</dev/'"$name"'; echo held > /tmp/held.'"$name"'; read -r _ < /tmp/go.'"$name"'; exec 3<&-; echo closed > /tmp/held.'"$name" &
    local child=$!
    for i in $(seq 50); do [[ -s /tmp/held.$name ]] && break; sleep 0.1; done
    case $how in
        power0) set_attr "$name" power 0 || return 1 ;;
        rmdir) rmdir "$CFS/$name" || return 1 ;;
    esac
    for i in $(seq 50); do mkdir "$CFS/churn$i" && rmdir "$CFS/churn$i" || return 1; done
    echo go > "/tmp/go.$name"
    wait "$child" || return 1
    [[ $(cat "/tmp/held.$name") == closed ]] || return 1
    [[ $how == rmdir ]] || rmdir "$CFS/$name"
}
if insmod "$KO" nr_devices=0; then
    check "power=0 while /dev/held0 is open, 50 mkdir/rmdir, then close" held_close held0 power0
    check "rmdir while /dev/held1 is open, 50 mkdir/rmdir, then close" held_close held1 rmdir
    check "the disks are gone" bash -c '! test -e /sys/block/held0 && ! test -e /sys/block/held1'
    check "rmmod after the last close" unload
else
    not_ok "insmod nr_devices=0 (held-open tests)"
fi
dmesg_clean "power=0 and rmdir under an open file"

# --- create/remove cycles leave nothing behind ---------------------------------------
cycles=0
if insmod "$KO" nr_devices=0; then
    for i in $(seq 10); do
        mkdir "$CFS/cyc" && set_attr cyc size 16 && set_attr cyc power 1 || break
        dd if=/dev/cyc of=/dev/null bs=64k count=16 iflag=direct status=none || break
        if (( i % 2 )); then set_attr cyc power 0 || break; fi
        rmdir "$CFS/cyc" || break
        cycles=$i
    done
    unload
fi
expect_eq "10 mkdir/power/I/O/rmdir cycles" "$cycles" 10
check "no cyc disk and no module left" bash -c '! test -e /sys/block/cyc && ! grep -q "^rnull_split " /proc/modules'
dmesg_clean "cycles"

finish

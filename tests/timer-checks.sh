# Shared by tests/guest/rnull.sh (blk-mq) and rnull_bio.sh (bio mode): the
# irqmode=2 checks on /dev/rnullb0, loaded with completion_nsec=2000000 and
# 2 x 8 = 16 tags (or timers): nothing completes in under completion_nsec, at
# QD1 and with more I/O in flight than there are tags, and every byte arrives.
#   timer_checks LABEL UNIT POOL   e.g. timer_checks "irqmode=2" request tags
timer_checks() {
    local label=$1 unit=$2 pool=$3 min lat
    if fio_json --name=t --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --ioengine=psync --size=64M --io_size=400k; then
        expect_eq "$label: 100 synchronous 4 KiB reads completed" "$(fio_field read.total_ios)" 100
        min=$(fio_field read.clat_ns.min)
        check "$label: no read completed before completion_nsec=2 ms (fastest: $min ns)" \
            test "$min" -ge 2000000
    else
        not_ok "$label: fio psync"
    fi
    # More I/O in flight than the 16 tags (timers): every byte still
    # arrives, none early.
    if fio_json --name=t32 --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
            --ioengine=io_uring --iodepth=32 --numjobs=2 --group_reporting --size=64M --io_size=4M; then
        expect_eq "$label: 8 MiB at QD32 x 2 jobs over 16 $pool completed" "$(fio_field read.io_bytes)" $((8 << 20))
        lat=$(fio_field read.lat_ns.min)
        check "$label: no $unit done in under 2 ms at QD32 (fastest: $lat ns)" test "$lat" -ge 2000000
    else
        not_ok "$label: fio QD32"
    fi
}

#!/bin/bash
# rnull_split lifecycle abuse and bad input, in parts (default: all, in this
# order; tests/host/rnull_abuse.sh boots separate guests for params,
# cycles..open-fd and open-fio, so a crash in one is not blamed on another):
#   params    every parameter driven with negative, zero, huge,
#             non-power-of-two and non-numeric values: refused, nothing left,
#             clean log
#   cycles    ABUSE_CYCLES (100) insmod/rmmod cycles with I/O on two devices
#             between them, then a kmemleak scan (a SKIP on a kernel without
#             kmemleak: use make check-debug)
#   configfs  ABUSE_CFS_CYCLES (30) configfs devices made, powered on and off
#             and removed while fio runs on two other devices, then kmemleak
#   open-fd   rmmod while a process holds /dev/rnullb0 open
#   open-fio  rmmod while fio runs on /dev/rnullb0
#   kmemleak-control  the positive control: kmemleak-test.ko's deliberate
#             leaks are found by the same scan (debug kernel; else SKIP)
. "$REPO/tests/lib.sh"
KO=$MODDIR/rnull_split/rnull_split.ko
CYCLES=${ABUSE_CYCLES:-100}
parts=${*:-params cycles configfs open-fd open-fio kmemleak-control}

loaded() { grep -q '^rnull_split ' /proc/modules; }
unload() { rmmod rnull_split 2>/dev/null; ! loaded; }
no_trace() { # nothing of the module is left
    ! loaded && ! test -e /sys/module/rnull_split && ! test -e /sys/kernel/debug/rnull_split \
        && ! ls /sys/block | grep -q '^rnullb'
}


# --- rmmod while a device is open (open-fd, open-fio) -----------------------------
# An open disk pins its module through block_device_operations.owner
# (GenDiskBuilder::owner, patch 0004): rmmod must fail with EBUSY and leave
# the disk in place. If rmmod succeeds anyway, that is a failure; the suite
# then also checks that the still-open file fails its I/O and that closing it
# is safe. The file is held by a child process, so that if closing it oopses,
# only the child dies and the suite reports it. Last in a guest: the kernel
# may not be healthy afterwards.

# rmmod_while_open HOW: with the module loaded and the device held open by
# HOW; true if rmmod was refused.
rmmod_while_open() {
    local how=$1 out rc
    out=$(rmmod rnull_split 2>&1); rc=$?
    if [[ $rc != 0 ]]; then
        if grep -qi "in use\|busy" <<<"$out" && loaded && test -b /dev/rnullb0; then
            ok "rmmod refused with EBUSY while $how; device still there"
        else
            not_ok "rmmod while $how: failed, but not as EBUSY with the device kept (rc=$rc, '$out')"
        fi
        return 0
    fi
    not_ok "rmmod refused with EBUSY while $how (rmmod succeeded: the open disk did not pin the module)"
    check "rmmod while $how: the disk is gone" bash -c '! test -e /sys/block/rnullb0'
    return 1
}


if [[ ! -f $KO ]]; then
    not_ok "$KO is built"; finish; exit 1
fi
diag "kernel $(uname -r), module $KO, parts: $parts"
dmesg_clean "boot"
kmemleak_baseline

for part in $parts; do
case $part in
params)
    # --- bad parameter values ---------------------------------------------------------
    # refuse ERRNO PARAM=VALUE [PARAM=VALUE...]: insmod fails with ERRNO, the kernel
    # logs a message naming the first parameter, nothing of the module is left
    # and the log has no report. EINVAL is the driver's (or the kernel parser's,
    # for a non-number) answer; ERANGE is the kernel parser's for a number that
    # does not fit the parameter's C type.
    declare -A errtext=([EINVAL]="Invalid param" [ERANGE]="Numerical result out of range")
    refused=0
    refuse() {
        local errno=$1; shift
        local param=${1%%=*} ts out rc log bad
        ts=$(dmesg | _last_ts)
        out=$(insmod "$KO" "$@" 2>&1)
        rc=$?
        log=$(dmesg_after "$ts")
        bad=$(grep -E "$BAD_LOG" <<<"$log")
        if [[ $rc != 0 ]] && grep -q "${errtext[$errno]}" <<<"$out" && no_trace \
                && grep -q "rnull_split: .*$param" <<<"$log" && [[ -z $bad ]]; then
            ok "refused with $errno: $(cut -c1-60 <<<"$*") ($(grep -m1 "rnull_split: .*$param" <<<"$log" | sed 's/^\[[^]]*\] //'))"
            refused=$((refused + 1))
        else
            not_ok "refused with $errno: $(cut -c1-60 <<<"$*") (rc=$rc, out='$out', log='$(tr '\n' ' ' <<<"$log" | tail -c 300)')"
            [[ -z $bad ]] || sed 's/^/#   /' <<<"$log" | head -n 60
            unload
        fi
    }
    big=99999999999           # does not fit a 32-bit int
    imax=2147483647 imin=-2147483648
    refuse EINVAL gb=$imin
    refuse EINVAL gb=$imax
    refuse ERANGE gb=$big
    refuse EINVAL gb=1.5
    refuse EINVAL gb=
    refuse EINVAL bs=-512
    refuse EINVAL bs=513
    refuse EINVAL bs=3072
    refuse EINVAL bs=$imax
    refuse ERANGE bs=$big
    refuse EINVAL bs=4k
    refuse EINVAL nr_devices=4294967295
    refuse ERANGE nr_devices=4294967296
    refuse EINVAL nr_devices=two
    refuse EINVAL submit_queues=-1
    refuse EINVAL submit_queues=$(( $(nproc) + 1 ))
    refuse EINVAL submit_queues=$imax
    refuse ERANGE submit_queues=$big
    refuse EINVAL submit_queues=one
    refuse EINVAL hw_queue_depth=-1
    refuse EINVAL hw_queue_depth=$imax
    refuse ERANGE hw_queue_depth=$big
    refuse EINVAL hw_queue_depth=1e3
    refuse EINVAL max_sectors=-1
    refuse EINVAL max_sectors=7
    refuse EINVAL max_sectors=2559 bs=4096
    # (no upper bound, as C: INT_MAX sectors is refused only as no multiple
    # of a 4 KiB block)
    refuse EINVAL max_sectors=$imax bs=4096
    refuse ERANGE max_sectors=$big
    refuse EINVAL max_sectors=max
    refuse EINVAL queue_mode=-1
    refuse EINVAL queue_mode=3
    refuse EINVAL queue_mode=$imax
    refuse EINVAL queue_mode=mq
    refuse EINVAL irqmode=4
    refuse EINVAL irqmode=$imin
    refuse EINVAL irqmode=soft
    refuse EINVAL completion_nsec=-1
    refuse EINVAL completion_nsec=10000000001
    refuse EINVAL completion_nsec=18446744073709551615
    refuse ERANGE completion_nsec=18446744073709551616
    refuse EINVAL completion_nsec=10us
    refuse EINVAL memory_backed=2
    refuse EINVAL memory_backed=-1
    refuse EINVAL memory_backed=maybe
    refuse EINVAL discard=2
    refuse EINVAL discard=maybe
    refuse EINVAL split_clone=
    refuse EINVAL split_clone=FAST
    refuse EINVAL split_clone=fast,deep
    refuse EINVAL split_clone=$(printf 'x%.0s' {1..200})
    diag "$refused bad parameter values refused"
    check "a good load after the refusals works" bash -c "insmod '$KO' gb=1 && test -b /dev/rnullb0 && rmmod rnull_split"
    dmesg_clean "bad parameters"
    ;;
cycles)
    # --- load/unload cycles with I/O on two devices ----------------------------------
    # Alternate 1 and 2 queues and irqmode 0 and 1; every 10th cycle adds a short
    # fio run over both devices.
    t0=$SECONDS
    cycles=0 failed_step=
    for i in $(seq "$CYCLES"); do
        q=$((i % 2 + 1)) irq=$((i / 2 % 2))
        insmod "$KO" nr_devices=2 gb=1 submit_queues=$q irqmode=$irq \
            || { failed_step="insmod (cycle $i)"; break; }
        dd if=/dev/rnullb0 of=/dev/null bs=64k count=16 iflag=direct status=none \
            || { failed_step="dd read rnullb0 (cycle $i)"; break; }
        dd if=/dev/zero of=/dev/rnullb1 bs=64k count=16 oflag=direct status=none \
            || { failed_step="dd write rnullb1 (cycle $i)"; break; }
        if ((i % 10 == 0)); then
            fio --name=c --filename=/dev/rnullb0:/dev/rnullb1 --direct=1 --rw=randrw --bs=4k \
                --size=64M --io_size=4M --ioengine=io_uring --iodepth=16 >/tmp/fio.out 2>&1 \
                || { failed_step="fio (cycle $i)"; sed 's/^/# fio: /' /tmp/fio.out | tail -n 5; break; }
        fi
        rmmod rnull_split || { failed_step="rmmod (cycle $i)"; break; }
        cycles=$i
    done
    diag "$cycles load/unload cycles in $((SECONDS - t0)) s${failed_step:+; failed at $failed_step}"
    expect_eq "$CYCLES insmod/rmmod cycles of 2 devices with I/O between them" "$cycles" "$CYCLES"
    unload
    check "nothing of the module is left after the cycles" no_trace
    dmesg_clean "load/unload cycles"
    kmemleak_check "load/unload cycles"
    dmesg_clean "kmemleak scan"
    ;;
configfs)
    # --- configfs devices created, powered on/off and removed under fio ---------------
    # fio runs on the load-time rnullb0 and on a configfs device "keep" while
    # another configfs device is made, used, powered off and on, and removed
    # (rmdir while powered on odd cycles) ABUSE_CFS_CYCLES (30) times.
    CFS=/sys/kernel/config/rnull_split
    n_cfs=${ABUSE_CFS_CYCLES:-30}
    if insmod "$KO" nr_devices=1 gb=1 && mkdir "$CFS/keep" && echo 64 > "$CFS/keep/size" \
            && echo 1 > "$CFS/keep/power" && test -b /dev/keep; then
        fio --name=bg --filename=/dev/rnullb0:/dev/keep --direct=1 --rw=randrw --bs=4k \
            --size=64M --ioengine=io_uring --iodepth=8 --time_based --runtime=3600 \
            >/tmp/fio-bg.out 2>&1 &
        bgpid=$!
        t0=$SECONDS
        cycles=0 failed_step=
        for i in $(seq "$n_cfs"); do
            step() { failed_step="$1 (cycle $i)"; }
            mkdir "$CFS/cyc" || { step mkdir; break; }
            echo 16 > "$CFS/cyc/size" || { step size; break; }
            echo 1 > "$CFS/cyc/power" && test -b /dev/cyc || { step "power=1"; break; }
            dd if=/dev/cyc of=/dev/null bs=64k count=16 iflag=direct status=none || { step "dd read"; break; }
            dd if=/dev/zero of=/dev/cyc bs=64k count=16 oflag=direct status=none || { step "dd write"; break; }
            echo 0 > "$CFS/cyc/power" && ! test -e /sys/block/cyc || { step "power=0"; break; }
            echo 1 > "$CFS/cyc/power" && test -b /dev/cyc || { step "power=1 again"; break; }
            if ((i % 2 == 0)); then echo 0 > "$CFS/cyc/power" || { step "power=0 again"; break; }; fi
            rmdir "$CFS/cyc" && ! test -e /sys/block/cyc || { step rmdir; break; }
            cycles=$i
        done
        diag "$cycles configfs cycles in $((SECONDS - t0)) s${failed_step:+; failed at $failed_step}"
        expect_eq "$n_cfs configfs mkdir/power on/I/O/power off/on/rmdir cycles under fio" "$cycles" "$n_cfs"
        if kill -0 "$bgpid" 2>/dev/null; then
            kill "$bgpid"; wait "$bgpid"
            check "fio on rnullb0 and keep ran through the cycles with no I/O error" \
                bash -c "grep -q 'err= 0' /tmp/fio-bg.out && ! grep -q 'err= *[1-9-]' /tmp/fio-bg.out"
        else
            not_ok "fio on rnullb0 and keep ran through the cycles (it ended early)"
            sed 's/^/# fio: /' /tmp/fio-bg.out | tail -n 5
        fi
    else
        not_ok "insmod nr_devices=1 gb=1 and a powered configfs device keep"
    fi
    rmdir "$CFS"/*/ 2>/dev/null
    unload
    check "nothing of the module is left after the configfs cycles" no_trace
    dmesg_clean "configfs cycles"
    kmemleak_check "configfs cycles"
    dmesg_clean "kmemleak scan"
    ;;
open-fd)
    if insmod "$KO" nr_devices=2 gb=1; then
        rm -f /tmp/hold.*; mkfifo /tmp/hold.go
        # The holder: open, wait for "go", read 4 KiB (direct: not from the
        # page cache) through the same open file, close.
        bash -c 'exec 3</dev/rnullb0 || exit 1; echo open > /tmp/hold.state
            read -r _ < /tmp/hold.go
            dd bs=4096 count=1 iflag=direct of=/dev/null <&3 2>/tmp/hold.dd; echo $? > /tmp/hold.ddrc
            exec 3<&-; echo closed > /tmp/hold.state' &
        hpid=$!
        for _ in $(seq 100); do [[ -s /tmp/hold.state ]] && break; sleep 0.1; done
        refused_open=0
        rmmod_while_open "/dev/rnullb0 is open" && refused_open=1
        echo go > /tmp/hold.go
        for _ in $(seq 60); do kill -0 "$hpid" 2>/dev/null || break; sleep 1; done
        if kill -0 "$hpid" 2>/dev/null; then
            not_ok "the holder of /dev/rnullb0 ends within 60 s (hung)"
        else
            wait "$hpid"; hrc=$?
            ddrc=$(cat /tmp/hold.ddrc 2>/dev/null)
            if ((refused_open)); then
                expect_eq "I/O through the open file works while the module stays" "$ddrc" 0
            else
                # The deleted disk has size 0: a read ends at once (EOF) or fails.
                check "a read through the file kept open over rmmod gets no data ($(head -n1 /tmp/hold.dd))" \
                    bash -c "[[ '$ddrc' != 0 ]] || grep -q '^0+0 records in' /tmp/hold.dd"
            fi
            what="closing the file"; ((refused_open)) || what+=" after rmmod"
            check "$what returns (holder status $hrc, $(cat /tmp/hold.state))" \
                test "$hrc" == 0 -a "$(cat /tmp/hold.state)" == closed
        fi
        if ((refused_open)); then check "rmmod after the file is closed" unload; fi
        check "nothing of the module is left" no_trace
    else
        not_ok "insmod nr_devices=2 gb=1 for the open-device test"
    fi
    dmesg_clean "rmmod while open"
    kmemleak_check "rmmod while open"
    dmesg_clean "kmemleak scan"
    ;;
open-fio)
    if insmod "$KO" nr_devices=2 gb=1; then
        reads() { awk '{print $1}' /sys/block/rnullb0/stat 2>/dev/null || echo 0; }
        r0=$(reads)
        fio --name=h --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k --size=64M \
            --ioengine=io_uring --iodepth=16 --time_based --runtime=120 >/tmp/fio-held.out 2>&1 &
        fpid=$!
        # fio has the disk open once its reads reach the driver (it can take
        # seconds to start on the debug kernel)
        for _ in $(seq 120); do (( $(reads) > r0 + 100 )) && break; sleep 0.5; done
        diag "fio did $(( $(reads) - r0 )) reads before rmmod"
        if rmmod_while_open "fio runs on /dev/rnullb0"; then
            kill "$fpid"; wait "$fpid"
            check "rmmod after fio ends" unload
        else
            # The deleted disk has size 0, so fio's reads now end at EOF
            # (no data, no error) and it would run on: what must hold is
            # that it is not stuck in the kernel and ends when told to.
            sleep 5
            state=$(awk '/^State:/ {print $2}' /proc/$fpid/status 2>/dev/null)
            diag "fio 5 s after rmmod: state ${state:-gone}, wchan $(cat /proc/$fpid/wchan 2>/dev/null)"
            kill "$fpid" 2>/dev/null
            for _ in $(seq 30); do kill -0 "$fpid" 2>/dev/null || break; sleep 1; done
            if kill -0 "$fpid" 2>/dev/null; then
                not_ok "fio ends within 30 s of SIGTERM after rmmod took its disk away (state $(awk '/^State:/ {print $2}' /proc/$fpid/status))"
                kill -9 "$fpid"
            else
                wait "$fpid"; rc=$?
                ok "fio ends within 30 s of SIGTERM after rmmod took its disk away (status $rc)"
                diag "fio: $(grep -m1 -o 'err=[^,]*' /tmp/fio-held.out); $(grep -m1 -i 'error' /tmp/fio-held.out)"
            fi
            check "nothing of the module is left" no_trace
        fi
    else
        not_ok "insmod nr_devices=2 gb=1 for the fio test"
    fi
    dmesg_clean "rmmod while fio runs"
    kmemleak_check "rmmod while fio runs"
    dmesg_clean "kmemleak scan"
    ;;
kmemleak-control)
    # --- the positive control: kmemleak_check does find leaks ---------------------
    kmemleak_control
    dmesg_clean "kmemleak positive control (its report is bracketed as expected)"
    ;;
*) not_ok "unknown part $part" ;;
esac
done

finish

#!/bin/bash
# The guest half of make fuzz (tests/host/fuzz.sh): runs rfuzz on
# rnull_split and rvirtio_blk with the host's settings, then checks that the
# kernel log has no report and kmemleak finds no leak. rfuzz's own result
# (a kernel report, a wrong read, a hang, a teardown that could not unload
# a module) is the first check.
. "$REPO/tests/lib.sh"
kmemleak_baseline
dmesg_clean "before the run" >/dev/null
export FUZZ_LOG=$OUT/ops FUZZ_QMP=$OUT/qmp FUZZ_BAD=$BAD_LOG
[[ " $FUZZ_DRIVERS " == *" rnull "* ]] && export FUZZ_RNULL_KO=$MODDIR/rnull_split/rnull_split.ko
[[ " $FUZZ_DRIVERS " == *" virtio "* ]] && export FUZZ_VIRTIO_KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
# rfuzz writes its exit status to FUZZ_RC_FILE before it exits: after a
# hang its stuck thread keeps the process from ending, so wait for that
# file, not for the process.
export FUZZ_RC_FILE=$OUT/rfuzz.rc
rm -f "$FUZZ_RC_FILE"
"$REPO/fuzz/target/release/rfuzz" > "$OUT/rfuzz.log" 2>&1 &
pid=$!
while [[ ! -s $FUZZ_RC_FILE ]] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
sleep 1
if [[ -s $FUZZ_RC_FILE ]]; then rc=$(cat "$FUZZ_RC_FILE"); else wait "$pid"; rc=$?; fi
cat "$OUT/rfuzz.log"
summary=$(grep -a "^rfuzz: seed $FUZZ_SEED: " "$OUT/rfuzz.log" | tail -n 1)
if [[ $rc == 0 ]]; then
    ok "fuzz: ${summary#rfuzz: }, modules unloaded"
else
    not_ok "fuzz: ${summary#rfuzz: } (exit $rc; replay: make fuzz FUZZ_SEED=$FUZZ_SEED)"
    grep -a '^rfuzz:   ' "$OUT/rfuzz.log" | head -n 60 | sed 's/^/#/'
fi
if [[ $rc == 0 ]]; then
    dmesg_clean "fuzz seed $FUZZ_SEED"
    kmemleak_check "fuzz seed $FUZZ_SEED"
fi
if kill -0 "$pid" 2>/dev/null; then
    # A thread stuck in the kernel (a hang): the guest's sync at exit would
    # wait for its disk for ever, so end the guest here.
    finish
    echo 1 > "$OUT/.vm-rc"
    echo "VM-EXIT-STATUS: 1 (rfuzz stuck in the kernel: the guest ends without sync)"
    /bin/busybox reboot -f
fi
finish

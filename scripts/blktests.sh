#!/usr/bin/env bash
# `make blktests`: blktests, unmodified, on the C drivers and on the Rust
# ones, one guest each (scripts/blktests-guest.sh), on the blktests kernel
# flavour (kernel/blktests.fragment: zoned, blk-cgroup, fault injection,
# /proc/config.gz). Writes one table, test by test, C null_blk against
# Rust, to results/blktests.md and prints it.
#
#   guest "c":    the groups over C null_blk, then the device-only tests on
#                 null_blk's nullb0 and on a C virtio_blk disk
#   guest "rust": the groups over the module BLKTESTS_RUST_NULL_BLK_KO,
#                 installed as null_blk.ko (rnull_split's null_blk build),
#                 then the device-only tests on rnull_split's rnullb0 and on
#                 an rvirtio_blk disk
#
# Settings (environment, or make variables: make blktests BLKTESTS_GROUPS=throtl):
#   BLKTESTS            blktests checkout, used read-only (default
#                       ../shared/blktests next to the repository)
#   BLKTESTS_GROUPS     groups (or tests) run over null_blk: "block zbd throtl"
#   BLKTESTS_DEV_TESTS  device-only tests: "block/003 block/004 block/005
#                       block/007 block/008" (empty: none)
#   BLKTESTS_DRIVERS    guests to boot, in order: "c rust"; the table keeps
#                       the results of a driver not booted from the last run
#   BLKTESTS_TIMEOUT    blktests' TIMEOUT, the run time of its timed tests: 30 s
#   BLKTESTS_ZONED      blktests' RUN_ZONED_TESTS (zoned null_blk variants): 1
#   BLKTESTS_NULL_DEV_PARAMS  the null disk of the device-only tests, for both
#                       drivers: "gb=1 memory_backed=1 discard=1"
#   BLKTESTS_RUST_NULL_BLK_KO  a Rust module named null_blk, compatible with
#                       C null_blk's parameters and configfs (`nullb`), that
#                       the rust guest installs as null_blk.ko (default:
#                       rnull_split/null_blk.ko of MODDIR, the same sources
#                       built with C null_blk's names; "none": the column
#                       says "not run")
#   BLKTESTS_EXCLUDE    tests or groups left out (the table says so)
#   BLKTESTS_TEST_TIMEOUT  seconds before a test (one ./check each) is
#                       killed and counted as failed ("hung"): 1800
#   BLKTESTS_VM_TIMEOUT seconds before a guest is killed: 21600
#   BLKTESTS_VM_SMP     guest CPUs (QEMU -smp): 4. block/038 sets
#                       submit_queues=4, which null_blk refuses beyond
#                       nr_cpu_ids (and this kernel, without
#                       CONFIG_HYPERVISOR_GUEST, ignores maxcpus= slots)
#   BLKTESTS_VM_MEM     guest memory in MB: 8192 (throtl/006 makes ext4 on a
#                       250 GB memory-backed null_blk with its inode tables
#                       zeroed: over 5 GB of null_blk pages; QEMU touches the
#                       memory only as the guest uses it)
#   BLKTESTS_STRICT=1   exit 1 if a test failed on the Rust side
# MODDIR: the Rust modules built for this kernel (make modules-blktests:
# out/blktests/modules). Everything else goes to out/blktests/.
set -euo pipefail
cd "$(dirname "$0")/.."
export FLAVOUR=blktests
. scripts/env.sh

if [[ -z ${BLKTESTS:-} && -x $REPO/../shared/blktests/check ]]; then
    BLKTESTS=$(cd "$REPO/../shared/blktests" && pwd)
fi
[[ -n ${BLKTESTS:-} ]] || die "no blktests: set BLKTESTS to a blktests checkout (git clone https://github.com/osandov/blktests), or put one at $(dirname "$REPO")/shared/blktests"
[[ -x $BLKTESTS/check && -d $BLKTESTS/tests ]] || die "BLKTESTS=$BLKTESTS is not a blktests checkout (no ./check, tests/)"
BLKTESTS_GROUPS=${BLKTESTS_GROUPS-block zbd throtl}
BLKTESTS_DEV_TESTS=${BLKTESTS_DEV_TESTS-block/003 block/004 block/005 block/007 block/008}
BLKTESTS_DRIVERS=${BLKTESTS_DRIVERS:-c rust}
BLKTESTS_TIMEOUT=${BLKTESTS_TIMEOUT:-30}
BLKTESTS_ZONED=${BLKTESTS_ZONED:-1}
BLKTESTS_NULL_DEV_PARAMS=${BLKTESTS_NULL_DEV_PARAMS-gb=1 memory_backed=1 discard=1}
BLKTESTS_EXCLUDE=${BLKTESTS_EXCLUDE:-}
BLKTESTS_TEST_TIMEOUT=${BLKTESTS_TEST_TIMEOUT:-1800}
BLKTESTS_VM_TIMEOUT=${BLKTESTS_VM_TIMEOUT:-21600}
BLKTESTS_VM_MEM=${BLKTESTS_VM_MEM:-8192}
BLKTESTS_VM_SMP=${BLKTESTS_VM_SMP:-4}
export MODDIR=${MODDIR:-$REPO/out/blktests/modules}
OUT=$REPO/out/blktests
BLKTESTS_RUST_NULL_BLK_KO=${BLKTESTS_RUST_NULL_BLK_KO:-$MODDIR/rnull_split/null_blk.ko}
[[ $BLKTESTS_RUST_NULL_BLK_KO == none ]] && BLKTESTS_RUST_NULL_BLK_KO=
if [[ -n $BLKTESTS_RUST_NULL_BLK_KO ]]; then
    [[ -f $BLKTESTS_RUST_NULL_BLK_KO ]] || die "BLKTESTS_RUST_NULL_BLK_KO=$BLKTESTS_RUST_NULL_BLK_KO: no such file"
    BLKTESTS_RUST_NULL_BLK_KO=$(realpath "$BLKTESTS_RUST_NULL_BLK_KO")
fi
for d in $BLKTESTS_DRIVERS; do [[ $d == c || $d == rust ]] || die "BLKTESTS_DRIVERS: unknown driver $d (c, rust)"; done
kdir=$(scripts/kernel.sh kdir)
[[ -f $kdir/arch/x86/boot/bzImage ]] || die "no blktests kernel in $kdir: run 'make blktests' (or FLAVOUR=blktests scripts/kernel.sh build)"
if [[ " $BLKTESTS_DRIVERS " == *" rust "* ]]; then
    for ko in rnull_split/rnull_split.ko rvirtio_blk/rvirtio_blk.ko; do
        [[ -f $MODDIR/$ko ]] || log "warning: $MODDIR/$ko not built (make modules-blktests); its rows will say so"
    done
fi

# A writable copy of blktests with its helper programs (src/) built; the
# guests copy it into their tmpfs and run it from there.
mkdir -p "$OUT" results
rm -rf "$OUT/tree"
cp -a "$BLKTESTS" "$OUT/tree"
chmod -R u+w "$OUT/tree"
rm -rf "$OUT/tree/results" "$OUT/tree/config"
if ! make -C "$OUT/tree" -j"$NPROC" > "$OUT/tree-build.log" 2>&1; then
    log "warning: building blktests' src/ failed (tests needing its programs will not run); see $OUT/tree-build.log"
fi

for drv in $BLKTESTS_DRIVERS; do
    o=$OUT/$drv
    rm -rf "$o"; mkdir -p "$o"
    {
        printf 'BT_TREE=%q\n' "$OUT/tree"
        printf 'BT_GROUPS=%q\n' "$BLKTESTS_GROUPS"
        printf 'BT_DEV_TESTS=%q\n' "$BLKTESTS_DEV_TESTS"
        printf 'BT_TIMEOUT=%q\n' "$BLKTESTS_TIMEOUT"
        printf 'BT_ZONED=%q\n' "$BLKTESTS_ZONED"
        printf 'BT_NULL_DEV_PARAMS=%q\n' "$BLKTESTS_NULL_DEV_PARAMS"
        # (copied next to the results: the guest's /tmp is its own)
        ko=
        if [[ $drv == rust && -n $BLKTESTS_RUST_NULL_BLK_KO ]]; then
            ko=$o/null_blk-rust.ko
            cp "$BLKTESTS_RUST_NULL_BLK_KO" "$ko"
        fi
        printf 'BT_NULL_BLK_KO=%q\n' "$ko"
        printf 'BT_EXCLUDE=%q\n' "$BLKTESTS_EXCLUDE"
        printf 'BT_TEST_TIMEOUT=%q\n' "$BLKTESTS_TEST_TIMEOUT"
        printf 'BT_VM=%q\n' "-smp $BLKTESTS_VM_SMP -m $BLKTESTS_VM_MEM"
    } > "$o/blktests.env"
    # The virtio disk of the device-only tests: 1 GiB, sparse, flushes not
    # forwarded to the host's disk (the guest still sends them).
    img=$(mktemp "/tmp/blktests-$drv.XXXXXX.img")
    truncate -s 1G "$img"
    log "guest $drv: blktests ${BLKTESTS_GROUPS:+groups $BLKTESTS_GROUPS}${BLKTESTS_DEV_TESTS:+, device-only $BLKTESTS_DEV_TESTS} (console: $o/vm.log)"
    t0=$SECONDS
    set +e
    scripts/vm.sh --cpus "$BLKTESTS_VM_SMP" --mem "$BLKTESTS_VM_MEM" --timeout "$BLKTESTS_VM_TIMEOUT" --out "$o" \
        --qemu -drive --qemu "file=$img,if=none,id=bt,format=raw,cache=unsafe" \
        --qemu -device --qemu virtio-blk-pci,drive=bt,serial=blktests \
        -- scripts/blktests-guest.sh "$drv" 2>&1 | tee "$o/vm.log" \
        | grep --line-buffered -aE '\[(passed|failed|not run)\].?$|^blktests-guest: (run|killed|driver|groups|no )|guest (timed out|died)' \
        | sed -u 's/\r$//'
    rc=${PIPESTATUS[0]}
    set -e
    rm -f "$img"
    echo "$((SECONDS - t0))" > "$o/guest-seconds"
    [[ $rc == 0 ]] || log "guest $drv exited with status $rc after $((SECONDS - t0)) s (console: $o/vm.log)"
done

# --- the table -------------------------------------------------------------------
set +e
# shellcheck disable=SC2086
# Every driver with results, so that BLKTESTS_DRIVERS=rust after a full run
# keeps the C column of that run.
report=()
for d in c rust; do [[ -f $OUT/$d/blktests.env ]] && report+=("$d"); done
scripts/blktests-report.py "$OUT" "$OUT/tree" "${report[@]}" > results/blktests.md
rc=$?
set -e
echo
cat results/blktests.md
log "table in results/blktests.md; per-test output in $OUT/<driver>/<run>.log and <run>/"
exit $rc

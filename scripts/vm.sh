#!/usr/bin/env bash
# Boot the test kernel in QEMU and run one command in the guest.
#
#   scripts/vm.sh [--cpus N] [--mem MB] [--timeout S] [--out DIR] [--qemu ARG]...
#                 [--append KERNEL-ARG]... -- CMD [ARG...]
#
# The guest's root is the host's / (9p, read-only), so it has the host's fio,
# bash and this repo at the same path; /tmp, /run and /root are tmpfs. CMD runs
# as root in the repo directory with REPO, KDIR (the kernel build tree) and OUT
# (a host directory mounted read-write, default out/vm) in its environment,
# and MODDIR, where tests load modules from (default the repo).
# FLAVOUR=debug boots the debug kernel (scripts/kernel.sh) with at least
# VM_DEBUG_MEM MB (2048: a kmemleak scan takes time in proportion) and the
# timeout times VM_DEBUG_SLOWDOWN (3).
# The console is streamed to stdout and saved to $OUT/console.log. The exit
# status is CMD's; a timeout, panic or lost guest is a failure and prints the
# console tail. QEMU runs under multi-threaded TCG (VM_ACCEL=tcg, the
# default); VM_ACCEL=kvm where KVM works; VM_ACCEL=icount for deterministic
# guest time: single-threaded TCG (vCPUs round-robin on one host thread)
# with -icount shift=0,sleep=off,align=off, so the guest clock advances 1 ns
# per instruction and jumps over idle time (benchmarks: scripts/run.sh).
set -euo pipefail
. "$(dirname "$0")/env.sh"

cpus=${VM_CPUS:-2} mem=${VM_MEM:-2048} timeout=${VM_TIMEOUT:-900}
out=$REPO/out/vm
qemu_extra=() append_extra=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cpus) cpus=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --qemu) qemu_extra+=("$2"); shift 2 ;;
        --append) append_extra+=" $2"; shift 2 ;;
        --) shift; break ;;
        *) die "unknown option $1 (usage: see header of $0)" ;;
    esac
done
[[ $# -gt 0 ]] || die "no guest command given"
if [[ $FLAVOUR == debug ]]; then
    mem=$(( mem > ${VM_DEBUG_MEM:-2048} ? mem : ${VM_DEBUG_MEM:-2048} ))
    timeout=$(( timeout * ${VM_DEBUG_SLOWDOWN:-3} ))
fi

# VM_KDIR: boot another kernel build tree (e.g. one with your changes to the
# series) instead of the cached one.
kdir=${VM_KDIR:-$(scripts_dir=$(dirname "$0"); "$scripts_dir/kernel.sh" kdir)}
bzimage=$kdir/arch/x86/boot/bzImage
[[ -f $bzimage ]] || die "no kernel at $bzimage: run 'make kernel' first"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/.vm-rc" "$out/boot-report.txt"
for attempt in 1 2; do
{
    printf 'export REPO=%q KDIR=%q OUT=%q\n' "$REPO" "$kdir" "$out"
    printf 'export VM_CPUS=%q\n' "$cpus"
    # guest-watchdog.sh runs this long after the command starts: a tenth of
    # the timeout (at least 30 s) before the host kills the guest, boot
    # time included.
    printf 'export VM_WATCHDOG=%q\n' $(( timeout - (timeout / 10 > 30 ? timeout / 10 : 30) ))
    printf 'export MODDIR=%q FLAVOUR=%q\n' "${MODDIR:-$REPO}" "$FLAVOUR"
    printf 'export VM_BOOT_RETRY=%q\n' $(( attempt == 1 ))
} > "$out/.vm-env"
printf '%q ' "$@" > "$out/.vm-cmd"; echo >> "$out/.vm-cmd"

case "${VM_ACCEL:-tcg}" in
    kvm) accel=(-accel kvm -cpu host) ;;
    icount) accel=(-accel tcg,thread=single -icount shift=0,sleep=off,align=off -cpu max) ;;
    *) accel=(-accel tcg,thread=multi -cpu max) ;;
esac

append="console=ttyS0 root=rootfs rootfstype=9p"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
append+=" init=$REPO/scripts/guest-init.sh panic=-1 oops=panic=0 loglevel=6"
append+=" VM_REPO=$REPO VM_OUT=$out$append_extra"
# debug kernel: SLUB sanity checks and red zones on top of KASAN
# (and PCI IRQ routing from the BIOS table: the ACPI _PRT loop outlasts ACPI's
# 30 s loop timeout under KASAN + lockdep + TCG, leaving virtio without an IRQ)
# and 4-level paging (no5lvl): with -cpu max the guest has LA57, and KASAN's
# "has this address a shadow" test reads pgtable_l5_enabled(), which before
# the alternatives are patched is the boot CPU's X86_FEATURE_LA57 bit;
# identify_cpu() zeroes those bits and reads CPUID again, and a KASAN check
# in that window (an interrupt landing there) takes a 5-level direct-map
# address for one without a shadow: "BUG: KASAN: wild-memory-access in
# rcu_is_watching" at ~0.003 s, before any test (CI, stop 29).
[[ $FLAVOUR == debug ]] && append+=" slub_debug=FZ pci=noacpi no5lvl"

set +e
timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
    "${accel[@]}" -smp "$cpus" -m "$mem" -display none -no-reboot \
    -serial stdio -monitor none \
    -kernel "$bzimage" -append "$append" \
    -fsdev local,id=rootfs,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs \
    -fsdev local,id=out,path="$out",security_model=none \
    -device virtio-9p-pci,fsdev=out,mount_tag=out \
    "${qemu_extra[@]}" </dev/null 2>&1 | tee "$out/console.log"
qrc=${PIPESTATUS[0]}
set -e
# The kernel reported while booting, before CMD ran (scripts/guest-init.sh):
# keep that console log and the report, boot once more.
if [[ -f $out/.vm-rc && $(cat "$out/.vm-rc") == boot-report ]]; then
    mv "$out/console.log" "$out/console.boot-report.log"
    rm -f "$out/.vm-rc"
    log "kernel report while booting, before the command: $(grep -am1 VM-BOOT-REPORT "$out/console.boot-report.log" | tr -d '\r')"
    [[ $attempt == 1 ]] && { log "booting once more (report kept in $out/boot-report.txt)"; continue; }
fi
break
done
if [[ ! -f $out/.vm-rc ]]; then
    if [[ $qrc == 124 ]]; then log "guest timed out after ${timeout}s"; else log "guest died (qemu exit $qrc)"; fi
    log "console tail:"; tail -n 40 "$out/console.log" >&2
    exit 1
fi
exit "$(cat "$out/.vm-rc")"

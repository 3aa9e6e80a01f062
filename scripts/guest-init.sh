#!/bin/bash
# PID 1 of the test guest (see scripts/vm.sh). The root file system is the
# host's / over 9p, read-only; scratch space is tmpfs on /tmp and /run. The
# kernel hands us the unknown `KEY=value` words of its command line as
# environment: VM_REPO is the repository, VM_OUT the host directory shared
# read-write, holding the command to run (.vm-cmd).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /run
# A fresh tmpfs on /tmp would hide the repository or the output directory
# when they live under the host's /tmp (a CI clone may): bind them back.
keep=()
for p in "$VM_REPO" "$VM_OUT"; do [[ $p == /tmp/* ]] && keep+=("$p"); done
if [[ ${#keep[@]} -gt 0 ]]; then
    mkdir -p /run/host-tmp
    mount --bind /tmp /run/host-tmp
fi
mount -t tmpfs tmpfs /tmp
for p in "${keep[@]}"; do
    mkdir -p "$p"
    mount --bind "/run/host-tmp/${p#/tmp/}" "$p"
done
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out "$VM_OUT"
rc=1
if [[ -f $VM_OUT/.vm-env ]]; then
    . "$VM_OUT/.vm-env"
    # A report while the kernel booted, before the command (and any module
    # of ours) ran, is the stock kernel's under TCG's timing: keep it and
    # ask scripts/vm.sh for one more boot (a second one is the command's).
    if [[ ${VM_BOOT_RETRY:-0} == 1 ]] && . "$VM_REPO/tests/badlog.sh"; then
        bad=$(dmesg | badlog_filter | grep -m1 -E "$BAD_LOG")
        if [[ -n $bad ]]; then
            dmesg > "$VM_OUT/boot-report.txt"
            echo "VM-BOOT-REPORT: the kernel reported while booting, before the command ran: $bad"
            echo boot-report > "$VM_OUT/.vm-rc"
            sync; umount "$VM_OUT"
            /bin/busybox reboot -f
        fi
    fi
    # Shortly before the host's timeout, record what is stuck (see there).
    if [[ ${VM_WATCHDOG:-0} -gt 0 ]]; then
        (sleep "$VM_WATCHDOG" && bash "$VM_REPO/scripts/guest-watchdog.sh" "$VM_WATCHDOG") &
        wd=$!
    fi
    cd "$REPO" && bash "$VM_OUT/.vm-cmd"
    rc=$?
    [[ -n ${wd:-} ]] && kill "$wd" 2>/dev/null
fi
echo "VM-EXIT-STATUS: $rc"
echo "$rc" > "$VM_OUT/.vm-rc"
sync
umount "$VM_OUT"
# reboot(2) straight away; QEMU runs with -no-reboot, so this ends it.
/bin/busybox reboot -f
sleep 5

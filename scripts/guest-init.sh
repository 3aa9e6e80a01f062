#!/bin/bash
# PID 1 of the test guest (see scripts/vm.sh). The root file system is the
# host's / over 9p, read-only; scratch space is tmpfs. The kernel hands us the
# unknown `KEY=value` words of its command line as environment: VM_OUT is the
# host directory shared read-write, holding the command to run (.vm-cmd).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
for d in /tmp /run /var/tmp /root; do mount -t tmpfs tmpfs "$d"; done
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out "$VM_OUT"
rc=1
if [[ -f $VM_OUT/.vm-env ]]; then
    . "$VM_OUT/.vm-env"
    cd "$REPO" && bash "$VM_OUT/.vm-cmd"
    rc=$?
fi
echo "VM-EXIT-STATUS: $rc"
echo "$rc" > "$VM_OUT/.vm-rc"
sync
umount "$VM_OUT"
# reboot(2) straight away; QEMU runs with -no-reboot, so this ends it.
/bin/busybox reboot -f
sleep 5

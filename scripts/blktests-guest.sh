#!/bin/bash
# Guest side of `make blktests` (scripts/blktests.sh, which boots one guest
# per driver and writes the settings below to $OUT/blktests.env):
#
#   scripts/blktests-guest.sh c|rust
#
# Gives blktests what it needs in the test guest, then runs it unmodified
# from a copy in tmpfs:
#   - /dev/fd; cgroup2 on /sys/fs/cgroup (blk-cgroup tests);
#   - an `udevadm` stand-in on PATH (no udev here: devtmpfs makes the nodes);
#   - /lib/modules/$(uname -r): the host has none and the root is read-only
#     9p, so a tmpfs overlay goes over /usr/lib (/lib is a link to it) and
#     gets the kernel build's modules ($KDIR/modules.order, modules.builtin*)
#     and depmod, for `modprobe [-r] null_blk`, modinfo and blktests' own
#     look-ups in /lib/modules/$(uname -r)/kernel.
# The runs, each with its own results directory:
#   group-<G>  for every filter G in BT_GROUPS (a group or test), over
#              "null_blk": the C one, or on the rust guest the module named by
#              BT_NULL_BLK_KO installed as null_blk.ko in the module tree; with
#              BT_NULL_BLK_KO empty the rust guest skips these runs and the
#              table says "not run: no null_blk-compatible build yet"
#   devices    the device-only tests BT_DEV_TESTS on two disks: the null disk
#              (C: null_blk's nullb0; rust: rnull_split.ko's rnullb0, both
#              with BT_NULL_DEV_PARAMS) and the virtio disk with serial
#              "blktests" (C virtio_blk's vdX; rust: rvirtio_blk.ko's rvdX)
# Each test is one ./check, killed after BT_TEST_TIMEOUT; BT_EXCLUDE lists
# tests or groups left out. blktests' TIMEOUT is BT_TIMEOUT, RUN_ZONED_TESTS
# is BT_ZONED. Output in $OUT: <run>.log (check's output), <run>/ (its
# results directory), runs.tsv (run, kind, seconds or -, tests killed or
# "running"; a run's last line counts), devices.tsv (role, disk, note),
# setup.log. Exit status 0 if every run could start.
set -u
drv=${1:?usage: $0 c|rust}
. "$OUT/blktests.env"
KVER=$(uname -r)
MODDIR=${MODDIR:-$REPO}
WORK=/tmp/blktests
SETUP_LOG=$OUT/setup.log
: > "$SETUP_LOG"
: > "$OUT/runs.tsv"
: > "$OUT/devices.tsv"
say() { echo "blktests-guest: $*" | tee -a "$SETUP_LOG"; }

# --- what blktests needs ---------------------------------------------------------
setup_basics() {
    [[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
    # (findmnt -t exits 0 even when nothing matches)
    [[ -n $(findmnt -nt cgroup2 -o TARGET) ]] || mount -t cgroup2 cgroup2 /sys/fs/cgroup
}

# udevadm stand-in: blktests calls `udevadm settle` after making or removing
# disks. devtmpfs creates and removes the nodes with the devices, so settle
# only waits (at most 10 s) until every block device in sysfs has its /dev
# node. `info` prints a disk's properties from its uevent file.
setup_udevadm() {
    mkdir -p /tmp/blktests-bin
    cat > /tmp/blktests-bin/udevadm <<'EOF'
#!/bin/bash
# udevadm stand-in of scripts/blktests-guest.sh (no udev in the test guest)
case ${1:-} in
settle)
    for ((i = 0; i < 100; i++)); do
        missing=0
        for u in /sys/class/block/*/uevent; do
            [[ -e $u ]] || continue
            n=$(sed -n 's/^DEVNAME=//p' "$u")
            [[ -z $n || -e /dev/$n ]] || { missing=1; break; }
        done
        ((missing)) || exit 0
        sleep 0.1
    done
    exit 1 ;;
info)
    shift
    name=
    while [[ $# -gt 0 ]]; do
        case $1 in
            --name=*|--path=*) name=${1#*=} ;;
            -n|--name|-p|--path) name=${2:-}; shift ;;
            -q|--query) shift ;;
            -*) ;;
            *) name=$1 ;;
        esac
        shift
    done
    name=${name#/dev/}; name=${name##*/}
    u=/sys/class/block/$name/uevent
    [[ -n $name && -e $u ]] || { echo "Unknown device \"$name\"" >&2; exit 4; }
    echo "DEVPATH=$(realpath "/sys/class/block/$name" | sed 's|^/sys||')"
    sed 's|^DEVNAME=|DEVNAME=/dev/|' "$u"
    echo "SUBSYSTEM=block" ;;
--version) echo 252 ;;
*) echo "udevadm (blktests guest stand-in): '$*' is not supported" >&2; exit 1 ;;
esac
EOF
    chmod +x /tmp/blktests-bin/udevadm
    export PATH=/tmp/blktests-bin:$PATH
}

# The module tree, from the kernel build (what `make modules_install` would
# install, without touching the build tree).
setup_modules() {
    local m=/lib/modules/$KVER ko n=0
    if [[ ! -d /lib/modules ]]; then
        mkdir -p /run/blktests-usrlib/upper /run/blktests-usrlib/work
        mount -t overlay overlay \
            -o lowerdir=/usr/lib,upperdir=/run/blktests-usrlib/upper,workdir=/run/blktests-usrlib/work \
            /usr/lib || { say "cannot lay an overlay over /usr/lib for /lib/modules"; return 1; }
        mkdir /lib/modules
    fi
    mkdir -p "$m/kernel"
    while read -r ko; do
        ko=${ko%.o}.ko
        install -D -m 644 "$KDIR/$ko" "$m/kernel/$ko" && n=$((n + 1))
    done < "$KDIR/modules.order"
    sed 's:^\(.*\)\.o$:kernel/\1.ko:' "$KDIR/modules.order" > "$m/modules.order"
    cp "$KDIR/modules.builtin" "$KDIR/modules.builtin.modinfo" "$m/"
    # The hook for a Rust null_blk: a module whose name (module!'s `name:`)
    # is null_blk, with null_blk's parameters and configfs subsystem `nullb`.
    if [[ $drv == rust && -n $BT_NULL_BLK_KO ]]; then
        install -m 644 "$BT_NULL_BLK_KO" "$m/kernel/drivers/block/null_blk/null_blk.ko" \
            || { say "cannot install $BT_NULL_BLK_KO as null_blk.ko"; return 1; }
        local name; name=$(modinfo -F name "$BT_NULL_BLK_KO" 2>/dev/null)
        say "null_blk.ko is $BT_NULL_BLK_KO (module name: ${name:-?})"
        # blktests finds it by /sys/module/null_blk and `modprobe -r null_blk`
        [[ $name == null_blk ]] || say "warning: its module name is not null_blk: blktests will not find it loaded"
    fi
    depmod -a "$KVER" || { say "depmod failed"; return 1; }
    say "module tree $m: $n modules from $KDIR; null_blk: $(modinfo -F filename null_blk 2>&1)"
}

# A writable copy of the host's prepared tree (src/ built), in tmpfs.
setup_tree() {
    rm -rf "$WORK"
    cp -a "$BT_TREE" "$WORK" || { say "cannot copy $BT_TREE"; return 1; }
    rm -rf "$WORK/results"
}

# --- runs ------------------------------------------------------------------------
# The tests a filter (group or test) names, as ./check finds them.
tests_of() {
    if [[ -d $WORK/tests/$1 ]]; then
        (cd "$WORK" && find "tests/$1" -type f -name '[0-9][0-9][0-9]' | sed 's|^tests/||' | sort)
    else
        echo "$1"
    fi
}

# What a killed test may leave behind, undone so that the next test starts
# as after a clean one: mounts under the tree, null_blk devices, the
# module, blktests' cgroup.
cleanup_after_kill() {
    local d p
    findmnt -rn -o TARGET | grep "^$WORK/" | sort -r | while read -r d; do umount -l "$d"; done
    for d in /sys/kernel/config/nullb/*/; do [[ -d $d ]] && rmdir "$d"; done
    [[ -e /sys/module/null_blk ]] && modprobe -r null_blk
    if [[ -d /sys/fs/cgroup/blktests ]]; then
        find /sys/fs/cgroup/blktests -depth -type d | while read -r d; do
            while read -r p; do echo "$p" > /sys/fs/cgroup/cgroup.procs; done < "$d/cgroup.procs"
            rmdir "$d"
        done
    fi
} 2>/dev/null

# run NAME KIND CONFIG FILTER...: every test of the filters, one ./check
# each, so that a hung test costs BT_TEST_TIMEOUT, not the rest of the run.
# Each test is announced by a "blktests-guest: test T" line, and a killed
# one followed by "blktests-guest: killed T: WHY". The output goes to
# $OUT/NAME.log, the results directory to $OUT/NAME/. Tests in BT_EXCLUDE
# are left out (the table names them).
run() {
    local name=$1 kind=$2 cfg=$3 t0 t1 rc f t oom why killed=0; shift 3
    say "run $name: ./check, one test at a time: $*"
    printf '%s\t%s\t%s\t%s\n' "$name" "$kind" - running >> "$OUT/runs.tsv"
    : > "$OUT/$name.log"
    t0=$SECONDS
    for f in "$@"; do
        for t in $(tests_of "$f"); do
            [[ " $BT_EXCLUDE " == *" $t "* || " $BT_EXCLUDE " == *" ${t%/*} "* ]] && continue
            # A group whose requirements fail leaves the modules they
            # loaded (check unloads them after a test only): start clean.
            # (The device-only run keeps its disks.)
            [[ $kind == group && -e /sys/module/null_blk ]] && modprobe -r null_blk
            echo "blktests-guest: test $t" | tee -a "$OUT/$name.log"
            oom=$(dmesg | grep -c 'Out of memory: Killed process')
            t1=$SECONDS
            # (this script is out of the OOM killer's reach, the test is not)
            (echo 0 > /proc/self/oom_score_adj; cd "$WORK" &&
             exec timeout -k 30 "$BT_TEST_TIMEOUT" ./check -c "$cfg" -o "$WORK/results-$name" "$t") 2>&1 \
                | tee -a "$OUT/$name.log"
            rc=${PIPESTATUS[0]}
            if [[ $rc == 124 || $rc == 137 ]]; then
                killed=$((killed + 1))
                if (( SECONDS - t1 >= BT_TEST_TIMEOUT )); then
                    why="no result after $((SECONDS - t1)) s (BLKTESTS_TEST_TIMEOUT)"
                elif (( $(dmesg | grep -c 'Out of memory: Killed process') > oom )); then
                    why="./check killed by the OOM killer after $((SECONDS - t1)) s (guest memory: BLKTESTS_VM_MEM)"
                else
                    why="./check killed (status $rc) after $((SECONDS - t1)) s"
                fi
                echo "blktests-guest: killed $t: $why" | tee -a "$OUT/$name.log"
                [[ $kind == group ]] && cleanup_after_kill
            fi
            # (after every test: a lost guest keeps what ran)
            mkdir -p "$OUT/$name"
            cp -r "$WORK/results-$name/." "$OUT/$name/" 2>/dev/null
            sync
        done
    done
    printf '%s\t%s\t%s\t%s\n' "$name" "$kind" "$((SECONDS - t0))" "$killed" >> "$OUT/runs.tsv"
    sync
}

config() { # config FILE TEST_DEV...
    local f=$1; shift
    {
        printf 'TEST_DEVS=('; printf '%q ' "$@"; echo ')'
        printf 'TIMEOUT=%q\nRUN_ZONED_TESTS=%q\n' "$BT_TIMEOUT" "$BT_ZONED"
        # no syslog in the guest
        echo 'LOGGER_PROG=true'
    } > "$f"
}

# The virtio disk QEMU was given (serial "blktests"), under DRIVER's names.
virtio_disk() {
    local d
    for d in /sys/block/*; do
        [[ -e $d/serial && $(cat "$d/serial") == blktests ]] && { basename "$d"; return 0; }
    done
    return 1
}

setup_devices() { # prints the disks, one /dev path a line; notes to devices.tsv
    local null virt note
    [[ -e /sys/module/null_blk ]] && modprobe -r null_blk
    if [[ $drv == c ]]; then
        # shellcheck disable=SC2086
        if modprobe null_blk nr_devices=1 $BT_NULL_DEV_PARAMS; then null=nullb0; note="null_blk $BT_NULL_DEV_PARAMS"
        else note="modprobe null_blk $BT_NULL_DEV_PARAMS failed"; fi
        printf 'null\t%s\t%s\n' "${null:--}" "$note" >> "$OUT/devices.tsv"
        if modprobe virtio_blk; then note=virtio_blk; else note="modprobe virtio_blk failed"; fi
    else
        # shellcheck disable=SC2086
        if insmod "$MODDIR/rnull_split/rnull_split.ko" $BT_NULL_DEV_PARAMS; then null=rnullb0; note="rnull_split.ko $BT_NULL_DEV_PARAMS"
        else note="insmod $MODDIR/rnull_split/rnull_split.ko $BT_NULL_DEV_PARAMS failed"; fi
        printf 'null\t%s\t%s\n' "${null:--}" "$note" >> "$OUT/devices.tsv"
        if insmod "$MODDIR/rvirtio_blk/rvirtio_blk.ko"; then note=rvirtio_blk.ko; else note="insmod $MODDIR/rvirtio_blk/rvirtio_blk.ko failed"; fi
    fi
    udevadm settle
    virt=$(virtio_disk) || note="$note; no disk with serial blktests"
    printf 'virtio\t%s\t%s\n' "${virt:--}" "$note" >> "$OUT/devices.tsv"
    [[ -n ${null:-} && -b /dev/$null ]] && echo "/dev/$null"
    [[ -n ${virt:-} && -b /dev/$virt ]] && echo "/dev/$virt"
}

teardown_devices() {
    if [[ $drv == c ]]; then
        modprobe -r null_blk virtio_blk
    else
        rmmod rnull_split rvirtio_blk
    fi
}

# --- main ------------------------------------------------------------------------
rc=0
echo -1000 > /proc/$$/oom_score_adj
say "driver $drv, kernel $KVER, KDIR $KDIR, MODDIR $MODDIR"
setup_basics && setup_udevadm && setup_modules && setup_tree || { say "setup failed"; exit 1; }

if [[ $drv == c || -n $BT_NULL_BLK_KO ]]; then
    config /tmp/blktests-groups.config
    for g in $BT_GROUPS; do
        run "group-${g//\//_}" group /tmp/blktests-groups.config "$g"
    done
else
    for g in $BT_GROUPS; do
        printf '%s\t%s\t%s\t%s\n' "group-${g//\//_}" placeholder 0 0 >> "$OUT/runs.tsv"
    done
    say "groups not run: no null_blk-compatible Rust build yet (BLKTESTS_RUST_NULL_BLK_KO)"
fi

if [[ -n $BT_DEV_TESTS ]]; then
    mapfile -t devs < <(setup_devices)
    cat "$OUT/devices.tsv" | tee -a "$SETUP_LOG"
    if [[ ${#devs[@]} -gt 0 ]]; then
        config /tmp/blktests-devices.config "${devs[@]}"
        # shellcheck disable=SC2086
        run devices devices /tmp/blktests-devices.config $BT_DEV_TESTS
    else
        say "no device for the device-only tests"; rc=1
    fi
    teardown_devices
fi
dmesg > "$OUT/dmesg.txt"
exit $rc

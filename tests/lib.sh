# Guest-side test helpers (KTAP output). Source it from a tests/guest/*.sh.
#
# Results go to stdout and to $OUT/<suite>.tap, which the host harness
# (scripts/check.sh) counts. Every check asserts a real outcome; `skip` is for
# a missing requirement, never for a failure.

# Modules are loaded from $MODDIR/<module>/<module>.ko: the repo, or the copy
# built for the debug kernel (make check-debug).
MODDIR=${MODDIR:-$REPO}
SUITE=${SUITE:-$(basename "$0" .sh)}
TAP=$OUT/$SUITE.tap
: > "$TAP"
_n=0

_emit() { echo "$*" | tee -a "$TAP"; }
ok() { _n=$((_n + 1)); _emit "ok $_n - $*"; }
not_ok() { _n=$((_n + 1)); _emit "not ok $_n - $*"; }
skip() { _n=$((_n + 1)); _emit "ok $_n - $1 # SKIP $2"; }
diag() { _emit "# $*"; }

# check DESCRIPTION CMD...: ok if CMD succeeds.
check() {
    local d=$1; shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}

# expect_eq DESCRIPTION GOT WANT
expect_eq() {
    if [[ "$2" == "$3" ]]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}

. "$REPO/tests/badlog.sh"

# The kernel log after timestamp TS (printk times; a line without one belongs
# to the record before it). Timestamps, not line counts, so `dmesg -C` and a
# wrapped ring buffer do not hide lines.
_dmesg_ts=-1
dmesg_after() {
    dmesg | awk -v m="$1" 'match($0, /^\[ *[0-9]+\.[0-9]+\]/) { on = substr($0, 2, RLENGTH - 2) + 0 > m + 0 } on'
}
_last_ts() { awk 'match($0, /^\[ *[0-9]+\.[0-9]+\]/) { t = substr($0, 2, RLENGTH - 2) } END { gsub(/ /, "", t); print t == "" ? -1 : t }'; }

# dmesg_clean DESCRIPTION: no bad line since the previous call.
dmesg_clean() {
    local new bad ts
    new=$(dmesg_after "$_dmesg_ts")
    ts=$(_last_ts <<<"$new"); [[ $ts == -1 ]] || _dmesg_ts=$ts
    new=$(badlog_filter <<<"$new")
    bad=$(grep -E "$BAD_LOG" <<<"$new" || true)
    if [[ -z $bad ]]; then ok "$1: kernel log clean"; else
        not_ok "$1: kernel log has reports"
        # the report: from 5 lines before the first bad line, at most 80 lines
        grep -n -m1 -E "$BAD_LOG" <<<"$new" | cut -d: -f1 | {
            read -r first; tail -n +$((first > 5 ? first - 5 : 1)) <<<"$new" | head -n 80; } | sed 's/^/#   /'
    fi
}

# kmemleak: scans only when asked (no auto scan in kernel/debug.fragment).
KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_baseline: report and forget leak suspects older than the test
# (they are not ours; kmemleak_check then shows only new ones).
kmemleak_baseline() {
    [[ -e $KMEMLEAK ]] || return 0
    # two scans, as in kmemleak_scan: every older leak gets reported, then cleared
    echo scan > "$KMEMLEAK" 2>/dev/null || return 0
    echo scan > "$KMEMLEAK" 2>/dev/null || return 0
    local pre; pre=$(cat "$KMEMLEAK")
    [[ -z $pre ]] || diag "kmemleak: $(grep -c '^unreferenced object' <<<"$pre") suspect(s) from before the test, cleared"
    echo clear > "$KMEMLEAK"
}

# kmemleak_scan: scan now and put what kmemleak reports in $KMEMLEAK_REPORT.
# 0: nothing unreferenced; 1: suspects; 2: scan failed.
# Two scans: kmemleak reports an object only if its contents did not change
# since the previous scan (the checksum test), and the first scan that sees
# a new object only records its checksum. With one scan, a leak made since
# the last scan would never show (the positive control, kmemleak_control,
# caught exactly that). A suspect is thus unreferenced in the second scan
# and unchanged between the two.
KMEMLEAK_REPORT=
kmemleak_scan() {
    KMEMLEAK_REPORT=
    sleep 6 # kmemleak never reports objects younger than 5 s
    echo scan > "$KMEMLEAK" 2>/dev/null || return 2
    echo scan > "$KMEMLEAK" 2>/dev/null || return 2
    KMEMLEAK_REPORT=$(cat "$KMEMLEAK")
    [[ -z $KMEMLEAK_REPORT ]]
}

# kmemleak_check DESCRIPTION: scan now; ok if nothing is unreferenced, the
# report otherwise. SKIP on a kernel without kmemleak (not a pass).
kmemleak_check() {
    if [[ ! -e $KMEMLEAK ]]; then
        skip "$1: kmemleak finds no leak" "kernel without CONFIG_DEBUG_KMEMLEAK (use make check-debug)"
        return 0
    fi
    kmemleak_scan
    case $? in
    0) ok "$1: kmemleak finds no leak" ;;
    1) not_ok "$1: kmemleak: $(grep -c '^unreferenced object' <<<"$KMEMLEAK_REPORT") unreferenced object(s)"
       head -n 100 <<<"$KMEMLEAK_REPORT" | sed 's/^/#   /'
       return 1 ;;
    *) not_ok "$1: kmemleak scan failed (kmemleak disabled? see the kernel log)"
       dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/#   /'
       return 1 ;;
    esac
}

# kmemleak_control: the positive control. The kernel's sample module
# kmemleak-test.ko leaks on purpose (kmalloc, vmalloc and list objects it
# drops); the same scan kmemleak_check uses must report them. Its report is bracketed as expected (tests/badlog.sh) and
# cleared afterwards, so later checks start clean. SKIP without kmemleak.
kmemleak_control() {
    local ko=$KDIR/samples/kmemleak/kmemleak-test.ko n
    if [[ ! -e $KMEMLEAK ]]; then
        skip "positive control: kmemleak_check finds kmemleak-test.ko's leaks" "kernel without CONFIG_DEBUG_KMEMLEAK (use make check-debug)"
        return 0
    fi
    if [[ ! -f $ko ]]; then
        not_ok "positive control: $ko missing (kernel/debug.fragment builds it)"
        return 1
    fi
    kmemleak_baseline
    echo "$EXPECTED_BEGIN" > /dev/kmsg
    insmod "$ko" && rmmod kmemleak_test
    kmemleak_scan
    local rc=$?
    n=$(grep -c '^unreferenced object' <<<"$KMEMLEAK_REPORT")
    echo clear > "$KMEMLEAK"
    echo "$EXPECTED_END" > /dev/kmsg
    # (its init code is freed after loading, so the backtraces show
    # addresses; the objects are the ones insmod allocated)
    if [[ $rc == 1 ]] && (( n >= 10 )) && grep -q 'comm "insmod"' <<<"$KMEMLEAK_REPORT"; then
        ok "positive control: kmemleak_check finds kmemleak-test.ko's leaks ($n objects allocated by insmod)"
    else
        not_ok "positive control: kmemleak_check missed kmemleak-test.ko's leaks (scan status $rc, $n objects)"
        head -n 30 <<<"$KMEMLEAK_REPORT" | sed 's/^/#   /'
    fi
}

# fio_json ARGS...: run fio with JSON output to $FIO_JSON, return fio's status.
FIO_JSON=/tmp/fio.json
fio_json() {
    fio --output-format=json --output="$FIO_JSON" "$@" >/dev/null 2>/tmp/fio.err
    local rc=$?
    [[ $rc == 0 ]] || sed 's/^/# fio: /' /tmp/fio.err
    return $rc
}

# fio_field EXPR: a value from the last fio JSON (jobs[0]), e.g. read.io_bytes.
fio_field() {
    # (fio may put warnings before the JSON in the output file)
    python3 -c "import json,sys; s=open('$FIO_JSON').read(); j=json.loads(s[s.find('{'):])['jobs'][0]
v=j
for k in sys.argv[1].split('.'): v=v[k]
print(v)" "$1"
}

# c_null_blk_ready WHAT: whether C null_blk ($CKO, set by the suite: the
# module of the kernel under test) can be loaded to compare with ours: its
# module exists and no null_blk is loaded. If not, a SKIP (no module) or a
# failed check (one is loaded), both naming WHAT.
c_null_blk_ready() {
    if [[ ! -e ${CKO:-} ]]; then
        skip "C null_blk: $1" "no ${CKO:-C null_blk module}"
    elif grep -q '^null_blk ' /proc/modules; then
        not_ok "C null_blk: $1 (null_blk is loaded already)"
    else
        return 0
    fi
    return 1
}

# sysblk DEV ATTR: a /sys/block attribute.
sysblk() { cat "/sys/block/$1/$2"; }

# disk_by_serial SERIAL: the rvirtio_blk disk (rvd*) with that serial
disk_by_serial() {
    local d
    for d in /sys/block/rvd*; do
        [[ -e $d/serial && $(cat "$d/serial") == "$1" ]] && { basename "$d"; return 0; }
    done
    return 1
}

finish() {
    _emit "1..$_n"
    grep -q '^not ok' "$TAP" && return 1
    return 0
}

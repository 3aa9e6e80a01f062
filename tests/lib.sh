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
    echo scan > "$KMEMLEAK" 2>/dev/null || return 0
    local pre; pre=$(cat "$KMEMLEAK")
    [[ -z $pre ]] || diag "kmemleak: $(grep -c '^unreferenced object' <<<"$pre") suspect(s) from before the test, cleared"
    echo clear > "$KMEMLEAK"
}

# kmemleak_check DESCRIPTION: scan now; ok if nothing is unreferenced, the
# report otherwise. SKIP on a kernel without kmemleak (not a pass).
kmemleak_check() {
    if [[ ! -e $KMEMLEAK ]]; then
        skip "$1: kmemleak finds no leak" "kernel without CONFIG_DEBUG_KMEMLEAK (use make check-debug)"
        return 0
    fi
    sleep 6 # kmemleak never reports objects younger than 5 s
    if ! echo scan > "$KMEMLEAK" 2>/dev/null; then
        not_ok "$1: kmemleak scan failed (kmemleak disabled? see the kernel log)"
        dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/#   /'
        return 1
    fi
    local rep; rep=$(cat "$KMEMLEAK")
    # A suspect must survive a second scan: a pointer that was only in a
    # register or in flight during the first is seen by the second.
    if [[ -n $rep ]]; then sleep 1; echo scan > "$KMEMLEAK"; rep=$(cat "$KMEMLEAK"); fi
    if [[ -z $rep ]]; then ok "$1: kmemleak finds no leak"; else
        not_ok "$1: kmemleak: $(grep -c '^unreferenced object' <<<"$rep") unreferenced object(s)"
        head -n 100 <<<"$rep" | sed 's/^/#   /'
        return 1
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
    python3 -c "import json,sys; j=json.load(open('$FIO_JSON'))['jobs'][0]
v=j
for k in sys.argv[1].split('.'): v=v[k]
print(v)" "$1"
}

# sysblk DEV ATTR: a /sys/block attribute.
sysblk() { cat "/sys/block/$1/$2"; }

finish() {
    _emit "1..$_n"
    grep -q '^not ok' "$TAP" && return 1
    return 0
}

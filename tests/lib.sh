# Guest-side test helpers (KTAP output). Source it from a tests/guest/*.sh.
#
# Results go to stdout and to $OUT/<suite>.tap, which the host harness
# (scripts/check.sh) counts. Every check asserts a real outcome; `skip` is for
# a missing requirement, never for a failure.

SUITE=${SUITE:-$(basename "$0" .sh)}
TAP=$OUT/$SUITE.tap
: > "$TAP"
_n=0
_dmesg_mark=0

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

# Kernel log lines that mean the kernel is unhappy.
BAD_LOG='WARNING:|BUG:|Oops|Call Trace|general protection|KASAN|UBSAN|kmemleak|possible circular|inconsistent lock|unreferenced object|refcount_t:|list_add corruption|list_del corruption'

# dmesg_clean DESCRIPTION: no bad line since the previous call.
dmesg_clean() {
    local new bad
    new=$(dmesg | tail -n +$((_dmesg_mark + 1)))
    _dmesg_mark=$(dmesg | wc -l)
    bad=$(grep -E "$BAD_LOG" <<<"$new" || true)
    if [[ -z $bad ]]; then ok "$1: kernel log clean"; else
        not_ok "$1: kernel log has reports"; echo "$new" | tail -n 60 | sed 's/^/#   /'
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

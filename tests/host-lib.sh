# Shared start of the host scripts that build their own QEMU disks for
# rvirtio_blk (tests/host/virtio.sh, tests/host/virtio_faults.sh); sourced
# from the repository root.
#   host_start SUITE   out: $OUT_DIR/SUITE, emptied, absolute path
#                      img: a host temporary directory for disk images,
#                           removed at exit (and the QMP helper $qmp_pid
#                           killed, if one was started)
#                      KO:  the module to test; exits with a failed check
#                           if it is not built
#   hok / hnot_ok / hcheck DESC CMD...   numbered host KTAP lines
#   drive SPEC / dev SPEC   a QEMU -drive / -device, collected in q for
#                           scripts/vm.sh
host_start() {
    out=${OUT_DIR:-out}/$1
    rm -rf "$out"; mkdir -p "$out"
    out=$(cd "$out" && pwd)
    img=$(mktemp -d "/tmp/$1.XXXXXX")
    trap 'rm -rf "$img"; [[ -n ${qmp_pid:-} ]] && kill "$qmp_pid" 2>/dev/null' EXIT
    KO=${MODDIR:-.}/rvirtio_blk/rvirtio_blk.ko
    if [[ ! -f $KO ]]; then
        echo "not ok 1 - host: $KO not built (run make)"; exit 1
    fi
}

n=0
hok() { n=$((n + 1)); echo "ok $n - host: $*"; }
hnot_ok() { n=$((n + 1)); echo "not ok $n - host: $*"; }
hcheck() { local d=$1; shift; if "$@"; then hok "$d"; else hnot_ok "$d"; fi; }

q=()
drive() { q+=(--qemu -drive --qemu "$1"); }
dev() { q+=(--qemu -device --qemu "$1"); }

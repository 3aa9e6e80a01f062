# Host-side helpers of scripts/run.sh and scripts/bench-virtio.sh. Source it
# after scripts/env.sh.

# The plots need matplotlib, which scripts/setup-host.sh installs for
# Debian's python3; a python3 earlier in PATH (pyenv, a venv) may lack it,
# and then every report is written without its plot. The benchmarks then
# run Debian's python3 instead.
if [[ -x /usr/bin/python3 ]] && ! python3 -c 'import matplotlib' 2>/dev/null \
    && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    mkdir -p "$REPO/out/bin"
    ln -sf /usr/bin/python3 "$REPO/out/bin/python3"
    export PATH=$REPO/out/bin:$PATH
fi

# Wall time since BENCH_START (epoch seconds, set by the first script), as m:ss.
export BENCH_START=${BENCH_START:-$(date +%s)}
bench_elapsed() { local s=$(($(date +%s) - BENCH_START)); printf '%d:%02d' $((s / 60)) $((s % 60)); }

# bench_guest ACCEL OUTDIR TIMEOUT -- CMD...: boot a 2-vCPU guest with
# VM_ACCEL=ACCEL (and the QEMU arguments in the array BENCH_QEMU) running
# CMD; the console goes to OUTDIR/vm.log, the guest's "BENCH " progress
# lines to stdout with the elapsed wall time.
bench_guest() {
    local accel=$1 outdir=$2 timeout=$3 l
    shift 4
    local qemu=()
    for l in "${BENCH_QEMU[@]}"; do qemu+=(--qemu "$l"); done
    set +e
    VM_ACCEL=$accel scripts/vm.sh --cpus 2 --out "$outdir" --timeout "$timeout" "${qemu[@]}" -- "$@" 2>&1 \
        | tee "$outdir/vm.log" | while IFS= read -r l; do
            l=${l%$'\r'}
            [[ $l == BENCH\ * ]] && printf '  %s %s\n' "$(bench_elapsed)" "${l#BENCH }"
        done
    local rc=${PIPESTATUS[0]}
    set -e
    [[ $rc == 0 ]] || tail -n 30 "$outdir/vm.log" >&2
    return "$rc"
}

# bench_shards DIR TIMEOUT OUTNAME TAG SHARD...: one icount guest per shard
# plan (bench/plan.py shard), side by side, each running bench/guest.py on
# its plan into DIR/g<i>/OUTNAME; progress lines are prefixed with
# "TAG g<i>". Fails if any guest failed.
bench_shards() {
    local dir=$1 timeout=$2 outname=$3 tag=$4 i failed=0
    shift 4
    local shards=("$@") pids=()
    for i in "${!shards[@]}"; do
        mkdir -p "$dir/g$i"
        bench_guest icount "$dir/g$i" "$timeout" -- python3 bench/guest.py \
            "$REPO/${shards[$i]}" "$REPO/$dir/g$i/$outname" | sed -u "s|^  |  ${tag}g$i |" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { log "benchmark guest $i failed ($dir/g$i/vm.log)"; failed=1; }
    done
    return "$failed"
}

# bench_meta ACCEL RUNTIME_MS: what made the results, as JSON.
bench_meta() {
    local kdir
    kdir=$(scripts/kernel.sh kdir)
    python3 - "$1" "$2" "$kdir" <<'PY'
import json, os, subprocess, sys, time
accel, runtime, kdir = sys.argv[1:]
run = lambda *c: subprocess.run(c, capture_output=True, text=True).stdout.strip()
args = {"icount": "-accel tcg,thread=single -icount shift=0,sleep=off,align=off -cpu max",
        "tcg": "-accel tcg,thread=multi -cpu max", "kvm": "-accel kvm -cpu host"}[accel]
print(json.dumps({
    "command": os.environ.get("BENCH_COMMAND", ""),
    "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    "git": run("git", "describe", "--always", "--dirty"),
    "kernel": open(f"{kdir}/include/config/kernel.release").read().strip(),
    "qemu": run("qemu-system-x86_64", "--version").splitlines()[0],
    "accel": accel, "qemu_accel_args": args, "vcpus": 2, "guest_mem_mb": 2048,
    "runtime_ms": int(runtime), "host_cpus": os.cpu_count(),
    "host_load_at_start": os.getloadavg()[0],
    "other_qemu_guests_at_start": int(run("pgrep", "-c", "qemu-system-x86") or 0),
}, indent=1))
PY
}

# profile_mark: the address of __x64_sys_sync in the test kernel, where the
# insn_profile plugin cuts its phases (scripts/profile-virtio.sh,
# scripts/profile-null.sh); dies for a KASLR kernel, whose System.map
# addresses are not the running ones.
profile_mark() {
    local kdir mark
    kdir=$(scripts/kernel.sh kdir)
    mark=$(awk '$3 == "__x64_sys_sync" { print $1; exit }' "$kdir/System.map")
    [[ -n $mark ]] || die "no __x64_sys_sync in $kdir/System.map"
    grep -q '^CONFIG_RANDOMIZE_BASE=y' "$kdir/.config" \
        && die "KASLR kernel: System.map addresses are not the running ones"
    echo "$mark"
}

#!/bin/bash
# Run by scripts/guest-init.sh in the guest shortly before the host's timeout
# would kill it: records what is stuck, so that a hang leaves evidence.
#   - tasks in uninterruptible sleep (D) with their wait channel, and the
#     kernel's blocked-task dump (sysrq w) with their stacks
#   - every disk's requests in flight, blk-mq's busy/dispatch lists and the
#     drivers' debugfs counters
# Full record: $VM_OUT/watchdog.txt. A short summary (at most 8 lines) goes
# to $VM_OUT/watchdog.summary and to the console, prefixed "VM-WATCHDOG:".
# Usage: guest-watchdog.sh SECONDS_RUN
full=$VM_OUT/watchdog.txt sum=$VM_OUT/watchdog.summary
: > "$full"; : > "$sum"
say() { echo "$*" >> "$sum"; echo "VM-WATCHDOG: $*"; }
say "guest command still running after $1 s (the host's timeout is near); state recorded in watchdog.txt"

dtasks=()
for st in /proc/[0-9]*/stat; do
    read -r line < "$st" 2>/dev/null || continue
    rest=${line##*) }           # comm may contain spaces: state follows the last ')'
    [[ ${rest%% *} == D ]] || continue
    p=${st#/proc/}; p=${p%/stat}
    dtasks+=("$(cat /proc/$p/comm 2>/dev/null)[$p] in $(cat /proc/$p/wchan 2>/dev/null)")
done
say "tasks in D state: ${#dtasks[@]}${dtasks:+: ${dtasks[*]:0:6}}"

# The dump's stack traces are bracketed as a positive control's would be
# (tests/badlog.sh): if the command still ends in time, it is not failed for
# them; the summary above has already recorded that it nearly timed out.
marker="rnull-test: expected reports begin (watchdog: sysrq w)"
echo "$marker" > /dev/kmsg 2>/dev/null
echo w > /proc/sysrq-trigger 2>/dev/null
sleep 1
echo "rnull-test: expected reports end (watchdog)" > /dev/kmsg 2>/dev/null
{
    echo "== tasks in D state"; printf '%s\n' "${dtasks[@]}"
    echo "== blocked tasks (sysrq w)"
    dmesg | awk -v m="$marker" 'index($0, m) { on = 1 } on'
} >> "$full"

busy=()
{
    echo "== block devices"
    for d in /sys/block/*; do
        b=${d##*/}
        echo "$b inflight: $(cat "$d/inflight" 2>/dev/null)"
        for h in /sys/kernel/debug/block/$b/hctx*; do
            [[ -d $h ]] || continue
            for f in state busy dispatch; do   # (debugfs files have size 0)
                sed "s|^|$b/${h##*/}/$f: |" "$h/$f" 2>/dev/null
            done
        done
    done
    for dbg in /sys/kernel/debug/rvirtio_blk /sys/kernel/debug/rnull_split; do
        [[ -d $dbg ]] || continue
        echo "== $dbg"
        grep -r . "$dbg" 2>/dev/null | sed "s|^$dbg/||"
    done
} >> "$full" 2>&1
for d in /sys/block/*; do
    read -r r w < "$d/inflight" 2>/dev/null || continue
    (( r + w > 0 )) && busy+=("${d##*/} $r/$w")
done
say "disks with requests in flight (read/write): ${busy[*]:-none}"
n=$(cat /sys/kernel/debug/block/*/hctx*/busy 2>/dev/null | wc -l)
disp=()
for f in /sys/kernel/debug/block/*/hctx*/dispatch; do
    [[ -n $(cat "$f" 2>/dev/null) ]] && disp+=("${f#/sys/kernel/debug/block/}")
done
stopped=()
for f in /sys/kernel/debug/block/*/hctx*/state; do
    grep -q STOPPED "$f" 2>/dev/null && stopped+=("${f#/sys/kernel/debug/block/}")
done
say "blk-mq requests busy in drivers: $n; non-empty dispatch lists: ${disp[*]:-none}; stopped hardware queues: ${stopped[*]:-none}"
procs=$(ps -eo pid,ppid,stat,etimes,wchan:24,args 2>&1)
{ echo "== processes"; echo "$procs"; } >> "$full"
# the newest user processes other than shells and this script's tools
say "running (newest first): $(awk 'NR > 1 && $6 !~ /^(\[|-?bash|\/bin\/bash|sleep|ps|awk)/ {
        a = $6; for (i = 7; i <= NF; i++) a = a " " $i; print $4 "|" $1 "|" a }' <<<"$procs" \
    | sort -t'|' -k1,1n | head -n 3 | awk -F'|' '{ printf "%s[%s] %ss: %.90s; ", "", $2, $1, $3 }')"

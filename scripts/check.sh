#!/usr/bin/env bash
# The test command: host unit tests, then every guest suite
# (tests/host/*.sh, each booting its own guest). Prints every result line and
# ends with "N passed, N failed" (a skipped check counts as neither).
# With FLAVOUR=debug (make check-debug) each guest suite also fails on any
# report (tests/badlog.sh) anywhere in its guest's console log.
#
#   scripts/check.sh [SUITE...]     e.g. scripts/check.sh rnull
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. tests/badlog.sh
export OUT_DIR=${OUT_DIR:-$REPO/out}
mkdir -p "$OUT_DIR"

passed=0 failed=0 skipped=0
count() { # count FILE: tally KTAP lines
    local p f s
    p=$(grep -cE '^ok [0-9]+ ' "$1" | head -1); s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$1" | head -1)
    f=$(grep -cE '^not ok [0-9]+ ' "$1" | head -1)
    passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
}

suites=("$@")
if [[ ${#suites[@]} == 0 ]]; then
    suites=(host-unit)
    # fuzz runs only when named (make fuzz, CI's debug loop)
    for t in tests/host/*.sh; do [[ $t == */fuzz.sh ]] || suites+=("$(basename "$t" .sh)"); done
fi

for s in "${suites[@]}"; do
    log "suite $s"
    res=$OUT_DIR/$s.result
    t0=$SECONDS
    if [[ $s == host-unit ]]; then
        # cargo's own summary lines, turned into KTAP lines
        # (and the fuzzer's own: its random streams and data shadow)
        { (cd host-tests && cargo test 2>&1); r1=$?
          (cd fuzz && cargo test --release --locked 2>&1); r2=$?; } > "$OUT_DIR/cargo.log"
        rc=$(( r1 | r2 ))
        grep -E '^test .* \.\.\. (ok|FAILED)$' "$OUT_DIR/cargo.log" | awk '
            { n++; sub(/^test /, ""); r=$NF; sub(/ \.\.\. (ok|FAILED)$/, "");
              if (r == "ok") print "ok " n " - host: " $0; else print "not ok " n " - host: " $0 }' > "$res"
        [[ $rc == 0 ]] || { grep -q '^not ok' "$res" || echo "not ok 1 - host: cargo test failed to build or run" >> "$res"; tail -n 30 "$OUT_DIR/cargo.log"; }
        # The module sources are formatted with the kernel's rustfmt config.
        n=$(( $(grep -cE '^(not )?ok [0-9]+ ' "$res") + 1 ))
        if make -s fmt > "$OUT_DIR/fmt.log" 2>&1; then
            echo "ok $n - host: rustfmt --check (the kernel's .rustfmt.toml) on rnull_split, rvirtio_blk, common" >> "$res"
        else
            echo "not ok $n - host: rustfmt --check (the kernel's .rustfmt.toml) on rnull_split, rvirtio_blk, common" >> "$res"
            grep -m5 '^Diff in' "$OUT_DIR/fmt.log" | sed 's/^/#   /' >> "$res"
        fi
    else
        tests/host/$s.sh > "$res" 2>&1
        rc=$?
        if [[ $rc != 0 ]] && ! grep -q '^not ok' "$res"; then
            # No failed check, yet a failed suite: usually a guest that timed
            # out. Name how far it got, and what scripts/guest-watchdog.sh
            # found stuck.
            last=$(grep -E '^ok [0-9]+ ' "$res" | tail -n 1)
            echo "not ok 0 - $s: suite exited with status $rc after $((SECONDS - t0)) s (last result: ${last:-none})" >> "$res"
            grep -rhaE --exclude=console.log 'guest (timed out|died)' "$OUT_DIR/$s" 2>/dev/null \
                | sed 's/\x1b\[[0-9;]*m//g; s/^/#   /' >> "$res"
            find "$OUT_DIR/$s" -name watchdog.summary -exec cat {} + 2>/dev/null | sed 's/^/#   /' >> "$res"
        fi
        # A guest whose kernel reported while booting, before any test ran,
        # was booted once more (scripts/vm.sh) so that the suite still runs;
        # the report itself is a failure, shown with its first lines.
        while read -r rep; do
            n=$(( $(grep -cE '^(not )?ok [0-9]+ ' "$res") + 1 ))
            echo "not ok $n - $s: the guest kernel reported while booting, before any test (${rep#$OUT_DIR/}); the suite ran in a second boot" >> "$res"
            badlog_filter < "$rep" | grep -m1 -E -B1 -A2 "$BAD_LOG" | sed 's/^/#   /' >> "$res"
        done < <(find "$OUT_DIR/$s" -name boot-report.txt 2>/dev/null | sort)
        if [[ $FLAVOUR == debug ]]; then
            while read -r console; do
                n=$(( $(grep -cE '^(not )?ok [0-9]+ ' "$res") + 1 ))
                first=$(badlog_filter < "$console" | grep -naE "\[ *[0-9]+\.[0-9]+\] .*($BAD_LOG)" | head -n 1 | cut -d: -f1)
                if [[ -z $first ]]; then
                    echo "ok $n - $s: debug kernel: no report in ${console#$OUT_DIR/}" >> "$res"
                else
                    echo "not ok $n - $s: debug kernel: report in ${console#$OUT_DIR/}:$first" >> "$res"
                    tail -n +$((first > 5 ? first - 5 : 1)) "$console" | head -n 80 | tr -d '\r' | sed 's/^/#   /' >> "$res"
                fi
            done < <(find "$OUT_DIR/$s" -name console.log 2>/dev/null | sort)
        fi
    fi
    sed "s/^/[$s] /" "$res" | grep -E '^\[[^]]*\] (ok|not ok|#)'
    count "$res"
    log "suite $s done in $((SECONDS - t0)) s"
done

echo
if [[ $failed != 0 ]]; then
    # Repeat the failures (and the diagnostics that follow them) at the end,
    # where a truncated log still shows them.
    echo "failures:"
    for s in "${suites[@]}"; do
        scripts/failure-lines.sh < "$OUT_DIR/$s.result" 2>/dev/null | sed "s/^/  [$s] /"
    done
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[[ $failed == 0 ]]

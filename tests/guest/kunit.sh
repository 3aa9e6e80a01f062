#!/bin/bash
# KUnit: the kernel's built-in KUnit suites, among them the Rust doctests of
# the kernel crate (CONFIG_RUST_KERNEL_DOCTESTS: every `///` example of the
# crate and of our patches, run as a test), ran while the kernel booted
# (tests/host/kunit.sh boots with kunit.enable=1). Each test of each suite
# is one result line here, from /sys/kernel/debug/kunit/<suite>/results.
. "$REPO/tests/lib.sh"
KUNIT=/sys/kernel/debug/kunit
if [[ ! -d $KUNIT ]]; then
    not_ok "kunit: $KUNIT missing (kernel without CONFIG_KUNIT_DEBUGFS?)"
    exit 1
fi
suites=0
for d in "$KUNIT"/*/; do
    suite=$(basename "$d")
    [[ -f $d/results ]] || continue
    suites=$((suites + 1))
    # A test line of the suite is indented once: "    ok 3 name # SKIP why".
    while IFS= read -r line; do
        if [[ $line =~ ^\ {4}(not\ ok|ok)\ [0-9]+\ (.*)$ ]]; then
            res=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
            if [[ $rest == *"# SKIP"* ]]; then
                skip "kunit: $suite: ${rest%% # SKIP*}" "${rest#*# SKIP }"
            elif [[ $res == ok ]]; then
                ok "kunit: $suite: $rest"
            else
                not_ok "kunit: $suite: $rest"
            fi
        elif [[ $line =~ ^\ {4}#\  && ! $line =~ (Subtest|speed:|module:) ]]; then
            diag "$suite: ${line#    # }"
        fi
    done < "$d/results"
done
[[ $suites -gt 0 ]] || not_ok "kunit: no suite ran (kunit.enable=1 on the command line?)"

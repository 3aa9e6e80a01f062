#!/usr/bin/env bash
# Compile-fail suite: misuse of the kernel crate's safe API that must not
# compile. Each tests/compile-fail/CASE.rs is the end of a tiny out-of-tree
# module (tests/compile-fail/prelude.rs.in is its start: the module and a
# minimal blk-mq driver `D`), or a whole module if it has a line
# "// standalone"; it is built against the patched kernel (KDIR)
# and must fail with the error its "// expect:" line gives (an extended
# regular expression), for the reason its "// what:" line gives. A case
# named ok_* must build: it shows that the prelude and the legal uses
# compile, so the failures come from the misuse alone.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
KDIR=${KDIR:-$(scripts/kernel.sh kdir 2>/dev/null)}
out=${OUT_DIR:-out}/compile_fail
rm -rf "$out"; mkdir -p "$out"; out=$(cd "$out" && pwd)
n=0
if [[ ! -f $KDIR/Module.symvers ]]; then
    echo "not ok 1 - compile-fail: no built kernel in '$KDIR' (make kernel)"; exit 1
fi
for f in tests/compile-fail/*.rs; do
    name=$(basename "$f" .rs)
    what=$(sed -n 's#^// what: ##p' "$f" | head -n 1)
    expect=$(sed -n 's#^// expect: ##p' "$f" | head -n 1)
    d=$out/$name
    mkdir -p "$d"
    # (a "// standalone" case is a whole module: it declares its own module!)
    if grep -q '^// standalone' "$f"; then
        sed "s/@NAME@/cf_$name/" "$f"
    else
        { sed "s/@NAME@/cf_$name/" tests/compile-fail/prelude.rs.in; cat "$f"; }
    fi > "$d/cf_$name.rs"
    echo "obj-m := cf_$name.o" > "$d/Kbuild"
    make -C "$KDIR" M="$d" "${KMAKE_ARGS[@]}" modules > "$d/build.log" 2>&1
    rc=$?
    n=$((n + 1))
    if [[ $name == ok_* ]]; then
        if [[ $rc == 0 ]]; then
            echo "ok $n - compile-fail: $name builds ($what)"
        else
            echo "not ok $n - compile-fail: $name does not build ($what)"
            grep -m 5 -A 6 '^error' "$d/build.log" | sed 's/^/#   /'
        fi
    elif [[ $rc == 0 ]]; then
        echo "not ok $n - compile-fail: $name builds, but must not ($what)"
    elif grep -qE "$expect" "$d/build.log"; then
        echo "ok $n - compile-fail: $name fails with /$expect/ ($what)"
    else
        echo "not ok $n - compile-fail: $name fails, but not with /$expect/ ($what)"
        grep -m 3 -A 6 '^error' "$d/build.log" | sed 's/^/#   /'
    fi
done

# Kernel log lines that mean the kernel is unhappy: WARN/BUG/Oops, KASAN,
# lockdep (its reports start with "WARNING:"), kmemleak, debug objects, list
# and SLUB debugging, stalls. Sourced by tests/lib.sh (guest) and
# scripts/check.sh (host, on the console of debug-kernel runs).
BAD_LOG='WARNING:|BUG:|kernel BUG at|BUG [^ ]+ \((Not tainted|Tainted)|Oops|Call Trace|general protection|KASAN|UBSAN|kmemleak: .*(suspected|disabled|Cannot|[Ee]rror)|unreferenced object|possible circular|inconsistent lock|ODEBUG|refcount_t:|list_add corruption|list_del corruption|Redzone overwritten|Poison overwritten|INFO: task .* blocked|rcu: INFO|soft lockup|hard LOCKUP'

# A positive control (a test that makes the kernel report on purpose, to
# show the checks catch it) brackets the report with these kernel log
# lines; badlog_filter blanks what is between them (line numbers stay).
EXPECTED_BEGIN='rnull-test: expected reports begin'
EXPECTED_END='rnull-test: expected reports end'
badlog_filter() {
    awk -v b="$EXPECTED_BEGIN" -v e="$EXPECTED_END" '
        index($0, b) { skip = 1 } { print skip ? "" : $0 } index($0, e) { skip = 0 }'
}

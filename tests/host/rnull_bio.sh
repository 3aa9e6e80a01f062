#!/usr/bin/env bash
# Bio-mode splitting, counters, memory-backed data integrity: one guest
# running tests/guest/rnull_bio.sh.
exec "$(dirname "$0")/../guest-suite.sh" rnull_bio --mem 3072 --timeout 1200

#!/usr/bin/env bash
# rnull_split on blk-mq: one guest running tests/guest/rnull.sh.
exec "$(dirname "$0")/../guest-suite.sh" rnull --timeout 900

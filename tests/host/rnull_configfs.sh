#!/usr/bin/env bash
# rnull_split configfs devices: one guest running tests/guest/rnull_configfs.sh.
exec "$(dirname "$0")/../guest-suite.sh" rnull_configfs --timeout 900

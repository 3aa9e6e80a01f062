#!/usr/bin/env bash
# failure-lines.sh < LOG: each `not ok` line of a KTAP stream (nested
# `# not ok` of a sub-test too) and the (at most 10) diagnostic `#` lines
# that follow it. Lines may carry a "[suite] " prefix, as in the CI log.
exec awk '/^(\[[^]]*\] )?(# *)?not ok / { print; n = 10; next }
          n > 0 && /^(\[[^]]*\] )? *#/ { print; n--; next } { n = 0 }'

#!/usr/bin/env bash
# KUnit: one guest booted with kunit.enable=1, which runs the kernel's
# built-in KUnit suites (the Rust doctests of the kernel crate and our
# patches, CONFIG_RUST_KERNEL_DOCTESTS) before init; tests/guest/kunit.sh
# reports every test. The suites stay off in every other boot
# (CONFIG_KUNIT_DEFAULT_ENABLED is not set).
exec "$(dirname "$0")/../guest-suite.sh" kunit --timeout 900 --append kunit.enable=1

# SPDX-License-Identifier: GPL-2.0
#
#   make            build rnull_split.ko and rvirtio_blk.ko against KDIR
#   make check      host unit tests + guest tests, ends with "N passed, N failed"
#   make check-debug the guest suites on the debug kernel (KASAN, lockdep,
#                   kmemleak...), modules built for it into out/debug/modules
#   make run        Rust vs C drivers benchmark, a representative subset in
#                   deterministic guest time (QEMU icount), minutes; results/
#   make bench-full the whole benchmark matrix (hours); results/full/
#   make blktests   blktests on C null_blk and on the Rust drivers, one table
#                   in results/blktests.md (settings: scripts/blktests.sh)
#   make kernel     build (or reuse) the cached test kernel
#   make setup      install the host packages and bindgen
#
# KDIR defaults to the cached test kernel; any Rust-enabled 7.3 build with
# kernel/patches applied works (built with the same LLVM and rustc).

KDIR ?= $(shell scripts/kernel.sh kdir 2>/dev/null)
LLVM ?= -19
export LIBCLANG_PATH ?= /usr/lib/llvm$(LLVM)/lib
KMAKE_ARGS := LLVM=$(LLVM) RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	HOSTRUSTC=/usr/bin/rustc BINDGEN=$(HOME)/.cargo/bin/bindgen \
	CONFIG_BLK_DEV_RNULL_SPLIT=m CONFIG_BLK_DEV_RNULL_SPLIT_NULL_BLK=m CONFIG_BLK_DEV_RVIRTIO=m
KMAKE := $(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKE_ARGS)

.PHONY: default modules modules_install clean rust-analyzer setup kernel check run bench-full bench-confirm bench-interleave host-test fmt
.PHONY: kernel-debug modules-debug check-debug fuzz

default: modules

modules:
	$(KMAKE) modules

modules_install:
	$(KMAKE) modules_install

clean:
	$(KMAKE) clean
	rm -rf out

rust-analyzer:
	$(KMAKE) rust-analyzer

fmt:
	/usr/bin/rustfmt --edition 2021 --config-path $(KDIR)/source/.rustfmt.toml --check \
		$$(git ls-files 'rnull_split/*.rs' 'rvirtio_blk/*.rs' 'common/*.rs')

setup:
	scripts/setup-host.sh

kernel: setup
	scripts/kernel.sh build

host-test:
	cd host-tests && cargo test

check: kernel
	$(MAKE) modules
	scripts/check.sh

run: kernel
	$(MAKE) modules
	BENCH_COMMAND="make run" scripts/run.sh subset

bench-full: kernel
	$(MAKE) modules
	BENCH_COMMAND="make bench-full" scripts/run.sh full

# The cells of the last bench-full below 0.99x C, run again with the modules
# as they are now (results/full/null-confirm.*).
bench-confirm: kernel
	$(MAKE) modules
	BENCH_COMMAND="make bench-confirm" scripts/run.sh confirm

# C null_blk and rnull_split at irqmode=2 over completion_nsec, one job and
# two (results/interleave.*): how much icount's vCPU turns move a two-job cell.
bench-interleave: kernel
	$(MAKE) modules
	BENCH_COMMAND="make bench-interleave" scripts/run.sh interleave

# --- debug kernel -------------------------------------------------------------
# The same guest suites on the debug flavour (kernel/debug.fragment). Its
# modules are built from a copy of the sources in out/debug/modules, so the
# default .ko files next to the sources stay as they are.
DEBUG_KDIR = $(shell MAKEFLAGS= FLAVOUR=debug scripts/kernel.sh kdir 2>/dev/null)
DEBUG_OUT := $(CURDIR)/out/debug
DEBUG_MODDIR := $(DEBUG_OUT)/modules
GUEST_SUITES := $(basename $(notdir $(wildcard tests/host/*.sh)))
# Which suites check-debug runs (all but kunit by default; CI picks a subset
# that fits its time limit, see .ci/run). kunit runs on the debug kernel with
# DEBUG_SUITES=kunit: there DEBUG_OBJECTS_TIMERS reports 7.3's own
# stack-based hrtimer doctests (time/hrtimer.rs: HrTimer::new() calls
# hrtimer_setup(), not hrtimer_setup_on_stack(), for a stack_pin_init!ed
# timer), a bug of those examples, not of ours (docs/testing.md#kunit).
DEBUG_SUITES ?= $(filter-out kunit,$(GUEST_SUITES))

kernel-debug: setup
	FLAVOUR=debug scripts/kernel.sh build

# $(call modules_for,KDIR,MODDIR): build the modules from a copy of the
# sources in MODDIR against the kernel tree KDIR (another flavour's).
define modules_for
	mkdir -p $(2)
	git ls-files -co --exclude-standard Kbuild common rnull_split rvirtio_blk \
		| xargs cp -pu --parents -t $(2)
	$(MAKE) -C $(1) M=$(2) $(KMAKE_ARGS) modules
endef

modules-debug:
	$(call modules_for,$(DEBUG_KDIR),$(DEBUG_MODDIR))

check-debug: kernel-debug
	$(MAKE) modules-debug
	FLAVOUR=debug MODDIR=$(DEBUG_MODDIR) OUT_DIR=$(DEBUG_OUT) scripts/check.sh $(DEBUG_SUITES)

# The interface fuzzer (fuzz/, tests/host/fuzz.sh) on the debug kernel:
# FUZZ_SEED replays a run, FUZZ_SECONDS (300), FUZZ_THREADS (4), FUZZ_OPS,
# FUZZ_HANG, FUZZ_DRIVERS ("rnull virtio"). Results in out/debug/fuzz
# (docs/testing.md). Not part of make check's default suites.
fuzz: kernel-debug
	$(MAKE) modules-debug
	FLAVOUR=debug MODDIR=$(DEBUG_MODDIR) OUT_DIR=$(DEBUG_OUT) scripts/check.sh fuzz

# --- blktests -----------------------------------------------------------------
# blktests, unmodified (BLKTESTS, default ../shared/blktests), one guest per
# driver on the blktests flavour (kernel/blktests.fragment: zoned, blk-cgroup,
# fault injection, /proc/config.gz); modules built for it from a copy of the
# sources in out/blktests/modules. Settings are variables of
# scripts/blktests.sh, e.g. make blktests BLKTESTS_GROUPS=throtl
BLKTESTS_KDIR = $(shell MAKEFLAGS= FLAVOUR=blktests scripts/kernel.sh kdir 2>/dev/null)
BLKTESTS_MODDIR := $(CURDIR)/out/blktests/modules

.PHONY: kernel-blktests modules-blktests blktests

kernel-blktests: setup
	FLAVOUR=blktests scripts/kernel.sh build

modules-blktests:
	$(call modules_for,$(BLKTESTS_KDIR),$(BLKTESTS_MODDIR))

blktests: kernel-blktests
	$(MAKE) modules-blktests
	MODDIR=$(BLKTESTS_MODDIR) scripts/blktests.sh

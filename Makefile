# SPDX-License-Identifier: GPL-2.0
#
#   make            build rnull_split.ko and rvirtio_blk.ko against KDIR
#   make check      host unit tests + guest tests, ends with "N passed, N failed"
#   make check-debug the guest suites on the debug kernel (KASAN, lockdep,
#                   kmemleak...), modules built for it into out/debug/modules
#   make run        side-by-side benchmark of the Rust and C drivers
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
	CONFIG_BLK_DEV_RNULL_SPLIT=m CONFIG_BLK_DEV_RVIRTIO=m
KMAKE := $(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKE_ARGS)

.PHONY: default modules modules_install clean rust-analyzer setup kernel check run host-test fmt
.PHONY: kernel-debug modules-debug check-debug

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
	rustfmt --config-path $(KDIR)/source/.rustfmt.toml --check \
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
	scripts/run.sh

# --- debug kernel -------------------------------------------------------------
# The same guest suites on the debug flavour (kernel/debug.fragment). Its
# modules are built from a copy of the sources in out/debug/modules, so the
# default .ko files next to the sources stay as they are.
DEBUG_KDIR = $(shell MAKEFLAGS= FLAVOUR=debug scripts/kernel.sh kdir 2>/dev/null)
DEBUG_OUT := $(CURDIR)/out/debug
DEBUG_MODDIR := $(DEBUG_OUT)/modules
GUEST_SUITES := $(basename $(notdir $(wildcard tests/host/*.sh)))
# Which suites check-debug runs (all by default; CI picks a subset that fits
# its time limit, see .ci/run).
DEBUG_SUITES ?= $(GUEST_SUITES)

kernel-debug: setup
	FLAVOUR=debug scripts/kernel.sh build

modules-debug:
	mkdir -p $(DEBUG_MODDIR)
	git ls-files -co --exclude-standard Kbuild common rnull_split rvirtio_blk \
		| xargs cp -pu --parents -t $(DEBUG_MODDIR)
	$(MAKE) -C $(DEBUG_KDIR) M=$(DEBUG_MODDIR) $(KMAKE_ARGS) modules

check-debug: kernel-debug
	$(MAKE) modules-debug
	FLAVOUR=debug MODDIR=$(DEBUG_MODDIR) OUT_DIR=$(DEBUG_OUT) scripts/check.sh $(DEBUG_SUITES)

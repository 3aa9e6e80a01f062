# SPDX-License-Identifier: GPL-2.0
#
#   make            build rnull_split.ko and rvirtio_blk.ko against KDIR
#   make check      host unit tests + guest tests, ends with "N passed, N failed"
#   make run        side-by-side benchmark of the Rust and C drivers
#   make kernel     build (or reuse) the cached test kernel
#   make setup      install the host packages and bindgen
#
# KDIR defaults to the cached test kernel; any Rust-enabled 6.12 build with
# kernel/patches applied works.

KDIR ?= $(shell scripts/kernel.sh kdir 2>/dev/null)
KMAKE_ARGS := LLVM=1 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	HOSTRUSTC=/usr/bin/rustc BINDGEN=$(HOME)/.cargo/bin/bindgen \
	CONFIG_BLK_DEV_RNULL_SPLIT=m CONFIG_BLK_DEV_RVIRTIO=m
KMAKE := $(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKE_ARGS)

.PHONY: default modules modules_install clean rust-analyzer setup kernel check run host-test fmt

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

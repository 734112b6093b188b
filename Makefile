# SPDX-License-Identifier: GPL-2.0
#
# Driver for the per-CPU kernel page tables project: lays out the kernel
# tree (Debian's linux-source-6.12 + patches/series + the files this
# repository owns), builds arm64 kernels from the config fragments in
# arch/arm64/configs/, and boots them under QEMU with a NUMA topology.
#
#   make run      build, boot, print what the kernel shows, power off
#   make check    build and boot the test configurations, run every test,
#                 end with "N passed, N failed"
#   make help     everything else
#
# Build products go to out/ (ignored by git).

SHELL := /bin/bash
REPO := $(CURDIR)
OUT := $(REPO)/out
TREE := $(OUT)/linux
BASE_TREE := $(OUT)/linux-base
S := $(REPO)/scripts/pcpt
CFG_DIR := $(REPO)/arch/arm64/configs

# ---- options (validated below) -------------------------------------------
CONFIG ?= default
PAGES ?= 4k
NODES ?= 4
CPUS_PER_NODE ?= 2
NODE_MEM ?= 1024
CMDLINE ?=
INTERACTIVE ?= 0
BROKEN ?= 0
CPU ?= max
HIBERNATE ?= 0
KEXEC ?= 0
MEMLESS ?=
FORCE ?= 0
CHECK_CONFIGS ?= default debug
# Extra boots of already built kernels that make check also runs
# (CONFIG:PAGES:CMDLINE[:FIELD...], ',' for a space in CMDLINE; see
# scripts/pcpt/check.sh).  The ftrace direct samples that patch
# functions every CPU runs boot on single-threaded TCG (ktext_writers.sh).
# They run the text replica's load and patching stress briefly: the full
# counts run in the default and debug boots.  The boot with a node without
# memory runs what that node changes (which copy its CPUs use, CPUs
# brought up late), not the patching and LKDTM tests (session 11: CI time).
empty :=
space := $(empty) $(empty)
, := ,
KTEXT_LIGHT := pcpt.ktext_modload_iters=40,pcpt.ktext_patch_loops=1,pcpt.ktext_writers=0,pcpt.faults_div=0
# Every boot option of the project with a valid value other than the
# default, then empty, garbage and out-of-range ones: each bad one warned
# about, the defaults used (pcpt_bad_input.sh).  '~' is a comma: "1,zz",
# last, sets CPU 1 before the list fails to parse.
BAD_PCPT := percpu_pgtable=off,percpu_pgtable=,percpu_pgtable=maybe,percpu_pgtable=ON,\
percpu_pgtable_testfail=2,percpu_pgtable_testfail=,percpu_pgtable_testfail=100000,\
percpu_pgtable_testfail=1~zz
BAD_KREPL := kernel_replication=off,kernel_replication=,kernel_replication=2,\
kernel_replication_testfail=1,kernel_replication_testfail=,kernel_replication_testfail=x,\
kernel_replication_testfail=99999,kernel_replication_testfail=1~zz
BAD_KREPL_MW := kernel_replication_modules=556K,kernel_replication_modules=,\
kernel_replication_modules=-1,kernel_replication_modules=1G,kernel_replication_modules=12Q,\
kernel_replication_modules=4K,kernel_replication_modules=33M,kernel_replication_modules=16E,\
kernel_replication_modules=18446744073709551616,kernel_replication_modules=0x100000
BAD_INPUT := $(subst $(space),,pcpt.bad_input=1,pcpt.only=bad_input,$(BAD_PCPT),$(BAD_KREPL),$(BAD_KREPL_MW))
# The boots with an option off or an allocation made to fail run the
# tests whose outcome the option changes, not those that would run as in
# the default boot (session 12: CI time; the per-test times are in each
# log's .times file).  With replication inactive on per-CPU tables, the
# locality of text (every CPU on the same memory) and the dumps are
# checked in the one-node boot, which runs the whole suite.
ONLY_PCPT_OFF := pcpt_status|pcpt_hotplug|pcpt_vmalloc|pcpt_memhotplug|pcpw_counter|kernel_selftests|\
	ktext_status|ktext_locality|ktext_verify|ktext_maint|ktext_patching|ktext_modload
ONLY_TESTFAIL := pcpt_status|pcpt_dump|pcpt_hotplug|pcpt_vmalloc|pcpt_memhotplug|pcpt_modules|pcpw_counter|\
	kernel_selftests|ktext_status|ktext_locality|ktext_verify|ktext_maint|ktext_protect|ktext_patching|ktext_execmem|\
	ktext_modload|ktext_lkdtm
ONLY_KREPL_OFF := pcpt_status|pcpt_vmalloc|ktext_status|ktext_verify|ktext_maint|ktext_patching|ktext_modload
# The default boot of make check loads modules 200 times and runs one
# patching loop (the options' defaults, 1000 and 2, are for check-one;
# the soak loads 10,000 times; pcpt_faults.sh and the short soak load
# about 150 more; session 14: CI time).
CHECK_CMDLINE_default := pcpt.ktext_modload_iters=200,pcpt.ktext_patch_loops=1
# The debug boot of make check does not hibernate (289 s of its ~2400 s
# in session 12); the default boot does, and make matrix has the debug
# kernel's round trip.
CHECK_EXTRA ?= default:4k:percpu_pgtable=off,pcpt.only=$(subst $(space),,$(ONLY_PCPT_OFF)),$(KTEXT_LIGHT):TAG=pcpt_off \
	default:4k:percpu_pgtable_testfail=3,kernel_replication_testfail=2,pcpt.only=$(subst $(space),,$(ONLY_TESTFAIL)),$(KTEXT_LIGHT):TAG=testfail \
	default:4k:kernel_replication=off,pcpt.only=$(ONLY_KREPL_OFF),$(KTEXT_LIGHT):TAG=krepl_off \
	default:4k:$(KTEXT_LIGHT):1 \
	default:4k:kernel_replication_modules=556K,pcpt.only=ktext_mw_full \
	default:4k:maxcpus=2,pcpt.only=ktext_status|ktext_late|ktext_verify|ktext_protect,$(KTEXT_LIGHT):NODES=4:MEMLESS=3 \
	default:4k:pcpt.only=ktext_writers,pcpt.ktext_direct=all:TCG_THREAD=single \
	default:4k:$(BAD_INPUT):TAG=bad_input \
	default:4k:pcpt.only=soak,pcpt.soak_cycles=50,pcpt.soak_seconds=60:TAG=soak-short \
	huge:4k:$(KTEXT_LIGHT):CPU=cortex-a57
# default:4k::KEXEC=1 (kexec into the same kernel) is not in it: under
# QEMU 7.2 TCG the kexec'd kernel hangs bringing up secondary CPUs, the
# unpatched base kernel as well (README, Status).
# Every page size and VA size with the whole suite; 64K/52 also on a CPU
# without LVA (48-bit VA from the same tables); the small module window
# at 16K and 64K (sizes as at 4K: the observer, one ktext_big module, then
# room for a text but not its rodata); vmalloc block mappings at 16K/64K
# (at 64K a block is 512 MiB: 2 GiB nodes leave a free one to map).
# No kpti=1: KASLR forces KPTI on in every default boot ("kernel page table
# isolation forced ON by KASLR"), so make check runs it; nokaslr and kpti=0
# run without.
MATRIX ?= default:4k:nokaslr default:4k:kpti=0 default:16k: default:64k: \
	default:64k52: default:64k52::CPU=cortex-a57 swpan:4k: \
	default:16k:kernel_replication_modules=688K,pcpt.only=ktext_mw_full \
	default:64k:kernel_replication_modules=1216K,pcpt.only=ktext_mw_full \
	huge:16k:$(KTEXT_LIGHT) huge:64k:$(KTEXT_LIGHT):NODE_MEM=2048 debug:4k::HIBERNATE=1
BENCH_ITERS ?= 3
# BENCH_BASE=0: no base kernel (built or booted): the patched kernel's
# timing and fetch figures alone, e.g. locality at another page size.
BENCH_BASE ?= 1
# The parts of make bench: timing (boots timed, base vs patched), fetch
# (instruction fetch locality, TCG plugin), pathlen (kernel instructions
# per operation on five kernels, TCG plugin, PATHLEN_RUNS boots each;
# CONFIG=tlbrange: with range TLBIs).
BENCH ?= all
PATHLEN_RUNS ?= 3
# The path-length part's operations, comma-separated, each NAME or NAME:N
# (N iterations in place of pathlen.c's default); empty: all of them.
PATHLEN_OPS ?=
PATHLEN_OPS_ACCEPTED := getppid read1 pipe_rtt fork_exit_wait page_fault open_close \
	static_key module_key ftrace module new_top_entry top_entry_clear
# make bench's scaling part: one base and one patched boot per topology
# (NODESxCPUS_PER_NODE), the scale configuration (NR_CPUS=64).
SCALE_TOPOLOGIES ?= 4x2 4x4 4x8 4x16 2x8 8x2
# Their configuration: scale (NR_CPUS=64) or scalerange (the same with
# range TLBIs, as distribution kernels have).
SCALE_CONFIG ?= scale
# make soak: module load cycles (in all, over every node) and the least
# seconds each soak boot runs; the debug kernel, ~10x slower, runs fewer.
SOAK_CYCLES ?= 10000
SOAK_DEBUG_CYCLES ?= 1000
SOAK_SECONDS ?= 0
# Seconds between the soak's checkpoints (0: checks at the end only); a
# checkpoint of the debug kernel takes about 8 minutes (5 s in default).
SOAK_CHECKPOINT ?= 600
SOAK_DEBUG_CHECKPOINT ?= 1800
SOAK_CONFIGS ?= default debug
# Nodes of the soak's boots (2 CPUs each): 8 for the bigger topology.
SOAK_NODES ?= 4
VMEM_MB ?= 1024
# make repeat: consecutive boots, each running the selftests matching TEST.
REPEAT ?= 20
TEST ?= ktext_patching
# make ftrace-rate: boots per kernel, rounds per boot.
RUNS ?= 20
TCG_THREAD ?= multi
ROUNDS ?= 5
KINDS ?=

CONFIGS_ACCEPTED := default debug swpan huge scale scalerange tlbrange
PAGES_ACCEPTED := 4k 16k 64k 64k52

define accept
$(if $(filter-out 1,$(words $($(1)))),$(error $(1)='$($(1))' is not accepted; use one of: $(2)))
$(if $(filter $($(1)),$(2)),,$(error $(1)='$($(1))' is not accepted; use one of: $(2)))
endef
$(eval $(call accept,CONFIG,$(CONFIGS_ACCEPTED)))
$(eval $(call accept,PAGES,$(PAGES_ACCEPTED)))
$(eval $(call accept,NODES,1 2 3 4 5 6 7 8))
$(eval $(call accept,CPUS_PER_NODE,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16))
$(eval $(call accept,INTERACTIVE,0 1))
$(eval $(call accept,BROKEN,0 1))
$(eval $(call accept,FORCE,0 1))
$(eval $(call accept,BENCH,all timing fetch pathlen scaling))
$(eval $(call accept,PATHLEN_RUNS,1 2 3 4 5 6 7 8 9 10))
$(if $(word 2,$(PATHLEN_OPS)),$(error PATHLEN_OPS='$(PATHLEN_OPS)' has spaces; accepted: NAME or NAME:N, comma-separated, no spaces))
$(foreach o,$(subst $(,), ,$(PATHLEN_OPS)),$(if $(and $(filter $(firstword $(subst :, ,$(o))),$(PATHLEN_OPS_ACCEPTED)),\
	$(shell echo '$(o)' | grep -Eqx '[a-z_0-9]+(:[1-9][0-9]{0,5}|:1000000)?' && echo ok)),,\
	$(error PATHLEN_OPS has '$(o)'; accepted: comma-separated NAME or NAME:N, N from 1 to 1000000, NAME one of $(PATHLEN_OPS_ACCEPTED)))\
	$(if $(filter module:%,$(o)),$(if $(shell [ $(word 2,$(subst :, ,$(o))) -le 900 ] && echo ok),,\
	$(error PATHLEN_OPS has '$(o)'; accepted for module: N up to 900 (the plugin's 4096 marks hold every initcall and 4N module inits))))\
	$(if $(filter new_top_entry:%,$(o)),$(if $(shell [ $(word 2,$(subst :, ,$(o))) -le 60 ] && echo ok),,\
	$(error PATHLEN_OPS has '$(o)'; accepted for new_top_entry: N up to 60 (4N new top-level entries, of about 250 vmalloc slots)))))
$(eval $(call accept,BENCH_BASE,0 1))
$(eval $(call accept,SCALE_CONFIG,scale scalerange))
BENCH_PARTS := $(if $(filter all,$(BENCH)),timing fetch pathlen scaling,$(BENCH))
$(if $(and $(filter 0,$(BENCH_BASE)),$(filter pathlen scaling,$(BENCH_PARTS))),\
	$(error BENCH_BASE=0 is accepted with BENCH=timing or BENCH=fetch only: pathlen and scaling compare with base))
# The scaling part runs on SCALE_CONFIG (NR_CPUS=64), the
# others on CONFIG.
BENCH_MAIN := $(filter-out scaling,$(BENCH_PARTS))
BENCH_SCALE := $(filter scaling,$(BENCH_PARTS))
$(if $(and $(BENCH_SCALE),$(if $(strip $(SCALE_TOPOLOGIES)),,x)),$(error SCALE_TOPOLOGIES is empty; accepted: NODESxCPUS_PER_NODE words, e.g. 4x2 4x16))
$(foreach t,$(if $(BENCH_SCALE),$(SCALE_TOPOLOGIES)),$(if $(shell echo '$(t)' | grep -Eqx '[1-8]x([1-9]|1[0-6])' && \
	[ $$(( $(subst x,*,$(t)) )) -le 64 ] 2>/dev/null && echo ok),,\
	$(error SCALE_TOPOLOGIES has '$(t)'; accepted: NODESxCPUS_PER_NODE, 1 to 8 nodes, 1 to 16 CPUs each, 64 CPUs at most, e.g. 4x16)))
CPUS_ACCEPTED := max cortex-a57 neoverse-n1
$(eval $(call accept,CPU,$(CPUS_ACCEPTED)))
$(eval $(call accept,HIBERNATE,0 1))
$(eval $(call accept,KEXEC,0 1))
$(eval $(call accept,TCG_THREAD,multi single))
ifneq ($(MEMLESS),)
ifneq ($(shell [ "$(MEMLESS)" -ge 1 ] 2>/dev/null && [ "$(MEMLESS)" -lt "$(NODES)" ] && echo ok),ok)
$(error MEMLESS='$(MEMLESS)' is not accepted; use a node from 1 to NODES-1 ($(NODES) nodes), or nothing)
endif
endif
$(foreach c,$(CHECK_CONFIGS),$(if $(filter $(c),$(CONFIGS_ACCEPTED)),,\
	$(error CHECK_CONFIGS has '$(c)'; accepted: $(CONFIGS_ACCEPTED))))
ifneq ($(shell [ "$(NODE_MEM)" -eq "$(NODE_MEM)" ] 2>/dev/null && \
	[ "$(NODE_MEM)" -ge 256 ] && [ "$(NODE_MEM)" -le 8192 ] && echo ok),ok)
$(error NODE_MEM='$(NODE_MEM)' is not accepted; use MiB per node, 256 to 8192)
endif
ifneq ($(shell [ "$(VMEM_MB)" -eq "$(VMEM_MB)" ] 2>/dev/null && \
	[ "$(VMEM_MB)" -ge 0 ] && [ "$(VMEM_MB)" -le 8192 ] && \
	[ $$(( $(VMEM_MB) % 128 )) -eq 0 ] && echo ok),ok)
$(error VMEM_MB='$(VMEM_MB)' is not accepted; use 0 (no virtio-mem device) or MiB in steps of 128 up to 8192)
endif
$(foreach v,RUNS ROUNDS REPEAT,$(if $(shell [ "$($(v))" -ge 1 ] 2>/dev/null && [ "$($(v))" -le 1000 ] && echo ok),,\
	$(error $(v)='$($(v))' is not accepted; use a count from 1 to 1000)))
# CONFIG_NR_CPUS of each configuration: keep in step with pcpt.config and
# pcpt-scale.config.
NR_CPUS := $(if $(filter scale scalerange,$(CONFIG)),64,16)
ifneq ($(shell [ $$(( $(NODES) * $(CPUS_PER_NODE) )) -le $(NR_CPUS) ] && echo ok),ok)
$(error NODES x CPUS_PER_NODE = $(NODES) x $(CPUS_PER_NODE) exceeds NR_CPUS=$(NR_CPUS) of CONFIG=$(CONFIG); CONFIG=scale and scalerange have 64)
endif

# Fragments of each configuration, applied in order on top of allnoconfig.
FRAGS_default := pcpt.config pcpt-$(PAGES).config
FRAGS_debug := $(FRAGS_default) pcpt-debug.config
FRAGS_swpan := $(FRAGS_default) pcpt-swpan.config
FRAGS_huge := $(FRAGS_default) pcpt-huge.config
FRAGS_scale := $(FRAGS_default) pcpt-scale.config
FRAGS_scalerange := $(FRAGS_scale) pcpt-tlbrange.config
FRAGS_tlbrange := $(FRAGS_default) pcpt-tlbrange.config
# Seconds before a boot counts as hung (TCG; the debug kernel is slow).
TIMEOUT_default ?= 900
TIMEOUT_debug ?= 3000
TIMEOUT_swpan ?= 900
TIMEOUT_huge ?= 900
TIMEOUT_scale ?= 900
TIMEOUT_scalerange ?= 900
TIMEOUT_tlbrange ?= 900

LABEL := $(CONFIG)-$(PAGES)
LOGTAG ?= $(LABEL)
BLD := $(OUT)/build/$(LABEL)
IMAGE := $(BLD)/arch/arm64/boot/Image
INITRD_INNER := $(BLD)/initramfs.cpio
# KEXEC=1: the guest kexecs into the kernel and initramfs packed in /kexec.
INITRD := $(if $(filter 1,$(KEXEC)),$(BLD)/initramfs-kexec.cpio,$(INITRD_INNER))
KSFT := $(BLD)/kselftest_install
LOGDIR := $(OUT)/logs
# Lighter stress under KASAN/lockdep/DEBUG_PAGEALLOC, which are ~10x slower;
# 1200 s per test (ktext_locality.sh took 543 s of the default 600 in
# session 12: four reads of a per-CPU dump with physical addresses).
CMDLINE_debug := pcpt.hotplug_cycles=1 pcpt.vmalloc_loops=20 pcpt.pcpw_seconds=4 \
	pcpt.ktext_modload_iters=40 pcpt.ktext_patch_loops=1 pcpt.ktext_all_cpus=0 \
	pcpt.ktext_writers=1 pcpt.ktext_views_on=0 pcpt.faults_div=1 pcpt.ksft_timeout=1200
BOOT_ENV := NODES=$(NODES) CPUS_PER_NODE=$(CPUS_PER_NODE) NODE_MEM=$(NODE_MEM) \
	VMEM_MB=$(VMEM_MB) CPU=$(CPU) HIBERNATE=$(HIBERNATE) KEXEC=$(KEXEC) MEMLESS=$(MEMLESS) \
	CMDLINE="$(strip $(CMDLINE_$(CONFIG)) $(CMDLINE))" BROKEN=$(BROKEN) \
	TIMEOUT=$(TIMEOUT_$(CONFIG)) TCG_THREAD=$(TCG_THREAD)
KSFT_MAKE := $(MAKE) -s --no-print-directory -C $(TREE)/tools/testing/selftests \
	ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- O=$(BLD) KDIR=$(BLD) \
	TARGETS=percpu_pgtable KSFT_INSTALL_PATH=$(KSFT)

# ccache: paths below the repository are hashed relative to it, so a fresh
# clone elsewhere (CI) reuses the objects of an earlier build.
export CCACHE_DIR ?= $(HOME)/.ccache
export CCACHE_BASEDIR ?= $(REPO)
# -fmacro-prefix-map names the absolute source path; it maps __FILE__ to
# the same relative name in every clone, so it can stay out of the hash.
export CCACHE_IGNOREOPTIONS ?= -fmacro-prefix-map=*

.PHONY: help deps tree export sync build kselftest initramfs run check \
	check-one matrix soak bench bench-run bench-report series series-verify series-check kunit repeat ftrace-rate base clean distclean

help:
	@echo "make run       build, boot $(NODES) nodes x $(CPUS_PER_NODE) CPUs, print the report"; \
	echo "make check     build + boot CHECK_CONFIGS ($(CHECK_CONFIGS)), run every test"; \
	echo "make matrix    make series-check (SERIES_CHECK=0: not), then check the wider MATRIX ($(MATRIX))"; \
	echo "make soak      SOAK_CONFIGS ($(SOAK_CONFIGS)) on SOAK_NODES=$(SOAK_NODES) nodes: SOAK_CYCLES=$(SOAK_CYCLES) (debug: SOAK_DEBUG_CYCLES=$(SOAK_DEBUG_CYCLES)) module loads with patching, hotplug, percpu churn, counters at once"; \
	echo "make bench     base vs patched benchmarks, table + JSON + PNG in out/bench/ (BENCH=$(BENCH): all timing fetch pathlen scaling; PATHLEN_RUNS=$(PATHLEN_RUNS); PATHLEN_OPS=NAME[:N],... (all); SCALE_TOPOLOGIES=$(SCALE_TOPOLOGIES); SCALE_CONFIG=$(SCALE_CONFIG): scale scalerange; BENCH_BASE=0: patched alone)"; \
	echo "make bench-report  the bench results as the README's Markdown tables (BENCH_JSON=files)"; \
	echo "make repeat    REPEAT=$(REPEAT) boots in a row running the selftests matching TEST=$(TEST)"; \
	echo "make ftrace-rate  function tracer step's miss rate, base vs patched (RUNS=$(RUNS) boots, ROUNDS=$(ROUNDS))"; \
	echo "make tree      lay out out/linux (base + series + owned files) to edit in"; \
	echo "make export    write out/linux's commits/files back to patches/ and the tree"; \
	echo "make series    the series as mailed (format-patch + cover letter) in out/series/"; \
	echo "make series-verify  patches/ apply to the base and make the repository's kernel files; checkpatch (in make check)"; \
	echo "make series-check   build every prefix of the series, options on and off, W=1 (in make matrix; SERIES_FROM=, SERIES_TO=, SERIES_KINDS='on off')"; \
	echo "make kunit     the KUnit suites through tools/testing/kunit/kunit.py (mm/tests/.kunitconfig) on NODES x CPUS_PER_NODE"; \
	echo "make deps      install the Debian packages and the arm64 busybox"; \
	echo "options: CONFIG=$(CONFIGS_ACCEPTED)  PAGES=$(PAGES_ACCEPTED)  NODES=1..8"; \
	echo "         CPUS_PER_NODE=1..16 (NODES x CPUS_PER_NODE: 16 at most, 64 with CONFIG=scale or scalerange)  NODE_MEM=MiB  VMEM_MB=MiB (0: no virtio-mem)"; \
	echo "         CPU=$(CPUS_ACCEPTED)  HIBERNATE=1 (swap disk, hibernate, restore)"; \
	echo "         KEXEC=1 (kexec into the same kernel first)"; \
	echo "         MEMLESS=N (node N, 1..NODES-1, has CPUs and no memory)"; \
	echo "         CMDLINE='...'  INTERACTIVE=1  BROKEN=1"

deps:
	@bash $(S)/deps.sh $(OUT)

tree: deps
	@bash $(S)/lay-tree.sh $(if $(filter 1,$(FORCE)),--force) $(REPO) $(TREE)

export:
	@bash $(S)/export-tree.sh $(REPO) $(TREE)

# The series as mailed: format-patch with a cover letter, from patches/.
series: sync
	@bash $(S)/series.sh write $(REPO) $(TREE) $(OUT)/series

# patches/ make exactly the repository's kernel files, apply to the base,
# pass checkpatch; make check runs it first (git only, seconds).
series-verify: sync
	@mkdir -p $(LOGDIR) && rm -f $(LOGDIR)/check-series.log.json
	@bash $(S)/series.sh verify $(REPO) $(TREE) $(LOGDIR)/check-series.log.json

# Every prefix of the series builds, options on and off, W=1 (make matrix).
series-check: sync
	@mkdir -p $(LOGDIR) && rm -f $(LOGDIR)/check-series-check.log.json
	@PAGES=$(PAGES) bash $(S)/series-check.sh $(REPO) $(TREE) $(OUT)/series-check \
		$(LOGDIR)/check-series-check.log.json

# The KUnit suites through tools/testing/kunit/kunit.py and
# mm/tests/.kunitconfig, NODES x CPUS_PER_NODE (its own kernel and build).
kunit: sync
	@bash $(S)/kunit-run.sh $(TREE) $(OUT)/kunit $(NODES) $(CPUS_PER_NODE)

sync: deps
	@bash $(S)/lay-tree.sh --sync $(REPO) $(TREE)

build: sync
	@bash $(S)/build-kernel.sh $(TREE) $(BLD) $(addprefix $(CFG_DIR)/,$(FRAGS_$(CONFIG)))

kselftest: build
	@rm -rf $(KSFT)
	@$(MAKE) -s -C $(TREE)/tools/testing/selftests/percpu_pgtable/test_modules \
		KDIR=$(BLD) ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- clean >/dev/null
	@$(KSFT_MAKE) install >$(BLD)/kselftest.log 2>&1 || \
		{ tail -20 $(BLD)/kselftest.log; echo "pcpt: error: kselftest build failed (log: $(BLD)/kselftest.log)"; exit 1; }
	@# The harness's own tests (scripts/pcpt/guest-tests: the topology,
	@# ptdump and module loading the selftests rely on) run first;
	@# harness_broken.sh only when asked (BROKEN=1, guest-init.sh).
	@cp $(S)/guest-tests/harness_*.sh $(KSFT)/percpu_pgtable/
	@{ for t in harness_topology.sh harness_ptdump.sh harness_modload.sh; do \
		echo "percpu_pgtable:$$t"; done; cat $(KSFT)/kselftest-list.txt; } > $(KSFT)/kselftest-list.new && \
		mv $(KSFT)/kselftest-list.new $(KSFT)/kselftest-list.txt

# The kernel's own modules (test_vmalloc, ...) go to /lib/modules.
initramfs: kselftest
	@rm -rf $(BLD)/modroot
	@$(MAKE) -s -C $(TREE) O=$(BLD) ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		INSTALL_MOD_PATH=$(BLD)/modroot INSTALL_MOD_STRIP=1 modules_install \
		>$(BLD)/modules_install.log 2>&1 || \
		{ tail -20 $(BLD)/modules_install.log; echo "pcpt: error: modules_install failed"; exit 1; }
	@mkdir -p $(BLD)/modroot/lib/modules
	@BUSYBOX=$(OUT)/deps/busybox/bin/busybox bash $(S)/mkinitramfs.sh $(TREE) $(BLD) $(INITRD_INNER) \
		$(KSFT):/kselftest $(BLD)/modroot/lib/modules:/lib/modules
ifeq ($(KEXEC),1)
	@rm -rf $(BLD)/kexec && mkdir -p $(BLD)/kexec && \
		cp $(IMAGE) $(INITRD_INNER) $(BLD)/kexec/
	@BUSYBOX=$(OUT)/deps/busybox/bin/busybox bash $(S)/mkinitramfs.sh $(TREE) $(BLD) $(INITRD) \
		$(KSFT):/kselftest $(BLD)/modroot/lib/modules:/lib/modules $(BLD)/kexec:/kexec
endif

run: initramfs
ifeq ($(INTERACTIVE),1)
	@$(BOOT_ENV) MODE=shell bash $(S)/boot.sh $(IMAGE) $(INITRD) $(LOGDIR)/run-$(LABEL).log
else
	@$(BOOT_ENV) MODE=run QUIET=1 bash $(S)/boot.sh $(IMAGE) $(INITRD) $(LOGDIR)/run-$(LABEL).log; \
	rc=$$?; sed -n '/^PCPT-REPORT-BEGIN/,/^PCPT-REPORT-END/p' $(LOGDIR)/run-$(LABEL).log | sed '1d;$$d'; \
	[ $$rc -eq 0 ] || { tail -30 $(LOGDIR)/run-$(LABEL).log; \
		echo "pcpt: error: boot failed (log: $(LOGDIR)/run-$(LABEL).log)"; exit 1; }
endif

# One configuration: build, boot, judge.  Writes $(LOGDIR)/check-LABEL.log.json.
check-one:
	@rm -f $(LOGDIR)/check-$(LOGTAG).log.json
	@$(MAKE) -s --no-print-directory initramfs CONFIG=$(CONFIG) PAGES=$(PAGES)
	@echo "pcpt: === check $(LABEL) ($(NODES) nodes x $(CPUS_PER_NODE) CPUs, -cpu $(CPU)$(if $(filter 1,$(HIBERNATE)), + hibernation)$(if $(MEMLESS), node $(MEMLESS) without memory)$(if $(CMDLINE),; $(CMDLINE))) ==="
	@$(BOOT_ENV) MODE=check QUIET=1 bash $(S)/boot.sh $(IMAGE) $(INITRD) \
		$(LOGDIR)/check-$(LOGTAG).log; rc=$$?; \
	python3 $(S)/results.py judge --tree $(TREE) --label "$(LABEL)$(if $(CMDLINE), $(CMDLINE))" \
		--boot-rc $$rc --expect-kunit --expect-kselftest --vmlinux $(BLD)/vmlinux \
		$(LOGDIR)/check-$(LOGTAG).log

check:
	@mkdir -p $(LOGDIR) && rm -f $(LOGDIR)/check-series.log.json
	@-$(MAKE) -s --no-print-directory series-verify
	@SERIES_JSON=$(LOGDIR)/check-series.log.json bash $(S)/check.sh "$(MAKE)" $(LOGDIR) "$(foreach c,$(CHECK_CONFIGS),$(c):$(PAGES):$(CHECK_CMDLINE_$(c)):HIBERNATE=$(if $(filter debug,$(c)),0,1):TAG=main) $(CHECK_EXTRA)"

# The soak's boots: no time limit per test, the boot's from the counts
# (generous: a cycle took ~1 s of the mix in the default kernel in
# session 12, 4 nodes x 2 CPUs on 2 host cores).
soak:
	@case "$(SOAK_NODES)" in [1-8]) ;; *) \
		echo "pcpt: error: SOAK_NODES=$(SOAK_NODES): a number of nodes from 1 to 8 expected" >&2; exit 2 ;; \
	esac
	@for v in SOAK_CYCLES=$(SOAK_CYCLES) SOAK_DEBUG_CYCLES=$(SOAK_DEBUG_CYCLES) \
		SOAK_SECONDS=$(SOAK_SECONDS) SOAK_CHECKPOINT=$(SOAK_CHECKPOINT) \
		SOAK_DEBUG_CHECKPOINT=$(SOAK_DEBUG_CHECKPOINT); do \
		case "$${v#*=}" in ''|*[!0-9]*|0?*) \
			echo "pcpt: error: $$v: a whole number (no leading zero) of cycles or seconds expected" >&2; exit 2 ;; \
		esac; \
	done
	@$(if $(filter default,$(SOAK_CONFIGS)),[ "$(SOAK_CYCLES)$(SOAK_SECONDS)" != 00 ] || \
		{ echo "pcpt: error: SOAK_CYCLES and SOAK_SECONDS are both 0: nothing to run in the default soak" >&2; exit 2; })
	@$(if $(filter debug,$(SOAK_CONFIGS)),[ "$(SOAK_DEBUG_CYCLES)$(SOAK_SECONDS)" != 00 ] || \
		{ echo "pcpt: error: SOAK_DEBUG_CYCLES and SOAK_SECONDS are both 0: nothing to run in the debug soak" >&2; exit 2; })
	@[ -n "$(strip $(SOAK_CONFIGS))" ] || { echo "pcpt: error: SOAK_CONFIGS is empty; accepted: default debug" >&2; exit 2; }
	@$(foreach c,$(SOAK_CONFIGS),$(if $(filter $(c),default debug),,\
		echo "pcpt: error: SOAK_CONFIGS has '$(c)'; accepted: default debug" >&2; exit 2;))
	@f=$$((($(SOAK_NODES) + 3) / 4)); \
	TIMEOUT_default=$$((900 + 3 * f * $(SOAK_CYCLES) + $(SOAK_SECONDS))) \
	TIMEOUT_debug=$$((3000 + 30 * f * $(SOAK_DEBUG_CYCLES) + $(SOAK_SECONDS))) \
	bash $(S)/check.sh "$(MAKE)" $(LOGDIR) "$(strip \
		$(if $(filter default,$(SOAK_CONFIGS)),default:$(PAGES):pcpt.only=soak|pcpt_faults$(,)pcpt.soak_cycles=$(SOAK_CYCLES)$(,)pcpt.soak_seconds=$(SOAK_SECONDS)$(,)pcpt.soak_checkpoint=$(SOAK_CHECKPOINT)$(,)pcpt.ksft_timeout=999999:NODES=$(SOAK_NODES):TAG=soak) \
		$(if $(filter debug,$(SOAK_CONFIGS)),debug:$(PAGES):pcpt.only=soak|pcpt_faults$(,)pcpt.soak_cycles=$(SOAK_DEBUG_CYCLES)$(,)pcpt.soak_seconds=$(SOAK_SECONDS)$(,)pcpt.soak_checkpoint=$(SOAK_DEBUG_CHECKPOINT)$(,)pcpt.ksft_timeout=999999:NODES=$(SOAK_NODES):TAG=soak))"

# SERIES_CHECK=0: the boots alone (a MATRIX subset while developing).
SERIES_CHECK ?= 1
matrix:
	@case "$(SERIES_CHECK)" in 0|1) ;; *) \
		echo "pcpt: error: SERIES_CHECK=$(SERIES_CHECK): 0 or 1 expected" >&2; exit 2 ;; esac
	@rm -f $(LOGDIR)/check-series-check.log.json
	@$(if $(filter 1,$(SERIES_CHECK)),$(MAKE) -s --no-print-directory series-check || true)
	@$(if $(filter 1,$(SERIES_CHECK)),SERIES_JSON=$(LOGDIR)/check-series-check.log.json) \
		bash $(S)/check.sh "$(MAKE)" $(LOGDIR) "$(MATRIX)"

# Base (no patches, none of our files) and patched kernels from the same
# fragments, booted alternately in one run.  Fragment symbols the base
# does not know are expected there (PCPT_LAX_CONFIG).
BASE_BLD := $(OUT)/build-base/$(LABEL)
KSFT_SRC := $(REPO)/tools/testing/selftests/percpu_pgtable
# BENCH_RUN: the parts of one run, comma-separated (make bench sets it).
BENCH_RUN ?= $(subst $(space),$(,),$(BENCH_PARTS))
# The scaling part has its own directory (SCALE_CONFIG's label and
# -scaling), so make bench BENCH=all with CONFIG equal to SCALE_CONFIG
# keeps both parts' results.
BENCH_DIR := $(OUT)/bench/$(LABEL)$(if $(filter scaling,$(BENCH_RUN)),-scaling)
base: sync
	@[ -d $(BASE_TREE) ] || git -C $(TREE) worktree add -q --detach $(BASE_TREE) pcpt-base
	@git -C $(BASE_TREE) checkout -q --detach pcpt-base
	@PCPT_LAX_CONFIG=1 bash $(S)/build-kernel.sh $(BASE_TREE) $(BASE_BLD) \
		$(addprefix $(CFG_DIR)/,$(FRAGS_$(CONFIG)))

# The same selftests in REPEAT boots in a row, stopping at the first failure.
repeat: initramfs
	@bash $(S)/repeat.sh "$(MAKE)" "$(REPEAT)" "$(TEST)" \
		$(REPO)/tools/testing/selftests/percpu_pgtable/Makefile "$(CMDLINE)"

# The function tracer step's miss rate on the base and patched kernels
# (Documentation/mm/kernel-replication.rst, Limitations).
ftrace-rate: base initramfs
	@$(BOOT_ENV) KINDS="$(KINDS)" bash $(S)/ftrace-rate.sh $(BASE_BLD)/arch/arm64/boot/Image $(IMAGE) \
		$(INITRD) $(LOGDIR)/ftrace-rate-$(LABEL) $(RUNS) $(ROUNDS)

bench:
ifneq ($(BENCH_MAIN),)
	@$(MAKE) --no-print-directory bench-run BENCH_RUN="$(subst $(space),$(,),$(BENCH_MAIN))"
endif
ifneq ($(BENCH_SCALE),)
	@$(MAKE) --no-print-directory bench-run CONFIG=$(SCALE_CONFIG) BENCH_RUN=scaling
endif

bench-run: build $(if $(filter 1,$(BENCH_BASE)),base)
	@# tools/perf is the same in both trees; without base there is only ours.
	@bash $(S)/build-perf.sh $(if $(filter 1,$(BENCH_BASE)),$(BASE_TREE),$(TREE)) $(OUT)/perf
	@rm -rf $(BENCH_DIR) && mkdir -p $(BENCH_DIR)/guest
	@cp $(OUT)/perf/perf $(BENCH_DIR)/guest/perf
	@cp $(S)/guest-bench.sh $(BENCH_DIR)/guest/run.sh
	@# Helper modules, built against each kernel; the guest loads its own.
	@for k in $(if $(filter 1,$(BENCH_BASE)),base:$(BASE_TREE):$(BASE_BLD)) patched:$(TREE):$(BLD); do \
		set -e; IFS=: read -r name tree bld <<< "$$k"; \
		mkdir -p $(BENCH_DIR)/mod-$$name $(BENCH_DIR)/guest/$$name; \
		cp $(REPO)/tools/pcpt-bench/* $(BENCH_DIR)/mod-$$name/; \
		cp $(KSFT_SRC)/test_modules/ktext_big.h $(KSFT_SRC)/test_modules/ktext_big[0-3].c \
			$(BENCH_DIR)/mod-$$name/; \
		$(MAKE) -s --no-print-directory -C $$tree O=$$bld ARCH=arm64 \
			CROSS_COMPILE=aarch64-linux-gnu- M=$(BENCH_DIR)/mod-$$name modules; \
		cp $(BENCH_DIR)/mod-$$name/pcpt_bench_mod.ko $(BENCH_DIR)/mod-$$name/ktext_big[0-3].ko \
			$(BENCH_DIR)/mod-$$name/this_cpu_probe.ko $(BENCH_DIR)/guest/$$name/; \
	done
	@gcc -O2 -Wall -shared -fPIC -o $(BENCH_DIR)/ktext_fetch_plugin.so \
		$(REPO)/tools/pcpt-bench/ktext_fetch_plugin.c
	@gcc -O2 -Wall -shared -fPIC -o $(BENCH_DIR)/pathlen_plugin.so \
		$(REPO)/tools/pcpt-bench/pathlen_plugin.c
	@aarch64-linux-gnu-gcc -static -O2 -Wall -o $(BENCH_DIR)/guest/pathlen \
		$(REPO)/tools/pcpt-bench/pathlen.c
ifeq ($(BENCH_BASE),1)
	@python3 $(S)/insn-count.py --json $(BENCH_DIR)/this_cpu_insns.json \
		$(BENCH_DIR)/mod-base/this_cpu_probe.o $(BENCH_DIR)/mod-patched/this_cpu_probe.o \
		| tee $(BENCH_DIR)/this_cpu_insns.txt
	@b=$$(aarch64-linux-gnu-size -A $(BASE_BLD)/vmlinux | awk '$$1 == ".text" { print $$2 }'); \
	p=$$(aarch64-linux-gnu-size -A $(BLD)/vmlinux | awk '$$1 == ".text" { print $$2 }'); \
	awk -v b=$$b -v p=$$p 'BEGIN { printf "vmlinux .text: base %d, patched %d bytes, ratio %.4f\n", b, p, p / b }' \
		| tee -a $(BENCH_DIR)/this_cpu_insns.txt
endif
	@python3 $(S)/window-sites.py --json $(BENCH_DIR)/window_sites.json $(BLD)/vmlinux \
		> $(BENCH_DIR)/window_sites.txt; rc=$$?; cat $(BENCH_DIR)/window_sites.txt; exit $$rc
	@BUSYBOX=$(OUT)/deps/busybox/bin/busybox bash $(S)/mkinitramfs.sh $(TREE) $(BLD) \
		$(BENCH_DIR)/initramfs.cpio $(BENCH_DIR)/guest:/bench
	@$(BOOT_ENV) python3 $(S)/bench.py --out $(BENCH_DIR) --iters $(BENCH_ITERS) \
		--initrd $(BENCH_DIR)/initramfs.cpio --plugin $(BENCH_DIR)/ktext_fetch_plugin.so \
		--pathlen-plugin $(BENCH_DIR)/pathlen_plugin.so --pathlen-runs $(PATHLEN_RUNS) \
		$(if $(strip $(PATHLEN_OPS)),--pathlen-ops '$(PATHLEN_OPS)') \
		--parts $(BENCH_RUN) --scale-topologies "$(SCALE_TOPOLOGIES)" \
		$(if $(filter 1,$(BENCH_BASE)),--probe-objs $(BENCH_DIR)/mod-base/this_cpu_probe.o \
		$(BENCH_DIR)/mod-patched/this_cpu_probe.o $(BASE_BLD)/arch/arm64/boot/Image,-) $(IMAGE)

# The README's figures as Markdown tables, from the results.json files of
# make bench (BENCH_JSON: which ones).
# The README's figures: make bench-report with BENCH_JSON naming the JSON
# of the last full make bench, committed in results/ (README, Figures).
BENCH_JSON ?= $(wildcard $(OUT)/bench/*/results.json $(OUT)/bench/*/this_cpu_insns*.json \
	$(OUT)/bench/*/window_sites.json)
bench-report:
	@[ -n "$(strip $(BENCH_JSON))" ] || { echo "pcpt: error: no results.json under $(OUT)/bench: run make bench first, or name files with BENCH_JSON=" >&2; exit 2; }
	@python3 $(S)/bench-md.py $(BENCH_JSON)

clean:
	rm -rf $(OUT)/build $(OUT)/logs $(OUT)/bench

distclean:
	rm -rf $(OUT)

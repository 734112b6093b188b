// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 backend of the per-CPU kernel page tables (mm/percpu_pgtable.c,
 * Documentation/mm/percpu-pgtable.rst).
 *
 * Each CPU's root sits at the end of a physically contiguous, page-aligned
 * block laid out like the static [tramp_pg_dir | reserved_pg_dir |
 * swapper_pg_dir] in the image:
 *
 *	page 0: copy of tramp_pg_dir's root	(KPTI: TTBR1 - TRAMP_SWAPPER_OFFSET)
 *	page 1: zeroes				(SW PAN: TTBR1 - RESERVED_SWAPPER_OFFSET)
 *	page 2: the root			(TTBR1)
 *
 * so the entry trampolines and software PAN, which find those tables by
 * fixed offsets from TTBR1, work unchanged for every copy.  Blocks are
 * allocated from memblock on the CPU's node at boot; a client that takes
 * over valid entries gets every CPU a new block from the page allocator
 * (mm/percpu_pgtable.c, pcpt_replace_roots()), and the old one is freed.
 *
 * The master is written by set_swapper_pgd() (arch/arm64/mm/mmu.c), which
 * hands every write to percpu_pgtable_set_entry() once the copies exist.
 */
#define pr_fmt(fmt) "percpu_pgtable: " fmt

#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/kmemleak.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/percpu_pgtable.h>
#include <linux/percpu_pgtable_arch.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <asm/barrier.h>
#include <asm/memory.h>
#include <asm/mmu.h>
#include <asm/mmu_context.h>
#include <asm/pgtable.h>
#include <asm/ptdump.h>
#include <asm/set_memory.h>
#include <asm/smp.h>
#include <asm/sysreg.h>
#include <asm/tlbflush.h>

#define PCPT_BLOCK_SIZE		(3 * PAGE_SIZE)

static_assert(RESERVED_SWAPPER_OFFSET == PAGE_SIZE);
static_assert(TRAMP_SWAPPER_OFFSET == 2 * PAGE_SIZE);
static_assert(PTRS_PER_PGD * sizeof(pgd_t) <= PAGE_SIZE);

/**
 * arch_percpu_pgtable_alloc() - allocate a CPU's [tramp | zero | root] block
 * @cpu: the CPU
 * @nid: its node; memblock falls back to another node if @nid has no memory
 * @bytes: set to the size of the block
 *
 * Return: the root (page 2 of the zeroed block), or NULL.
 */
pgd_t * __init arch_percpu_pgtable_alloc(unsigned int cpu, int nid, size_t *bytes)
{
	void *block;

	block = memblock_alloc_try_nid(PCPT_BLOCK_SIZE, PAGE_SIZE,
				       MEMBLOCK_LOW_LIMIT,
				       MEMBLOCK_ALLOC_ACCESSIBLE, nid);
	if (!block)
		return NULL;
	*bytes = PCPT_BLOCK_SIZE;
	return block + TRAMP_SWAPPER_OFFSET;
}

/**
 * arch_percpu_pgtable_alloc_late() - allocate a block after boot
 * @cpu: the CPU
 * @nid: its node; the page allocator falls back to another node
 *
 * Context: process context, may sleep.
 * Return: the root of a zeroed block, or NULL.
 */
pgd_t *arch_percpu_pgtable_alloc_late(unsigned int cpu, int nid)
{
	void *block;

	block = alloc_pages_exact_nid(nid, PCPT_BLOCK_SIZE, GFP_KERNEL | __GFP_ZERO);
	return block ? block + TRAMP_SWAPPER_OFFSET : NULL;
}

/**
 * arch_percpu_pgtable_copy() - copy a whole block into a new one
 * @new: root of the new block, which no CPU runs on yet
 * @old: root of the block to copy: the trampoline root, the zero page
 *	and the root itself
 */
void arch_percpu_pgtable_copy(pgd_t *new, pgd_t *old)
{
	memcpy((void *)new - TRAMP_SWAPPER_OFFSET, (void *)old - TRAMP_SWAPPER_OFFSET,
	       PCPT_BLOCK_SIZE);
	/* Visible to the table walkers before any CPU loads @new. */
	dsb(ishst);
}

/**
 * arch_percpu_pgtable_free() - free a block no CPU can run on any more
 * @root: its root, from memblock at boot or from
 *	arch_percpu_pgtable_alloc_late()
 *
 * A protected block gets its writable linear alias back first.
 *
 * Context: process context, may sleep.
 */
void arch_percpu_pgtable_free(pgd_t *root)
{
	void *block = (void *)root - TRAMP_SWAPPER_OFFSET;
	unsigned long addr = (unsigned long)block;
	struct page *page = virt_to_page(block);
	int i;

	for (i = 0; i < PCPT_BLOCK_SIZE / PAGE_SIZE; i++)
		set_direct_map_default_noflush(page + i);
	flush_tlb_kernel_range(addr, addr + PCPT_BLOCK_SIZE);
	/* A walk through a freed root must fault, not keep working. */
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		memset(block, 0, PCPT_BLOCK_SIZE);
	if (PageReserved(page)) {
		/* From memblock at boot: memblock_free_late() is __init. */
		kmemleak_free_part_phys(__pa(block), PCPT_BLOCK_SIZE);
		free_reserved_area(block, block + PCPT_BLOCK_SIZE, -1, NULL);
	} else {
		free_pages_exact(block, PCPT_BLOCK_SIZE);
	}
}

/**
 * arch_percpu_pgtable_offline_may_run() - may an offline CPU run kernel code?
 *
 * A CPU that failed to come online or to die spins in the kernel, on the
 * root it had; cpus_are_stuck_in_kernel() also counts spin-table CPUs and
 * pKVM, where no offline CPU runs on a root that would be freed, so this
 * errs on the side of keeping a few pages.
 *
 * Return: true if the core must not free an offline CPU's old root.
 */
bool arch_percpu_pgtable_offline_may_run(void)
{
	return cpus_are_stuck_in_kernel();
}

/**
 * arch_percpu_pgtable_sync() - publish top-level entry writes
 *
 * DSB ISHST makes the writes visible to the table walkers of every CPU
 * before the writer goes on; ISB keeps this CPU from having fetched
 * anything through a stale walk.  No TLBI: an invalid entry is never
 * cached, and for valid entries the caller owns the flush (see
 * percpu_pgtable_set_entry()).
 */
void noinstr arch_percpu_pgtable_sync(void)
{
	dsb(ishst);
	isb();
}

/**
 * arch_percpu_pgtable_flush_alias() - invalidate the roots' write alias
 * @start: first page of the alias the core just unmapped
 * @end: end of the last
 *
 * One range TLBI for the whole batch where the kernel and the CPUs have
 * it (CONFIG_ARM64_TLB_RANGE, FEAT_TLBIRANGE), else one TLBI per page, and
 * one wait: the DSB ISHST before orders the cleared PTEs and the root
 * writes through the alias before the invalidation, the DSB ISH after
 * waits for it on every CPU.  Level 3: the alias is mapped by PTEs only.
 */
void noinstr arch_percpu_pgtable_flush_alias(unsigned long start, unsigned long end)
{
	unsigned long pages = (end - start) >> PAGE_SHIFT;

	if (pages > MAX_TLBI_RANGE_PAGES ||
	    (!system_supports_tlb_range() && pages >= MAX_DVM_OPS)) {
		flush_tlb_all();
		return;
	}
	dsb(ishst);
	__flush_tlb_range_op(vaale1is, start, pages, PAGE_SIZE, 0, 3, false,
			     lpa2_is_enabled());
	__tlbi_sync_s1ish();
	isb();
}

/**
 * arch_percpu_pgtable_protect() - make a root's block read-only
 * @root: the root; its whole [tramp | zero | root] block is protected
 *
 * The linear map is the only other mapping of the block.  With rodata=full
 * (or DEBUG_PAGEALLOC) it is mapped at page granularity and the block's
 * three pages can become read-only; otherwise it stays as it is.
 *
 * Return: 0, or -EINVAL if the linear map cannot be changed per page.
 */
int arch_percpu_pgtable_protect(pgd_t *root)
{
	return set_direct_map_ro((unsigned long)root - TRAMP_SWAPPER_OFFSET,
				 PCPT_BLOCK_SIZE / PAGE_SIZE);
}

/**
 * arch_percpu_pgtable_install() - load @root into this CPU's TTBR1
 * @cpu: the calling CPU
 * @root: its root
 *
 * Goes through the reserved TTBR1 and a local TLBI in the idmap
 * (__cpu_replace_ttbr1()), the only safe way to change TTBR1 between
 * tables that may map the same address differently.  Never with CnP:
 * CnP asserts that TTBR1 is the same table on every PE.
 */
void arch_percpu_pgtable_install(unsigned int cpu, pgd_t *root)
{
	__cpu_replace_ttbr1(root, false);
}

/**
 * arch_percpu_pgtable_same() - does a copy's shared entry match the master?
 * @master: the master's entry
 * @copy: the copy's entry
 *
 * kpti_install_ng_mappings() walks the master alone and sets nG (bit 11)
 * in its table descriptors too, where the hardware ignores it.
 *
 * Return: true if the two entries translate identically.
 */
bool arch_percpu_pgtable_same(pgd_t master, pgd_t copy)
{
	u64 diff = pgd_val(master) ^ pgd_val(copy);

	if ((pgd_val(master) & PMD_TYPE_MASK) == PMD_TYPE_TABLE)
		diff &= ~(u64)PTE_NG;
	return !diff;
}

/**
 * arch_percpu_pgtable_loaded() - the root this CPU translates through
 *
 * Return: the physical address in TTBR1_EL1, without ASID and CnP, with
 * PA[51:48] moved back from TTBR bits [5:2] (52-bit PA), and without the
 * offset that offset_ttbr1 adds when a 52-bit VA kernel runs on a CPU
 * without LVA (every root is page aligned, the offset is within a page).
 */
phys_addr_t arch_percpu_pgtable_loaded(void)
{
	u64 ttbr = read_sysreg(ttbr1_el1) & GENMASK_ULL(47, 1);

#ifdef CONFIG_ARM64_PA_BITS_52
	ttbr = (ttbr & GENMASK_ULL(47, 6)) | ((ttbr & GENMASK_ULL(5, 2)) << 46);
#endif
	return ttbr & PAGE_MASK;
}

/**
 * arch_percpu_pgtable_dump() - dump a root in the kernel_page_tables format
 * @m: the seq_file to print to
 * @root: the root to walk
 * @pa: also show where each range starts in physical memory ("pa="),
 *	ranges ending where the physical addresses stop being contiguous
 *
 * Without CONFIG_PTDUMP_DEBUGFS, only the root's valid entries.
 */
void arch_percpu_pgtable_dump(struct seq_file *m, pgd_t *root, bool pa)
{
#ifdef CONFIG_PTDUMP_DEBUGFS
	if (pa)
		ptdump_walk_kernel_root_pa(m, root);
	else
		ptdump_walk_kernel_root(m, root);
#else
	unsigned long idx;

	for (idx = 0; idx < PTRS_PER_PGD; idx++)
		if (!pgd_none(root[idx]))
			seq_printf(m, "%4lu: %#llx\n", idx, (u64)pgd_val(root[idx]));
#endif
}

#ifdef CONFIG_PTDUMP
/*
 * Does CPU @cpu's top-level entry for @addr lead where no walk has been
 * yet: not where the master's does, nor where a lower-numbered CPU's does?
 * Equal entries point at the same tables, so the same mappings.  Read
 * without a lock, as the roots are walked: private top-level entries
 * change only when a per-CPU table client registers or goes, which the
 * boot-time check does not overlap; a check run from debugfs meanwhile
 * may miss an entry that changed after the CPU holding it was walked.
 */
static bool pcpt_wx_entry_new(pgd_t *root, unsigned int cpu, unsigned long addr)
{
	pgdval_t val = pgd_val(READ_ONCE(*pgd_offset_pgd(root, addr)));
	unsigned int other;

	if (val == pgd_val(READ_ONCE(*pgd_offset_k(addr))))
		return false;
	for_each_possible_cpu(other) {
		pgd_t *r = percpu_pgtable_root(other);

		if (other >= cpu)
			break;
		if (r && val == pgd_val(READ_ONCE(*pgd_offset_pgd(r, addr))))
			return false;
	}
	return true;
}

/*
 * Walk the top-level entries of CPU @cpu's root that no earlier walk has
 * covered, a run of adjacent ones at a time.  Returns false if they have
 * W+X or non-UXN mappings; counts the entries walked in @walked.
 */
static bool pcpt_check_wx_private(pgd_t *root, unsigned int cpu,
				  unsigned int *walked)
{
	unsigned long addr = ALIGN_DOWN(_PAGE_OFFSET(vabits_actual), PGDIR_SIZE);
	unsigned long run = 0, wx_pages = 0, uxn_pages = 0;
	bool in_run = false;

	/* The kernel's half ends at the top: addr wraps to 0 after it. */
	do {
		bool new = pcpt_wx_entry_new(root, cpu, addr);

		if (new && !in_run)
			run = addr;
		if (!new && in_run)
			ptdump_count_wx(root, run, addr, &wx_pages, &uxn_pages);
		in_run = new;
		*walked += new;
		addr += PGDIR_SIZE;
	} while (addr);
	if (in_run)
		ptdump_count_wx(root, run, ~0UL, &wx_pages, &uxn_pages);

	if (wx_pages || uxn_pages) {
		pr_warn("Checked W+X mappings of CPU%u's kernel table (and of CPUs sharing its entries): FAILED, %lu W+X pages found, %lu non-UXN pages found\n",
			cpu, wx_pages, uxn_pages);
		return false;
	}
	return true;
}

/**
 * percpu_pgtable_check_wx() - W^X-check what only the per-CPU roots map
 *
 * Called by ptdump_check_wx() once it has walked the master: the private
 * top-level entries of a per-CPU root are seen by no other walk.
 *
 * Return: false if one maps W+X or non-UXN pages, true otherwise.
 */
bool percpu_pgtable_check_wx(void)
{
	unsigned int cpu, nr = 0, walked = 0;
	bool ok = true;

	/*
	 * Only the private entries: the rest are the master's.  Entries
	 * CPUs share (a node's text) are walked for the first of them only,
	 * so the cost grows with the private tables, not with the CPUs.
	 */
	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);

		if (!root)
			continue;
		if (!pcpt_check_wx_private(root, cpu, &walked))
			ok = false;
		nr++;
	}
	if (nr && ok)
		pr_info("Checked W+X mappings of %u per-CPU kernel tables: passed, %u private top-level entries walked\n",
			nr, walked);
	return ok;
}
#endif /* CONFIG_PTDUMP */

/*
 * Give every block its copy of the trampoline root.  Runs after
 * map_entry_trampoline() (a core_initcall) and before any task reaches
 * EL0, which is the first time a CPU switches TTBR1 to page 0.
 */
static int __init percpu_pgtable_tramp_init(void)
{
	unsigned int cpu;

	if (!IS_ENABLED(CONFIG_UNMAP_KERNEL_AT_EL0) ||
	    !arm64_kernel_unmapped_at_el0())
		return 0;

	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);

		if (root)
			memcpy((void *)root - TRAMP_SWAPPER_OFFSET, tramp_pg_dir,
			       PTRS_PER_PGD * sizeof(pgd_t));
	}
	/* Visible to every walker before the first return to EL0. */
	dsb(ish);
	return 0;
}
postcore_initcall(percpu_pgtable_tramp_init);

#if IS_ENABLED(CONFIG_PERCPU_PGTABLE_KUNIT_TEST) && IS_ENABLED(CONFIG_KEXEC_CORE)
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <asm/kexec.h>
#include <asm/suspend.h>

/*
 * A power-down idle state loses the CPU's context: firmware brings the
 * CPU back at cpu_resume with the MMU off, and the kernel rebuilds its
 * state from the suspend context.  QEMU's PSCI CPU_SUSPEND only waits for
 * an interrupt, so this suspend finisher does what firmware would: MMU
 * off (cpu_soft_restart(), from the idmap) and a branch to cpu_resume.
 */
static int pcpt_test_lose_context(unsigned long unused)
{
	typeof(cpu_soft_restart) *restart = (void *)__pa_symbol(cpu_soft_restart);

	cpu_install_idmap();
	restart(0, __pa_symbol(cpu_resume), 0, 0, 0);
	return -EINVAL;
}

static DEFINE_PER_CPU(unsigned long, pcpt_test_resume_probe);

struct pcpt_test_resume {
	int ret;
	phys_addr_t loaded;
	unsigned long probe;
};

static long pcpt_test_resume_cpu(void *data)
{
	struct pcpt_test_resume *r = data;
	unsigned int cpu = smp_processor_id();

	r->ret = cpu_suspend(0, pcpt_test_lose_context);
	r->loaded = arch_percpu_pgtable_loaded();
	/* Through the window when it is in use: this CPU's copy only. */
	this_cpu_write(pcpt_test_resume_probe, cpu + 1);
	r->probe = *per_cpu_ptr(&pcpt_test_resume_probe, cpu);
	return 0;
}

/*
 * Every online CPU loses its context in cpu_suspend() and must come back
 * on its own root.  With irq tracing (the debug configuration), the first
 * C code after cpu_resume already uses this_cpu ops, which fault on
 * swapper_pg_dir: that is where a missing switch shows.
 */
static void pcpt_test_resume(struct kunit *test)
{
	struct pcpt_test_resume r;
	unsigned int cpu;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);
		phys_addr_t want = root ? virt_to_phys(root) : __pa_symbol(swapper_pg_dir);

		r = (struct pcpt_test_resume){ .ret = -1 };
		work_on_cpu(cpu, pcpt_test_resume_cpu, &r);
		KUNIT_EXPECT_EQ_MSG(test, r.ret, 0, "cpu%u: cpu_suspend() failed", cpu);
		KUNIT_EXPECT_EQ_MSG(test, r.loaded, want,
				    "cpu%u resumed on %pa, not on %pa", cpu, &r.loaded, &want);
		KUNIT_EXPECT_EQ_MSG(test, r.probe, cpu + 1UL,
				    "cpu%u: this_cpu_write() after resume went elsewhere", cpu);
	}
	cpus_read_unlock();
}

static struct kunit_case pcpt_arm64_test_cases[] = {
	KUNIT_CASE(pcpt_test_resume),
	{}
};

static struct kunit_suite pcpt_arm64_test_suite = {
	.name = "percpu_pgtable_arm64",
	.test_cases = pcpt_arm64_test_cases,
};

kunit_test_suite(pcpt_arm64_test_suite);
#endif

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
 * allocated from memblock on the CPU's node at boot and never freed.
 *
 * The master is written by set_swapper_pgd() (arch/arm64/mm/mmu.c), which
 * hands every write to percpu_pgtable_set_entry() once the copies exist.
 */
#define pr_fmt(fmt) "percpu_pgtable: " fmt

#include <linux/init.h>
#include <linux/memblock.h>
#include <linux/percpu_pgtable.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <asm/barrier.h>
#include <asm/memory.h>
#include <asm/mmu.h>
#include <asm/mmu_context.h>
#include <asm/pgtable.h>
#include <asm/ptdump.h>
#include <asm/set_memory.h>
#include <asm/sysreg.h>

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
 * arch_percpu_pgtable_write_ro() - write an entry of a read-only root
 * @entry: the entry, at its linear-map address
 * @pgd: the new value
 *
 * Goes through FIX_PGD, like set_swapper_pgd() for the master.  The
 * caller holds the core's lock, which once the roots exist also covers
 * every use of FIX_PGD by set_swapper_pgd(), so the slot is never shared.
 * clear_fixmap() ends with a TLBI of the slot and a DSB, which also
 * publishes the store to other walkers.
 */
void noinstr arch_percpu_pgtable_write_ro(pgd_t *entry, pgd_t pgd)
{
	pgd_t *fixmap_pgdp = pgd_set_fixmap(__pa(entry));

	WRITE_ONCE(*fixmap_pgdp, pgd);
	pgd_clear_fixmap();
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
int __init arch_percpu_pgtable_protect(pgd_t *root)
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
 * Return: the physical address in TTBR1_EL1, without ASID and CnP.
 */
phys_addr_t arch_percpu_pgtable_loaded(void)
{
	return read_sysreg(ttbr1_el1) & ~(TTBR_ASID_MASK | TTBR_CNP_BIT);
}

/**
 * arch_percpu_pgtable_dump() - dump a root in the kernel_page_tables format
 * @m: the seq_file to print to
 * @root: the root to walk
 */
void arch_percpu_pgtable_dump(struct seq_file *m, pgd_t *root)
{
#ifdef CONFIG_PTDUMP
	ptdump_walk_kernel_root(m, root);
#else
	unsigned long idx;

	for (idx = 0; idx < PTRS_PER_PGD; idx++)
		if (!pgd_none(root[idx]))
			seq_printf(m, "%4lu: %#llx\n", idx, (u64)pgd_val(root[idx]));
#endif
}

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

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel text and rodata replicated per NUMA node, a client of the per-CPU
 * kernel page tables.  See Documentation/mm/kernel-replication.rst.
 *
 * The first half of this header is what the architecture calls, at the
 * points of its boot, text patching and set_memory_*() code that the
 * replica must see.  The second half is what the architecture provides
 * (it selects ARCH_HAS_KERNEL_REPLICATION): the layout of the image and
 * its module window, the one way to write a copy, and what a page-table
 * entry holds besides an address and generic permissions.
 */
#ifndef _LINUX_KERNEL_REPLICATION_H
#define _LINUX_KERNEL_REPLICATION_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/types.h>

#include <linux/sizes.h>

#include <asm/pgtable-types.h>

/* The largest module window: the limit kernel_replication_modules= takes. */
#define KERNEL_REPLICATION_WINDOW_MAX	SZ_32M

/**
 * struct kernel_replication_layout - where the replica's virtual ranges are
 * @box_start: the lowest address that module text, or a branch target of
 *	module text, may have
 * @box_end: the end of that range.  The kernel image lies inside it.  Every
 *	top-level entry covering part of [@box_start, @box_end) becomes private
 *	to each node, so no kernel mapping outside the box may ever be made
 *	under those entries: the core reserves the rest of them from vmalloc.
 * @window_start: start of the module window, where replicated module text
 *	and rodata are allocated (0: modules are not replicated).  It must lie
 *	in the box, below the image.
 * @window_end: end of the module window, at most the image's start, and
 *	at most %KERNEL_REPLICATION_WINDOW_MAX above @window_start.  Both ends
 *	are page-aligned.
 * @copy_align: each node's copy is congruent to the image modulo this
 *	power of two: the largest block or contiguous range the image may be
 *	mapped with, so that the copy can be mapped the same way.
 */
struct kernel_replication_layout {
	unsigned long box_start;
	unsigned long box_end;
	unsigned long window_start;
	unsigned long window_end;
	unsigned long copy_align;
};

#ifdef CONFIG_KERNEL_REPLICATION

/*
 * Private to mm/kernel_replication.c, which alone writes it; global only
 * for the inline read below, on the text patching fast path.
 */
extern bool krepl_active;

/**
 * kernel_replication_text_active() - whether text writes must reach copies
 *
 * The text patching primitives call kernel_replication_prepare() and
 * kernel_replication_write() only when this is true, so that a kernel
 * whose replica is off or not yet built (every write of ftrace_init())
 * pays one load per write, not two calls.  The flag changes only under
 * stop_machine(), when no CPU holds the text patching lock: read it once
 * under that lock and use the value for both calls.
 *
 * Return: true once every copy is made; the roots are switched to them in
 * the same stop_machine(), before any patcher can read it.
 */
static __always_inline bool kernel_replication_text_active(void)
{
	return READ_ONCE(krepl_active);
}

/* Called by the architecture. */
void __init kernel_replication_reserve_va(void);
void __init kernel_replication_reserve(void);
void kernel_replication_init(void);
bool kernel_replication_shared_table(unsigned long addr, unsigned long size);
int kernel_replication_prepare(void *addr, size_t len);
void kernel_replication_write(void *addr, const void *src, size_t len);
unsigned long kernel_replication_module_base(void);
bool kernel_replication_module_addr(unsigned long addr);
int kernel_replication_module_prot(unsigned long addr, int numpages,
				   int (*change)(pte_t *ptep, unsigned long addr,
						 void *data),
				   void *data);

/* Provided by the architecture. */

/**
 * arch_kernel_replication_layout() - the box and the module window
 * @layout: filled in by the architecture
 *
 * Context: early boot, before vmalloc_init(); called once.
 */
void __init arch_kernel_replication_layout(struct kernel_replication_layout *layout);

/**
 * arch_kernel_replication_unusable() - can this boot not replicate at all?
 *
 * For reasons only the architecture knows, such as a hypervisor that owns
 * part of the kernel text.
 *
 * Context: process context, once, before the node tables are built.
 * Return: why not, or NULL if it can.
 */
const char *arch_kernel_replication_unusable(void);

/**
 * arch_kernel_replication_protect_aliases() - keep linear aliases read-only?
 *
 * Whether the linear-map alias of every copy, and of the pages behind
 * replicated module text and rodata, is made read-only with
 * set_direct_map_ro() while they are text: the policy the architecture
 * applies to the image's own alias and to vmalloc'd text.
 *
 * Context: any.
 * Return: true to protect them.
 */
bool arch_kernel_replication_protect_aliases(void);

/**
 * arch_kernel_replication_sync_icache() - make a copy's bytes fetchable
 * @start: start of the bytes just written, through a linear or fixmap alias
 * @end: end of them
 *
 * Make what was written at [@start, @end) visible to instruction fetch, on
 * every CPU, from every virtual address that translates to the same
 * physical bytes (the copies are fetched through the image's addresses,
 * and written through other aliases).  Must not call anything that can be
 * traced or probed, nor IPI other CPUs: it runs inside the text patching
 * primitives.
 *
 * Context: any, including under the architecture's text patching lock
 * with interrupts off and under stop_machine().
 */
void arch_kernel_replication_sync_icache(unsigned long start, unsigned long end);

/**
 * arch_kernel_replication_poke() - write one copy of patched text
 * @pa: physical address of the bytes in the copy
 * @src: what to write there, or NULL if the caller wrote it already
 *	(the master, which the architecture's patching code writes itself)
 * @len: how many bytes, within one page
 *
 * Write @src at @pa through a temporary writable alias and make it visible
 * to instruction fetch as arch_kernel_replication_sync_icache() does.
 * Cannot fail: the alias was just made.
 *
 * Context: under the architecture's text patching lock, interrupts off;
 * the lock owns whatever alias is used.
 */
void arch_kernel_replication_poke(phys_addr_t pa, const void *src, size_t len);

/**
 * arch_kernel_replication_move_pte() - relocate a leaf PTE of the image
 * @ptep: the entry in a node's table, still a copy of the master's
 * @addr: the virtual address it maps
 * @pa: the physical address of the node's copy of that page
 * @start: start of the virtual range being relocated
 * @end: its end
 *
 * Point *@ptep at @pa, with the master's attributes.  A hint by which the
 * entry shares one TLB entry with its neighbours (a contiguous bit) stays
 * if @pa keeps its alignment and is dropped if not.  Nothing walks the
 * node's table yet: no break-before-make.  The entry must be visible to
 * the hardware table walker on return (the core publishes the node's
 * tables with no barrier of its own before its root writes).
 *
 * Context: process context, under mmap_read_lock(&init_mm), while the
 * node's tables are built.
 * Return: 0, or -EINVAL, having written nothing, if the hint covers
 * entries outside [@start, @end): half of them would map the master.
 */
int arch_kernel_replication_move_pte(pte_t *ptep, unsigned long addr,
				     phys_addr_t pa, unsigned long start,
				     unsigned long end);

/**
 * arch_kernel_replication_move_pmd() - relocate a block mapping of the image
 * @pmdp: the entry in a node's table, a leaf, still a copy of the master's
 * @addr: the virtual address it maps
 * @pa: the physical address of the node's copy of the block
 * @start: start of the virtual range being relocated
 * @end: its end
 *
 * As arch_kernel_replication_move_pte(), one level up; the whole block
 * must lie in [@start, @end).
 *
 * Context: as for arch_kernel_replication_move_pte().
 * Return: 0, or -EINVAL as for arch_kernel_replication_move_pte(), or if
 * the block reaches outside [@start, @end).
 */
int arch_kernel_replication_move_pmd(pmd_t *pmdp, unsigned long addr,
				     phys_addr_t pa, unsigned long start,
				     unsigned long end);

/**
 * arch_kernel_replication_split_pmd() - the PTEs of a block mapping
 * @block: a leaf PMD of the image
 * @ptes: PTRS_PER_PTE entries to fill in
 *
 * Fill @ptes with page mappings of the same physical range and attributes
 * as @block, for a table that replaces it in a node's tables.  The caller
 * publishes the table with pmd_populate_kernel().
 *
 * Context: as for arch_kernel_replication_move_pte().
 * Return: 0, or -EINVAL if @block cannot be split alone (its hint covers
 * its neighbours too).
 */
int arch_kernel_replication_split_pmd(pmd_t block, pte_t *ptes);

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
/*
 * For the architecture's KUnit test of text patching: which copies the
 * last write at an address made visible to instruction fetch, and which
 * node's copy a CPU uses.
 */
void kernel_replication_test_watch(void *addr);
unsigned int kernel_replication_test_nr_maintained(void);
bool kernel_replication_test_maintained(phys_addr_t pa);
unsigned int kernel_replication_test_copies(void);
int kernel_replication_test_node(unsigned int cpu);
#endif

#else /* !CONFIG_KERNEL_REPLICATION */

static __always_inline bool kernel_replication_text_active(void)
{
	return false;
}

static inline void kernel_replication_reserve_va(void)
{
}

static inline void kernel_replication_reserve(void)
{
}

static inline void kernel_replication_init(void)
{
}

static inline bool kernel_replication_shared_table(unsigned long addr,
						   unsigned long size)
{
	return false;
}

static inline int kernel_replication_prepare(void *addr, size_t len)
{
	return 0;
}

static inline void kernel_replication_write(void *addr, const void *src,
					    size_t len)
{
}

static inline unsigned long kernel_replication_module_base(void)
{
	return 0;
}

static inline bool kernel_replication_module_addr(unsigned long addr)
{
	return false;
}

static inline int
kernel_replication_module_prot(unsigned long addr, int numpages,
			       int (*change)(pte_t *ptep, unsigned long addr,
					     void *data),
			       void *data)
{
	return -EINVAL;
}

#endif /* CONFIG_KERNEL_REPLICATION */

#endif /* _LINUX_KERNEL_REPLICATION_H */

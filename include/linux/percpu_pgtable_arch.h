/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU kernel page tables: what the architecture provides to the core
 * (mm/percpu_pgtable.c).  Only the core and the architecture's backend
 * include this; clients use <linux/percpu_pgtable.h>.
 *
 * A root is the top-level table of one CPU.  The architecture may keep
 * more than the root in the block it allocates (arm64 keeps the KPTI
 * trampoline root and a zero page in front of it): the core only ever
 * passes the root's linear-map address, and copies, frees and protects
 * whole blocks through these hooks.
 */
#ifndef _LINUX_PERCPU_PGTABLE_ARCH_H
#define _LINUX_PERCPU_PGTABLE_ARCH_H

#include <linux/types.h>
#include <asm/page.h>

struct seq_file;

/**
 * arch_percpu_pgtable_alloc() - allocate a root at boot
 * @cpu: the CPU it is for
 * @nid: the CPU's node; the allocation may fall back to another node
 * @bytes: set to the size of the whole block allocated
 *
 * Context: boot, from percpu_pgtable_init(), before the page allocator.
 * Return: a zeroed root, or NULL (the CPU then stays on the master).
 */
pgd_t *arch_percpu_pgtable_alloc(unsigned int cpu, int nid, size_t *bytes);

/**
 * arch_percpu_pgtable_alloc_late() - allocate a root once boot is done
 * @cpu: the CPU it is for
 * @nid: the CPU's node; the allocation may fall back to another node
 *
 * Used when a client's registration or unregistration replaces every
 * root.
 *
 * Context: process context, may sleep.
 * Return: a zeroed root, or NULL.
 */
pgd_t *arch_percpu_pgtable_alloc_late(unsigned int cpu, int nid);

/**
 * arch_percpu_pgtable_copy() - copy a whole root block into a new one
 * @new: root of the new block, which no CPU runs on yet
 * @old: root of the block to copy
 *
 * Must leave the copy visible to every CPU's table walker (a barrier)
 * before any CPU can load @new.
 *
 * Context: stop_machine(), interrupts off.
 */
void arch_percpu_pgtable_copy(pgd_t *new, pgd_t *old);

/**
 * arch_percpu_pgtable_free() - free a root block no CPU can run on any more
 * @root: from arch_percpu_pgtable_alloc() or arch_percpu_pgtable_alloc_late()
 *
 * Undoes arch_percpu_pgtable_protect() first if it was applied.
 *
 * Context: process context, may sleep.
 */
void arch_percpu_pgtable_free(pgd_t *root);

/**
 * arch_percpu_pgtable_offline_may_run() - may an offline CPU run kernel code?
 *
 * Return: true if a CPU the core sees offline may still be executing in
 * the kernel on the root it had (for example spinning after a failed
 * hotplug), so that the core must not free that root.
 */
bool arch_percpu_pgtable_offline_may_run(void);

/**
 * arch_percpu_pgtable_write_master() - write one entry of the master root
 * @pgdp: the entry, in init_mm.pgd
 * @pgd: the new value
 *
 * The architecture's own writer of master entries, as without the core
 * (it may go through a fixmap if the master is read-only).
 *
 * Context: the core's raw spinlock held, interrupts off; noinstr.
 */
void arch_percpu_pgtable_write_master(pgd_t *pgdp, pgd_t pgd);

/**
 * arch_percpu_pgtable_sync() - publish top-level entry writes
 *
 * Makes every earlier write of a root entry visible to the table walkers
 * of every CPU, and to this CPU's instruction stream, before the caller
 * goes on.  No TLB maintenance: the core never changes a valid entry to
 * another valid one in a live root, and invalid entries are not cached.
 *
 * Context: any; noinstr.
 */
void arch_percpu_pgtable_sync(void);

/**
 * arch_percpu_pgtable_flush_alias() - invalidate the roots' write alias
 * @start: first page of the alias the core just unmapped
 * @end: end of the last
 *
 * Once arch_percpu_pgtable_protect() may have made the roots read-only in
 * the linear map, the core writes them through pages of vmalloc space it
 * maps with set_pte() and clears with pte_clear() under its lock; this
 * removes every CPU's TLB entries for [@start, @end), all last-level, in
 * as few broadcast invalidations as the architecture can, and completes
 * before it returns (the pages are mapped onto other roots next).  It
 * also orders the writes through the alias before anything after it.
 *
 * Context: the core's raw spinlock held, interrupts off; noinstr.
 */
void arch_percpu_pgtable_flush_alias(unsigned long start, unsigned long end);

/**
 * arch_percpu_pgtable_protect() - make a root block read-only
 * @root: its root
 *
 * As the architecture protects the master's linear alias.
 *
 * Context: process context: for every root once they are final for boot,
 * and for each new root when a later registration replaces them.
 * Return: 0, or an error if the linear map cannot be changed per page
 * (the roots then stay writable, and the core says so once).
 */
int arch_percpu_pgtable_protect(pgd_t *root);

/**
 * arch_percpu_pgtable_install() - make this CPU translate through @root
 * @cpu: the calling CPU
 * @root: its root
 *
 * Must be safe when @root maps some addresses differently from the root
 * the CPU runs on (break-before-make by the root pointer: arm64 parks
 * TTBR1 on a reserved table and invalidates its local TLB first).
 *
 * Context: on @cpu, interrupts off.
 */
void arch_percpu_pgtable_install(unsigned int cpu, pgd_t *root);

/**
 * arch_percpu_pgtable_same() - does a copy's shared entry match the master?
 * @master: the master's entry
 * @copy: the copy's entry
 *
 * Context: any; called from the noinstr propagation point in the debug
 * configuration, so it must not be instrumented either.
 * Return: true if both translate identically, ignoring bits the hardware
 * ignores that the architecture may set in the master alone.
 */
bool arch_percpu_pgtable_same(pgd_t master, pgd_t copy);

/**
 * arch_percpu_pgtable_loaded() - the root this CPU translates through
 *
 * Read from the MMU, not from the core's bookkeeping: debugfs and the
 * tests compare it with the root the core thinks the CPU runs on.
 *
 * Context: on the CPU asked about, preemption off.
 * Return: the physical address of the root loaded in the MMU.
 */
phys_addr_t arch_percpu_pgtable_loaded(void);

/**
 * arch_percpu_pgtable_dump() - dump a root's mappings for debugfs
 * @m: where to print
 * @root: the root to walk
 * @pa: also show the physical address of each mapped range, so that a
 *	test can tell which memory (which node) the CPU translates to
 *
 * Context: process context; the core keeps @root from being freed.
 */
void arch_percpu_pgtable_dump(struct seq_file *m, pgd_t *root, bool pa);

#endif /* _LINUX_PERCPU_PGTABLE_ARCH_H */

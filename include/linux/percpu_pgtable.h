/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU kernel page tables.
 *
 * Every CPU may run on its own copy of the kernel's top-level page table
 * (the "root").  The master stays init_mm.pgd: generic code only ever
 * writes the master, and the architecture's single writer of master root
 * entries calls percpu_pgtable_set_entry(), which makes every copy follow.
 * Copies differ from the master only in the top-level entries a client
 * has declared private.
 *
 * See Documentation/mm/percpu-pgtable.rst for the design and for the
 * rules every writer of kernel top-level entries must follow.
 */
#ifndef _LINUX_PERCPU_PGTABLE_H
#define _LINUX_PERCPU_PGTABLE_H

#include <linux/list.h>
#include <linux/types.h>
#include <asm/page.h>

struct seq_file;

/**
 * struct percpu_pgtable_client - user of private top-level kernel entries
 * @name: short name, used in messages and in debugfs
 * @start: first virtual address of the private range, aligned to PGDIR_SIZE
 * @end: end of the private range (exclusive), aligned to PGDIR_SIZE
 * @populate: called with the core's lock held, interrupts disabled, for
 *	every top-level entry of [@start, @end) whenever a CPU's root is built
 *	or the client is registered: return the entry for @cpu at @addr (the
 *	start of that entry's range), or an empty entry.  A per-node client
 *	returns the same lower-level tables for every CPU of a node.  Must not
 *	sleep or allocate.  The core writes the entry: roots are read-only in
 *	the linear map once boot is done.
 * @prepare: optional; called once before any CPU can translate through
 *	the client's entries: on one CPU under stop_machine(), every other
 *	online CPU spinning with interrupts off, when registration replaces
 *	every root (the range held valid entries), else in the registering
 *	context.  Returns 0 or an error, which cancels the registration.
 * @list: internal, on the list of registered clients
 *
 * The range must be one nothing else maps: outside vmalloc, or reserved
 * from it.  The core never writes a private entry on behalf of anybody
 * else, and a write of a private entry through the shared path is a bug
 * that is warned about and not propagated.
 */
struct percpu_pgtable_client {
	const char *name;
	unsigned long start;
	unsigned long end;
	pgd_t (*populate)(struct percpu_pgtable_client *client,
			  unsigned int cpu, unsigned long addr);
	int (*prepare)(struct percpu_pgtable_client *client);
	struct list_head list;
};

#ifdef CONFIG_PERCPU_PGTABLE

bool percpu_pgtable_active(void);
pgd_t *percpu_pgtable_root(unsigned int cpu);
bool percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd);
void __init percpu_pgtable_init(void);
int percpu_pgtable_register_client(struct percpu_pgtable_client *client);
int percpu_pgtable_unregister_client(struct percpu_pgtable_client *client);
unsigned long percpu_pgtable_check(struct seq_file *m);
bool percpu_pgtable_protected(void);

/* Provided by the architecture (see Documentation/mm/percpu-pgtable.rst). */
pgd_t *arch_percpu_pgtable_alloc(unsigned int cpu, int nid, size_t *bytes);
pgd_t *arch_percpu_pgtable_alloc_late(unsigned int cpu, int nid);
void arch_percpu_pgtable_copy(pgd_t *new, pgd_t *old);
void arch_percpu_pgtable_free(pgd_t *root);
bool arch_percpu_pgtable_offline_may_run(void);
void arch_percpu_pgtable_write_master(pgd_t *pgdp, pgd_t pgd);
void arch_percpu_pgtable_sync(void);
void arch_percpu_pgtable_write_ro(pgd_t *entry, pgd_t pgd);
int arch_percpu_pgtable_protect(pgd_t *root);
void arch_percpu_pgtable_install(unsigned int cpu, pgd_t *root);
bool arch_percpu_pgtable_same(pgd_t master, pgd_t copy);
void arch_percpu_pgtable_dump(struct seq_file *m, pgd_t *root);
phys_addr_t arch_percpu_pgtable_loaded(void);

#ifdef CONFIG_THIS_CPU_WINDOW
/* Provided by the architecture for mm/percpu_window.c. */
unsigned long arch_this_cpu_window_base(void);
void arch_this_cpu_window_enable(unsigned long offset);
#endif

#else /* !CONFIG_PERCPU_PGTABLE */

static inline bool percpu_pgtable_active(void)
{
	return false;
}

static inline pgd_t *percpu_pgtable_root(unsigned int cpu)
{
	return NULL;
}

static inline bool percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd)
{
	return false;
}

static inline void percpu_pgtable_init(void)
{
}

#endif /* CONFIG_PERCPU_PGTABLE */

#endif /* _LINUX_PERCPU_PGTABLE_H */

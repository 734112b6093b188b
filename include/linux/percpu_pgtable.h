/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU kernel page tables: the interface for clients and for the
 * architecture's calls into the core.
 *
 * Every CPU may run on its own copy of the kernel's top-level page table
 * (the "root").  The master stays init_mm.pgd: generic code only ever
 * writes the master, and the architecture's single writer of master root
 * entries calls percpu_pgtable_set_entry(), which makes every copy follow.
 * Copies differ from the master only in the top-level entries a client
 * has declared private.
 *
 * What the architecture provides is in <linux/percpu_pgtable_arch.h>.
 * See Documentation/mm/percpu-pgtable.rst for the design and for the
 * rules every writer of kernel top-level entries must follow.
 */
#ifndef _LINUX_PERCPU_PGTABLE_H
#define _LINUX_PERCPU_PGTABLE_H

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/types.h>
#include <asm/page.h>

/**
 * struct percpu_pgtable_client - user of private top-level kernel entries
 * @name: short name, used in messages and in debugfs
 * @start: first virtual address of the private range, aligned to PGDIR_SIZE
 * @end: end of the private range (exclusive), aligned to PGDIR_SIZE
 * @populate: return the entry for @cpu at @addr (the start of that entry's
 *	range), or an empty entry.  Called for every top-level entry of
 *	[@start, @end) whenever a CPU's root is built or the client is
 *	registered, with the core's raw spinlock held and interrupts
 *	disabled: it must not sleep or allocate.  A per-node client returns
 *	the same lower-level tables for every CPU of a node.  The core
 *	writes the entry: roots are read-only in the linear map once boot
 *	is done.
 * @prepare: optional; called once before any CPU can translate through
 *	the client's entries.  A client with @prepare is always registered
 *	through new roots, so only during boot: @prepare runs on one CPU
 *	under stop_machine(), every other online CPU spinning with
 *	interrupts off, and must not sleep.  Returns 0 or an error, which
 *	cancels the registration.
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

/* For clients. */
bool __init percpu_pgtable_wanted(void);
bool percpu_pgtable_active(void);
pgd_t *percpu_pgtable_root(unsigned int cpu);
int percpu_pgtable_register_client(struct percpu_pgtable_client *client);
int percpu_pgtable_unregister_client(struct percpu_pgtable_client *client);

/* For the architecture. */
void __init percpu_pgtable_init(void);
bool percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd);

#else /* !CONFIG_PERCPU_PGTABLE */

static inline bool percpu_pgtable_wanted(void)
{
	return false;
}

static inline bool percpu_pgtable_active(void)
{
	return false;
}

static inline pgd_t *percpu_pgtable_root(unsigned int cpu)
{
	return NULL;
}

static inline int
percpu_pgtable_register_client(struct percpu_pgtable_client *client)
{
	return -ENODEV;
}

static inline int
percpu_pgtable_unregister_client(struct percpu_pgtable_client *client)
{
	return 0;
}

static inline void percpu_pgtable_init(void)
{
}

static inline bool percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd)
{
	return false;
}

#endif /* CONFIG_PERCPU_PGTABLE */

#endif /* _LINUX_PERCPU_PGTABLE_H */

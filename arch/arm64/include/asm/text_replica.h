/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel text and rodata replicated per NUMA node, a client of the per-CPU
 * kernel page tables.  See Documentation/mm/text-replication.rst.
 */
#ifndef __ASM_TEXT_REPLICA_H
#define __ASM_TEXT_REPLICA_H

#include <linux/errno.h>
#include <linux/types.h>

#include <asm/pgtable-types.h>

#ifdef CONFIG_KERNEL_TEXT_REPLICATION

void __init text_replica_reserve_va(void);
void __init text_replica_reserve(void);
void text_replica_init(void);
bool text_replica_shared_table(unsigned long addr);
int text_replica_prepare(void *addr, size_t len);
void text_replica_write(void *addr, const void *src, size_t len);
unsigned long text_replica_module_base(void);
bool text_replica_module_addr(unsigned long addr);
int text_replica_module_prot(unsigned long addr, int numpages,
			     pgprot_t set_mask, pgprot_t clear_mask);

#else

static inline void text_replica_reserve_va(void)
{
}

static inline void text_replica_reserve(void)
{
}

static inline void text_replica_init(void)
{
}

static inline bool text_replica_shared_table(unsigned long addr)
{
	return false;
}

static inline int text_replica_prepare(void *addr, size_t len)
{
	return 0;
}

static inline void text_replica_write(void *addr, const void *src, size_t len)
{
}

static inline unsigned long text_replica_module_base(void)
{
	return 0;
}

static inline bool text_replica_module_addr(unsigned long addr)
{
	return false;
}

static inline int text_replica_module_prot(unsigned long addr, int numpages,
					   pgprot_t set_mask,
					   pgprot_t clear_mask)
{
	return -EINVAL;
}

#endif /* CONFIG_KERNEL_TEXT_REPLICATION */

#endif /* __ASM_TEXT_REPLICA_H */

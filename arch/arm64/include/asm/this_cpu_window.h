/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the this_cpu window lies in the kernel's address space, included
 * by <asm/pgtable.h> after it defines VMALLOC_END.
 */
#ifndef __ASM_THIS_CPU_WINDOW_H
#define __ASM_THIS_CPU_WINDOW_H

/*
 * The this_cpu window (mm/percpu_window.c) takes the top-level entry
 * below the one vmalloc used to end in, and percpu chunks live in the
 * entry below it, the top of the vmalloc range, minus 4 GiB: the window
 * starts up to 4 GiB into its entry so that the offset from percpu
 * pointers to it is a multiple of 4 GiB (one MOVZ).  The end is where
 * vmalloc ends with VA_BITS_MIN, a constant: a 52-bit VA kernel's end
 * depends on vabits_actual, and is never below it.
 */
#define THIS_CPU_WINDOW_END	((VMEMMAP_START - SZ_8M) & PGDIR_MASK)
#define THIS_CPU_WINDOW_START	(THIS_CPU_WINDOW_END - PGDIR_SIZE)
#undef VMALLOC_END
#define VMALLOC_END		THIS_CPU_WINDOW_START
#define PCPU_WINDOW_VM_START	(THIS_CPU_WINDOW_START - PGDIR_SIZE)
#define PCPU_WINDOW_VM_END	(THIS_CPU_WINDOW_START - SZ_4G)
#ifndef __ASSEMBLY__
/*
 * Only when the window is to be used (mm/percpu_window.c decides before
 * the first chunk): the embed first chunk of percpu_pgtable=off places
 * its groups wherever the nodes' memory is, and later chunks must be
 * free to follow them anywhere in vmalloc space.
 */
extern bool pcpu_window_bounded;
#endif
#define PCPU_VM_START		(pcpu_window_bounded ? PCPU_WINDOW_VM_START : VMALLOC_START)
#define PCPU_VM_END		(pcpu_window_bounded ? PCPU_WINDOW_VM_END : VMALLOC_END)
/* A first chunk too big for the range: the window stays off. */
#define pcpu_vm_unbound()	(pcpu_window_bounded = false)
/* Not global: the window must not survive into EL0 under KPTI. */
#define THIS_CPU_WINDOW_PROT	__pgprot(pgprot_val(PAGE_KERNEL) | PTE_NG)

#endif /* __ASM_THIS_CPU_WINDOW_H */

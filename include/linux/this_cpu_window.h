/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The this_cpu window, a client of the per-CPU kernel page tables: what
 * the architecture provides to mm/percpu_window.c, and the call its
 * setup_per_cpu_areas() makes into it.  See the "Client: the this_cpu
 * window" section of Documentation/mm/percpu-pgtable.rst.
 */
#ifndef _LINUX_THIS_CPU_WINDOW_H
#define _LINUX_THIS_CPU_WINDOW_H

#include <linux/init.h>

#ifdef CONFIG_THIS_CPU_WINDOW

/**
 * arch_this_cpu_window_base() - where the window maps pcpu_base_addr
 *
 * The window is [THIS_CPU_WINDOW_START, THIS_CPU_WINDOW_END), a range the
 * architecture reserves; within it, it may pick the start so that the
 * offset from a percpu pointer to its window address is cheap to make.
 *
 * Context: boot, once, before SMP.
 * Return: the window address of the first chunk's base.
 */
unsigned long arch_this_cpu_window_base(void);

/**
 * arch_this_cpu_window_enable() - switch this_cpu operations to the window
 * @offset: window address minus percpu pointer, the same for every pointer
 *
 * Called once every possible CPU's window maps all percpu memory.  From
 * then on a this_cpu operation may add @offset to its pointer instead of
 * the CPU's percpu offset, without disabling preemption.
 *
 * Context: boot, once, before SMP and before the alternatives are applied.
 */
void arch_this_cpu_window_enable(unsigned long offset);

void __init pcpu_window_setup_first_chunk(void);

#else

static inline void pcpu_window_setup_first_chunk(void)
{
}

#endif /* CONFIG_THIS_CPU_WINDOW */

#endif /* _LINUX_THIS_CPU_WINDOW_H */

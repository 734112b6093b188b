// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 side of the this_cpu window (mm/percpu_window.c): where the window
 * starts, and the offset this_cpu operations add to a percpu pointer.
 *
 * The offset is a multiple of 4 GiB below 2^48, so one MOVZ with LSL #32
 * materialises it; arch_this_cpu_window_base() picks the window start
 * that makes it so.
 */
#define pr_fmt(fmt) "this_cpu_window: " fmt

#include <linux/export.h>
#include <linux/init.h>
#include <linux/this_cpu_window.h>
#include <linux/sizes.h>
#include <asm/alternative.h>
#include <asm/insn.h>
#include <asm/pgtable.h>
#include <asm/sections.h>

/* Offset from a percpu pointer to its window address; 0 until enabled. */
unsigned long this_cpu_window_offset __ro_after_init;

/**
 * arch_this_cpu_window_base() - window address of pcpu_base_addr
 *
 * Return: an address in the window range congruent to __per_cpu_start
 * modulo 4 GiB.
 */
unsigned long __init arch_this_cpu_window_base(void)
{
	return THIS_CPU_WINDOW_START + ((unsigned long)__per_cpu_start & (SZ_4G - 1));
}

/**
 * arch_this_cpu_window_enable() - record the window offset
 * @offset: window address minus percpu pointer, for every pointer
 */
void __init arch_this_cpu_window_enable(unsigned long offset)
{
	if (WARN_ON(offset & (SZ_4G - 1)) || WARN_ON(offset >> 48))
		return;
	this_cpu_window_offset = offset;
}

/**
 * this_cpu_window_patch() - alternative callback of every this_cpu op
 * @alt: the alternative entry
 * @origptr: the op's first instruction, "b" to its interrupt-masking copy
 * @updptr: where to write the replacement
 * @nr_inst: 1
 *
 * Once the window is enabled, replaces the branch with
 * "movz <off>, #(offset >> 32), lsl #32", <off> being the Rm register of
 * the op's next instruction (see asm/this_cpu_window_ops.h).  Otherwise
 * leaves the branch, so the op keeps masking interrupts.  Runs when the
 * system capabilities are patched, after mm/percpu_window.c's early
 * initcall, and for each module at load.
 */
void this_cpu_window_patch(struct alt_instr *alt, __le32 *origptr,
			   __le32 *updptr, int nr_inst)
{
	enum aarch64_insn_register off;
	u32 insn;

	if (!this_cpu_window_offset || WARN_ON_ONCE(nr_inst != 1))
		return;

	off = aarch64_insn_decode_register(AARCH64_INSN_REGTYPE_RM,
					   le32_to_cpu(origptr[1]));
	insn = aarch64_insn_gen_movewide(off, this_cpu_window_offset >> 32, 32,
					 AARCH64_INSN_VARIANT_64BIT,
					 AARCH64_INSN_MOVEWIDE_ZERO);
	if (WARN_ON_ONCE(insn == AARCH64_BREAK_FAULT))
		return;
	updptr[0] = cpu_to_le32(insn);
}
EXPORT_SYMBOL(this_cpu_window_patch);

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * this_cpu operations through the per-CPU window, included by
 * <asm/percpu.h> in place of its preempt-disabling ones.
 */
#ifndef __ASM_THIS_CPU_WINDOW_OPS_H
#define __ASM_THIS_CPU_WINDOW_OPS_H

#ifndef __ASM_PERCPU_H
#error "include <asm/percpu.h>, not <asm/this_cpu_window_ops.h>"
#endif

/*
 * this_cpu operations through the per-CPU window (mm/percpu_window.c):
 * every CPU's kernel page table maps its own percpu memory at
 * "percpu pointer + this_cpu_window_offset", so one access to that address
 * reaches the copy of whichever CPU executes it.  No preemption disabling,
 * no TPIDR read: a task migrated before the access simply reaches the new
 * CPU's copy, and one migrated inside an LL/SC loop fails its store
 * exclusive (exception return clears the monitor) and retries there.
 *
 * The first instruction, "b 8f", is patched at boot (system capabilities,
 * with CPUs already up but before anything else runs on them) into
 * "movz <off>, #(offset >> 32), lsl #32"; this_cpu_window_patch() takes
 * <off> from the Rm field of the second instruction, which every sequence
 * below starts with.  Until then, and for good when the window could not
 * be set up, the branch goes to an out-of-line copy of the sequence in
 * subsection 2 that masks interrupts and uses the canonical address of the
 * CPU's copy instead.  Subsection 1 is where ALTERNATIVE() puts its
 * replacement code.
 *
 * this_cpu_ptr() and raw_cpu_ptr() are not affected: the address they
 * return may be stored, handed to another CPU or used for DMA, so it stays
 * the canonical one.
 */
struct alt_instr;
void this_cpu_window_patch(struct alt_instr *alt, __le32 *origptr,
			   __le32 *updptr, int nr_inst);

#define __PCPW(op)							\
	ALTERNATIVE_CB("b	8f", ARM64_ALWAYS_SYSTEM, this_cpu_window_patch) \
	op								\
	"9:\n"								\
	"	.subsection 2\n"					\
	"8:	mrs	%[flags], daif\n"				\
	"	msr	daifset, #3\n"					\
	ALTERNATIVE("mrs %[off], tpidr_el1", "mrs %[off], tpidr_el2",	\
		    ARM64_HAS_VIRT_HOST_EXTN) "\n"			\
	op								\
	"	msr	daif, %[flags]\n"				\
	"	b	9b\n"						\
	"	.subsection 0\n"

#define __PCPW_RW(w, sfx, sz)						\
static __always_inline unsigned long __pcpw_read_##sz(void *ptr)		\
{									\
	unsigned long off, flags;					\
	u##sz val;							\
									\
	asm volatile(__PCPW(						\
	"	ldr" sfx "	%" w "[val], [%[ptr], %[off]]\n")	\
	: [val] "=r" (val), [off] "=&r" (off), [flags] "=&r" (flags)	\
	: [ptr] "r" (ptr)						\
	: "memory");							\
	return val;							\
}									\
									\
static __always_inline void __pcpw_write_##sz(void *ptr, unsigned long val) \
{									\
	unsigned long off, flags;					\
									\
	asm volatile(__PCPW(						\
	"	str" sfx "	%" w "[val], [%[ptr], %[off]]\n")	\
	: [off] "=&r" (off), [flags] "=&r" (flags)			\
	: [ptr] "r" (ptr), [val] "rZ" ((u##sz)val)			\
	: "memory");							\
}

/* Non-returning RMW, as __PERCPU_OP_CASE, on the window address. */
#define __PCPW_OP_CASE(w, sfx, name, sz, op_llsc, op_lse)		\
static __always_inline void						\
__pcpw_##name##_case_##sz(void *ptr, unsigned long val)			\
{									\
	unsigned long off, flags, addr;					\
	unsigned int loop;						\
	u##sz tmp;							\
									\
	asm volatile(__PCPW(						\
	"	add	%[addr], %[ptr], %[off]\n"			\
	ARM64_LSE_ATOMIC_INSN(						\
	/* LL/SC */							\
	"1:	ldxr" sfx "\t%" w "[tmp], [%[addr]]\n"		\
		op_llsc "\t%" w "[tmp], %" w "[tmp], %" w "[val]\n" \
	"	stxr" sfx "\t%w[loop], %" w "[tmp], [%[addr]]\n"	\
	"	cbnz	%w[loop], 1b",					\
	/* LSE atomics */						\
		op_lse sfx "\t%" w "[val], %" w "[tmp], [%[addr]]\n" \
		__nops(3)) "\n")					\
	: [loop] "=&r" (loop), [tmp] "=&r" (tmp), [off] "=&r" (off),	\
	  [flags] "=&r" (flags), [addr] "=&r" (addr)			\
	: [ptr] "r" (ptr), [val] "r" ((u##sz)(val))			\
	: "memory");							\
}

#define __PCPW_RET_OP_CASE(w, sfx, name, sz, op_llsc, op_lse)		\
static __always_inline unsigned long					\
__pcpw_##name##_return_case_##sz(void *ptr, unsigned long val)		\
{									\
	unsigned long off, flags, addr;					\
	unsigned int loop;						\
	u##sz ret;							\
									\
	asm volatile(__PCPW(						\
	"	add	%[addr], %[ptr], %[off]\n"			\
	ARM64_LSE_ATOMIC_INSN(						\
	/* LL/SC */							\
	"1:	ldxr" sfx "\t%" w "[ret], [%[addr]]\n"		\
		op_llsc "\t%" w "[ret], %" w "[ret], %" w "[val]\n" \
	"	stxr" sfx "\t%w[loop], %" w "[ret], [%[addr]]\n"	\
	"	cbnz	%w[loop], 1b",					\
	/* LSE atomics */						\
		op_lse sfx "\t%" w "[val], %" w "[ret], [%[addr]]\n" \
		op_llsc "\t%" w "[ret], %" w "[ret], %" w "[val]\n" \
		__nops(2)) "\n")					\
	: [loop] "=&r" (loop), [ret] "=&r" (ret), [off] "=&r" (off),	\
	  [flags] "=&r" (flags), [addr] "=&r" (addr)			\
	: [ptr] "r" (ptr), [val] "r" ((u##sz)(val))			\
	: "memory");							\
	return ret;							\
}

#define __PCPW_XCHG_CASE(w, sfx, sz)					\
static __always_inline unsigned long __pcpw_xchg_##sz(void *ptr, unsigned long new) \
{									\
	unsigned long off, flags, addr;					\
	unsigned int loop;						\
	u##sz ret;							\
									\
	asm volatile(__PCPW(						\
	"	add	%[addr], %[ptr], %[off]\n"			\
	ARM64_LSE_ATOMIC_INSN(						\
	/* LL/SC */							\
	"1:	ldxr" sfx "\t%" w "[ret], [%[addr]]\n"		\
	"	stxr" sfx "\t%w[loop], %" w "[new], [%[addr]]\n"	\
	"	cbnz	%w[loop], 1b",					\
	/* LSE atomics */						\
	"	swp" sfx "\t%" w "[new], %" w "[ret], [%[addr]]\n"	\
		__nops(2)) "\n")					\
	: [loop] "=&r" (loop), [ret] "=&r" (ret), [off] "=&r" (off),	\
	  [flags] "=&r" (flags), [addr] "=&r" (addr)			\
	: [ptr] "r" (ptr), [new] "r" ((u##sz)(new))			\
	: "memory");							\
	return ret;							\
}

/*
 * The LL/SC compare is on a whole W register and ldxr{b,h} zero-extends,
 * so @old must be zero-extended too, as in __ll_sc__cmpxchg_case_*(): a
 * u8 or u16 asm operand may come in a register whose upper bits hold
 * anything (a sign-extended -1, say).  The other sub-word sequences need
 * nothing: the bits above the width never reach memory (stxr{b,h}), and
 * the C type of what they return truncates it.
 */
#define __PCPW_CMPXCHG_CASE(w, sfx, sz)					\
static __always_inline unsigned long					\
__pcpw_cmpxchg_##sz(void *ptr, unsigned long old, unsigned long new)	\
{									\
	unsigned long off, flags, addr, tmp;				\
	unsigned int loop;						\
	u##sz ret;							\
									\
	old = (u##sz)old;	/* zero-extended, as ldxr{b,h} loads */	\
									\
	asm volatile(__PCPW(						\
	"	add	%[addr], %[ptr], %[off]\n"			\
	ARM64_LSE_ATOMIC_INSN(						\
	/* LL/SC */							\
	"1:	ldxr" sfx "\t%" w "[ret], [%[addr]]\n"		\
	"	eor	%" w "[tmp], %" w "[ret], %" w "[old]\n"	\
	"	cbnz	%" w "[tmp], 2f\n"				\
	"	stxr" sfx "\t%w[loop], %" w "[new], [%[addr]]\n"	\
	"	cbnz	%w[loop], 1b\n"				\
	"2:",								\
	/* LSE atomics */						\
	"	mov	%" w "[ret], %" w "[old]\n"			\
	"	cas" sfx "\t%" w "[ret], %" w "[new], [%[addr]]\n" \
		__nops(3)) "\n")					\
	: [loop] "=&r" (loop), [ret] "=&r" (ret), [off] "=&r" (off),	\
	  [flags] "=&r" (flags), [addr] "=&r" (addr), [tmp] "=&r" (tmp) \
	: [ptr] "r" (ptr), [old] "r" (old),				\
	  [new] "r" ((u##sz)(new))					\
	: "memory");							\
	return ret;							\
}

__PCPW_RW("w", "b", 8)
__PCPW_RW("w", "h", 16)
__PCPW_RW("w", "", 32)
__PCPW_RW("x", "", 64)
__PCPW_OP_CASE("w", "b", add, 8, "add", "ldadd")
__PCPW_OP_CASE("w", "h", add, 16, "add", "ldadd")
__PCPW_OP_CASE("w", "", add, 32, "add", "ldadd")
__PCPW_OP_CASE("x", "", add, 64, "add", "ldadd")
__PCPW_OP_CASE("w", "b", andnot, 8, "bic", "ldclr")
__PCPW_OP_CASE("w", "h", andnot, 16, "bic", "ldclr")
__PCPW_OP_CASE("w", "", andnot, 32, "bic", "ldclr")
__PCPW_OP_CASE("x", "", andnot, 64, "bic", "ldclr")
__PCPW_OP_CASE("w", "b", or, 8, "orr", "ldset")
__PCPW_OP_CASE("w", "h", or, 16, "orr", "ldset")
__PCPW_OP_CASE("w", "", or, 32, "orr", "ldset")
__PCPW_OP_CASE("x", "", or, 64, "orr", "ldset")
__PCPW_RET_OP_CASE("w", "b", add, 8, "add", "ldadd")
__PCPW_RET_OP_CASE("w", "h", add, 16, "add", "ldadd")
__PCPW_RET_OP_CASE("w", "", add, 32, "add", "ldadd")
__PCPW_RET_OP_CASE("x", "", add, 64, "add", "ldadd")
__PCPW_XCHG_CASE("w", "b", 8)
__PCPW_XCHG_CASE("w", "h", 16)
__PCPW_XCHG_CASE("w", "", 32)
__PCPW_XCHG_CASE("x", "", 64)
__PCPW_CMPXCHG_CASE("w", "b", 8)
__PCPW_CMPXCHG_CASE("w", "h", 16)
__PCPW_CMPXCHG_CASE("w", "", 32)
__PCPW_CMPXCHG_CASE("x", "", 64)

/*
 * 128 bits: CASP needs its register pairs at even numbers, so old and new
 * live in x0-x3 as in __lse__cmpxchg128(); the LL/SC loop loads into x0/x1
 * too, so both leave the value found there.
 */
static __always_inline u128 __pcpw_cmpxchg128(void *ptr, u128 old, u128 new)
{
	union __u128_halves r, o = { .full = old }, n = { .full = new };

	register unsigned long x0 asm ("x0");
	register unsigned long x1 asm ("x1");
	register unsigned long x2 asm ("x2");
	register unsigned long x3 asm ("x3");
	unsigned long off, flags, addr;
	unsigned int loop;

	x0 = o.low;
	x1 = o.high;
	x2 = n.low;
	x3 = n.high;
	asm volatile(__PCPW(
	"	add	%[addr], %[ptr], %[off]\n"
	ARM64_LSE_ATOMIC_INSN(
	/* LL/SC */
	"1:	ldxp	%[rl], %[rh], [%[addr]]\n"
	"	cmp	%[rl], %[ol]\n"
	"	ccmp	%[rh], %[oh], 0, eq\n"
	"	b.ne	2f\n"
	"	stxp	%w[loop], %[nl], %[nh], [%[addr]]\n"
	"	cbnz	%w[loop], 1b\n"
	"2:",
	/* LSE atomics */
	"	casp	%[rl], %[rh], %[nl], %[nh], [%[addr]]\n"
	__nops(5)) "\n")
	: [rl] "+&r" (x0), [rh] "+&r" (x1), [loop] "=&r" (loop),
	  [off] "=&r" (off), [flags] "=&r" (flags), [addr] "=&r" (addr)
	: [ptr] "r" (ptr), [ol] "r" (o.low), [oh] "r" (o.high),
	  [nl] "r" (x2), [nh] "r" (x3)
	: "cc", "memory");

	r.low = x0;
	r.high = x1;
	return r.full;
}

#undef __PCPW_RW
#undef __PCPW_OP_CASE
#undef __PCPW_RET_OP_CASE
#undef __PCPW_XCHG_CASE
#undef __PCPW_CMPXCHG_CASE

/* The percpu pointer itself: the window op adds the offset. */
#define _pcpw(op, pcp, ...)						\
	op((void *)(__force unsigned long)&(pcp), ##__VA_ARGS__)
#define _pcpw_return(op, pcp, ...)					\
	((typeof(pcp))op((void *)(__force unsigned long)&(pcp), ##__VA_ARGS__))

#define this_cpu_read_1(pcp)		_pcpw_return(__pcpw_read_8, pcp)
#define this_cpu_read_2(pcp)		_pcpw_return(__pcpw_read_16, pcp)
#define this_cpu_read_4(pcp)		_pcpw_return(__pcpw_read_32, pcp)
#define this_cpu_read_8(pcp)		_pcpw_return(__pcpw_read_64, pcp)

#define this_cpu_write_1(pcp, val)	_pcpw(__pcpw_write_8, pcp, (unsigned long)(val))
#define this_cpu_write_2(pcp, val)	_pcpw(__pcpw_write_16, pcp, (unsigned long)(val))
#define this_cpu_write_4(pcp, val)	_pcpw(__pcpw_write_32, pcp, (unsigned long)(val))
#define this_cpu_write_8(pcp, val)	_pcpw(__pcpw_write_64, pcp, (unsigned long)(val))

#define this_cpu_add_1(pcp, val)	_pcpw(__pcpw_add_case_8, pcp, val)
#define this_cpu_add_2(pcp, val)	_pcpw(__pcpw_add_case_16, pcp, val)
#define this_cpu_add_4(pcp, val)	_pcpw(__pcpw_add_case_32, pcp, val)
#define this_cpu_add_8(pcp, val)	_pcpw(__pcpw_add_case_64, pcp, val)

#define this_cpu_add_return_1(pcp, val)	_pcpw_return(__pcpw_add_return_case_8, pcp, val)
#define this_cpu_add_return_2(pcp, val)	_pcpw_return(__pcpw_add_return_case_16, pcp, val)
#define this_cpu_add_return_4(pcp, val)	_pcpw_return(__pcpw_add_return_case_32, pcp, val)
#define this_cpu_add_return_8(pcp, val)	_pcpw_return(__pcpw_add_return_case_64, pcp, val)

#define this_cpu_and_1(pcp, val)	_pcpw(__pcpw_andnot_case_8, pcp, ~(u8)(val))
#define this_cpu_and_2(pcp, val)	_pcpw(__pcpw_andnot_case_16, pcp, ~(u16)(val))
#define this_cpu_and_4(pcp, val)	_pcpw(__pcpw_andnot_case_32, pcp, ~(u32)(val))
#define this_cpu_and_8(pcp, val)	_pcpw(__pcpw_andnot_case_64, pcp, ~(u64)(val))

#define this_cpu_or_1(pcp, val)		_pcpw(__pcpw_or_case_8, pcp, val)
#define this_cpu_or_2(pcp, val)		_pcpw(__pcpw_or_case_16, pcp, val)
#define this_cpu_or_4(pcp, val)		_pcpw(__pcpw_or_case_32, pcp, val)
#define this_cpu_or_8(pcp, val)		_pcpw(__pcpw_or_case_64, pcp, val)

#define this_cpu_xchg_1(pcp, val)	_pcpw_return(__pcpw_xchg_8, pcp, (unsigned long)(val))
#define this_cpu_xchg_2(pcp, val)	_pcpw_return(__pcpw_xchg_16, pcp, (unsigned long)(val))
#define this_cpu_xchg_4(pcp, val)	_pcpw_return(__pcpw_xchg_32, pcp, (unsigned long)(val))
#define this_cpu_xchg_8(pcp, val)	_pcpw_return(__pcpw_xchg_64, pcp, (unsigned long)(val))

#define this_cpu_cmpxchg_1(pcp, o, n)	\
	_pcpw_return(__pcpw_cmpxchg_8, pcp, (unsigned long)(o), (unsigned long)(n))
#define this_cpu_cmpxchg_2(pcp, o, n)	\
	_pcpw_return(__pcpw_cmpxchg_16, pcp, (unsigned long)(o), (unsigned long)(n))
#define this_cpu_cmpxchg_4(pcp, o, n)	\
	_pcpw_return(__pcpw_cmpxchg_32, pcp, (unsigned long)(o), (unsigned long)(n))
#define this_cpu_cmpxchg_8(pcp, o, n)	\
	_pcpw_return(__pcpw_cmpxchg_64, pcp, (unsigned long)(o), (unsigned long)(n))

#define this_cpu_cmpxchg128(pcp, o, n)					\
	__pcpw_cmpxchg128((void *)(__force unsigned long)&(pcp), o, n)

#endif /* __ASM_THIS_CPU_WINDOW_OPS_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Probe functions for 'make bench': each does one this_cpu operation and
 * nothing else.  Built against the base and the patched kernel; the bench
 * (scripts/pcpt/insn-count.py) counts the instructions of each function
 * (its symbol range) and looks for preempt-count accesses, TPIDR reads,
 * calls and stack frames.  The module is never loaded.
 */
#include <linux/compiler.h>
#include <linux/module.h>
#include <linux/percpu.h>

static DEFINE_PER_CPU(u64, pcpw_probe_var);

static noinline __used u64 pcpw_probe_read(u64 __percpu *p)
{
	return this_cpu_read(*p);
}

static noinline __used void pcpw_probe_write(u64 __percpu *p, u64 v)
{
	this_cpu_write(*p, v);
}

static noinline __used void pcpw_probe_inc(u64 __percpu *p)
{
	this_cpu_inc(*p);
}

static noinline __used void pcpw_probe_add(u64 __percpu *p, u64 v)
{
	this_cpu_add(*p, v);
}

static noinline __used u64 pcpw_probe_add_return(u64 __percpu *p, u64 v)
{
	return this_cpu_add_return(*p, v);
}

static noinline __used void pcpw_probe_and(u64 __percpu *p, u64 v)
{
	this_cpu_and(*p, v);
}

static noinline __used void pcpw_probe_or(u64 __percpu *p, u64 v)
{
	this_cpu_or(*p, v);
}

static noinline __used u64 pcpw_probe_xchg(u64 __percpu *p, u64 v)
{
	return this_cpu_xchg(*p, v);
}

static noinline __used u64 pcpw_probe_cmpxchg(u64 __percpu *p, u64 o, u64 n)
{
	return this_cpu_cmpxchg(*p, o, n);
}

static noinline __used u32 pcpw_probe_read4(u32 __percpu *p)
{
	return this_cpu_read(*p);
}

static noinline __used void pcpw_probe_inc4(u32 __percpu *p)
{
	this_cpu_inc(*p);
}

static noinline __used u8 pcpw_probe_read1(u8 __percpu *p)
{
	return this_cpu_read(*p);
}

static noinline __used void pcpw_probe_inc1(u8 __percpu *p)
{
	this_cpu_inc(*p);
}

static noinline __used u64 pcpw_probe_read_static(void)
{
	return this_cpu_read(pcpw_probe_var);
}

static noinline __used void pcpw_probe_inc_static(void)
{
	this_cpu_inc(pcpw_probe_var);
}

#ifdef CONFIG_ARCH_SUPPORTS_INT128
static noinline __used u128 pcpw_probe_cmpxchg128(u128 __percpu *p, u128 o, u128 n)
{
	return this_cpu_cmpxchg128(*p, o, n);
}
#endif

MODULE_DESCRIPTION("this_cpu operation probes for instruction counts");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * Probe functions for 'make bench': each does one this_cpu operation and
 * nothing else.  Built against the base and the patched kernel; the bench
 * (scripts/pcpt/insn-count.py) counts the instructions of each function
 * (its symbol range) and looks for preempt-count accesses, TPIDR reads,
 * calls and stack frames.  Loaded, it shows the bytes of every probe as
 * the running kernel executes them, after alternatives (the this_cpu
 * window's MOVZ, the LSE atomics) were applied, in debugfs
 * this_cpu_probe_text: "name hex" per probe, PCPW_PROBE_DUMP bytes from
 * its entry; the bench cuts each to its symbol size and disassembles it.
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

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

#define PCPW_PROBE(name)	{ #name, (const void *)pcpw_probe_##name }

static const struct {
	const char *name;
	const void *text;
} pcpw_probes[] = {
	PCPW_PROBE(read), PCPW_PROBE(write), PCPW_PROBE(inc), PCPW_PROBE(add),
	PCPW_PROBE(add_return), PCPW_PROBE(and), PCPW_PROBE(or),
	PCPW_PROBE(xchg), PCPW_PROBE(cmpxchg), PCPW_PROBE(read4),
	PCPW_PROBE(inc4), PCPW_PROBE(read1), PCPW_PROBE(inc1),
	PCPW_PROBE(read_static), PCPW_PROBE(inc_static),
#ifdef CONFIG_ARCH_SUPPORTS_INT128
	PCPW_PROBE(cmpxchg128),
#endif
};

/* More than the longest probe; the host cuts each to its symbol size. */
#define PCPW_PROBE_DUMP	256

static int this_cpu_probe_show(struct seq_file *m, void *v)
{
	unsigned int i, j;
	u8 b;

	for (i = 0; i < ARRAY_SIZE(pcpw_probes); i++) {
		seq_printf(m, "%s ", pcpw_probes[i].name);
		/* The last probe may end near the end of the module's text. */
		for (j = 0; j < PCPW_PROBE_DUMP; j++) {
			if (copy_from_kernel_nofault(&b, pcpw_probes[i].text + j, 1))
				break;
			seq_printf(m, "%02x", b);
		}
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(this_cpu_probe);

static struct dentry *this_cpu_probe_file;

static int __init this_cpu_probe_init(void)
{
	this_cpu_probe_file = debugfs_create_file("this_cpu_probe_text", 0400,
						  NULL, NULL, &this_cpu_probe_fops);
	return 0;
}
module_init(this_cpu_probe_init);

static void __exit this_cpu_probe_exit(void)
{
	debugfs_remove(this_cpu_probe_file);
}
module_exit(this_cpu_probe_exit);

MODULE_DESCRIPTION("this_cpu operation probes for instruction counts");
MODULE_LICENSE("GPL");

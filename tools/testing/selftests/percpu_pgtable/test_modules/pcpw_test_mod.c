// SPDX-License-Identifier: GPL-2.0
/*
 * Helper module for pcpw_counter.sh: each write of N to
 * /sys/kernel/debug/pcpw_test/inc performs N this_cpu_inc() on a static
 * percpu variable of this module (reserved chunk), N this_cpu_add(1) on a
 * dynamically allocated one and N increments by this_cpu_try_cmpxchg() of
 * an s8 and an s16 counter (which wrap through -1), preemptible
 * throughout, so the writer may be migrated or its CPU unplugged between
 * any two of them.  "sum" reads the totals over every possible CPU; they
 * must equal the number of increments exactly (modulo 2^8 and 2^16 for
 * the small ones).  "cpus" reads every CPU's own copies, so a writer
 * pinned to one CPU can check that its increments landed there.
 *
 * A write of N (at most 512) to "churn" allocates N percpu objects of
 * 4 KiB, so that chunks are added and their pages populated (and mapped
 * in the window), checks that the running CPU reads the first and last
 * word of each as zero with this_cpu_read(), writes them with
 * this_cpu_write() and reads them back through per_cpu_ptr(), then frees
 * them all, so that the balance work depopulates and frees chunks again.
 * It fails with -EIO on a wrong value (logged), -ENOMEM when a percpu
 * allocation fails (after freeing what it got).
 *
 * A write of N to "hold" allocates N more such objects and keeps them (at
 * most 8192 in all; -ENOMEM keeps what it got), so that the chunks of
 * later allocations lie where no chunk has been and need new window
 * tables (pcpt_faults.sh); a write of 0 frees them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

struct pcpw_small {
	s8 b;
	s16 h;
};

static DEFINE_PER_CPU(u64, pcpw_static);
static u64 __percpu *pcpw_dynamic;
static struct pcpw_small __percpu *pcpw_small;
static struct dentry *pcpw_dir;

static ssize_t pcpw_inc_write(struct file *file, const char __user *buf,
			      size_t count, loff_t *ppos)
{
	unsigned int n, i;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &n);
	if (ret)
		return ret;
	if (n > 1000000)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		s8 b = this_cpu_read(pcpw_small->b);
		s16 h = this_cpu_read(pcpw_small->h);

		this_cpu_inc(pcpw_static);
		this_cpu_add(*pcpw_dynamic, 1);
		/* Each success adds one to the copy of the CPU it ran on. */
		while (!this_cpu_try_cmpxchg(pcpw_small->b, &b, b + 1))
			;
		while (!this_cpu_try_cmpxchg(pcpw_small->h, &h, h + 1))
			;
		if (!(i & 255))
			cond_resched();
	}
	return count;
}

#define PCPW_CHURN_MAX	512
#define PCPW_CHURN_SIZE	4096
#define PCPW_CHURN_LAST	(PCPW_CHURN_SIZE / sizeof(u64) - 1)

static int pcpw_churn_check(void __percpu **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 __percpu *p = objs[i];
		u64 want = ((u64)i << 32) | 0x5eed;
		u64 first, last, got, got_last;
		int cpu;

		cpu = get_cpu();
		first = this_cpu_read(p[0]);
		last = this_cpu_read(p[PCPW_CHURN_LAST]);
		this_cpu_write(p[0], want);
		this_cpu_write(p[PCPW_CHURN_LAST], ~want);
		got = per_cpu_ptr(p, cpu)[0];
		got_last = per_cpu_ptr(p, cpu)[PCPW_CHURN_LAST];
		put_cpu();
		if (first || last || got != want || got_last != ~want) {
			pr_err("churn: object %u on cpu%d: read %#llx/%#llx before, %#llx/%#llx after writing %#llx/%#llx\n",
			       i, cpu, first, last, got, got_last, want, ~want);
			return -EIO;
		}
		if (!(i & 63))
			cond_resched();
	}
	return 0;
}

static ssize_t pcpw_churn_write(struct file *file, const char __user *buf,
				size_t count, loff_t *ppos)
{
	void __percpu **objs;
	unsigned int n, i, got;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &n);
	if (ret)
		return ret;
	if (!n || n > PCPW_CHURN_MAX)
		return -EINVAL;
	/*
	 * Never failed by fault injection (pcpt_faults.sh): a -ENOMEM from
	 * the churn is then percpu's, not this array's.
	 */
	objs = kcalloc(n, sizeof(*objs), GFP_KERNEL | __GFP_NOFAIL);
	for (got = 0; got < n; got++) {
		objs[got] = __alloc_percpu(PCPW_CHURN_SIZE, 8);
		if (!objs[got])
			break;
	}
	ret = got < n ? -ENOMEM : pcpw_churn_check(objs, n);
	for (i = 0; i < got; i++)
		free_percpu(objs[i]);
	kfree(objs);
	return ret ?: count;
}

#define PCPW_HOLD_MAX	8192

static void __percpu *pcpw_held[PCPW_HOLD_MAX];
static unsigned int pcpw_nheld;
static DEFINE_MUTEX(pcpw_hold_lock);

static void pcpw_hold_free(void)
{
	while (pcpw_nheld) {
		free_percpu(pcpw_held[--pcpw_nheld]);
		if (!(pcpw_nheld & 63))
			cond_resched();
	}
}

static ssize_t pcpw_hold_write(struct file *file, const char __user *buf,
			       size_t count, loff_t *ppos)
{
	unsigned int n, i;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &n);
	if (ret)
		return ret;
	mutex_lock(&pcpw_hold_lock);
	if (!n) {
		pcpw_hold_free();
	} else if (n > PCPW_HOLD_MAX - pcpw_nheld) {
		ret = -EINVAL;
	} else {
		for (i = 0; i < n; i++) {
			pcpw_held[pcpw_nheld] = __alloc_percpu(PCPW_CHURN_SIZE, 8);
			if (!pcpw_held[pcpw_nheld]) {
				ret = -ENOMEM;
				break;
			}
			pcpw_nheld++;
			if (!(i & 63))
				cond_resched();
		}
	}
	mutex_unlock(&pcpw_hold_lock);
	return ret ?: count;
}

static const struct file_operations pcpw_hold_fops = {
	.write = pcpw_hold_write,
	.llseek = noop_llseek,
};

static const struct file_operations pcpw_churn_fops = {
	.write = pcpw_churn_write,
	.llseek = noop_llseek,
};

static const struct file_operations pcpw_inc_fops = {
	.write = pcpw_inc_write,
	.llseek = noop_llseek,
};

static int pcpw_sum_show(struct seq_file *m, void *v)
{
	u64 s = 0, d = 0;
	u16 h = 0;
	u8 b = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		s += *per_cpu_ptr(&pcpw_static, cpu);
		d += *per_cpu_ptr(pcpw_dynamic, cpu);
		b += (u8)per_cpu_ptr(pcpw_small, cpu)->b;
		h += (u16)per_cpu_ptr(pcpw_small, cpu)->h;
	}
	seq_printf(m, "static %llu dynamic %llu s8 %u s16 %u\n", s, d, b, h);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpw_sum);

/* One line per possible CPU: its own copies, read with per_cpu_ptr(). */
static int pcpw_cpus_show(struct seq_file *m, void *v)
{
	int cpu;

	for_each_possible_cpu(cpu)
		seq_printf(m, "cpu%d static %llu dynamic %llu s8 %u s16 %u\n", cpu,
			   *per_cpu_ptr(&pcpw_static, cpu),
			   *per_cpu_ptr(pcpw_dynamic, cpu),
			   (u8)per_cpu_ptr(pcpw_small, cpu)->b,
			   (u16)per_cpu_ptr(pcpw_small, cpu)->h);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpw_cpus);

static int __init pcpw_test_init(void)
{
	pcpw_dynamic = alloc_percpu(u64);
	if (!pcpw_dynamic)
		return -ENOMEM;
	pcpw_small = alloc_percpu(struct pcpw_small);
	if (!pcpw_small) {
		free_percpu(pcpw_dynamic);
		return -ENOMEM;
	}
	pcpw_dir = debugfs_create_dir("pcpw_test", NULL);
	debugfs_create_file("inc", 0200, pcpw_dir, NULL, &pcpw_inc_fops);
	debugfs_create_file("sum", 0400, pcpw_dir, NULL, &pcpw_sum_fops);
	debugfs_create_file("cpus", 0400, pcpw_dir, NULL, &pcpw_cpus_fops);
	debugfs_create_file("churn", 0200, pcpw_dir, NULL, &pcpw_churn_fops);
	debugfs_create_file("hold", 0200, pcpw_dir, NULL, &pcpw_hold_fops);
	return 0;
}

static void __exit pcpw_test_exit(void)
{
	debugfs_remove_recursive(pcpw_dir);
	pcpw_hold_free();
	free_percpu(pcpw_small);
	free_percpu(pcpw_dynamic);
}

module_init(pcpw_test_init);
module_exit(pcpw_test_exit);
MODULE_DESCRIPTION("this_cpu window selftest helper");
MODULE_LICENSE("GPL");

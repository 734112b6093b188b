// SPDX-License-Identifier: GPL-2.0
/*
 * Helper module for the percpu_pgtable selftests.
 *
 * Loaded without parameters it records the CPU and node its init
 * function runs on, so a test can check that a module loaded from a CPU
 * of every node really ran there.
 *
 * Loaded with touch_phys= and touch_size= (a range of hot-added memory,
 * onlined movable and still free), it allocates the whole range and
 * then, on the first online CPU of every node in turn, reads the
 * struct page of every page (vmemmap) and reads back and rewrites a
 * stamp in the page itself (linear map).  Both accesses translate
 * through the per-CPU kernel page table of the CPU doing them, so a
 * table that lacks the entries hot-add created faults here, and a stamp
 * that does not match the previous node's proves the CPUs do not reach
 * the same memory.  init fails with -EIO on any mismatch.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

static int init_cpu = -1;
module_param(init_cpu, int, 0444);
MODULE_PARM_DESC(init_cpu, "CPU the init function ran on (read-only)");

static int init_node = NUMA_NO_NODE;
module_param(init_node, int, 0444);
MODULE_PARM_DESC(init_node, "node of that CPU (read-only)");

static unsigned long touch_phys;
module_param(touch_phys, ulong, 0444);
MODULE_PARM_DESC(touch_phys, "physical start of a free movable range to touch from every node");

static unsigned long touch_size;
module_param(touch_size, ulong, 0444);
MODULE_PARM_DESC(touch_size, "size in bytes of that range (0: do not touch)");

struct pcpt_touch {
	unsigned long start_pfn;
	unsigned long nr_pages;
	u64 prev;		/* stamp the previous node wrote, 0: none */
	u64 stamp;		/* stamp this node writes */
	unsigned long bad_page;
	unsigned long bad_stamp;
};

/* Runs on a kworker bound to one CPU, so on that CPU's kernel table. */
static long pcpt_touch_on_cpu(void *data)
{
	struct pcpt_touch *t = data;
	unsigned long i;

	for (i = 0; i < t->nr_pages; i++) {
		unsigned long pfn = t->start_pfn + i;
		struct page *page = pfn_to_page(pfn);
		u64 *p;

		if (page_to_pfn(page) != pfn || page_ref_count(page) != 1) {
			t->bad_page++;
			continue;
		}
		p = page_address(page);
		if (t->prev && READ_ONCE(*p) != (t->prev ^ pfn))
			t->bad_stamp++;
		WRITE_ONCE(*p, t->stamp ^ pfn);
		if (!(i % 1024))
			cond_resched();
	}
	return 0;
}

static int pcpt_touch_range(void)
{
	struct pcpt_touch t = { };
	int node, ret;

	if (!PAGE_ALIGNED(touch_phys) || !PAGE_ALIGNED(touch_size)) {
		pr_err("touch_phys=%#lx touch_size=%#lx: both must be page aligned\n",
		       touch_phys, touch_size);
		return -EINVAL;
	}
	t.start_pfn = PHYS_PFN(touch_phys);
	t.nr_pages = touch_size >> PAGE_SHIFT;
	if (!pfn_valid(t.start_pfn) || !pfn_valid(t.start_pfn + t.nr_pages - 1)) {
		pr_err("touch range %#lx+%#lx is not memory the kernel knows\n",
		       touch_phys, touch_size);
		return -EINVAL;
	}
	ret = alloc_contig_range(t.start_pfn, t.start_pfn + t.nr_pages,
				 MIGRATE_MOVABLE, GFP_KERNEL);
	if (ret) {
		pr_err("cannot allocate %#lx+%#lx: %d\n", touch_phys, touch_size, ret);
		return ret;
	}

	/* The CPU picked for a node stays online (the soak unplugs CPUs). */
	cpus_read_lock();
	for_each_online_node(node) {
		int cpu = cpumask_first_and(cpumask_of_node(node), cpu_online_mask);

		if (cpu >= nr_cpu_ids)
			continue;
		t.stamp = 0x5043505400000000ULL | ((u64)cpu << 16) | node;
		work_on_cpu(cpu, pcpt_touch_on_cpu, &t);
		pr_info("touched %lu pages at %#lx from cpu %d node %d: %lu bad struct pages, %lu bad stamps\n",
			t.nr_pages, touch_phys, cpu, node, t.bad_page, t.bad_stamp);
		t.prev = t.stamp;
		if (t.bad_page || t.bad_stamp)
			break;
	}
	cpus_read_unlock();
	free_contig_range(t.start_pfn, t.nr_pages);
	return t.bad_page || t.bad_stamp ? -EIO : 0;
}

static int __init pcpt_test_mod_init(void)
{
	/* insmod is pinned to one CPU, so the values cannot go stale. */
	init_cpu = raw_smp_processor_id();
	init_node = cpu_to_node(init_cpu);
	pr_info("loaded on cpu %d node %d\n", init_cpu, init_node);
	return touch_size ? pcpt_touch_range() : 0;
}

static void __exit pcpt_test_mod_exit(void)
{
}

module_init(pcpt_test_mod_init);
module_exit(pcpt_test_mod_exit);
MODULE_DESCRIPTION("percpu_pgtable selftest helper module");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal module for the percpu_pgtable selftests: records the CPU and
 * node its init function runs on, so a test can check that a module
 * loaded from a CPU of every node really ran there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/smp.h>
#include <linux/topology.h>

static int init_cpu = -1;
module_param(init_cpu, int, 0444);
MODULE_PARM_DESC(init_cpu, "CPU the init function ran on (read-only)");

static int init_node = NUMA_NO_NODE;
module_param(init_node, int, 0444);
MODULE_PARM_DESC(init_node, "node of that CPU (read-only)");

static int __init pcpt_test_mod_init(void)
{
	/* insmod is pinned to one CPU, so the values cannot go stale. */
	init_cpu = raw_smp_processor_id();
	init_node = cpu_to_node(init_cpu);
	pr_info("loaded on cpu %d node %d\n", init_cpu, init_node);
	return 0;
}

static void __exit pcpt_test_mod_exit(void)
{
}

module_init(pcpt_test_mod_init);
module_exit(pcpt_test_mod_exit);
MODULE_DESCRIPTION("percpu_pgtable selftest helper module");
MODULE_LICENSE("GPL");

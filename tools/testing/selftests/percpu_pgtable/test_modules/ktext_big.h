/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Body of the ktext_big* helper modules: a function of 256 KiB of text (a
 * NOP sled ending in a little arithmetic) that init runs, so that loading
 * one executes all of its text on the CPU insmod runs on.  init fails with
 * -EIO if the result is not the one computed without the sled.  Writing
 * to the "run" parameter runs it again on the writer's CPU (the bench's
 * fetch locality workload: a module loaded on one node, run on all).
 *
 * Several modules are built from this body (ktext_big0.c ...) so that a
 * test can load them in parallel.
 */
#include <linux/module.h>
#include <linux/types.h>

static noinline u64 ktb_sled(u64 x)
{
	asm volatile(".rept 65536\n\tnop\n\t.endr" : : : "memory");
	return x * 3 + 1;
}

static int ktb_check(void)
{
	u64 seed = 0x9e3779b97f4a7c15ULL;

	if (ktb_sled(seed) != seed * 3 + 1) {
		pr_err("%s: its text computes %llx, expected %llx\n",
		       KBUILD_MODNAME, ktb_sled(seed), seed * 3 + 1);
		return -EIO;
	}
	return 0;
}

static int ktb_run_set(const char *val, const struct kernel_param *kp)
{
	return ktb_check();
}

static const struct kernel_param_ops ktb_run_ops = {
	.set = ktb_run_set,
};
module_param_cb(run, &ktb_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write anything: run the module's text on this CPU");

static int __init ktb_init(void)
{
	return ktb_check();
}

static void __exit ktb_exit(void)
{
}

module_init(ktb_init);
module_exit(ktb_exit);
MODULE_DESCRIPTION("Large-text module for the text replication load stress");
MODULE_LICENSE("GPL");

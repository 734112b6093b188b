// SPDX-License-Identifier: GPL-2.0
/*
 * Helper module for the text replication selftests: tries to write the
 * kernel's text and rodata, and the linear-map alias of a node's copy of
 * them, from the CPU insmod runs on.  Every write must fault.
 *
 * Each target byte is read first and the same value written back, so a
 * write that wrongly succeeds changes nothing.  The writes use
 * the kernel's fault fixup (as copy_to_kernel_nofault() does), so a
 * fault is reported instead of oopsing.
 * init fails with -EPERM if any write went through, after printing which.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/smp.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

static unsigned long text;
module_param(text, ulong, 0444);
MODULE_PARM_DESC(text, "a kernel text address (from /proc/kallsyms)");

static unsigned long rodata;
module_param(rodata, ulong, 0444);
MODULE_PARM_DESC(rodata, "a kernel rodata address (from /proc/kallsyms)");

static unsigned long copy_pa;
module_param(copy_pa, ulong, 0444);
MODULE_PARM_DESC(copy_pa, "physical address inside a node's copy (0: none)");

static int faulted;
module_param(faulted, int, 0444);
MODULE_PARM_DESC(faulted, "how many of the writes faulted (read-only)");

/* Write one byte with the fault fixed up, as copy_to_kernel_nofault() does. */
static bool ktext_write_faults(void *addr, u8 val)
{
	pagefault_disable();
	__put_kernel_nofault(addr, &val, u8, fault);
	pagefault_enable();
	return false;
fault:
	pagefault_enable();
	return true;
}

static int ktext_try(const char *what, void *addr)
{
	u8 val;

	if (copy_from_kernel_nofault(&val, addr, 1)) {
		pr_err("cpu%d node %d: %s at %pS: cannot even be read\n",
		       raw_smp_processor_id(), numa_node_id(), what, addr);
		return -EIO;
	}
	if (ktext_write_faults(addr, val)) {
		pr_info("cpu%d node %d: write to %s at %pS faulted\n",
			raw_smp_processor_id(), numa_node_id(), what, addr);
		faulted++;
		return 0;
	}
	pr_err("cpu%d node %d: write to %s at %pS went through\n",
	       raw_smp_processor_id(), numa_node_id(), what, addr);
	return -EPERM;
}

static int __init ktext_test_init(void)
{
	int ret = 0, err;

	if (text) {
		err = ktext_try("text", (void *)text);
		ret = ret ?: err;
	}
	if (rodata) {
		err = ktext_try("rodata", (void *)rodata);
		ret = ret ?: err;
	}
	if (rodata) {
		err = ktext_try("rodata's linear alias",
				phys_to_virt(virt_to_phys(lm_alias((void *)rodata))));
		ret = ret ?: err;
	}
	if (copy_pa) {
		err = ktext_try("the node copy's linear alias",
				phys_to_virt(copy_pa));
		ret = ret ?: err;
	}
	return ret;
}

static void __exit ktext_test_exit(void)
{
}

module_init(ktext_test_init);
module_exit(ktext_test_exit);
MODULE_DESCRIPTION("Write-protection checks for replicated kernel text");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * Helper module for the text replication selftests: tries to write the
 * kernel's text and rodata, and the linear-map alias of a node's copy of
 * them, from the CPU insmod runs on, and its own text and rodata and the
 * linear alias of the memory this CPU translates its own text to (which
 * it reports, so a test can check that memory's node).  Every write must
 * fault.
 *
 * For the patching test, debugfs ktext_test/call runs ktext_test_call(),
 * a function of this module's text with a static branch, on the reader's
 * CPU and says which way the branch went; writing 1 or 0 to
 * ktext_test/key flips the static key.
 *
 * Each target byte is read first and the same value written back, so a
 * write that wrongly succeeds changes nothing.  The writes use
 * the kernel's fault fixup (as copy_to_kernel_nofault() does), so a
 * fault is reported instead of oopsing.
 * init fails with -EPERM if any write went through, after printing which.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/io.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/smp.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#include <asm/sysreg.h>

static unsigned long text;
module_param(text, ulong, 0444);
MODULE_PARM_DESC(text, "a kernel text address (from /proc/kallsyms)");

static unsigned long rodata;
module_param(rodata, ulong, 0444);
MODULE_PARM_DESC(rodata, "a kernel rodata address (from /proc/kallsyms)");

static unsigned long copy_pa;
module_param(copy_pa, ulong, 0444);
MODULE_PARM_DESC(copy_pa, "physical address inside a node's copy (0: none)");

static unsigned long self_pa;
module_param(self_pa, ulong, 0444);
MODULE_PARM_DESC(self_pa, "physical address this CPU maps the module's text to (read-only)");

static const char ktext_self_rodata[] = "ktext_test_mod rodata";

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

/*
 * What this CPU's own table translates @va to (AT S1E1R, as the MMU
 * would for a read), or 0 if it does not.
 */
static phys_addr_t ktext_translate(const void *va)
{
	unsigned long flags;
	u64 par;

	local_irq_save(flags);
	asm volatile("at s1e1r, %0" : : "r" (va));
	isb();
	par = read_sysreg_par();
	local_irq_restore(flags);
	if (par & SYS_PAR_EL1_F)
		return 0;
	return (par & SYS_PAR_EL1_PA) | offset_in_page(va);
}

static DEFINE_STATIC_KEY_FALSE(ktext_test_key);
static struct dentry *ktext_test_dir;

/* Module text the tests patch (static branch, ftrace, kprobes) and run. */
static noinline int ktext_test_call(void)
{
	if (static_branch_unlikely(&ktext_test_key))
		return 1;
	return 0;
}

static ssize_t ktext_call_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char buf[48];
	int len, cpu, key;

	cpu = get_cpu();
	key = ktext_test_call();
	put_cpu();
	len = scnprintf(buf, sizeof(buf), "cpu%d node %d key %d\n", cpu,
			cpu_to_node(cpu), key);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t ktext_key_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret) {
		pr_err("key: write 0 or 1\n");
		return ret;
	}
	if (on)
		static_branch_enable(&ktext_test_key);
	else
		static_branch_disable(&ktext_test_key);
	return count;
}

static const struct file_operations ktext_call_fops = {
	.read = ktext_call_read,
};

static const struct file_operations ktext_key_fops = {
	.write = ktext_key_write,
};

static int __init ktext_test_init(void)
{
	int ret = 0, err;

	/* Runs from init text: its core text and rodata are final. */
	err = ktext_try("own text", (void *)ktext_translate);
	ret = ret ?: err;
	err = ktext_try("own rodata", (void *)ktext_self_rodata);
	ret = ret ?: err;
	self_pa = ktext_translate(ktext_translate);
	if (!self_pa || !pfn_valid(PHYS_PFN(self_pa))) {
		pr_err("cpu%d: own text at %pS translates to %#lx\n",
		       raw_smp_processor_id(), ktext_translate, self_pa);
		return -EIO;
	}
	err = ktext_try("own text's linear alias", phys_to_virt(self_pa));
	ret = ret ?: err;

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
	if (ret)
		return ret;

	ktext_test_dir = debugfs_create_dir("ktext_test", NULL);
	debugfs_create_file("call", 0400, ktext_test_dir, NULL, &ktext_call_fops);
	debugfs_create_file("key", 0200, ktext_test_dir, NULL, &ktext_key_fops);
	return 0;
}

static void __exit ktext_test_exit(void)
{
	debugfs_remove_recursive(ktext_test_dir);
}

module_init(ktext_test_init);
module_exit(ktext_test_exit);
MODULE_DESCRIPTION("Write-protection checks for replicated kernel text");
MODULE_LICENSE("GPL");

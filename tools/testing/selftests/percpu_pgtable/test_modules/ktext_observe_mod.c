// SPDX-License-Identifier: GPL-2.0
/*
 * Observer for the text replication selftests.  Nothing here uses the
 * text replica's bookkeeping, so a test can check the feature against
 * what the CPUs really see.
 *
 * debugfs ktext_observe/view: write "image START END [CPUS]" (the pages
 * holding [START, END) of the kernel image) or "module ADDR [CPUS]" (the
 * pages from the one holding ADDR up to the first page the master does
 * not map: one module memory allocation, ended by its guard page), with
 * kernel virtual addresses as /proc/kallsyms prints them and CPUS a
 * cpulist (default: every online CPU); then read it.  Each CPU reads the
 * range page by page through its own translation, on that CPU, and
 * compares it with the master's bytes: for the image, the linear alias of
 * the image's load address (kimage_voffset); for module memory, the page
 * init_mm's table maps (vmalloc_to_page()).  AT S1E1R gives the physical
 * address the CPU's table maps each page to, and the node of that memory
 * is counted.  One line per CPU:
 *
 *   cpuN node M: P pages, D differ, U unmapped, pa nodes: A:n B:m
 *
 * D counts pages whose bytes differ (still, when both are read again: a
 * patch may land between the reads), or that one side maps and the other
 * does not; U counts image pages neither side maps.  The caller keeps a
 * module it views loaded: the reads fault safely, but the comparison of
 * a module that goes away means nothing.
 *
 * debugfs ktext_observe/peek: write "ADDR LEN [BEFORE]" (LEN up to 64),
 * read: the LEN bytes from BEFORE (default 0) bytes below ADDR, as each
 * online CPU reads them through its own table.  BEFORE spares the shell
 * arithmetic on kernel addresses: "ADDR 16 8" shows the literal arm64
 * keeps 8 bytes before a function's entry for ftrace, and the entry.
 *
 * debugfs ktext_observe/count: write a function name, and an ftrace_ops
 * of this module filtered on that function counts its calls per CPU (read
 * gives "cpuN: calls" lines); write "off" to remove it.  It tells a call
 * site that does not reach ftrace from a tracer that drops what reaches it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <asm/sysreg.h>

#define KTEXT_PEEK_MAX	64
#define KTEXT_MODULE_MAX	SZ_128M	/* longest module allocation scanned */

static DEFINE_MUTEX(ktext_lock);	/* the requests below, and count */
static bool ktext_is_image;
static unsigned long ktext_start, ktext_end;
static cpumask_var_t ktext_cpus;
static unsigned long ktext_peek_addr;
static unsigned int ktext_peek_len;

static DEFINE_PER_CPU(unsigned long, ktext_calls);
static bool ktext_counting;

static struct dentry *ktext_dir;

/* Where this CPU's own table maps @va (AT S1E1R), or 0 if nowhere. */
static phys_addr_t ktext_translate(unsigned long va)
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

/* The master's bytes of the page at @va, in the linear map, or NULL. */
static const void *ktext_master(unsigned long va)
{
	struct page *page;

	if (ktext_is_image) {
		/* Not __pa_symbol(): a bad range must not BUG. */
		phys_addr_t pa = __kimg_to_phys(va);

		return pfn_valid(PHYS_PFN(pa)) ? __va(pa) : NULL;
	}
	page = vmalloc_to_page((void *)va);
	return page ? page_address(page) : NULL;
}

struct ktext_view {
	unsigned long pages, differ, unmapped, first_bad;
	unsigned long *on_node;		/* nr_node_ids + 1: the last is "no node" */
	u8 *mine, *master;
};

static long ktext_view_cpu(void *data)
{
	struct ktext_view *v = data;
	unsigned long va;

	for (va = ktext_start; va < ktext_end; va += PAGE_SIZE) {
		const void *m = ktext_master(va);
		bool have_m = m && !copy_from_kernel_nofault(v->master, m, PAGE_SIZE);
		bool have = !copy_from_kernel_nofault(v->mine, (void *)va, PAGE_SIZE);
		phys_addr_t pa = ktext_translate(va);
		int nid = nr_node_ids;

		/* A module allocation ends where the master maps nothing. */
		if (!ktext_is_image && !m) {
			if (have) {
				v->first_bad = v->differ ? v->first_bad : va;
				v->differ++;
			}
			break;
		}
		if (!have && !have_m) {
			v->unmapped++;
			cond_resched();
			continue;
		}
		v->pages++;
		/*
		 * A patch may land between the two reads: only a difference
		 * that is still there when both are read again counts.
		 */
		if (have && have_m && memcmp(v->mine, v->master, PAGE_SIZE)) {
			have_m = !copy_from_kernel_nofault(v->master, m, PAGE_SIZE);
			have = !copy_from_kernel_nofault(v->mine, (void *)va, PAGE_SIZE);
		}
		if (have != have_m || memcmp(v->mine, v->master, PAGE_SIZE)) {
			if (!v->differ)
				v->first_bad = va;
			v->differ++;
		}
		if (pa && pfn_valid(PHYS_PFN(pa)))
			nid = page_to_nid(pfn_to_page(PHYS_PFN(pa)));
		v->on_node[nid]++;
		cond_resched();
	}
	return 0;
}

static int ktext_view_show(struct seq_file *m, void *unused)
{
	struct ktext_view v = {};
	unsigned int cpu;
	int nid, ret = 0;

	mutex_lock(&ktext_lock);
	if (!ktext_start) {
		seq_puts(m,
			 "no range: write \"image START END [CPUS]\" or \"module ADDR [CPUS]\"\n");
		goto out;
	}
	v.on_node = kcalloc(nr_node_ids + 1, sizeof(*v.on_node), GFP_KERNEL);
	v.mine = kmalloc(PAGE_SIZE, GFP_KERNEL);
	v.master = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!v.on_node || !v.mine || !v.master) {
		ret = -ENOMEM;
		goto out;
	}
	cpus_read_lock();
	for_each_cpu_and(cpu, ktext_cpus, cpu_online_mask) {
		v.pages = 0;
		v.differ = 0;
		v.unmapped = 0;
		v.first_bad = 0;
		memset(v.on_node, 0, (nr_node_ids + 1) * sizeof(*v.on_node));
		work_on_cpu(cpu, ktext_view_cpu, &v);
		seq_printf(m, "cpu%u node %d: %lu pages, %lu differ, %lu unmapped, pa nodes:",
			   cpu, cpu_to_node(cpu), v.pages, v.differ, v.unmapped);
		for (nid = 0; nid < nr_node_ids; nid++)
			if (v.on_node[nid])
				seq_printf(m, " %d:%lu", nid, v.on_node[nid]);
		if (v.on_node[nr_node_ids])
			seq_printf(m, " none:%lu", v.on_node[nr_node_ids]);
		if (v.differ)
			seq_printf(m, ", first at %#lx", v.first_bad);
		seq_putc(m, '\n');
	}
	cpus_read_unlock();
out:
	mutex_unlock(&ktext_lock);
	kfree(v.on_node);
	kfree(v.mine);
	kfree(v.master);
	return ret;
}

static int ktext_view_open(struct inode *inode, struct file *file)
{
	return single_open(file, ktext_view_show, NULL);
}

static ssize_t ktext_view_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char buf[160], kind[8], cpus[128] = "";
	unsigned long start, end = 0;
	cpumask_var_t mask;
	bool image;
	int n, ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	n = sscanf(buf, "%7s %lx", kind, &start);
	image = n == 2 && !strcmp(kind, "image");
	if (image)
		n = sscanf(buf, "%7s %lx %lx %127s", kind, &start, &end, cpus) - 1;
	else if (n == 2 && !strcmp(kind, "module"))
		n = sscanf(buf, "%7s %lx %127s", kind, &start, cpus);
	else
		n = 0;
	/* vmalloc_to_page() is for vmalloc and module addresses only. */
	if (n < 2 || start < PAGE_OFFSET || (image && start >= end) ||
	    (!image && !is_vmalloc_or_module_addr((void *)start))) {
		pr_err("view: write \"image START END [CPUS]\" or \"module ADDR [CPUS]\", kernel addresses\n");
		return -EINVAL;
	}
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	ret = 0;
	if (n == 3 && (strlen(cpus) == sizeof(cpus) - 1 || cpulist_parse(cpus, mask)))
		ret = -EINVAL;
	else if (n == 2)
		cpumask_setall(mask);
	if (ret) {
		pr_err("view: CPUS must be a cpulist (e.g. 0-3,7) of fewer than %zu characters\n",
		       sizeof(cpus) - 1);
		goto out;
	}
	mutex_lock(&ktext_lock);
	cpumask_copy(ktext_cpus, mask);
	ktext_is_image = image;
	ktext_start = PAGE_ALIGN_DOWN(start);
	ktext_end = image ? PAGE_ALIGN(end) : ktext_start + KTEXT_MODULE_MAX;
	mutex_unlock(&ktext_lock);
out:
	free_cpumask_var(mask);
	return ret ?: count;
}

static const struct file_operations ktext_view_fops = {
	.open = ktext_view_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ktext_view_write,
};

static long ktext_peek_cpu(void *data)
{
	return copy_from_kernel_nofault(data, (void *)ktext_peek_addr,
					ktext_peek_len);
}

static int ktext_peek_show(struct seq_file *m, void *unused)
{
	u8 bytes[KTEXT_PEEK_MAX];
	unsigned int cpu;

	mutex_lock(&ktext_lock);
	if (!ktext_peek_len) {
		seq_puts(m, "no address: write \"ADDR LEN [BEFORE]\"\n");
		goto out;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (work_on_cpu(cpu, ktext_peek_cpu, bytes))
			seq_printf(m, "cpu%u: cannot read %#lx\n", cpu, ktext_peek_addr);
		else
			seq_printf(m, "cpu%u: %*phN\n", cpu, ktext_peek_len, bytes);
	}
	cpus_read_unlock();
out:
	mutex_unlock(&ktext_lock);
	return 0;
}

static int ktext_peek_open(struct inode *inode, struct file *file)
{
	return single_open(file, ktext_peek_show, NULL);
}

static ssize_t ktext_peek_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned long addr, before = 0;
	unsigned int len;
	char buf[64];
	int n;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	n = sscanf(buf, "%lx %u %lu", &addr, &len, &before);
	if (n < 2 || !len || len > KTEXT_PEEK_MAX || before > PAGE_SIZE ||
	    addr - before < PAGE_OFFSET) {
		pr_err("peek: write \"ADDR LEN [BEFORE]\": a kernel address, 1..%d, 0..%lu\n",
		       KTEXT_PEEK_MAX, PAGE_SIZE);
		return -EINVAL;
	}
	mutex_lock(&ktext_lock);
	ktext_peek_addr = addr - before;
	ktext_peek_len = len;
	mutex_unlock(&ktext_lock);
	return count;
}

static const struct file_operations ktext_peek_fops = {
	.open = ktext_peek_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ktext_peek_write,
};

static void notrace ktext_count_call(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ftrace_regs *fregs)
{
	this_cpu_inc(ktext_calls);
}

static struct ftrace_ops ktext_count_ops = {
	.func = ktext_count_call,
};

static int ktext_count_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		seq_printf(m, "cpu%u: %lu\n", cpu, per_cpu(ktext_calls, cpu));
	return 0;
}

static int ktext_count_open(struct inode *inode, struct file *file)
{
	return single_open(file, ktext_count_show, NULL);
}

static ssize_t ktext_count_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char buf[KSYM_NAME_LEN], *name;
	unsigned int cpu;
	int ret = 0;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	name = strim(buf);
	if (!name[0]) {
		pr_err("count: write a function name, or \"off\"\n");
		return -EINVAL;
	}
	mutex_lock(&ktext_lock);
	if (ktext_counting) {
		unregister_ftrace_function(&ktext_count_ops);
		ktext_counting = false;
	}
	if (strcmp(name, "off")) {
		for_each_possible_cpu(cpu)
			per_cpu(ktext_calls, cpu) = 0;
		ret = ftrace_set_filter(&ktext_count_ops, name, strlen(name), 1);
		if (!ret)
			ret = register_ftrace_function(&ktext_count_ops);
		if (ret)
			pr_err("count: cannot trace %s: %d\n", name, ret);
		ktext_counting = !ret;
	}
	mutex_unlock(&ktext_lock);
	return ret ?: count;
}

static const struct file_operations ktext_count_fops = {
	.open = ktext_count_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ktext_count_write,
};

static int __init ktext_observe_init(void)
{
	if (!zalloc_cpumask_var(&ktext_cpus, GFP_KERNEL))
		return -ENOMEM;
	ktext_dir = debugfs_create_dir("ktext_observe", NULL);
	debugfs_create_file("view", 0600, ktext_dir, NULL, &ktext_view_fops);
	debugfs_create_file("peek", 0600, ktext_dir, NULL, &ktext_peek_fops);
	debugfs_create_file("count", 0600, ktext_dir, NULL, &ktext_count_fops);
	return 0;
}

static void __exit ktext_observe_exit(void)
{
	debugfs_remove_recursive(ktext_dir);
	if (ktext_counting)
		unregister_ftrace_function(&ktext_count_ops);
	ftrace_free_filter(&ktext_count_ops);
	free_cpumask_var(ktext_cpus);
}

module_init(ktext_observe_init);
module_exit(ktext_observe_exit);
MODULE_DESCRIPTION("What each CPU sees of replicated text, independently of the feature");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark helper for 'make bench', built against each kernel and loaded
 * into that kernel (nothing here depends on our options):
 *
 *  - ns per this_cpu_inc()/this_cpu_read() in a loop;
 *  - the cost of a vmalloc()/vfree() pair whose allocation needs a new
 *    kernel top-level page table entry, the write the per-CPU kernel page
 *    tables fan out to every CPU's copy;
 *  - with loops=0, only the module's debugfs files, for the path-length
 *    bench (the module stays loaded then): vmalloc_new_top, each write of
 *    which makes one such pair in the next empty slot; vmemmap_top,
 *    each write of which makes a top-level entry and clears it again
 *    (4K pages only); and pcpt_bench_key, each write of which turns a
 *    static key with one site in this module's text on and off again.
 *
 * vfree() does not free page tables, so a top-level entry, once written,
 * stays: every "new" iteration therefore allocates in a different
 * top-level slot of the vmalloc range that was empty when the module was
 * loaded, and leaves behind one table page per level below the root (a
 * few hundred KiB for the default iteration count; this module is for
 * throw-away benchmark guests).  The "old" iterations allocate again in
 * the slots just used, so the difference between the two is the cost of
 * the top-level write and the tables below it.
 *
 * A top-level entry is only ever cleared by memory hot-remove:
 * vmemmap_top does what hot-add and hot-remove do to the vmemmap, with
 * vmemmap_populate() and vmemmap_free() for one page in a top-level slot
 * that is empty, under mem_hotplug_begin().  vmemmap_free() frees the
 * emptied tables up to the root, so every write uses the same slot.  One
 * page of struct pages is less than a section's, so this takes the base
 * page path (a PTE table and a page) where hot-add of a section maps PMD
 * blocks with 4K pages; the top-level write is the same.  With 64K pages
 * the whole vmemmap lies in one top-level slot, which the boot memory's
 * struct pages already use: the write fails (-ENOSPC).
 *
 * __vmalloc_node_range() and the hotplug functions are not exported;
 * their addresses come from a kprobe registration, which resolves symbol
 * names for modules.  Nor is
 * init_mm: the root is read from TTBR1, which holds swapper_pg_dir or,
 * with per-CPU tables, a copy identical in every shared entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <asm/sysreg.h>

static unsigned int iters = 64;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "vmalloc/vfree pairs per measurement, one empty top-level slot each (1-256)");
static bool loops = true;
module_param(loops, bool, 0444);
MODULE_PARM_DESC(loops, "time the loops at load (default); 0: only the debugfs files");

typedef void *(*vmalloc_range_fn)(unsigned long size, unsigned long align,
				  unsigned long start, unsigned long end,
				  gfp_t gfp_mask, pgprot_t prot,
				  unsigned long vm_flags, int node,
				  const void *caller);

#define SLOT_SIZE	BIT(PGDIR_SHIFT)

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Time one vmalloc()+vfree() of a page in [start, start + SLOT_SIZE). */
static u64 one_pair(vmalloc_range_fn fn, unsigned long start, bool *failed)
{
	u64 t0 = ktime_get_ns();
	void *p = fn(PAGE_SIZE, PAGE_SIZE, start, start + SLOT_SIZE, GFP_KERNEL,
		     PAGE_KERNEL, 0, NUMA_NO_NODE, __builtin_return_address(0));

	if (!p) {
		*failed = true;
		return 0;
	}
	WRITE_ONCE(*(char *)p, 1);	/* the mapping must really work */
	vfree(p);
	return ktime_get_ns() - t0;
}

/*
 * The first whole slot strictly inside the vmalloc range that is empty
 * at the root at or after @addr, or 0.  Roots are page aligned: the page
 * mask drops ASID, CnP and the offset a 52-bit VA kernel adds without
 * LVA (the bench runs with 48-bit physical addresses, so TTBR bits [5:2]
 * hold none).
 */
static unsigned long empty_slot(unsigned long addr)
{
	pgd_t *root = phys_to_virt(read_sysreg(ttbr1_el1) & GENMASK_ULL(47, PAGE_SHIFT));

	for (addr = max(addr, ALIGN(VMALLOC_START, SLOT_SIZE));
	     addr && addr <= VMALLOC_END - SLOT_SIZE; addr += SLOT_SIZE)
		if (!pgd_val(READ_ONCE(root[pgd_index(addr)])))
			return addr;
	return 0;
}

static vmalloc_range_fn vmalloc_range;
static unsigned long next_slot;
static DEFINE_MUTEX(new_top_lock);
static struct dentry *new_top_file;

/* Each write: one vmalloc()+vfree() that creates a top-level entry. */
static ssize_t new_top_write(struct file *file, const char __user *buf,
			     size_t count, loff_t *ppos)
{
	bool failed = false;
	int ret = count;

	mutex_lock(&new_top_lock);
	next_slot = empty_slot(next_slot);
	if (!next_slot) {
		ret = -ENOSPC;
	} else {
		one_pair(vmalloc_range, next_slot, &failed);
		if (failed)
			ret = -ENOMEM;
		next_slot += SLOT_SIZE;
	}
	mutex_unlock(&new_top_lock);
	return ret;
}

static const struct file_operations new_top_fops = {
	.write = new_top_write,
};

/*
 * A key whose one site is in this module's text: with replication, every
 * node's copy of that text is written at each toggle, as for any module.
 * Beside the debugfs write and this mutex, a toggle is jump_label_update()
 * and its kick_all_cpus_sync(), where the tracepoint key of the
 * static_key operation adds tracepoint registration and its RCU grace
 * periods, whose length moves between boots.  The check below sees only
 * the copy the writing CPU runs: a node copy left unpatched would show
 * in the kernel_replication_arch KUnit suite, not here.
 */
static DEFINE_STATIC_KEY_FALSE(pcpt_bench_key);
static unsigned long pcpt_bench_key_hits;
static DEFINE_MUTEX(key_lock);
static struct dentry *key_file;

static noinline void pcpt_bench_key_site(void)
{
	if (static_branch_unlikely(&pcpt_bench_key))
		pcpt_bench_key_hits++;
}

/* Each write: the key on and off; the site must have run both ways. */
static ssize_t key_write(struct file *file, const char __user *buf,
			 size_t count, loff_t *ppos)
{
	unsigned long hits;
	int ret = count;

	mutex_lock(&key_lock);
	hits = pcpt_bench_key_hits;
	static_branch_enable(&pcpt_bench_key);
	pcpt_bench_key_site();
	static_branch_disable(&pcpt_bench_key);
	pcpt_bench_key_site();
	if (pcpt_bench_key_hits != hits + 1)
		ret = -EIO;
	mutex_unlock(&key_lock);
	return ret;
}

static const struct file_operations key_fops = {
	.write = key_write,
};

struct vmem_altmap;
static int (*vmemmap_populate_fn)(unsigned long start, unsigned long end, int node,
				  struct vmem_altmap *altmap);
static void (*vmemmap_free_fn)(unsigned long start, unsigned long end,
			       struct vmem_altmap *altmap);
static void (*mem_hotplug_begin_fn)(void);
static void (*mem_hotplug_done_fn)(void);
static struct dentry *vmemmap_file;

static bool root_entry_none(unsigned long addr)
{
	pgd_t *root = phys_to_virt(read_sysreg(ttbr1_el1) & GENMASK_ULL(47, PAGE_SHIFT));

	return !pgd_val(READ_ONCE(root[pgd_index(addr)]));
}

/*
 * Each write: a top-level entry of the vmemmap made and cleared.  The
 * entry must be in this CPU's root in between and gone from it after.
 */
static ssize_t vmemmap_write(struct file *file, const char __user *buf,
			     size_t count, loff_t *ppos)
{
	unsigned long addr;
	int ret;

	mem_hotplug_begin_fn();
	/* ALIGN() wraps to 0 when the vmemmap lies inside the top slot. */
	for (addr = ALIGN(VMEMMAP_START, SLOT_SIZE);
	     addr && addr <= VMEMMAP_END - SLOT_SIZE; addr += SLOT_SIZE)
		if (root_entry_none(addr))
			break;
	if (!addr || addr > VMEMMAP_END - SLOT_SIZE) {
		ret = -ENOSPC;
		goto out;
	}
	ret = vmemmap_populate_fn(addr, addr + PAGE_SIZE, numa_node_id(), NULL);
	if (ret) {
		/* It may have failed below a root entry it wrote: undo it. */
		vmemmap_free_fn(addr, addr + PAGE_SIZE, NULL);
		goto out;
	}
	WRITE_ONCE(*(char *)addr, 1);	/* the mapping must really work */
	ret = root_entry_none(addr) ? -EIO : count;
	vmemmap_free_fn(addr, addr + PAGE_SIZE, NULL);
	if (!root_entry_none(addr))
		ret = -EIO;
out:
	mem_hotplug_done_fn();
	return ret;
}

static const struct file_operations vmemmap_fops = {
	.write = vmemmap_write,
};

/* The address of a function that is not exported, or 0. */
static unsigned long lookup_fn(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	int ret = register_kprobe(&kp);

	if (ret) {
		pr_err("cannot resolve %s: %d\n", name, ret);
		return 0;
	}
	unregister_kprobe(&kp);
	return (unsigned long)kp.addr;
}

static DEFINE_PER_CPU(u64, pcpt_bench_counter);

/*
 * ns per this_cpu op in a loop of @n, preemptible throughout.  Built
 * against each kernel (the ops are inlined), run in that kernel.
 */
static void this_cpu_loops(unsigned long n)
{
	unsigned long i;
	u64 t0, t1, t2, sum = 0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		this_cpu_inc(pcpt_bench_counter);
	t1 = ktime_get_ns();
	for (i = 0; i < n; i++)
		sum += this_cpu_read(pcpt_bench_counter);
	t2 = ktime_get_ns();
	/* Integer ns with two decimals: "12.34". */
	pr_info("this_cpu_inc_ns %llu.%02llu\n", (t1 - t0) / n, (t1 - t0) * 100 / n % 100);
	pr_info("this_cpu_read_ns %llu.%02llu\n", (t2 - t1) / n, (t2 - t1) * 100 / n % 100);
	/* Keep the reads: their sum is known. */
	if (sum == 0)
		pr_err("this_cpu_read loop read nothing\n");
}

static int __init pcpt_bench_init(void)
{
	unsigned long addr, *slots;
	u64 *fresh, *again;
	unsigned int n = 0, i;
	vmalloc_range_fn fn;
	bool failed = false;
	int ret;

	if (!iters || iters > 256) {
		pr_err("iters=%u: accepted 1 to 256\n", iters);
		return -EINVAL;
	}
	fn = (vmalloc_range_fn)lookup_fn("__vmalloc_node_range_noprof");
	if (!fn)
		return -ENOENT;
	if (!loops) {
		vmalloc_range = fn;
		vmemmap_populate_fn = (void *)lookup_fn("vmemmap_populate");
		vmemmap_free_fn = (void *)lookup_fn("vmemmap_free");
		mem_hotplug_begin_fn = (void *)lookup_fn("mem_hotplug_begin");
		mem_hotplug_done_fn = (void *)lookup_fn("mem_hotplug_done");
		if (!vmemmap_populate_fn || !vmemmap_free_fn || !mem_hotplug_begin_fn ||
		    !mem_hotplug_done_fn)
			return -ENOENT;
		new_top_file = debugfs_create_file("vmalloc_new_top", 0200, NULL, NULL,
						   &new_top_fops);
		vmemmap_file = debugfs_create_file("vmemmap_top", 0200, NULL, NULL,
						   &vmemmap_fops);
		key_file = debugfs_create_file("pcpt_bench_key", 0200, NULL, NULL, &key_fops);
		return 0;
	}

	this_cpu_loops(1UL << 22);

	slots = kcalloc(iters, sizeof(*slots), GFP_KERNEL);
	fresh = kcalloc(iters, sizeof(*fresh), GFP_KERNEL);
	again = kcalloc(iters, sizeof(*again), GFP_KERNEL);
	if (!slots || !fresh || !again) {
		ret = -ENOMEM;
		goto out;
	}
	/* Whole slots strictly inside the vmalloc range, empty at the root. */
	for (addr = empty_slot(0); addr && n < iters; addr = empty_slot(addr + SLOT_SIZE))
		slots[n++] = addr;
	if (n < iters) {
		pr_err("only %u empty top-level slots in the vmalloc range, %u wanted\n",
		       n, iters);
		ret = -ENOSPC;
		goto out;
	}
	for (i = 0; i < n && !failed; i++)
		fresh[i] = one_pair(fn, slots[i], &failed);
	for (i = 0; i < n && !failed; i++)
		again[i] = one_pair(fn, slots[i], &failed);
	if (failed) {
		pr_err("vmalloc in a chosen slot failed\n");
		ret = -ENOMEM;
		goto out;
	}
	sort(fresh, n, sizeof(*fresh), cmp_u64, NULL);
	sort(again, n, sizeof(*again), cmp_u64, NULL);
	pr_info("vmalloc_vfree_new_top_entry_ns %llu\n", fresh[n / 2]);
	pr_info("vmalloc_vfree_same_top_entry_ns %llu\n", again[n / 2]);
	/* Results are in the log; refuse to stay loaded. */
	ret = -EAGAIN;
out:
	kfree(again);
	kfree(fresh);
	kfree(slots);
	return ret;
}

module_init(pcpt_bench_init);

static void __exit pcpt_bench_exit(void)
{
	debugfs_remove(key_file);
	debugfs_remove(vmemmap_file);
	debugfs_remove(new_top_file);
}
module_exit(pcpt_bench_exit);
MODULE_DESCRIPTION("Cost of a kernel top-level entry made (and cleared), a static key toggle");
MODULE_LICENSE("GPL");

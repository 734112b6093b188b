// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU kernel page tables: the registry of per-CPU roots, the one
 * propagation point for shared top-level kernel entries, the private-range
 * client interface and the debugfs checks.
 *
 * Ownership and locking (Documentation/mm/percpu-pgtable.rst has the
 * full rules):
 *
 *  - The master root is init_mm.pgd.  Generic mm code writes only the
 *    master; the architecture funnels every write of a master top-level
 *    entry into percpu_pgtable_set_entry() once the copies are live.
 *  - pcpt_roots[cpu] is CPU @cpu's root.  A root is built (copy of the
 *    master, then the clients' private entries) and published under
 *    pcpt_lock, and never freed: CPU hotplug reuses it.
 *  - pcpt_lock (raw, innermost) serialises every write of a top-level
 *    entry, shared or private, in the master and in every copy, and the
 *    client list.  Writers hold it across the master write, the copy
 *    writes and the barrier that publishes them, so a concurrent walker
 *    either misses the new entry on every CPU or finds it (see
 *    percpu_pgtable_set_entry() for the ordering argument).
 *  - Once every root is final for boot (late_initcall_sync), the roots are
 *    made read-only in the linear map where the architecture can (as
 *    rodata=full does for the master's alias), and every later write of a
 *    copy goes through arch_percpu_pgtable_write_ro(), under pcpt_lock.
 */
#define pr_fmt(fmt) "percpu_pgtable: " fmt

#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/percpu_pgtable.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <asm/tlbflush.h>

static bool pcpt_enabled __initdata = true;
/* Set once every root is built; read locklessly by the funnel. */
static bool pcpt_live __read_mostly;
static pgd_t *pcpt_roots[NR_CPUS] __read_mostly;
static DEFINE_RAW_SPINLOCK(pcpt_lock);
static DECLARE_BITMAP(pcpt_private, PTRS_PER_PGD);
static LIST_HEAD(pcpt_clients);
static struct cpumask pcpt_failed;
static unsigned int pcpt_nr_roots;
static size_t pcpt_bytes;
/* Copies are written through the architecture from now on (pcpt_lock). */
static bool pcpt_ro;
/* And their linear-map alias is read-only. */
static bool pcpt_protected;

static int __init percpu_pgtable_param(char *arg)
{
	if (!arg || !strcmp(arg, "on"))
		pcpt_enabled = true;
	else if (!strcmp(arg, "off"))
		pcpt_enabled = false;
	else
		pr_warn("unknown percpu_pgtable=%s (accepted: on, off); using on\n", arg);
	return 0;
}
early_param("percpu_pgtable", percpu_pgtable_param);

#ifdef CONFIG_PERCPU_PGTABLE_KUNIT_TEST
/*
 * Testing aid: percpu_pgtable_testfail=<cpulist> makes the allocation of
 * those CPUs' tables fail, to exercise the fallback to the master.
 */
static struct cpumask pcpt_testfail __initdata;

static int __init percpu_pgtable_testfail_param(char *arg)
{
	if (!arg || cpulist_parse(arg, &pcpt_testfail))
		pr_warn("percpu_pgtable_testfail=%s is not a CPU list (e.g. 1,3-4); ignored\n",
			arg ? arg : "");
	return 0;
}
early_param("percpu_pgtable_testfail", percpu_pgtable_testfail_param);

static bool __init pcpt_test_alloc_fails(unsigned int cpu)
{
	return cpumask_test_cpu(cpu, &pcpt_testfail);
}
#else
static inline bool pcpt_test_alloc_fails(unsigned int cpu)
{
	return false;
}
#endif

/**
 * percpu_pgtable_active() - are CPUs running on per-CPU roots?
 *
 * Return: true once the roots are built and the propagation point is in
 * use; false when the feature is off or before percpu_pgtable_init().
 */
bool percpu_pgtable_active(void)
{
	return READ_ONCE(pcpt_live);
}

/**
 * percpu_pgtable_root() - the root CPU @cpu runs on
 * @cpu: a possible CPU
 *
 * Return: the CPU's own root (a linear-map address), or NULL if it runs on
 * the master because the feature is off or its root could not be allocated.
 */
pgd_t *percpu_pgtable_root(unsigned int cpu)
{
	/* Pairs with smp_store_release() in pcpt_build_root(). */
	return smp_load_acquire(&pcpt_roots[cpu]);
}

static inline unsigned long pcpt_index(unsigned long addr)
{
	return pgd_index(addr);
}

/* Write entry @idx of a copy.  Caller holds pcpt_lock. */
static __always_inline void pcpt_write(pgd_t *root, unsigned long idx, pgd_t pgd)
{
	if (pcpt_ro)
		arch_percpu_pgtable_write_ro(&root[idx], pgd);
	else
		WRITE_ONCE(root[idx], pgd);
}

/**
 * percpu_pgtable_set_entry() - write a shared top-level kernel entry
 * @pgdp: the entry in the master root (init_mm.pgd)
 * @pgd: the new value
 *
 * The one propagation point.  The architecture calls it from its single
 * writer of master root entries (arm64: set_swapper_pgd()), for populates
 * and clears alike.  It writes the master and the same index of every
 * published copy under pcpt_lock, then issues the architecture's barrier
 * (arm64: DSB ISHST; ISB) so that a table walker on any CPU observes the
 * new entry before the caller goes on.
 *
 * Why this is safe against a concurrent walker on another CPU:
 *  - invalid to valid: invalid entries are never cached in TLBs or walk
 *    caches, so the barrier is enough (the same argument the single-root
 *    kernel relies on for vmalloc);
 *  - valid to invalid or to another valid value: the caller already
 *    follows clear/barrier/broadcast TLBI by VA/free (for example
 *    free_empty_tables(), pud_free_pmd_page()).  Every copy is written
 *    before this function returns, so the caller's broadcast TLBI by VA,
 *    which removes walk-cache entries for that VA whichever root they were
 *    read from, comes after the clear in every copy, and the table is
 *    freed only after that.
 *
 * Return: true if the write was done here; false if the per-CPU roots are
 * not in use, in which case the caller writes the master as before.
 */
bool noinstr percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd)
{
	unsigned long idx, flags;
	unsigned int cpu;

	if (!READ_ONCE(pcpt_live))
		return false;

	idx = pgdp - init_mm.pgd;
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	arch_percpu_pgtable_write_master(pgdp, pgd);
	if (WARN_ONCE(idx >= PTRS_PER_PGD || test_bit(idx, pcpt_private),
		      "percpu_pgtable: shared write to private or foreign entry %lu\n", idx))
		goto out;
	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (root)
			pcpt_write(root, idx, pgd);
	}
out:
	arch_percpu_pgtable_sync();
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	return true;
}

/* Write @client's private entries of @cpu's root. */
static void pcpt_populate_client(struct percpu_pgtable_client *client,
				 unsigned int cpu, pgd_t *root)
{
	unsigned long addr;

	lockdep_assert_held(&pcpt_lock);
	for (addr = client->start; addr < client->end; addr += PGDIR_SIZE)
		pcpt_write(root, pcpt_index(addr), client->populate(client, cpu, addr));
}

static void pcpt_populate_private(pgd_t *root, unsigned int cpu)
{
	struct percpu_pgtable_client *client;

	list_for_each_entry(client, &pcpt_clients, list)
		pcpt_populate_client(client, cpu, root);
}

/* Build @cpu's root from the master and publish it. */
static void __init pcpt_build_root(unsigned int cpu, pgd_t *root)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	memcpy(root, init_mm.pgd, PTRS_PER_PGD * sizeof(pgd_t));
	pcpt_populate_private(root, cpu);
	/* Pairs with smp_load_acquire() in percpu_pgtable_root(). */
	smp_store_release(&pcpt_roots[cpu], root);
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
}

/**
 * percpu_pgtable_init() - build a root for every possible CPU
 *
 * Called by the architecture once on the boot CPU, with interrupts
 * disabled and before secondary CPUs are started, after the master is
 * complete for boot and the CPU-to-node map is known (arm64: at the end
 * of setup_arch()).  Each root is allocated on its CPU's node.  A CPU
 * whose root cannot be allocated keeps running on the master, with a
 * warning, and is listed in debugfs.  Finally installs the boot CPU's
 * root.
 */
void __init percpu_pgtable_init(void)
{
	unsigned int cpu;

	if (!pcpt_enabled) {
		pr_info("disabled on the command line; every CPU uses the master table\n");
		return;
	}

	for_each_possible_cpu(cpu) {
		int nid = early_cpu_to_node(cpu);
		size_t bytes = 0;
		pgd_t *root = NULL;

		if (!pcpt_test_alloc_fails(cpu))
			root = arch_percpu_pgtable_alloc(cpu, nid, &bytes);

		if (!root) {
			pr_warn("no memory for CPU%u's table on node %d; it uses the master table\n",
				cpu, nid);
			cpumask_set_cpu(cpu, &pcpt_failed);
			continue;
		}
		pcpt_build_root(cpu, root);
		pcpt_nr_roots++;
		pcpt_bytes += bytes;
	}

	/*
	 * From here on every master write goes through the funnel.  No other
	 * CPU runs yet, so no writer can have seen pcpt_live false and be
	 * writing the master only.
	 */
	WRITE_ONCE(pcpt_live, true);

	cpu = smp_processor_id();
	if (pcpt_roots[cpu])
		arch_percpu_pgtable_install(cpu, pcpt_roots[cpu]);

	pr_info("enabled: %u per-CPU kernel page tables, %zu KiB\n",
		pcpt_nr_roots, pcpt_bytes / SZ_1K);
}

static bool pcpt_range_ok(struct percpu_pgtable_client *client)
{
	return client->populate && client->start < client->end &&
	       IS_ALIGNED(client->start, PGDIR_SIZE) &&
	       IS_ALIGNED(client->end, PGDIR_SIZE) &&
	       client->start >= PAGE_OFFSET;
}

/**
 * percpu_pgtable_register_client() - declare a private top-level range
 * @client: the client, with @name, @start, @end and @populate set
 *
 * Marks the top-level entries of [@start, @end) private: from now on the
 * shared path never writes them in the copies, and @populate fills them in
 * every root, now for the roots that exist and later for any root built
 * afterwards.  The master's entries for the range are left alone.
 *
 * Context: process context; takes pcpt_lock.
 * Return: 0, -EINVAL for a malformed range, -EBUSY if the range overlaps
 * another client's, -ENODEV if per-CPU roots are not in use.
 */
int percpu_pgtable_register_client(struct percpu_pgtable_client *client)
{
	unsigned long first, last, flags;
	unsigned int cpu;
	int ret = 0;

	if (!pcpt_range_ok(client))
		return -EINVAL;
	if (!percpu_pgtable_active())
		return -ENODEV;

	first = pcpt_index(client->start);
	last = pcpt_index(client->end - 1);

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	if (find_next_bit(pcpt_private, last + 1, first) <= last) {
		ret = -EBUSY;
		goto out;
	}
	bitmap_set(pcpt_private, first, last - first + 1);
	list_add_tail(&client->list, &pcpt_clients);
	for_each_possible_cpu(cpu) {
		if (pcpt_roots[cpu])
			pcpt_populate_client(client, cpu, pcpt_roots[cpu]);
	}
	arch_percpu_pgtable_sync();
out:
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	/*
	 * The copies may have held the master's valid entries here (the text
	 * replica takes over the image's slot): no CPU may keep walking
	 * through them.
	 */
	if (!ret)
		flush_tlb_all();
	if (!ret)
		pr_info("client %s: private range %#lx-%#lx (entries %lu-%lu)\n",
			client->name, client->start, client->end, first, last);
	return ret;
}
EXPORT_SYMBOL_GPL(percpu_pgtable_register_client);

/**
 * percpu_pgtable_unregister_client() - give a private range back
 * @client: a registered client
 *
 * Restores the master's entries for the range in every copy, then flushes
 * every TLB and walk cache, so that no CPU keeps walking the client's
 * lower-level tables; the client may free them when this returns.
 *
 * Context: process context; takes init_mm's mmap lock, then pcpt_lock.
 */
void percpu_pgtable_unregister_client(struct percpu_pgtable_client *client)
{
	unsigned long first, last, idx, flags;
	unsigned int cpu;

	first = pcpt_index(client->start);
	last = pcpt_index(client->end - 1);

	/* Keep ptdump walks (under init_mm's mmap lock) off the old tables. */
	mmap_write_lock(&init_mm);
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	list_del(&client->list);
	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (!root)
			continue;
		for (idx = first; idx <= last; idx++)
			pcpt_write(root, idx, READ_ONCE(init_mm.pgd[idx]));
	}
	bitmap_clear(pcpt_private, first, last - first + 1);
	arch_percpu_pgtable_sync();
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	mmap_write_unlock(&init_mm);

	/*
	 * Clear, barrier, then a broadcast flush of every level (the range is
	 * at least one top-level entry, so flushing it all costs no more), and
	 * only then may the client free its tables.
	 */
	flush_tlb_all();
}
EXPORT_SYMBOL_GPL(percpu_pgtable_unregister_client);

/**
 * percpu_pgtable_set_private() - write one private top-level entry
 * @client: the registered client that owns @addr
 * @cpu: whose root to write
 * @addr: an address in the client's range
 * @pgd: the new value
 *
 * For a client changing its own entries after registration.  Installing a
 * table into an empty entry needs nothing else; replacing or clearing a
 * valid entry needs the caller to flush @addr's range from the TLBs before
 * it frees or reuses what the old entry pointed to.
 *
 * Context: any but NMI; takes pcpt_lock with interrupts disabled.
 */
void percpu_pgtable_set_private(struct percpu_pgtable_client *client,
				unsigned int cpu, unsigned long addr, pgd_t pgd)
{
	unsigned long flags;

	if (WARN_ON_ONCE(addr < client->start || addr >= client->end ||
			 cpu >= nr_cpu_ids))
		return;

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	/* A stale client must not write an entry that is shared again. */
	if (!WARN_ON_ONCE(!test_bit(pcpt_index(addr), pcpt_private)) &&
	    pcpt_roots[cpu])
		pcpt_write(pcpt_roots[cpu], pcpt_index(addr), pgd);
	arch_percpu_pgtable_sync();
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
}
EXPORT_SYMBOL_GPL(percpu_pgtable_set_private);

/**
 * percpu_pgtable_check() - compare every copy with the master
 * @m: where to report each mismatch, or NULL
 *
 * Compares, under pcpt_lock, every shared top-level entry of every root
 * with the master (through arch_percpu_pgtable_same(), which ignores
 * bits the hardware ignores and the architecture may set in the master
 * alone), and reports each difference.
 *
 * Return: the number of mismatching entries (0 expected).
 */
unsigned long percpu_pgtable_check(struct seq_file *m)
{
	unsigned long idx, flags, bad = 0;
	unsigned int cpu;

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (!root)
			continue;
		for (idx = 0; idx < PTRS_PER_PGD; idx++) {
			pgd_t master = READ_ONCE(init_mm.pgd[idx]);
			pgd_t copy = READ_ONCE(root[idx]);

			if (test_bit(idx, pcpt_private) ||
			    arch_percpu_pgtable_same(master, copy))
				continue;
			bad++;
			if (m)
				seq_printf(m, "cpu%u entry %lu: master %#llx copy %#llx\n",
					   cpu, idx, (u64)pgd_val(master),
					   (u64)pgd_val(copy));
		}
	}
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	return bad;
}

/*
 * The roots are page tables: protect them like the master, whose linear
 * alias is read-only.  By late_initcall_sync every root has been built
 * and the KPTI trampoline copies written; clients registering later
 * (modules) write through pcpt_write() too.  Writers switch to the
 * architecture's writer under pcpt_lock first, so none is left storing
 * through the alias when it becomes read-only.
 */
static int __init percpu_pgtable_protect(void)
{
	unsigned long flags;
	unsigned int cpu;
	int ret = 0;

	if (!percpu_pgtable_active())
		return 0;

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	pcpt_ro = true;
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);

	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (root && !ret)
			ret = arch_percpu_pgtable_protect(root);
	}
	if (ret)
		pr_info("tables stay writable in the linear map (%d): it is not mapped at page granularity (rodata=full off)\n",
			ret);
	else
		pcpt_protected = true;
	return 0;
}
late_initcall_sync(percpu_pgtable_protect);

/**
 * percpu_pgtable_protected() - are the roots read-only in the linear map?
 *
 * Return: true once every root's linear-map alias has been made read-only.
 */
bool percpu_pgtable_protected(void)
{
	return READ_ONCE(pcpt_protected);
}
EXPORT_SYMBOL_GPL(percpu_pgtable_protected);

#ifdef CONFIG_DEBUG_FS

static int pcpt_check_show(struct seq_file *m, void *v)
{
	unsigned long bad = percpu_pgtable_check(m);

	seq_printf(m, "mismatches: %lu\n", bad);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpt_check);

static void pcpt_loaded_fn(void *info)
{
	*(phys_addr_t *)info = arch_percpu_pgtable_loaded();
}

/*
 * One line per possible CPU: its node, its root and, when online, the
 * root its MMU really translates through (read on that CPU), so a test
 * can check both against each other and against the node map.
 */
static int pcpt_status_show(struct seq_file *m, void *v)
{
	struct percpu_pgtable_client *client;
	unsigned long flags;
	unsigned int cpu;

	seq_printf(m, "active: %s\n", percpu_pgtable_active() ? "yes" : "no");
	seq_printf(m, "tables: %u\n", pcpt_nr_roots);
	seq_printf(m, "bytes: %zu\n", pcpt_bytes);
	seq_printf(m, "read-only: %s\n", percpu_pgtable_protected() ? "yes" : "no");
	seq_printf(m, "failed: %*pbl\n", cpumask_pr_args(&pcpt_failed));
	seq_printf(m, "master: %pa\n", &(phys_addr_t){ __pa_symbol(init_mm.pgd) });
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);
		phys_addr_t loaded;

		if (root)
			seq_printf(m, "cpu%u: node %d root %pa", cpu,
				   page_to_nid(virt_to_page(root)),
				   &(phys_addr_t){ virt_to_phys(root) });
		else
			seq_printf(m, "cpu%u: master", cpu);
		if (cpu_online(cpu) &&
		    !smp_call_function_single(cpu, pcpt_loaded_fn, &loaded, 1))
			seq_printf(m, " loaded %pa\n", &loaded);
		else
			seq_puts(m, " offline\n");
	}
	cpus_read_unlock();
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	list_for_each_entry(client, &pcpt_clients, list)
		seq_printf(m, "client %s: %#lx-%#lx\n", client->name,
			   client->start, client->end);
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpt_status);

static int pcpt_dump_show(struct seq_file *m, void *v)
{
	unsigned int cpu = (unsigned long)m->private;
	pgd_t *root = percpu_pgtable_root(cpu);

	if (!root) {
		seq_printf(m, "cpu%u runs on the master table: see kernel_page_tables\n", cpu);
		return 0;
	}
	arch_percpu_pgtable_dump(m, root);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpt_dump);

static int __init pcpt_debugfs_init(void)
{
	struct dentry *dir, *tables;
	unsigned int cpu;
	char name[16];

	dir = debugfs_create_dir("percpu_pgtable", NULL);
	debugfs_create_file("status", 0400, dir, NULL, &pcpt_status_fops);
	if (!percpu_pgtable_active())
		return 0;
	debugfs_create_file("check", 0400, dir, NULL, &pcpt_check_fops);
	tables = debugfs_create_dir("tables", dir);
	for_each_possible_cpu(cpu) {
		snprintf(name, sizeof(name), "cpu%u", cpu);
		debugfs_create_file(name, 0400, tables, (void *)(unsigned long)cpu,
				    &pcpt_dump_fops);
	}
	return 0;
}
late_initcall(pcpt_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

#ifdef CONFIG_PERCPU_PGTABLE_KUNIT_TEST
#include "tests/percpu_pgtable-kunit.h"
#endif

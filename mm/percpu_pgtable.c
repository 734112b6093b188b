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
 *    pcpt_lock; CPU hotplug reuses it.  It is replaced and freed only when
 *    a client takes over live entries, and only during boot, before
 *    userspace runs: no debugfs reader, W^X check or hibernation image
 *    can hold a root then.
 *  - pcpt_lock (raw, innermost) serialises every write of a top-level
 *    entry, shared or private, in the master and in every copy, and the
 *    client list.  A new entry is written to every copy before the master
 *    and a cleared one is cleared in the master first, so a lockless
 *    walker that finds an entry in the master finds it in its own root
 *    too (see percpu_pgtable_set_entry()).
 *  - pcpt_mutex serialises client registration, which may replace every
 *    root (pcpt_replace_roots()), with the debugfs readers of the roots.
 *  - A valid top-level entry of a live root is never changed to another
 *    valid one (the architecture's break-before-make rule): a client that
 *    takes over valid entries gets new roots, which every CPU switches to
 *    itself through arch_percpu_pgtable_install().  The debug
 *    configuration (CONFIG_DEBUG_VM) warns about any such write.
 *  - Once every root is final for boot (late_initcall_sync), the roots are
 *    made read-only in the linear map where the architecture can (as
 *    rodata=full does for the master's alias), and every later write of a
 *    copy goes through the write alias (pcpt_alias), under pcpt_lock.
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
#include <linux/percpu_pgtable_arch.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

static bool pcpt_enabled __initdata = true;
/* Set once every root is built; read locklessly by the funnel. */
static bool pcpt_live __read_mostly;
static pgd_t *pcpt_roots[NR_CPUS] __read_mostly;
static DEFINE_RAW_SPINLOCK(pcpt_lock);
static DEFINE_MUTEX(pcpt_mutex);
static DECLARE_BITMAP(pcpt_private, PTRS_PER_PGD);
static LIST_HEAD(pcpt_clients);
static struct cpumask pcpt_failed;
static unsigned int pcpt_nr_roots;
static size_t pcpt_bytes;
/* Copies are written through pcpt_alias from now on (pcpt_lock). */
static bool pcpt_ro;
/* And their linear-map alias is read-only. */
static bool pcpt_protected;
/*
 * The write alias of read-only roots: one page of vmalloc space per
 * possible CPU, page N mapped onto CPU N's root only while pcpt_lock is
 * held.  pcpt_alias_map() maps a page when a batch of writes first needs
 * it (an invalid-to-valid PTE change, which needs no TLB maintenance);
 * pcpt_alias_unmap() clears every page the batch mapped and invalidates
 * them all with one call of arch_percpu_pgtable_flush_alias() before the
 * lock is dropped, so a top-level change waits once for the broadcast
 * invalidation of all the copies, not once per root (and is one range
 * invalidation where the architecture has them).  The PTE tables are
 * allocated once, at
 * boot, and never freed: no other mapping is ever made in the area.
 */
static unsigned long pcpt_alias;
static pte_t **pcpt_alias_ptes;
static struct cpumask pcpt_alias_mapped;

static int __init percpu_pgtable_param(char *arg)
{
	if (!arg || !strcmp(arg, "on")) {
		pcpt_enabled = true;
	} else if (!strcmp(arg, "off")) {
		pcpt_enabled = false;
	} else {
		/* Also over an earlier percpu_pgtable=off: as the warning says. */
		pr_warn("unknown percpu_pgtable=%s (accepted: on, off); using on\n", arg);
		pcpt_enabled = true;
	}
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
	/*
	 * A list that fails to parse may have set some CPUs already; the
	 * default, none, replaces it and any earlier list.
	 */
	if (!arg || !*arg || cpulist_parse(arg, &pcpt_testfail)) {
		pr_warn("percpu_pgtable_testfail=%s is not a CPU list (e.g. 1,3-4); using none\n",
			arg ? arg : "");
		cpumask_clear(&pcpt_testfail);
	}
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
 * percpu_pgtable_wanted() - will percpu_pgtable_init() build the roots?
 *
 * For clients that reserve memory at boot, before the roots exist: false
 * when the feature is switched off on the command line.  The roots may
 * still fail later; percpu_pgtable_active() says whether they did not.
 *
 * Context: boot, before percpu_pgtable_init().
 * Return: true unless percpu_pgtable=off.
 */
bool __init percpu_pgtable_wanted(void)
{
	return pcpt_enabled;
}

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

/*
 * Break-before-make: an entry CPUs may be walking through changes from
 * empty to valid, from valid to empty, or not at all.  Every architecture
 * clears a top-level entry to 0 (pgd_none() is constant with a folded
 * level below the root, so it cannot tell).
 */
static __always_inline bool pcpt_live_change_ok(pgd_t old, pgd_t new)
{
	return !pgd_val(old) || !pgd_val(new) || arch_percpu_pgtable_same(old, new);
}

/*
 * @cpu's root @root through the write alias: maps the alias page if this
 * batch has not yet.  A slot maps one root per batch: CPU @cpu's.
 */
static __always_inline pgd_t *pcpt_alias_map(unsigned int cpu, pgd_t *root)
{
	unsigned long va = pcpt_alias + cpu * PAGE_SIZE;
	pte_t *ptep = pcpt_alias_ptes[cpu];

	if (!cpumask_test_cpu(cpu, &pcpt_alias_mapped)) {
		__cpumask_set_cpu(cpu, &pcpt_alias_mapped);
		set_pte(ptep, pfn_pte(virt_to_pfn(root), PAGE_KERNEL));
	} else if (IS_ENABLED(CONFIG_DEBUG_VM)) {
		WARN_ON_ONCE(pte_pfn(ptep_get(ptep)) != virt_to_pfn(root));
	}
	return (pgd_t *)(va + offset_in_page(root));
}

/*
 * End a batch: unmap every alias page it mapped, then one invalidation
 * of them all.  Its DSB also publishes the entries written through them.
 */
static __always_inline void pcpt_alias_unmap(void)
{
	unsigned int cpu, first = nr_cpu_ids, last = 0;

	for_each_cpu(cpu, &pcpt_alias_mapped) {
		pte_clear(&init_mm, pcpt_alias + cpu * PAGE_SIZE, pcpt_alias_ptes[cpu]);
		first = min(first, cpu);
		last = cpu;
	}
	if (first > last)
		return;
	cpumask_clear(&pcpt_alias_mapped);
	arch_percpu_pgtable_flush_alias(pcpt_alias + first * PAGE_SIZE,
					pcpt_alias + (last + 1) * PAGE_SIZE);
}

/*
 * Write entry @idx of CPU @cpu's live root @root.  Caller holds pcpt_lock
 * and ends the batch of writes with pcpt_alias_unmap() before dropping it.
 */
static __always_inline void pcpt_write(unsigned int cpu, pgd_t *root,
				       unsigned long idx, pgd_t pgd)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		WARN_ONCE(!pcpt_live_change_ok(READ_ONCE(root[idx]), pgd),
			  "percpu_pgtable: live entry %lu changed from %#llx to %#llx without break-before-make\n",
			  idx, (u64)pgd_val(READ_ONCE(root[idx])), (u64)pgd_val(pgd));
	if (pcpt_ro)
		WRITE_ONCE(pcpt_alias_map(cpu, root)[idx], pgd);
	else
		WRITE_ONCE(root[idx], pgd);
}

/* Write @pgd into entry @idx of every published copy.  pcpt_lock held. */
static __always_inline void pcpt_write_copies(unsigned long idx, pgd_t pgd)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (root)
			pcpt_write(cpu, root, idx, pgd);
	}
	pcpt_alias_unmap();
}

/**
 * percpu_pgtable_set_entry() - write a shared top-level kernel entry
 * @pgdp: the entry in the master root (init_mm.pgd)
 * @pgd: the new value
 *
 * The one propagation point.  The architecture calls it from its single
 * writer of master root entries (arm64: set_swapper_pgd()), for populates
 * and clears alike.  It writes the master and the same index of every
 * published copy under pcpt_lock, and issues the architecture's barrier
 * (arm64: DSB ISHST; ISB) so that a table walker on any CPU observes the
 * new entry before the caller goes on.
 *
 * Generic code reads the master without a lock (vmap_try_huge_pmd() and
 * vmap_try_huge_pud() install blocks under a master entry they found
 * without page_table_lock) and then touches the range through its own
 * CPU's root.  With four levels a second populater of the same entry
 * mostly waits on init_mm's page_table_lock in __p?d_alloc() first; the
 * exposed cases are huge vmalloc where the top level holds PMD tables
 * (three levels: 16K/47, 64K/48) and PUD blocks from ioremap.  So the
 * copies lead the master on the way in and follow it on the way out:
 *  - a new entry goes into every copy first, then, after the barrier that
 *    makes the copies visible to every walker, into the master: whoever
 *    finds it in the master finds it in every root;
 *  - a cleared entry goes out of the master first, then out of every
 *    copy; nobody can newly find it in the master while a copy still
 *    holds it, and the caller follows clear/barrier/broadcast TLBI by
 *    VA/free (free_empty_tables(), pud_free_pmd_page()): every copy is
 *    cleared before this function returns, so the TLBI, which removes
 *    walk-cache entries for the VA whichever root they came from, comes
 *    after the clear everywhere and the table is freed only after it.
 * Invalid entries are never cached in TLBs or walk caches, so a new entry
 * needs no TLB maintenance.  A shared entry is never changed from one
 * valid value to another on the architectures supported: the debug
 * configuration warns if it is.
 *
 * Context: any, including with interrupts disabled; noinstr.
 * Return: true if the write was done here; false if the per-CPU roots are
 * not in use, in which case the caller writes the master as before.
 */
bool noinstr percpu_pgtable_set_entry(pgd_t *pgdp, pgd_t pgd)
{
	unsigned long idx, flags;

	if (!READ_ONCE(pcpt_live))
		return false;

	idx = pgdp - init_mm.pgd;
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	if (WARN_ONCE(idx >= PTRS_PER_PGD || test_bit(idx, pcpt_private),
		      "percpu_pgtable: shared write to private or foreign entry %lu\n", idx)) {
		arch_percpu_pgtable_write_master(pgdp, pgd);
		goto out;
	}
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		WARN_ONCE(!pcpt_live_change_ok(READ_ONCE(*pgdp), pgd),
			  "percpu_pgtable: master entry %lu changed from %#llx to %#llx without break-before-make\n",
			  idx, (u64)pgd_val(READ_ONCE(*pgdp)), (u64)pgd_val(pgd));
	if (pgd_val(pgd)) {
		pcpt_write_copies(idx, pgd);
		/* The copies are visible to every walker before the master. */
		arch_percpu_pgtable_sync();
		arch_percpu_pgtable_write_master(pgdp, pgd);
	} else {
		arch_percpu_pgtable_write_master(pgdp, pgd);
		arch_percpu_pgtable_sync();
		pcpt_write_copies(idx, pgd);
	}
out:
	arch_percpu_pgtable_sync();
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	return true;
}

/*
 * Fill @client's private entries of @cpu's root, which no CPU runs on yet
 * (being built, before it is published or switched to).
 */
static void pcpt_fill_client(struct percpu_pgtable_client *client,
			     unsigned int cpu, pgd_t *root)
{
	unsigned long addr;

	lockdep_assert_held(&pcpt_lock);
	for (addr = client->start; addr < client->end; addr += PGDIR_SIZE)
		WRITE_ONCE(root[pcpt_index(addr)], client->populate(client, cpu, addr));
}

/* Build @cpu's root from the master and publish it. */
static void __init pcpt_build_root(unsigned int cpu, pgd_t *root)
{
	struct percpu_pgtable_client *client;
	unsigned long flags;

	raw_spin_lock_irqsave(&pcpt_lock, flags);
	memcpy(root, init_mm.pgd, PTRS_PER_PGD * sizeof(pgd_t));
	list_for_each_entry(client, &pcpt_clients, list)
		pcpt_fill_client(client, cpu, root);
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

/*
 * The value entry @idx of @cpu's root gets when @client is added (@add)
 * or removed.
 */
static pgd_t pcpt_private_value(struct percpu_pgtable_client *client,
				unsigned int cpu, unsigned long idx, bool add)
{
	unsigned long addr = client->start + (idx - pcpt_index(client->start)) * PGDIR_SIZE;

	return add ? client->populate(client, cpu, addr) : READ_ONCE(init_mm.pgd[idx]);
}

/* Can @client be added or removed by writing the live roots in place? */
static bool pcpt_in_place_ok(struct percpu_pgtable_client *client, bool add)
{
	unsigned long idx, first = pcpt_index(client->start);
	unsigned long last = pcpt_index(client->end - 1);
	unsigned int cpu;

	lockdep_assert_held(&pcpt_lock);
	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (!root)
			continue;
		for (idx = first; idx <= last; idx++)
			if (!pcpt_live_change_ok(READ_ONCE(root[idx]),
						 pcpt_private_value(client, cpu, idx, add)))
				return false;
	}
	return true;
}

/* Add or remove @client's entries.  pcpt_lock held; roots are live. */
static void pcpt_change_client(struct percpu_pgtable_client *client, bool add,
			       pgd_t **roots, bool live)
{
	unsigned long idx, first = pcpt_index(client->start);
	unsigned long last = pcpt_index(client->end - 1);
	unsigned int cpu;

	lockdep_assert_held(&pcpt_lock);
	if (add) {
		bitmap_set(pcpt_private, first, last - first + 1);
		list_add_tail(&client->list, &pcpt_clients);
	} else {
		list_del(&client->list);
		bitmap_clear(pcpt_private, first, last - first + 1);
	}
	for_each_possible_cpu(cpu) {
		if (!roots[cpu])
			continue;
		for (idx = first; idx <= last; idx++) {
			pgd_t val = pcpt_private_value(client, cpu, idx, add);

			if (live)
				pcpt_write(cpu, roots[cpu], idx, val);
			else
				WRITE_ONCE(roots[cpu][idx], val);
		}
	}
	pcpt_alias_unmap();
}

struct pcpt_replace {
	struct percpu_pgtable_client *client;
	bool add;
	pgd_t **new;
	bool *moved;
	atomic_t arrived;
	int done;
	int ret;
};

/*
 * stop_machine() callback on every online CPU, interrupts off.  The last
 * CPU to arrive runs the client's prepare hook, builds every new root
 * (the current root with the client's entries changed) and publishes
 * them, while the others spin here; then every CPU moves itself to its
 * new root through arch_percpu_pgtable_install(), which parks TTBR1 on an
 * empty table and invalidates this CPU's TLB before loading the new one:
 * no CPU ever sees two valid translations of the same address.  Every
 * CPU executes the same kernel text at the same addresses in both roots.
 */
static int pcpt_replace_fn(void *data)
{
	struct pcpt_replace *r = data;
	unsigned int cpu = smp_processor_id();

	if (atomic_inc_return(&r->arrived) == num_online_cpus()) {
		unsigned int c;

		if (r->add && r->client->prepare)
			r->ret = r->client->prepare(r->client);
		if (!r->ret) {
			raw_spin_lock(&pcpt_lock);
			for_each_possible_cpu(c) {
				if (r->new[c])
					arch_percpu_pgtable_copy(r->new[c], pcpt_roots[c]);
			}
			pcpt_change_client(r->client, r->add, r->new, false);
			/* Every new root is visible to the walkers before use. */
			arch_percpu_pgtable_sync();
			for_each_possible_cpu(c) {
				pgd_t *old = pcpt_roots[c];

				if (!r->new[c])
					continue;
				/* Pairs with smp_load_acquire() in percpu_pgtable_root(). */
				smp_store_release(&pcpt_roots[c], r->new[c]);
				r->new[c] = old;
			}
			raw_spin_unlock(&pcpt_lock);
		}
		/* Pairs with the acquire below: the roots are complete. */
		smp_store_release(&r->done, 1);
	} else {
		/* Pairs with the leader's release: its roots are complete. */
		while (!smp_load_acquire(&r->done))
			cpu_relax();
	}
	if (!r->ret && pcpt_roots[cpu]) {
		arch_percpu_pgtable_install(cpu, pcpt_roots[cpu]);
		r->moved[cpu] = true;
	}
	return 0;
}

/*
 * Give every CPU a new root with @client added or removed, when that
 * changes valid entries.  Allocates the roots first, since nothing may
 * sleep under stop_machine(); frees the old ones once no CPU can use
 * them: the online ones switched, the others start on pcpt_roots[].
 */
static int pcpt_replace_roots(struct percpu_pgtable_client *client, bool add)
{
	struct pcpt_replace r = { .client = client, .add = add };
	unsigned int cpu;
	int ret = 0;

	/* Nothing may hold a root across its replacement: see the top. */
	if (WARN_ON_ONCE(system_state >= SYSTEM_RUNNING))
		return -EBUSY;
	r.new = kcalloc(nr_cpu_ids, sizeof(*r.new), GFP_KERNEL);
	r.moved = kcalloc(nr_cpu_ids, sizeof(*r.moved), GFP_KERNEL);
	if (!r.new || !r.moved) {
		kfree(r.new);
		kfree(r.moved);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		if (!percpu_pgtable_root(cpu))
			continue;
		r.new[cpu] = arch_percpu_pgtable_alloc_late(cpu, cpu_to_node(cpu));
		if (!r.new[cpu]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	atomic_set(&r.arrived, 0);
	/*
	 * No ptdump walk can be in an old root freed below: replacement
	 * happens only before userspace, in kernel_init(), which runs
	 * ptdump_check_wx() itself later.  (init_mm's mmap lock cannot be
	 * held here: ptdump takes it inside mem_hotplug_lock, which CPU
	 * hotplug, and so stop_machine(), nests inside.)
	 */
	ret = stop_machine(pcpt_replace_fn, &r, cpu_online_mask);
	ret = ret ?: r.ret;
	/* On success r.new[] holds the old roots, else the unused new ones. */
out:
	for_each_possible_cpu(cpu) {
		if (!r.new[cpu])
			continue;
		/*
		 * An offline CPU that may still run kernel code (arm64: one
		 * stuck in the kernel) may be on its old root: keep that.
		 */
		if (!ret && !r.moved[cpu] && arch_percpu_pgtable_offline_may_run()) {
			pr_warn_once("cpu%u (and maybe others) offline but may still run: old tables kept\n",
				     cpu);
			continue;
		}
		arch_percpu_pgtable_free(r.new[cpu]);
	}
	kfree(r.new);
	kfree(r.moved);
	if (!ret && pcpt_protected) {
		for_each_possible_cpu(cpu) {
			if (pcpt_roots[cpu] &&
			    arch_percpu_pgtable_protect(pcpt_roots[cpu]))
				pr_warn("cpu%u: its new table stays writable in the linear map\n",
					cpu);
		}
	}
	return ret;
}

/*
 * Add or remove @client: in place where every change is from or to an
 * empty entry, else through new roots.
 */
static int pcpt_set_client(struct percpu_pgtable_client *client, bool add)
{
	unsigned long flags;
	bool in_place;

	lockdep_assert_held(&pcpt_mutex);
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	in_place = pcpt_in_place_ok(client, add);
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	/*
	 * pcpt_mutex keeps every other client change out meanwhile.  A
	 * client with @prepare is promised stop_machine() around it.
	 */
	if (!in_place || (add && client->prepare))
		return pcpt_replace_roots(client, add);
	/* No ptdump walk (init_mm's lock) of entries the client frees next. */
	mmap_write_lock(&init_mm);
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	pcpt_change_client(client, add, pcpt_roots, true);
	arch_percpu_pgtable_sync();
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	mmap_write_unlock(&init_mm);
	/*
	 * Empty entries were made valid, or valid ones empty: a broadcast
	 * flush of every level, so no CPU keeps a walk-cache entry into what
	 * the old entries pointed to, before the client frees anything.
	 */
	flush_tlb_all();
	return 0;
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
 * Where a root's entry is empty, it is written in place.  Where a root
 * holds a valid entry there that @populate changes (the client takes over
 * a live range, as the text replica takes over the image's), every CPU
 * gets a new root instead, and moves to it itself under stop_machine();
 * @prepare, if set, runs there first, on one CPU, with every other online
 * CPU spinning with interrupts off.  That is allowed only during boot,
 * before userspace runs (-EBUSY afterwards).
 *
 * Context: process context, may sleep; not from a stop_machine() callback.
 * Return: 0, -EINVAL for a malformed range, -EBUSY if the range overlaps
 * another client's (or needs new roots after boot), -ENODEV if per-CPU
 * roots are not in use, -ENOMEM, or what @prepare returned.
 */
int percpu_pgtable_register_client(struct percpu_pgtable_client *client)
{
	unsigned long first, last;
	int ret;

	if (!pcpt_range_ok(client))
		return -EINVAL;
	if (!percpu_pgtable_active())
		return -ENODEV;

	first = pcpt_index(client->start);
	last = pcpt_index(client->end - 1);

	mutex_lock(&pcpt_mutex);
	if (find_next_bit(pcpt_private, last + 1, first) <= last)
		ret = -EBUSY;
	else
		ret = pcpt_set_client(client, true);
	mutex_unlock(&pcpt_mutex);
	if (!ret)
		pr_info("client %s: private range %#lx-%#lx (entries %lu-%lu)\n",
			client->name, client->start, client->end, first, last);
	return ret;
}

/**
 * percpu_pgtable_unregister_client() - give a private range back
 * @client: a registered client
 *
 * Restores the master's entries for the range in every copy (in place, or
 * through new roots where that replaces valid entries, as registration
 * does), then flushes every TLB and walk cache, so that no CPU keeps
 * walking the client's lower-level tables; the client may free them when
 * this returns.
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOMEM (-EBUSY after boot) if new roots were needed and
 * could not be made: the client then stays registered.
 */
int percpu_pgtable_unregister_client(struct percpu_pgtable_client *client)
{
	int ret;

	mutex_lock(&pcpt_mutex);
	ret = pcpt_set_client(client, false);
	mutex_unlock(&pcpt_mutex);
	return ret;
}

/* For debugfs and the tests: the master's top-level entries. */
static unsigned long __maybe_unused pcpt_master_entries(void)
{
	unsigned long idx, n = 0;

	for (idx = 0; idx < PTRS_PER_PGD; idx++)
		n += !!pgd_val(READ_ONCE(init_mm.pgd[idx]));
	return n;
}

/* The first vmalloc address whose top-level entry is empty, or 0. */
static unsigned long __maybe_unused pcpt_vmalloc_free_slot(void)
{
	unsigned long addr;

	for (addr = ALIGN(VMALLOC_START, PGDIR_SIZE);
	     addr >= VMALLOC_START && addr + PGDIR_SIZE <= VMALLOC_END; addr += PGDIR_SIZE)
		if (!pgd_val(READ_ONCE(*pgd_offset_k(addr))))
			return addr;
	return 0;
}

/*
 * For debugfs and the tests: compare, under pcpt_lock, every shared
 * top-level entry of every root with the master (through
 * arch_percpu_pgtable_same(), which ignores bits the hardware ignores and
 * the architecture may set in the master alone), report each difference
 * to @m if given, and return how many there are (0 expected).
 */
static unsigned long __maybe_unused pcpt_check(struct seq_file *m)
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

/* apply_to_page_range() callback: remember the PTE of each alias page. */
static int __init pcpt_alias_pte(pte_t *ptep, unsigned long addr, void *data)
{
	pcpt_alias_ptes[(addr - pcpt_alias) >> PAGE_SHIFT] = ptep;
	return 0;
}

/*
 * Reserve the write alias and allocate its PTE tables (init_mm's, in
 * vmalloc space, shared by every root), all entries empty.
 */
static int __init pcpt_alias_init(void)
{
	unsigned long size = nr_cpu_ids * PAGE_SIZE;
	struct vm_struct *area;

	pcpt_alias_ptes = kcalloc(nr_cpu_ids, sizeof(*pcpt_alias_ptes), GFP_KERNEL);
	area = get_vm_area(size, VM_MAP);
	if (!pcpt_alias_ptes || !area)
		goto fail;
	pcpt_alias = (unsigned long)area->addr;
	if (!apply_to_page_range(&init_mm, pcpt_alias, size, pcpt_alias_pte, NULL))
		return 0;
fail:
	/* The area's tables, if any were allocated, stay: vmalloc space. */
	if (area)
		free_vm_area(area);
	kfree(pcpt_alias_ptes);
	pcpt_alias_ptes = NULL;
	pcpt_alias = 0;
	return -ENOMEM;
}

/*
 * The roots are page tables: protect them like the master, whose linear
 * alias is read-only.  By late_initcall_sync every root has been built
 * and the KPTI trampoline copies written; clients registering later
 * (modules) write through pcpt_write() too.  Writers switch to the
 * write alias under pcpt_lock first, so none is left storing through the
 * linear map when it becomes read-only.
 */
static int __init percpu_pgtable_protect(void)
{
	unsigned int cpu, done = 0;
	unsigned long flags;
	int ret = 0;

	if (!percpu_pgtable_active())
		return 0;

	if (pcpt_alias_init()) {
		pr_warn("no memory for the write alias: tables stay writable in the linear map\n");
		return 0;
	}
	raw_spin_lock_irqsave(&pcpt_lock, flags);
	pcpt_ro = true;
	raw_spin_unlock_irqrestore(&pcpt_lock, flags);

	for_each_possible_cpu(cpu) {
		pgd_t *root = pcpt_roots[cpu];

		if (root && !ret) {
			ret = arch_percpu_pgtable_protect(root);
			done += !ret;
		}
	}
	if (ret)
		pr_info("tables stay writable in the linear map (%d): it is not mapped at page granularity (rodata=full off)\n",
			ret);
	else
		pcpt_protected = true;
	/* Nothing read-only: write directly, no alias to map and flush. */
	if (!done) {
		raw_spin_lock_irqsave(&pcpt_lock, flags);
		pcpt_ro = false;
		raw_spin_unlock_irqrestore(&pcpt_lock, flags);
	}
	return 0;
}
late_initcall_sync(percpu_pgtable_protect);

/* For debugfs and the tests: is every root read-only in the linear map? */
static bool __maybe_unused pcpt_is_protected(void)
{
	return READ_ONCE(pcpt_protected);
}

#ifdef CONFIG_DEBUG_FS

static int pcpt_check_show(struct seq_file *m, void *v)
{
	unsigned long bad = pcpt_check(m);

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
	seq_printf(m, "read-only: %s\n", pcpt_is_protected() ? "yes" : "no");
	if (pcpt_alias)
		seq_printf(m, "write alias: %#lx-%#lx\n", pcpt_alias,
			   pcpt_alias + nr_cpu_ids * PAGE_SIZE);
	seq_printf(m, "failed: %*pbl\n", cpumask_pr_args(&pcpt_failed));
	seq_printf(m, "master: %pa\n", &(phys_addr_t){ __pa_symbol(init_mm.pgd) });
	/* For tests that must write a new top-level entry. */
	seq_printf(m, "master entries: %lu\n", pcpt_master_entries());
	seq_printf(m, "vmalloc free slot: %#lx\n", pcpt_vmalloc_free_slot());
	mutex_lock(&pcpt_mutex);
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
	mutex_unlock(&pcpt_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pcpt_status);

/*
 * A CPU without a root of its own runs on the master: tables/cpuN says
 * so, pa/cpuN dumps the master, so that the placement of what the CPU
 * translates can be read from pa/cpuN in every case.
 */
static int pcpt_dump(struct seq_file *m, bool pa)
{
	unsigned int cpu = (unsigned long)m->private;
	pgd_t *root;

	/* Keeps the root from being replaced and freed under the walk. */
	mutex_lock(&pcpt_mutex);
	root = percpu_pgtable_root(cpu);
	if (root || pa)
		arch_percpu_pgtable_dump(m, root ?: init_mm.pgd, pa);
	else
		seq_printf(m, "cpu%u runs on the master table: see kernel_page_tables\n", cpu);
	mutex_unlock(&pcpt_mutex);
	return 0;
}

static int pcpt_dump_show(struct seq_file *m, void *v)
{
	return pcpt_dump(m, false);
}
DEFINE_SHOW_ATTRIBUTE(pcpt_dump);

static int pcpt_dump_pa_show(struct seq_file *m, void *v)
{
	return pcpt_dump(m, true);
}
DEFINE_SHOW_ATTRIBUTE(pcpt_dump_pa);

static int __init pcpt_debugfs_init(void)
{
	struct dentry *dir, *tables, *pa;
	unsigned int cpu;
	char name[16];

	dir = debugfs_create_dir("percpu_pgtable", NULL);
	debugfs_create_file("status", 0400, dir, NULL, &pcpt_status_fops);
	pa = debugfs_create_dir("pa", dir);
	for_each_possible_cpu(cpu) {
		snprintf(name, sizeof(name), "cpu%u", cpu);
		debugfs_create_file(name, 0400, pa, (void *)(unsigned long)cpu,
				    &pcpt_dump_pa_fops);
	}
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

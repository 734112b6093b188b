/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for per-CPU kernel page tables, included at the end of
 * mm/percpu_pgtable.c so they can reach its internals.
 *
 * Every check reads page-table entries or memory through each CPU's own
 * translation; none trusts the feature's own bookkeeping alone.
 */
#ifndef _MM_TESTS_PERCPU_PGTABLE_KUNIT_H
#define _MM_TESTS_PERCPU_PGTABLE_KUNIT_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/memory_hotplug.h>
#include <linux/pgalloc.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

/*
 * An empty top-level entry.  Not pgd_none(): with a folded level below
 * the root (arm64 4K/48 has no p4d), pgd_none() is constant false.
 */
static bool pcpt_entry_none(pgd_t pgd)
{
	return !pgd_val(pgd);
}

/* Root entries exactly as every CPU's copy holds them. */
static void pcpt_expect_everywhere(struct kunit *test, unsigned long idx,
				   bool want_present)
{
	pgd_t master = READ_ONCE(init_mm.pgd[idx]);
	unsigned int cpu;

	KUNIT_EXPECT_EQ(test, !pcpt_entry_none(master), want_present);
	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);

		if (!root)
			continue;
		KUNIT_EXPECT_TRUE_MSG(test, arch_percpu_pgtable_same(master, READ_ONCE(root[idx])),
				      "cpu%u entry %lu: master %#llx copy %#llx", cpu, idx,
				      (u64)pgd_val(master), (u64)pgd_val(READ_ONCE(root[idx])));
	}
}

/*
 * A whole top-level slot for a test to write: one of the linear map that
 * no memory occupies (its master entry is empty, so nothing is mapped
 * there, and only memory hot-add would map it; no test hot-adds memory
 * meanwhile).  Not a vmalloc reservation: with KASAN_VMALLOC reserving a
 * whole slot would populate its shadow, 1/8 of the slot.  PAGE_END is the
 * arm64 end of the linear map (the KASAN shadow start with KASAN).
 */
static DEFINE_MUTEX(pcpt_test_slots_lock);
static DECLARE_BITMAP(pcpt_test_slots, PTRS_PER_PGD);

static unsigned long pcpt_claim_slot(void)
{
	unsigned long addr, found = 0;

	mutex_lock(&pcpt_test_slots_lock);
	for (addr = PAGE_END - PGDIR_SIZE; addr >= PAGE_OFFSET && addr < PAGE_END;
	     addr -= PGDIR_SIZE) {
		unsigned long idx = pgd_index(addr);

		if (pcpt_entry_none(READ_ONCE(init_mm.pgd[idx])) &&
		    !test_bit(idx, pcpt_test_slots)) {
			set_bit(idx, pcpt_test_slots);
			found = addr;
			break;
		}
	}
	mutex_unlock(&pcpt_test_slots_lock);
	return found;
}

static void pcpt_release_slot(unsigned long addr)
{
	clear_bit(pgd_index(addr), pcpt_test_slots);
}

static void pcpt_test_roots(struct kunit *test)
{
	unsigned int cpu, nr = 0;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");

	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);
		int nid = cpu_to_node(cpu);

		if (!root) {
			KUNIT_EXPECT_TRUE(test, cpumask_test_cpu(cpu, &pcpt_failed));
			continue;
		}
		nr++;
		KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(root));
		KUNIT_EXPECT_PTR_NE(test, root, init_mm.pgd);
		/* On its CPU's node whenever that node has memory. */
		if (node_state(nid, N_MEMORY))
			KUNIT_EXPECT_EQ_MSG(test, page_to_nid(virt_to_page(root)), nid,
					    "cpu%u's table is not on its node", cpu);
	}
	KUNIT_EXPECT_EQ(test, nr, pcpt_nr_roots);
	KUNIT_EXPECT_EQ(test, nr + cpumask_weight(&pcpt_failed), num_possible_cpus());
}

static void pcpt_test_loaded_fn(void *data)
{
	phys_addr_t *loaded = data;

	loaded[smp_processor_id()] = arch_percpu_pgtable_loaded();
}

/* Each online CPU really translates through its own root. */
static void pcpt_test_loaded(struct kunit *test)
{
	phys_addr_t *loaded;
	unsigned int cpu;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");

	loaded = kunit_kcalloc(test, nr_cpu_ids, sizeof(*loaded), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, loaded);
	cpus_read_lock();
	on_each_cpu(pcpt_test_loaded_fn, loaded, 1);
	for_each_online_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);
		phys_addr_t want = root ? virt_to_phys(root) : __pa_symbol(init_mm.pgd);

		KUNIT_EXPECT_EQ_MSG(test, loaded[cpu], want,
				    "cpu%u runs on %pa, expected %pa", cpu,
				    &loaded[cpu], &want);
	}
	cpus_read_unlock();
}

static void pcpt_test_consistent(struct kunit *test)
{
	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
}

/* vmalloc in a never used slot creates a top-level entry: seen everywhere. */
static void pcpt_test_vmalloc_populate(struct kunit *test)
{
	unsigned long addr, idx;
	void *p = NULL;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");

	for (addr = ALIGN(VMALLOC_START, PGDIR_SIZE);
	     addr && addr + PGDIR_SIZE <= VMALLOC_END; addr += PGDIR_SIZE) {
		if (pcpt_entry_none(READ_ONCE(*pgd_offset_k(addr))))
			break;
	}
	if (!addr || addr + PGDIR_SIZE > VMALLOC_END)
		kunit_skip(test, "no unused top-level slot in vmalloc space");

	idx = pgd_index(addr);
	p = __vmalloc_node_range(PAGE_SIZE, PAGE_SIZE, addr, addr + PGDIR_SIZE,
				 GFP_KERNEL, PAGE_KERNEL, 0, NUMA_NO_NODE,
				 __builtin_return_address(0));
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, pgd_index((unsigned long)p), idx);
	pcpt_expect_everywhere(test, idx, true);
	vfree(p);
	KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
}

#ifdef CONFIG_HAVE_ARCH_HUGE_VMALLOC
struct pcpt_huge_read {
	const u64 *p;
	size_t words;
	unsigned long bad[NR_CPUS];
};

static void pcpt_huge_read_fn(void *data)
{
	struct pcpt_huge_read *h = data;
	unsigned long bad = 0;
	size_t i;

	for (i = 0; i < h->words; i += 512)
		bad += READ_ONCE(h->p[i]) != (u64)i * 0x9e3779b97f4a7c15ULL;
	h->bad[smp_processor_id()] = bad;
}

/*
 * vmalloc() with VM_ALLOW_HUGE_VMAP in an empty top-level slot: the
 * generic code populates the new top-level entry (the propagation point)
 * and then installs a block mapping below it without page_table_lock
 * (vmap_try_huge_pmd()).  Every CPU must reach the block through its own
 * root.  arm64 allows block mappings in vmalloc space only without
 * CONFIG_PTDUMP_DEBUGFS; that configuration runs this test for real.
 */
static void pcpt_test_huge_vmap(struct kunit *test)
{
	int nid, best = numa_node_id();
	struct pcpt_huge_read *h;
	unsigned long addr, idx, va;
	unsigned int cpu;
	pmd_t *pmdp;
	bool huge;
	u64 *p;
	size_t i;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	if (!arch_vmap_pmd_supported(PAGE_KERNEL))
		kunit_skip(test,
			   "no block mappings in vmalloc space here (arm64: CONFIG_PTDUMP_DEBUGFS=y)");
	addr = pcpt_vmalloc_free_slot();
	if (!addr)
		kunit_skip(test, "no unused top-level slot in vmalloc space");
	idx = pgd_index(addr);
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);

	/*
	 * One node: NUMA_NO_NODE would spread it, a page per node.  The one
	 * with the most free memory: a block is 512 MiB at 64K pages, and
	 * the boot CPU's node also holds the kernel.
	 */
	for_each_node_state(nid, N_MEMORY)
		if (sum_zone_node_page_state(nid, NR_FREE_PAGES) >
		    sum_zone_node_page_state(best, NR_FREE_PAGES))
			best = nid;
	p = __vmalloc_node_range(PMD_SIZE, PMD_SIZE, addr, addr + PGDIR_SIZE,
				 GFP_KERNEL, PAGE_KERNEL, VM_ALLOW_HUGE_VMAP, best,
				 __builtin_return_address(0));
	KUNIT_ASSERT_NOT_NULL(test, p);
	va = (unsigned long)p;
	KUNIT_EXPECT_EQ(test, pgd_index(va), idx);
	pmdp = pmd_off_k(va);
	/*
	 * vmalloc() falls back to pages, in a new area, when no block of
	 * PMD order could be allocated: then no block can be checked.  Given
	 * block pages, it must map them with a block.
	 */
	huge = is_vm_area_hugepages(p);
	if (huge)
		KUNIT_EXPECT_TRUE_MSG(test, pmdp && pmd_leaf(pmdp_get(pmdp)),
				      "%#lx is not mapped by a block: no huge vmap path taken",
				      va);
	pcpt_expect_everywhere(test, idx, true);

	h->p = p;
	h->words = PMD_SIZE / sizeof(u64);
	for (i = 0; i < h->words; i += 512)
		p[i] = (u64)i * 0x9e3779b97f4a7c15ULL;
	cpus_read_lock();
	on_each_cpu(pcpt_huge_read_fn, h, 1);
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, h->bad[cpu], 0,
				    "cpu%u reads other bytes through its root", cpu);
	cpus_read_unlock();
	vfree(p);
	KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
	/* A failure above stays one: skipping would hide it. */
	if (!huge && READ_ONCE(test->status) != KUNIT_FAILURE)
		kunit_skip(test, "no %lu MiB block free on node %d: vmalloc() mapped pages",
			   PMD_SIZE >> 20, best);
}
#endif

/*
 * Populate a top-level entry with the generic kernel populate helper of
 * whichever level is the root in this configuration, then clear it the
 * way memory hot-remove does: clear, flush, free.
 */
static void *pcpt_populate_root(unsigned long addr)
{
	void *table = (void *)get_zeroed_page(GFP_KERNEL);
	pgd_t *pgd = pgd_offset_k(addr);
	p4d_t *p4d = p4d_offset(pgd, addr);

	if (!table)
		return NULL;
#if CONFIG_PGTABLE_LEVELS > 3
	p4d_populate_kernel(addr, p4d, table);
#else
	pud_populate(&init_mm, pud_offset(p4d, addr), table);
#endif
	return table;
}

static void pcpt_clear_root(unsigned long addr, void *table)
{
	pgd_t *pgd = pgd_offset_k(addr);
	p4d_t *p4d = p4d_offset(pgd, addr);

#if CONFIG_PGTABLE_LEVELS > 3
	p4d_clear(p4d);
#else
	pud_clear(pud_offset(p4d, addr));
#endif
	/* All levels, so no CPU keeps a walk-cache entry into @table. */
	flush_tlb_all();
	free_page((unsigned long)table);
}

/*
 * After a batch of root writes, no page of the write alias translates, on
 * the CPU that wrote through it either: its TLB held the entries, so a
 * missing or wrong invalidation leaves them readable (QEMU's TLB too).
 */
static void pcpt_expect_alias_unmapped(struct kunit *test)
{
	unsigned int cpu;
	void *page;
	char c;

	if (!READ_ONCE(pcpt_ro))
		return;
	for_each_possible_cpu(cpu) {
		if (!pcpt_roots[cpu])
			continue;
		page = (void *)(pcpt_alias + cpu * PAGE_SIZE);
		KUNIT_EXPECT_EQ_MSG(test, copy_from_kernel_nofault(&c, page, 1), -EFAULT,
				    "cpu%u's write alias page still translates after the batch",
				    cpu);
	}
}

static void pcpt_test_populate_clear(struct kunit *test)
{
	unsigned long addr, idx;
	void *table;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	addr = pcpt_claim_slot();
	if (!addr)
		kunit_skip(test, "no unused top-level slot in the linear map");
	idx = pgd_index(addr);

	/* The check reads through this CPU's TLB, the writer's. */
	migrate_disable();
	table = pcpt_populate_root(addr);
	if (table)
		pcpt_expect_alias_unmapped(test);
	migrate_enable();
	if (table) {
		pcpt_expect_everywhere(test, idx, true);
		pcpt_clear_root(addr, table);
		pcpt_expect_everywhere(test, idx, false);
	}
	pcpt_release_slot(addr);
	KUNIT_EXPECT_NOT_NULL(test, table);
}

#ifdef CONFIG_MEMORY_HOTPLUG
/*
 * vmemmap_populate() for struct pages of a physical range no memory
 * occupies, then vmemmap_free(), which clears the emptied tables up to
 * the root as memory hot-remove does.
 */
static void pcpt_test_vmemmap(struct kunit *test)
{
	unsigned long addr, idx;
	int ret;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");

	for (addr = ALIGN(VMEMMAP_START, PGDIR_SIZE);
	     addr && addr + PGDIR_SIZE <= VMEMMAP_END; addr += PGDIR_SIZE)
		if (pcpt_entry_none(READ_ONCE(*pgd_offset_k(addr))))
			break;
	if (!addr || addr + PGDIR_SIZE > VMEMMAP_END)
		kunit_skip(test, "no unused top-level slot in the vmemmap");
	idx = pgd_index(addr);

	mem_hotplug_begin();
	ret = vmemmap_populate(addr, addr + PAGE_SIZE, numa_node_id(), NULL);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret)
		pcpt_expect_everywhere(test, idx, true);
	vmemmap_free(addr, addr + PAGE_SIZE, NULL);
	mem_hotplug_done();
	pcpt_expect_everywhere(test, idx, false);
}
#endif

#ifdef CONFIG_KASAN_GENERIC
/* The KASAN early-shadow helper writes root entries with the zero tables. */
static void pcpt_test_kasan_shadow(struct kunit *test)
{
	unsigned long addr, idx;
	int ret;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	addr = pcpt_claim_slot();
	if (!addr)
		kunit_skip(test, "no unused top-level slot in the linear map");
	idx = pgd_index(addr);

	ret = kasan_populate_early_shadow((void *)addr, (void *)(addr + PGDIR_SIZE));
	KUNIT_EXPECT_EQ(test, ret, 0);
	pcpt_expect_everywhere(test, idx, true);

	/* The zero-shadow tables are static: clear and flush, nothing to free. */
#if CONFIG_PGTABLE_LEVELS > 3
	p4d_clear(p4d_offset(pgd_offset_k(addr), addr));
#else
	pud_clear(pud_offset(p4d_offset(pgd_offset_k(addr), addr), addr));
#endif
	flush_tlb_all();
	pcpt_expect_everywhere(test, idx, false);
	pcpt_release_slot(addr);
}
#endif

struct pcpt_stress {
	unsigned long addr;
	struct completion *go;
	atomic_t *failed;
	int loops;
};

static int pcpt_stress_fn(void *data)
{
	struct pcpt_stress *s = data;
	unsigned long addr = s->addr;
	unsigned long idx = pgd_index(addr);
	int i;

	wait_for_completion(s->go);
	for (i = 0; i < s->loops; i++) {
		void *table = pcpt_populate_root(addr);
		unsigned int cpu;

		if (!table) {
			atomic_inc(s->failed);
			break;
		}
		for_each_possible_cpu(cpu) {
			pgd_t *root = percpu_pgtable_root(cpu);

			if (root && pcpt_entry_none(READ_ONCE(root[idx])))
				atomic_inc(s->failed);
		}
		pcpt_clear_root(addr, table);
		for_each_possible_cpu(cpu) {
			pgd_t *root = percpu_pgtable_root(cpu);

			if (root && !pcpt_entry_none(READ_ONCE(root[idx])))
				atomic_inc(s->failed);
		}
	}
	return 0;
}

/* Every online CPU populates and clears its own slot at the same time. */
static void pcpt_test_concurrent(struct kunit *test)
{
	struct task_struct **tasks;
	struct pcpt_stress *s;
	DECLARE_COMPLETION_ONSTACK(go);
	atomic_t failed = ATOMIC_INIT(0);
	unsigned int cpu, n = 0, i;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");

	cpus_read_lock();
	s = kunit_kcalloc(test, nr_cpu_ids, sizeof(*s), GFP_KERNEL);
	tasks = kunit_kcalloc(test, nr_cpu_ids, sizeof(*tasks), GFP_KERNEL);
	if (!s || !tasks)
		goto out;
	for_each_online_cpu(cpu) {
		s[n].addr = pcpt_claim_slot();
		if (!s[n].addr)
			break;
		s[n].go = &go;
		s[n].failed = &failed;
		s[n].loops = 50;
		tasks[n] = kthread_create_on_cpu(pcpt_stress_fn, &s[n], cpu, "pcpt_test/%u");
		if (IS_ERR(tasks[n])) {
			pcpt_release_slot(s[n].addr);
			break;
		}
		get_task_struct(tasks[n]);
		wake_up_process(tasks[n]);
		n++;
	}
	complete_all(&go);
	for (i = 0; i < n; i++) {
		kthread_stop(tasks[i]);
		put_task_struct(tasks[i]);
		pcpt_expect_everywhere(test, pgd_index(s[i].addr), false);
		pcpt_release_slot(s[i].addr);
	}
out:
	cpus_read_unlock();
	/* 64K/48 has few free 4TB slots: at least two writers at once. */
	KUNIT_EXPECT_GE(test, n, min(num_online_cpus(), 2U));
	KUNIT_EXPECT_EQ(test, atomic_read(&failed), 0);
	KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
}

/*
 * A lockless walker reads the master (vmap_try_huge_p?d() installs blocks
 * below a master entry it found without any lock) and then touches the
 * range through its own CPU's root.  So the moment the master shows a new
 * entry, every copy must already hold it.  The watcher spins on the
 * master entry from the CPU whose copy the propagation writes last, and
 * compares its own copy the instant the entry appears.
 */
struct pcpt_race {
	unsigned long idx;
	pgd_t *root;		/* the watcher's own */
	int round;		/* written by the test, read by the watcher */
	int acked;		/* the last round the watcher checked */
	int early;		/* rounds the master was ahead of the copy */
	pgd_t seen_master, seen_copy;
};

static int pcpt_race_fn(void *data)
{
	struct pcpt_race *r = data;

	while (!kthread_should_stop()) {
		/* Pairs with the release of the round: the last clear is seen. */
		int round = smp_load_acquire(&r->round);
		pgd_t m = READ_ONCE(init_mm.pgd[r->idx]), c;

		if (pcpt_entry_none(m) || r->acked == round) {
			cpu_relax();
			continue;
		}
		/* The copy is read after the master, as a walker would. */
		smp_rmb();
		c = READ_ONCE(r->root[r->idx]);
		if (!arch_percpu_pgtable_same(m, c)) {
			r->early++;
			r->seen_master = m;
			r->seen_copy = c;
		}
		/* Pairs with the test's acquire before it clears the entry. */
		smp_store_release(&r->acked, round);
	}
	return 0;
}

static void pcpt_test_master_last(struct kunit *test)
{
	struct pcpt_race *r;
	struct task_struct *t;
	unsigned int cpu, watcher = nr_cpu_ids;
	unsigned long addr, deadline;
	int round, rounds = 20, checked = 0;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);

	cpus_read_lock();
	migrate_disable();
	/*
	 * The propagation walks CPUs in order: the last one is written last.
	 * Not this one, which does the writing.
	 */
	for_each_online_cpu(cpu)
		if (percpu_pgtable_root(cpu) && cpu != smp_processor_id())
			watcher = cpu;
	if (watcher >= nr_cpu_ids) {
		migrate_enable();
		cpus_read_unlock();
		kunit_skip(test, "needs two online CPUs, one with its own root");
	}
	addr = pcpt_claim_slot();
	if (!addr) {
		migrate_enable();
		cpus_read_unlock();
		kunit_skip(test, "no unused top-level slot in the linear map");
	}
	r->idx = pgd_index(addr);
	r->root = percpu_pgtable_root(watcher);
	t = kthread_create_on_cpu(pcpt_race_fn, r, watcher, "pcpt_race/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);

	for (round = 1; round <= rounds; round++) {
		void *table;

		/* The watcher reads the round, then the entries, with acquire. */
		smp_store_release(&r->round, round);
		table = pcpt_populate_root(addr);
		if (!table)
			break;
		deadline = jiffies + HZ;
		/* Pairs with the watcher's release of acked after its reads. */
		while (smp_load_acquire(&r->acked) != round &&
		       time_before(jiffies, deadline))
			cpu_relax();
		/* Same pairing: count only rounds the watcher finished. */
		checked += smp_load_acquire(&r->acked) == round;
		pcpt_clear_root(addr, table);
	}
	migrate_enable();
	kthread_stop(t);
	put_task_struct(t);
	pcpt_release_slot(addr);
	cpus_read_unlock();

	KUNIT_EXPECT_EQ_MSG(test, r->early, 0,
			    "cpu%u saw the master entry %#llx while its own copy held %#llx",
			    watcher, (u64)pgd_val(r->seen_master), (u64)pgd_val(r->seen_copy));
	KUNIT_EXPECT_EQ(test, checked, rounds);
	KUNIT_EXPECT_GT(test, rounds, 0);
}

/*
 * A private range: every CPU (or every node) maps its own page at the same
 * address.  Each CPU must read its own bytes there, and unregistering
 * must give every copy the master's entry back.
 */
struct pcpt_test_client {
	struct percpu_pgtable_client client;
	bool per_node;
	pgd_t **scratch;	/* per CPU, or per node at [nid] */
	struct page **page;
};

static pgd_t pcpt_test_populate(struct percpu_pgtable_client *c, unsigned int cpu,
				unsigned long addr)
{
	struct pcpt_test_client *t = container_of(c, struct pcpt_test_client, client);
	unsigned int i = t->per_node ? cpu_to_node(cpu) : cpu;

	return t->scratch[i] ? t->scratch[i][pgd_index(addr)] : __pgd(0);
}

/* Build the lower levels for @addr under a scratch root with the generic helpers. */
static pgd_t *pcpt_build_private(unsigned long addr, struct page *page)
{
	pgd_t *scratch = (pgd_t *)get_zeroed_page(GFP_KERNEL);
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;

	if (!scratch)
		return NULL;
	p4d = p4d_alloc(&init_mm, scratch + pgd_index(addr), addr);
	pud = p4d ? pud_alloc(&init_mm, p4d, addr) : NULL;
	pmd = pud ? pmd_alloc(&init_mm, pud, addr) : NULL;
	pte = pmd ? pte_alloc_kernel(pmd, addr) : NULL;
	if (!pte)
		return scratch;	/* freed by the caller's teardown */
	set_pte(pte, mk_pte(page, PAGE_KERNEL));
	return scratch;
}

/* Did pcpt_build_private() get all the way down to the leaf? */
static bool pcpt_private_mapped(unsigned long addr, pgd_t *scratch)
{
	pgd_t *pgd = scratch + pgd_index(addr);
	p4d_t *p4d = p4d_offset(pgd, addr);
	pud_t *pud;
	pmd_t *pmd;

	if (p4d_none(*p4d))
		return false;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud))
		return false;
	pmd = pmd_offset(pud, addr);
	if (pmd_none(*pmd))
		return false;
	return pte_present(*pte_offset_kernel(pmd, addr));
}

static void pcpt_free_private(unsigned long addr, pgd_t *scratch)
{
	pgd_t *pgd = scratch + pgd_index(addr);
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;

	if (pgd_none(*pgd))
		goto out;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d))
		goto free_p4d;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud))
		goto free_pud;
	pmd = pmd_offset(pud, addr);
	if (!pmd_none(*pmd))
		pte_free_kernel(&init_mm, pte_offset_kernel(pmd, 0));
	pmd_free(&init_mm, pmd_offset(pud, 0));
free_pud:
	pud_free(&init_mm, pud_offset(p4d, 0));
free_p4d:
	p4d_free(&init_mm, p4d_offset(pgd, 0));
out:
	free_page((unsigned long)scratch);
}

static u64 __no_sanitize_address pcpt_read_private(unsigned long addr)
{
	return READ_ONCE(*(u64 *)addr);
}

struct pcpt_read_ctx {
	unsigned long addr;
	u64 *got;		/* per CPU */
};

/* A CPU without a root runs on the master, where the range is unmapped. */
static bool pcpt_has_root(int cpu, void *data)
{
	return percpu_pgtable_root(cpu);
}

static void pcpt_read_fn(void *data)
{
	struct pcpt_read_ctx *ctx = data;

	ctx->got[smp_processor_id()] = pcpt_read_private(ctx->addr);
}

/*
 * @takeover: the master's entry is valid (an empty table) when the client
 * registers, so registering and unregistering change valid entries of
 * live roots: every CPU must move to a new root, and back.
 */
static void pcpt_private_case(struct kunit *test, bool per_node, bool takeover)
{
	struct pcpt_test_client *t;
	struct pcpt_read_ctx *ctx;
	phys_addr_t *before, *after;
	unsigned long addr, idx;
	unsigned int cpu, i, n = per_node ? nr_node_ids : nr_cpu_ids;
	void *master_table = NULL;
	int ret;

	if (!percpu_pgtable_active())
		kunit_skip(test, "per-CPU kernel page tables are off");
	addr = pcpt_claim_slot();
	if (!addr)
		kunit_skip(test, "no unused top-level slot in the linear map");
	idx = pgd_index(addr);

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	t->scratch = kunit_kcalloc(test, n, sizeof(*t->scratch), GFP_KERNEL);
	t->page = kunit_kcalloc(test, n, sizeof(*t->page), GFP_KERNEL);
	ctx->got = kunit_kcalloc(test, nr_cpu_ids, sizeof(*ctx->got), GFP_KERNEL);
	before = kunit_kcalloc(test, nr_cpu_ids, sizeof(*before), GFP_KERNEL);
	after = kunit_kcalloc(test, nr_cpu_ids, sizeof(*after), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);
	KUNIT_ASSERT_NOT_NULL(test, t->scratch);
	KUNIT_ASSERT_NOT_NULL(test, t->page);
	KUNIT_ASSERT_NOT_NULL(test, ctx->got);
	t->per_node = per_node;
	t->client.name = per_node ? "kunit-per-node" : "kunit-per-cpu";
	t->client.start = addr;
	t->client.end = addr + PGDIR_SIZE;
	t->client.populate = pcpt_test_populate;

	ret = 0;
	for (i = 0; i < n && !ret; i++) {
		if (per_node ? !node_online(i) : !cpu_possible(i))
			continue;
		t->page[i] = alloc_page(GFP_KERNEL);
		if (!t->page[i]) {
			ret = -ENOMEM;
			break;
		}
		*(u64 *)page_address(t->page[i]) = 0x5eed0000ULL + i;
		t->scratch[i] = pcpt_build_private(addr, t->page[i]);
		if (!t->scratch[i] || !pcpt_private_mapped(addr, t->scratch[i]))
			ret = -ENOMEM;
	}
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "could not build the private tables");
	if (!ret && takeover) {
		master_table = pcpt_populate_root(addr);
		KUNIT_EXPECT_NOT_NULL(test, master_table);
		ret = master_table ? 0 : -ENOMEM;
	}

	cpus_read_lock();
	on_each_cpu(pcpt_test_loaded_fn, before, 1);
	cpus_read_unlock();
	if (!ret)
		ret = percpu_pgtable_register_client(&t->client);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret) {
		cpus_read_lock();
		on_each_cpu(pcpt_test_loaded_fn, after, 1);
		for_each_online_cpu(cpu) {
			pgd_t *root = percpu_pgtable_root(cpu);

			if (!root)
				continue;
			/* Each CPU runs on its root, a new one only after a takeover. */
			KUNIT_EXPECT_EQ(test, after[cpu], virt_to_phys(root));
			KUNIT_EXPECT_EQ_MSG(test, after[cpu] != before[cpu], takeover,
					    "cpu%u root %pa -> %pa", cpu, &before[cpu],
					    &after[cpu]);
			if (node_state(cpu_to_node(cpu), N_MEMORY))
				KUNIT_EXPECT_EQ(test, page_to_nid(virt_to_page(root)),
						cpu_to_node(cpu));
		}
		cpus_read_unlock();
		/* Private entries differ; the shared ones still match. */
		KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
		ctx->addr = addr;
		cpus_read_lock();
		on_each_cpu_cond(pcpt_has_root, pcpt_read_fn, ctx, true);
		cpus_read_unlock();
		for_each_online_cpu(cpu) {
			unsigned int want = per_node ? cpu_to_node(cpu) : cpu;

			if (!percpu_pgtable_root(cpu))
				continue;
			KUNIT_EXPECT_EQ_MSG(test, ctx->got[cpu], 0x5eed0000ULL + want,
					    "cpu%u read %#llx", cpu, ctx->got[cpu]);
		}
		KUNIT_EXPECT_EQ(test, percpu_pgtable_unregister_client(&t->client), 0);
		pcpt_expect_everywhere(test, idx, takeover);
		KUNIT_EXPECT_EQ(test, pcpt_check(NULL), 0);
	}
	if (master_table)
		pcpt_clear_root(addr, master_table);

	for (i = 0; i < n; i++) {
		if (t->scratch[i])
			pcpt_free_private(addr, t->scratch[i]);
		if (t->page[i])
			__free_page(t->page[i]);
	}
	pcpt_release_slot(addr);
}

static void pcpt_test_private_per_cpu(struct kunit *test)
{
	pcpt_private_case(test, false, false);
}

/* A client that takes over live entries: new roots, switched to by each CPU. */
static void pcpt_test_private_takeover(struct kunit *test)
{
	pcpt_private_case(test, false, true);
}

static void pcpt_test_private_per_node(struct kunit *test)
{
	pcpt_private_case(test, true, false);
}

/*
 * Once protected, every page of every root's block must be read-only in
 * the linear map (its only other mapping), and a write through the core
 * must still land: the private-range cases above write after protection.
 */
static void pcpt_test_read_only(struct kunit *test)
{
	unsigned int cpu, pages = 0;

	if (!pcpt_is_protected())
		kunit_skip(test, "roots not protected (linear map not page granular)");

	for_each_possible_cpu(cpu) {
		pgd_t *root = percpu_pgtable_root(cpu);
		unsigned long addr;

		if (!root)
			continue;
		for (addr = (unsigned long)root - 2 * PAGE_SIZE;
		     addr <= (unsigned long)root; addr += PAGE_SIZE) {
			pte_t *ptep = virt_to_kpte(addr);

			KUNIT_ASSERT_NOT_NULL_MSG(test, ptep, "cpu%u: %#lx not mapped by a page",
						  cpu, addr);
			KUNIT_EXPECT_FALSE_MSG(test, pte_write(ptep_get(ptep)),
					       "cpu%u: %#lx writable", cpu, addr);
			pages++;
		}
	}
	KUNIT_EXPECT_EQ(test, pages, 3 * pcpt_nr_roots);
}

#ifdef CONFIG_DEBUG_FS
/*
 * For the selftests (pcpt_vmalloc.sh): writing "ADDR" to debugfs
 * percpu_pgtable/test_vmalloc, ADDR the start of a vmalloc range whose
 * top-level entry is empty, vmallocs a page there on a CPU of every node
 * at once (the first creates the top-level entry while the others race
 * to use it), reads every page back on every online CPU, through its own
 * root, and frees them.  The write fails with -EIO on any wrong byte.
 */
struct pcpt_vm {
	unsigned long addr;
	void *page[MAX_NUMNODES];
	struct completion go;
	atomic_t left;
	struct completion done;
	unsigned long bad;
};

static int pcpt_vm_alloc_fn(void *data)
{
	struct pcpt_vm *v = data;
	int nid = numa_node_id();
	u64 *p;

	wait_for_completion(&v->go);
	p = __vmalloc_node_range(PAGE_SIZE, PAGE_SIZE, v->addr, v->addr + PGDIR_SIZE,
				 GFP_KERNEL, PAGE_KERNEL, 0, nid, __builtin_return_address(0));
	if (p)
		*p = 0x5043505456000000ULL | nid;
	v->page[nid] = p;
	if (atomic_dec_and_test(&v->left))
		complete(&v->done);
	return 0;
}

static long pcpt_vm_read_fn(void *data)
{
	struct pcpt_vm *v = data;
	int nid;

	for_each_online_node(nid)
		if (v->page[nid] &&
		    READ_ONCE(*(u64 *)v->page[nid]) != (0x5043505456000000ULL | nid))
			v->bad++;
	return 0;
}

static ssize_t pcpt_test_vmalloc_write(struct file *file, const char __user *ubuf,
				       size_t count, loff_t *ppos)
{
	struct pcpt_vm *v;
	unsigned long addr;
	unsigned int cpu, started = 0, made = 0;
	int nid, ret;

	ret = kstrtoul_from_user(ubuf, count, 0, &addr);
	if (ret)
		return ret;
	/* addr + PGDIR_SIZE would wrap for the top slot. */
	if (!IS_ALIGNED(addr, PGDIR_SIZE) || addr < VMALLOC_START ||
	    addr > VMALLOC_END - PGDIR_SIZE || pgd_val(READ_ONCE(*pgd_offset_k(addr)))) {
		pr_warn("test_vmalloc: %#lx is not an empty top-level slot of vmalloc space (see 'vmalloc free slot' in status)\n",
			addr);
		return -EINVAL;
	}
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	v->addr = addr;
	init_completion(&v->go);
	init_completion(&v->done);
	cpus_read_lock();
	atomic_set(&v->left, 1);
	for_each_online_node(nid) {
		struct task_struct *t;

		cpu = cpumask_first_and(cpumask_of_node(nid), cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			continue;
		t = kthread_create_on_cpu(pcpt_vm_alloc_fn, v, cpu, "pcpt_vm/%u");
		if (IS_ERR(t))
			continue;
		atomic_inc(&v->left);
		started++;
		wake_up_process(t);
	}
	complete_all(&v->go);
	if (!atomic_dec_and_test(&v->left))
		wait_for_completion(&v->done);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, pcpt_vm_read_fn, v);
	cpus_read_unlock();
	for_each_online_node(nid)
		made += !!v->page[nid];
	pr_info("test_vmalloc: %u pages at %#lx from %u nodes, %lu bad reads\n",
		made, addr, started, v->bad);
	ret = v->bad || !made || made != started ? -EIO : count;
	for_each_online_node(nid)
		vfree(v->page[nid]);
	kfree(v);
	return ret;
}

static const struct file_operations pcpt_test_vmalloc_fops = {
	.write = pcpt_test_vmalloc_write,
	.llseek = noop_llseek,
};

static int __init pcpt_test_debugfs_init(void)
{
	struct dentry *dir = debugfs_lookup("percpu_pgtable", NULL);

	if (dir && percpu_pgtable_active())
		debugfs_create_file("test_vmalloc", 0200, dir, NULL, &pcpt_test_vmalloc_fops);
	dput(dir);
	return 0;
}
late_initcall_sync(pcpt_test_debugfs_init);
#endif

static struct kunit_case pcpt_test_cases[] = {
	KUNIT_CASE(pcpt_test_roots),
	KUNIT_CASE(pcpt_test_loaded),
	KUNIT_CASE(pcpt_test_consistent),
	KUNIT_CASE(pcpt_test_vmalloc_populate),
#ifdef CONFIG_HAVE_ARCH_HUGE_VMALLOC
	KUNIT_CASE(pcpt_test_huge_vmap),
#endif
	KUNIT_CASE(pcpt_test_populate_clear),
#ifdef CONFIG_MEMORY_HOTPLUG
	KUNIT_CASE(pcpt_test_vmemmap),
#endif
#ifdef CONFIG_KASAN_GENERIC
	KUNIT_CASE(pcpt_test_kasan_shadow),
#endif
	KUNIT_CASE_SLOW(pcpt_test_concurrent),
	KUNIT_CASE(pcpt_test_master_last),
	KUNIT_CASE(pcpt_test_private_per_cpu),
	KUNIT_CASE(pcpt_test_private_per_node),
	KUNIT_CASE(pcpt_test_private_takeover),
	KUNIT_CASE(pcpt_test_read_only),
	{}
};

static struct kunit_suite pcpt_test_suite = {
	.name = "percpu_pgtable",
	.test_cases = pcpt_test_cases,
};

kunit_test_suite(pcpt_test_suite);

#endif /* _MM_TESTS_PERCPU_PGTABLE_KUNIT_H */

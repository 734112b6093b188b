/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KUnit tests for kernel replication, included by mm/kernel_replication.c.
 * The architecture's hooks (text patching, leaf relocation) have their
 * own suite, kernel_replication_arch.
 */
#include <kunit/test.h>
#include <linux/ptdump.h>

#ifdef CONFIG_MODULES
/*
 * Can @page's linear alias be written?  Writes back the byte that is
 * there, so the page's contents do not change either way.
 */
static bool krepl_test_alias_writable(struct page *page)
{
	u8 *p = page_address(page), b = READ_ONCE(*p);

	return !copy_to_kernel_nofault(p, &b, 1);
}

/* A module of one page of text in the window, freed by the caller. */
static struct module *krepl_test_module(struct kunit *test)
{
	struct module *mod = kunit_kzalloc(test, sizeof(*mod), GFP_KERNEL);
	void *text;

	KUNIT_ASSERT_NOT_NULL(test, mod);
	strscpy(mod->name, "kernel_replication_kunit", sizeof(mod->name));
	text = module_arch_mem_alloc(mod, MOD_TEXT, PAGE_SIZE);
	if (!text)
		kunit_skip(test, "no room in the module window");
	mod->mem[MOD_TEXT].base = text;
	mod->mem[MOD_TEXT].size = PAGE_SIZE;
	return mod;
}

/*
 * set_memory_ro() and set_memory_x() of module text reach every node's
 * entry, and the linear alias of every page behind them becomes
 * read-only with the architecture's policy; set_memory_rw() once nodes
 * have their own copies is refused, and every node's entry stays
 * read-only: a write would reach one copy only.  Without copies (one
 * node) it is allowed, as for execmem memory.
 */
static void krepl_test_module_rw_refused(struct kunit *test)
{
	unsigned long addr;
	struct module *mod;
	int nid, ret, copies = 0;
	void *text;

	/* At boot the window is not set up yet: ktext_maint.sh reruns it. */
	if (!smp_load_acquire(&krepl_mw_ready))
		return;
	mod = krepl_test_module(test);
	text = mod->mem[MOD_TEXT].base;
	addr = (unsigned long)text;
	memset(text, 0, PAGE_SIZE);	/* UDF #0 */
	KUNIT_EXPECT_EQ(test, set_memory_ro(addr, 1), 0);
	KUNIT_EXPECT_EQ(test, set_memory_x(addr, 1), 0);
	module_arch_mem_protected(mod);
	/* The copies made, not the nodes that could have one. */
	for_each_node(nid)
		copies += nid != krepl_master_node && krepl_mw_root(nid) &&
			  pte_pfn(ptep_get(krepl_mw_ptep(krepl_mw_root(nid), addr))) !=
			  pte_pfn(ptep_get(krepl_mw_ptep(init_mm.pgd, addr)));
	kunit_info(test, "module window: %d node copies", copies);
	for_each_node(nid) {
		pte_t pte;

		if (!krepl_mw_root(nid))
			continue;
		pte = ptep_get(krepl_mw_ptep(krepl_mw_root(nid), addr));
		KUNIT_EXPECT_FALSE_MSG(test, pte_write(pte), "node %d: pte %#llx writable",
				       nid, (u64)pte_val(pte));
		KUNIT_EXPECT_EQ_MSG(test, krepl_test_alias_writable(pte_page(pte)),
				    !arch_kernel_replication_protect_aliases(),
				    "node %d: linear alias of pfn %#lx", nid,
				    (unsigned long)pte_pfn(pte));
	}

	ret = set_memory_rw(addr, 1);
	KUNIT_EXPECT_EQ(test, ret, copies ? -EBUSY : 0);
	for_each_node(nid) {
		pte_t pte;

		if (!krepl_mw_root(nid))
			continue;
		pte = ptep_get(krepl_mw_ptep(krepl_mw_root(nid), addr));
		KUNIT_EXPECT_TRUE_MSG(test, pte_present(pte), "node %d: unmapped", nid);
		KUNIT_EXPECT_EQ_MSG(test, !pte_write(pte), !!copies,
				    "node %d: pte %#llx", nid, (u64)pte_val(pte));
	}
	module_arch_mem_free(mod, MOD_TEXT);
}

#ifdef CONFIG_DEBUG_WX
struct krepl_test_entry {
	pte_t old, new;
	int n;
};

/* Swap an entry for e->new, keeping the old one in e->old. */
static int krepl_test_swap_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_test_entry *e = data;

	e->old = ptep_get(ptep);
	set_pte_at(&init_mm, addr, ptep, e->new);
	e->n++;
	return 0;
}

/* Swap the node's entry of @addr, under the lock of the window's writers. */
static pte_t krepl_test_swap(struct kunit *test, int nid, unsigned long addr, pte_t pte)
{
	struct krepl_test_entry e = { .new = pte };
	int ret;

	mutex_lock(&krepl_mw_lock);
	ret = apply_to_existing_page_range(krepl_nodes[nid].mm, addr, PAGE_SIZE,
					   krepl_test_swap_pte, &e);
	mutex_unlock(&krepl_mw_lock);
	flush_tlb_kernel_range(addr, addr + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, e.n, 1, "node %d: %#lx not mapped", nid, addr);
	return e.old;
}

/*
 * The W^X check walks the entries CPUs share (a node's) once, for the
 * first CPU that has them: a writable and executable page in one node's
 * tables only must still fail it.  A module window page is mapped
 * read-write and non-executable everywhere, then made executable in that
 * node's entry alone (a permission change: no break-before-make), and
 * put back before anything can run it.  The check's warning is expected:
 * the markers around it tell the console check so.
 */
static void krepl_test_wx_node(struct kunit *test)
{
	struct module *mod;
	unsigned long addr;
	int nid, node = NUMA_NO_NODE;
	pte_t old, wx;
	void *text;
	bool ok;

	/* Pairs with the release in krepl_mw_setup(), as the allocator's. */
	if (!smp_load_acquire(&krepl_mw_ready))
		return;
	for_each_node(nid) {
		if (nid != krepl_master_node && krepl_nodes[nid].mm &&
		    cpumask_intersects(cpumask_of_node(nid), cpu_possible_mask))
			node = nid;
	}
	if (node == NUMA_NO_NODE)
		return;
	mod = krepl_test_module(test);
	text = mod->mem[MOD_TEXT].base;
	addr = (unsigned long)text;

	/*
	 * Executable by clearing only what keeps PAGE_KERNEL from executing
	 * (arm64: PXN), so that no other attribute changes on the live entry.
	 */
	wx = ptep_get(krepl_mw_ptep(krepl_node_pgd(node), addr));
	wx = __pte(pte_val(wx) & ~(pgprot_val(PAGE_KERNEL) ^ pgprot_val(PAGE_KERNEL_EXEC)));
	old = krepl_test_swap(test, node, addr, wx);
	pr_warn("PCPT-EXPECT-WARN-BEGIN note_page|note_prot_wx\n");
	ok = ptdump_check_wx();
	pr_warn("PCPT-EXPECT-WARN-END note_page|note_prot_wx\n");
	krepl_test_swap(test, node, addr, old);
	KUNIT_EXPECT_FALSE_MSG(test, ok, "node %d: a W+X page in its tables passed the check",
			       node);
	KUNIT_EXPECT_EQ_MSG(test, pte_val(old),
			    pte_val(ptep_get(krepl_mw_ptep(init_mm.pgd, addr))),
			    "node %d: the entry was not the master's", node);
	KUNIT_EXPECT_TRUE_MSG(test, ptdump_check_wx(), "the check fails with the page put back");
	kunit_info(test, "W^X: a W+X page in node %d's tables, then none\n", node);
	module_arch_mem_free(mod, MOD_TEXT);
}
#else
static void krepl_test_wx_node(struct kunit *test)
{
	kunit_skip(test, "CONFIG_DEBUG_WX=n");
}
#endif
#else
static void krepl_test_module_rw_refused(struct kunit *test)
{
	kunit_skip(test, "CONFIG_MODULES=n");
}

static void krepl_test_wx_node(struct kunit *test)
{
	kunit_skip(test, "CONFIG_MODULES=n");
}
#endif

/*
 * The entry one level below the top for @addr in @root: the one pointing
 * at the table krepl_granule() covers (a PUD entry with four levels, a
 * PMD entry with three).
 */
static u64 krepl_test_granule_entry(pgd_t *root, unsigned long addr)
{
	p4d_t *p4d = p4d_offset(pgd_offset_pgd(root, addr), addr);
	pud_t *pud;

	if (p4d_none(p4dp_get(p4d)))
		return 0;
	pud = pud_offset(p4d, addr);
	if (krepl_granule() == PUD_SIZE)
		return pud_val(pudp_get(pud));
	if (pud_none(pudp_get(pud)) || pud_leaf(pudp_get(pud)))
		return 0;
	return pmd_val(pmdp_get(pmd_offset(pud, addr)));
}

/* The frame @root translates @addr to through PMD blocks or pages, or 0. */
static unsigned long krepl_test_pfn(pgd_t *root, unsigned long addr)
{
	p4d_t *p4d = p4d_offset(pgd_offset_pgd(root, addr), addr);
	pud_t *pud;
	pmd_t *pmd;
	pte_t pte;

	if (p4d_none(p4dp_get(p4d)))
		return 0;
	pud = pud_offset(p4d, addr);
	if (pud_none(pudp_get(pud)) || pud_leaf(pudp_get(pud)))
		return 0;
	pmd = pmd_offset(pud, addr);
	if (pmd_none(pmdp_get(pmd)))
		return 0;
	if (pmd_leaf(pmdp_get(pmd)))
		return pmd_pfn(pmdp_get(pmd)) + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	pte = ptep_get(pte_offset_kernel(pmd, addr));
	return pte_present(pte) ? pte_pfn(pte) : 0;
}

/*
 * Every granule of the box outside the private span has a table in the
 * master, allocated at boot, and every node's own table above it points
 * at that same table: a mapping made there reaches all nodes.  A vmalloc
 * area placed in such a granule translates to the same pages through
 * every node's tables.  Runs once replication is active (ktext_maint.sh
 * reruns the suite after boot).
 */
static void krepl_test_box_shared(struct kunit *test)
{
	unsigned long addr, lo, hi, size, g = krepl_granule(), n = 0;
	pgd_t *root;
	void *area;
	int nid;

	/*
	 * Not a skip: ktext_maint.sh fails on any skip of the rerun, also on
	 * boots where replication is off, and requires this case's line
	 * when it is active.
	 */
	if (!READ_ONCE(krepl_active))
		return;
	for (addr = ALIGN_DOWN(krepl_box_lo, g); addr < krepl_box_hi; addr += g) {
		u64 master;

		if (addr >= krepl_priv_lo && addr < krepl_priv_hi)
			continue;
		master = krepl_test_granule_entry(init_mm.pgd, addr);
		KUNIT_EXPECT_TRUE_MSG(test, master && !(g == PUD_SIZE ?
				      pud_leaf(__pud(master)) : pmd_leaf(__pmd(master))),
				      "%#lx: master entry %#llx is not a table", addr, master);
		for_each_node(nid) {
			pgd_t *node_pgd = krepl_node_pgd(nid);

			if (!krepl_has_copy(nid) || !node_pgd)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, krepl_test_granule_entry(node_pgd, addr),
					    master, "%#lx: node %d", addr, nid);
		}
		n++;
	}
	kunit_info(test, "box: %lu shared granules checked\n", n);
	KUNIT_EXPECT_GT(test, n, 0);

	/*
	 * Shared granules below the private span, else above it.  Two PMDs'
	 * worth where that is small, so vmalloc may try a block mapping.
	 */
	lo = ALIGN(krepl_box_lo, g);
	hi = krepl_priv_lo;
	size = min_t(unsigned long, 2 * PMD_SIZE, SZ_64M);
	if (hi < lo + size) {
		lo = krepl_priv_hi;
		hi = ALIGN_DOWN(krepl_box_hi, g);
	}
	if (hi < lo + size)
		kunit_skip(test, "no shared %lu KiB in the box", size >> 10);
	area = __vmalloc_node_range(size, PAGE_SIZE, lo, hi, GFP_KERNEL,
				    PAGE_KERNEL, VM_ALLOW_HUGE_VMAP,
				    NUMA_NO_NODE, __builtin_return_address(0));
	if (!area)
		kunit_skip(test, "cannot vmalloc %lu KiB in %#lx-%#lx", size >> 10, lo, hi);
	for_each_node(nid) {
		unsigned int cpu = cpumask_first(cpumask_of_node(nid));

		if (!krepl_has_copy(nid) || !krepl_node_pgd(nid) || cpu >= nr_cpu_ids)
			continue;
		root = percpu_pgtable_root(cpu);
		if (!root)
			continue;
		for (addr = (unsigned long)area; addr < (unsigned long)area + size;
		     addr += PAGE_SIZE) {
			if (krepl_test_pfn(root, addr) != vmalloc_to_pfn((void *)addr)) {
				KUNIT_FAIL(test, "node %d (cpu%u): %#lx maps pfn %#lx, not %#lx",
					   nid, cpu, addr, krepl_test_pfn(root, addr),
					   vmalloc_to_pfn((void *)addr));
				break;
			}
		}
	}
	vfree(area);
}

/* SLIT distances need not be symmetric: 1 -> 3 is 15, 3 -> 1 is 25. */
static const int krepl_test_dist[4][4] = {
	{ 10, 20, 20, 20 },
	{ 20, 10, 15, 15 },
	{ 20, 15, 10, 15 },
	{ 20, 25, 15, 10 },
};

static int krepl_test_distance(int from, int to)
{
	return krepl_test_dist[from][to];
}

/*
 * Every node's module window is translated through PTE tables of the
 * node's own, each a page table with the lock apply_to_page_range() takes
 * on the node's mm: without one it would dereference a NULL lock where
 * page-table locks are allocated apart (lockdep kernels), or allocate a
 * user table.  Read from the tables themselves, at every page size.
 */
static void krepl_test_window_tables(struct kunit *test)
{
	unsigned long addr, n = 0;
	int nid;

	if (!READ_ONCE(krepl_active) || !krepl_mw_lo)
		return;
	for_each_node(nid) {
		pgd_t *root = krepl_node_pgd(nid);

		if (!root || nid == krepl_master_node)
			continue;
		/* The window may span two PMDs (at 16K, unless 32M-aligned). */
		for (addr = ALIGN_DOWN(krepl_mw_lo, PMD_SIZE); addr < krepl_mw_hi;
		     addr += PMD_SIZE) {
			p4d_t *p4d = p4d_offset(pgd_offset_pgd(root, addr), addr);
			pmd_t pmd = pmdp_get(pmd_offset(pud_offset(p4d, addr), addr));
			pmd_t master;

			p4d = p4d_offset(pgd_offset_k(addr), addr);
			master = pmdp_get(pmd_offset(pud_offset(p4d, addr), addr));
			if (!pmd_present(pmd) || pmd_leaf(pmd)) {
				KUNIT_FAIL(test, "node %d: %#lx: pmd %#llx is not a table",
					   nid, addr, (u64)pmd_val(pmd));
				continue;
			}
			KUNIT_EXPECT_NE_MSG(test, pmd_val(pmd), pmd_val(master),
					    "node %d: %#lx: the master's PTE table", nid, addr);
			KUNIT_EXPECT_TRUE_MSG(test, PageTable(pmd_page(pmd)),
					      "node %d: %#lx: PTE table without its constructor",
					      nid, addr);
			n++;
		}
	}
	kunit_info(test, "module window: %lu node PTE tables checked\n", n);
}

/*
 * A node without a copy uses the nearest node's, on a synthetic distance
 * table: node 0 holds the image, nodes 1-3 are 15 from each other (but 3
 * to 1 is 25) and 20 from node 0.
 */
static void krepl_test_nearest(struct kunit *test)
{
	nodemask_t copies = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs 4 possible nodes");
	node_set(0, copies);
	/* Only the master: everybody uses it. */
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(3, &copies, 0, krepl_test_distance), 0);
	node_set(2, copies);
	/* Node 2 is nearer to 1 and 3 than the master. */
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(3, &copies, 0, krepl_test_distance), 2);
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(1, &copies, 0, krepl_test_distance), 2);
	node_set(1, copies);
	/* From 3, not to 3: 1 is 25 away, 2 is 15 (to 3 both are 15). */
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(3, &copies, 0, krepl_test_distance), 2);
	/* A node with its own copy is its own nearest. */
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(2, &copies, 0, krepl_test_distance), 2);
	/* From 1, nodes 2 and 3 tie: the lower number. */
	nodes_clear(copies);
	node_set(0, copies);
	node_set(2, copies);
	node_set(3, copies);
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(1, &copies, 0, krepl_test_distance), 2);
	/* With node 2 as the master, its tie with node 3 goes to it. */
	nodes_clear(copies);
	node_set(3, copies);
	KUNIT_EXPECT_EQ(test, krepl_nearest_of(1, &copies, 2, krepl_test_distance), 2);
}

static struct kunit_case krepl_test_cases[] = {
	KUNIT_CASE(krepl_test_nearest),
	KUNIT_CASE(krepl_test_module_rw_refused),
	KUNIT_CASE(krepl_test_box_shared),
	KUNIT_CASE(krepl_test_window_tables),
	KUNIT_CASE(krepl_test_wx_node),
	{}
};

static struct kunit_suite krepl_test_suite = {
	.name = "kernel_replication",
	.test_cases = krepl_test_cases,
};

kunit_test_suite(krepl_test_suite);

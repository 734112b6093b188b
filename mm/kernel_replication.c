// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel text and rodata replicated per NUMA node.
 *
 * A client of the per-CPU kernel page tables: the top-level entries that
 * cover the kernel image and its module box are private, and every CPU's
 * root points them at the tables of its node, in which the text and
 * rodata leaves point at the node's physical copy of the image.  Nothing
 * below the root is synchronised at run time: the node tables are built
 * once, from the master, and are never written again.  That holds because
 * every entry of a node-private table is either
 *
 *  - a text or rodata leaf, which nothing but this file writes (the image
 *    is not in any vm area set_memory_*() accepts);
 *  - a pointer to a lower table shared with the master, which stays for
 *    good: the image's own tables, and the module box's tables one level
 *    below the node's own (PMD tables with four levels, PTE tables with
 *    three: krepl_granule()), which are allocated before the copies are
 *    made and which pud_free_pmd_page() and pmd_free_pte_page() refuse to
 *    free (kernel_replication_shared_table());
 *  - empty in a range reserved from vmalloc at boot
 *    (kernel_replication_reserve_va()), so that no generic code ever maps
 *    there;
 *  - a leaf of the module window, a range reserved the same way right
 *    below the image, whose PTE tables exist before the node tables are
 *    built, one set per node and the master's: this file maps module text
 *    and rodata there itself, in every set, under krepl_mw_lock (see
 *    "Modules" below).
 *
 * The architecture says where the image's box and the module window are,
 * writes a copy and relocates a leaf entry: the hooks in
 * <linux/kernel_replication.h>.  Everything else is here.
 *
 * See Documentation/mm/kernel-replication.rst.
 */

#define pr_fmt(fmt) "kernel_replication: " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/genalloc.h>
#include <linux/kasan.h>
#include <linux/kernel_replication.h>
#include <linux/kmemleak.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/ktime.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/moduleloader.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/pagewalk.h>
#include <linux/percpu_pgtable.h>
#include <linux/pgalloc.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/set_memory.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <asm/pgalloc.h>
#include <asm/sections.h>
#include <asm/tlbflush.h>

/**
 * struct krepl_node - what the CPUs of one node translate the image to
 * @base: physical address of this node's copy of [_stext, __end_rodata)
 *	(the master's address on the node that holds the image)
 * @mm: owns the node's tables and never runs: its top-level table is one
 *	of which only the private entries are used, which point at this
 *	node's tables (NULL: the master's entries).  An mm, as the this_cpu
 *	window keeps one per CPU, so that apply_to_page_range() can change
 *	the node's module window entries as it changes the master's
 * @use: the node whose copy this node's CPUs use: itself when it has a
 *	copy, else the nearest node that has one; NUMA_NO_NODE for nodes
 *	without CPUs
 */
struct krepl_node {
	phys_addr_t base;
	struct mm_struct *mm;
	int use;
};

/*
 * Written at boot and by kernel_replication_init(), which runs after rodata has
 * become read-only: hence __read_mostly, not __ro_after_init.
 */
static struct krepl_node krepl_nodes[MAX_NUMNODES] __read_mostly;

/* The node's top-level table, or NULL: its CPUs use the master's entries. */
static __always_inline pgd_t *krepl_node_pgd(int nid)
{
	return krepl_nodes[nid].mm ? krepl_nodes[nid].mm->pgd : NULL;
}

static int krepl_master_node __read_mostly = NUMA_NO_NODE;
static phys_addr_t krepl_master_pa __read_mostly;
static size_t krepl_size __read_mostly;
static unsigned int krepl_copies __read_mostly;
static unsigned long krepl_table_pages;
static const char *krepl_reason __read_mostly =
	"waiting for mark_rodata_ro(), which rodata=off never calls";

/*
 * Set under stop_machine() when every copy is made and the roots point at
 * them; read through kernel_replication_text_active() by the architecture's
 * text patching primitives under their lock, and by
 * kernel_replication_prepare().  stop_machine() runs while no CPU holds that
 * lock (the architecture takes it with interrupts off: patch_lock, a raw
 * spinlock, on arm64), so no patch can fall between the copy and the switch.
 * Global only for that inline read; nothing else may write it.
 */
bool krepl_active __read_mostly;

/* The module box and the top-level range that holds it and the image. */
static unsigned long krepl_box_lo __ro_after_init;
static unsigned long krepl_box_hi __ro_after_init;
static unsigned long krepl_slot_lo __ro_after_init;
static unsigned long krepl_slot_hi __ro_after_init;
/*
 * The range whose tables one level above the image's leaves are the
 * node's own: whole granules (krepl_granule()) around the image and the
 * module window.  Only the image and the window are mapped in it.
 */
static unsigned long krepl_priv_lo __ro_after_init;
static unsigned long krepl_priv_hi __ro_after_init;
/* Alignment of each copy to the master, for blocks and contiguous hints. */
static unsigned long krepl_copy_align __ro_after_init;

/*
 * The size a table covers one level below the top-level entries that are
 * private: each node copies that table where it holds image text, rodata
 * or the module window, and shares it elsewhere in the box.  With four
 * levels that is a PMD table (PUD_SIZE); with three, the top-level entry
 * points at PMD tables directly (the PUD level is folded), which are the
 * node's own throughout: the table shared below them is the PTE table
 * (PMD_SIZE).
 */
static unsigned long krepl_granule(void)
{
	return mm_pud_folded(&init_mm) ? PMD_SIZE : PUD_SIZE;
}

/*
 * Modules: text and rodata of modules are allocated in the module window
 * [krepl_mw_lo, krepl_mw_hi), right below the image and so in direct branch
 * range of it.  Vmalloc never maps there (a vm area reserves it), and its
 * PTE tables are allocated before the node tables are built, which copy
 * them: every node's CPUs, and the master's, translate the window through
 * PTE tables of their own, which only this file writes, through
 * apply_to_page_range() on each node's mm (struct krepl_node).  A module's pages
 * are mapped to the master's pages in every table while it loads, and
 * each node's entries are pointed at a node-local copy once its text and
 * rodata are final (module_arch_mem_protected()).  The entries are the
 * only record of which page is where.
 *
 * krepl_mw_lock serialises the writers of those entries: allocation,
 * set_memory_*(), the switch to the copies, freeing, and verify.  The text
 * patching primitives read them under the text patching lock without it:
 * until module_arch_mem_protected() has returned, a module is patched only
 * by its own loader thread (ftrace_module_init()), when every node still
 * maps the master's pages; after it, every node's entries are final until
 * the module's memory is freed, by which time nothing patches it.  Nothing
 * else reads a module's window range meanwhile: it is not visible, not
 * scanned by kmemleak, and a hole for /proc/kcore.  Each allocation is
 * followed by an unmapped guard page, as vmalloc's are.
 */
#define KREPL_MW_SIZE	KERNEL_REPLICATION_WINDOW_MAX

static unsigned long krepl_mw_lo, krepl_mw_hi;
static struct vm_struct krepl_mw_vm;
static struct gen_pool *krepl_mw_pool;
static bool krepl_mw_ready __read_mostly;
static DEFINE_MUTEX(krepl_mw_lock);
/* Under krepl_mw_lock: pages mapped, node copies, copies that failed. */
static unsigned long krepl_mw_pages, krepl_mw_copies, krepl_mw_failed;
static const char *krepl_mw_reason = "replication is inactive";

static bool krepl_enabled __ro_after_init = true;
static const char *krepl_off_why __ro_after_init = "off (kernel_replication=off)";
/* How much of the window the allocator hands out: kernel_replication_modules=. */
static unsigned long krepl_mw_limit __ro_after_init = KREPL_MW_SIZE;

static int __init kernel_replication_param(char *arg)
{
	if (arg && !strcmp(arg, "on")) {
		krepl_enabled = true;
	} else if (arg && !strcmp(arg, "off")) {
		krepl_enabled = false;
	} else {
		pr_warn("kernel_replication=%s: unknown value, expected 'on' or 'off'; using the default (on)\n",
			arg ?: "");
		krepl_enabled = true;
	}
	return 0;
}
early_param("kernel_replication", kernel_replication_param);

/*
 * Decimal bytes with an optional K, M or G suffix.  memparse() wraps
 * silently ("16E" or 2^64 would read as 0, turning module replication
 * off); here too many digits or a shift past 64 bits is an error.
 */
static int __init krepl_parse_size(const char *arg, unsigned long long *size)
{
	size_t len = strspn(arg, "0123456789");
	unsigned int shift = 0;
	unsigned long long n;
	char digits[21];

	if (!len || len >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, arg, len);
	digits[len] = '\0';
	if (kstrtoull(digits, 10, &n))
		return -ERANGE;
	switch (arg[len]) {
	case '\0':
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (shift && arg[len + 1])
		return -EINVAL;
	if (n > (ULLONG_MAX >> shift))
		return -ERANGE;
	*size = n << shift;
	return 0;
}

/*
 * The window's size is fixed by the layout; a smaller limit leaves room
 * for fewer modules (0: none is replicated), which is how the tests fill it.
 */
static int __init kernel_replication_modules_param(char *arg)
{
	unsigned long long size = 0;

	/* Anything but 0 must hold one page and its guard. */
	if (!arg || krepl_parse_size(arg, &size) || size > KREPL_MW_SIZE ||
	    (size && size < 2 * PAGE_SIZE)) {
		pr_warn("kernel_replication_modules=%s: expected 0 or a size from %luK to %uM; using %uM\n",
			arg ?: "", 2 * PAGE_SIZE >> 10, KREPL_MW_SIZE >> 20,
			KREPL_MW_SIZE >> 20);
		size = KREPL_MW_SIZE;
	}
	/* A limit: never more than asked for. */
	krepl_mw_limit = PAGE_ALIGN_DOWN(size);
	return 0;
}
early_param("kernel_replication_modules", kernel_replication_modules_param);

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
/*
 * Testing aid, as percpu_pgtable_testfail=: pretend that the copies of
 * these nodes cannot be allocated, to exercise the fallback to another
 * node's copy.
 */
static nodemask_t krepl_testfail __initdata;

static int __init kernel_replication_testfail_param(char *arg)
{
	if (!arg || !*arg || nodelist_parse(arg, krepl_testfail)) {
		pr_warn("kernel_replication_testfail=%s: expected a node list such as 1 or 1-2; using none\n",
			arg ?: "");
		nodes_clear(krepl_testfail);
	}
	return 0;
}
early_param("kernel_replication_testfail", kernel_replication_testfail_param);

static bool __init krepl_test_alloc_fails(int nid)
{
	return node_isset(nid, krepl_testfail);
}
#else
static inline bool krepl_test_alloc_fails(int nid)
{
	return false;
}
#endif

static struct vm_struct krepl_holes[4];

static void __init krepl_hole(struct vm_struct *vm, unsigned long start,
			      unsigned long end)
{
	if (start >= end)
		return;
	vm->addr = (void *)start;
	vm->size = end - start;
	/*
	 * VM_SPARSE: /proc/kcore reads it as a hole.  The module window's
	 * pages may be freed under it, and it must not read them.
	 */
	vm->flags = VM_NO_GUARD | VM_SPARSE;
	vm->caller = kernel_replication_reserve_va;
	vm_area_add_early(vm);
}

/**
 * kernel_replication_module_base() - the lowest address of replicated module text
 *
 * Return: the start of the module window, which module_init_limits() must
 * keep in branch range of the image, or 0 if there is none.
 */
unsigned long kernel_replication_module_base(void)
{
	return krepl_mw_lo;
}

/**
 * kernel_replication_module_addr() - is this address in the module window?
 * @addr: virtual address
 *
 * Return: true if @addr belongs to replicated module text or rodata, whose
 * permissions kernel_replication_module_prot() changes.
 */
notrace bool kernel_replication_module_addr(unsigned long addr)
{
	return addr >= krepl_mw_lo && addr < krepl_mw_hi;
}

NOKPROBE_SYMBOL(kernel_replication_module_addr);

/* A table of @n entries of @size bytes, from memblock, or NULL. */
static void * __init krepl_early_table(unsigned long n, size_t size)
{
	return memblock_alloc(n * size, max_t(size_t, n * size, PAGE_SIZE));
}

/*
 * Give every granule of the box outside the private span its table (a
 * PMD table with four levels, a PTE table with three) in the master, from
 * memblock, as pcpu_populate_pte() does for the first percpu chunk.  This
 * runs before vmalloc_init(), so nothing can have mapped there yet, and
 * from here on a mapping there writes only tables the nodes share: not
 * the entries of a node's own table above them, which a block mapping
 * (a 1 GiB ioremap() with four levels, a vmalloc_huge() of a PMD range
 * with three) would otherwise write at any time before the switch.  The
 * tables are never freed (kernel_replication_shared_table()).
 */
static int __init krepl_populate_box(void)
{
	unsigned long addr, g = krepl_granule();

	for (addr = ALIGN_DOWN(krepl_box_lo, g); addr < krepl_box_hi; addr += g) {
		pgd_t *pgd = pgd_offset_k(addr);
		p4d_t *p4d;
		pud_t *pud;
		pmd_t *pmd;
		void *t;

		/* Copied for each node, not shared. */
		if (addr >= krepl_priv_lo && addr < krepl_priv_hi)
			continue;
		/* The p4d level is folded on every configuration with the box. */
		p4d = p4d_offset(pgd, addr);
		if (p4d_none(p4dp_get(p4d))) {
			t = krepl_early_table(PTRS_PER_PUD, sizeof(pud_t));
			if (!t)
				return -ENOMEM;
			p4d_populate_kernel(addr, p4d, t);
		}
		pud = pud_offset(p4d, addr);
		/* Nothing maps a block in the box this early. */
		if (WARN_ON(pud_leaf(pudp_get(pud))))
			return -EBUSY;
		if (pud_none(pudp_get(pud))) {
			t = krepl_early_table(PTRS_PER_PMD, sizeof(pmd_t));
			if (!t)
				return -ENOMEM;
			pud_populate(&init_mm, pud, t);
		}
		if (g == PUD_SIZE)
			continue;
		pmd = pmd_offset(pud, addr);
		if (WARN_ON(pmd_leaf(pmdp_get(pmd))))
			return -EBUSY;
		if (pmd_none(pmdp_get(pmd))) {
			t = krepl_early_table(PTRS_PER_PTE, sizeof(pte_t));
			if (!t)
				return -ENOMEM;
			pmd_populate_kernel(&init_mm, pmd, t);
		}
	}
	return 0;
}

/**
 * kernel_replication_reserve_va() - lay out the image's private tables
 *
 * Called by the architecture once the image's virtual areas are declared.
 * The private top-level entries are those covering the image and its
 * module box (see struct kernel_replication_layout).  From here on the
 * tables under them are not freed (kernel_replication_shared_table());
 * kernel_replication_reserve() gives that back if no node gets a copy, and
 * otherwise reserves the virtual space and the box's shared tables.
 */
void __init kernel_replication_reserve_va(void)
{
	struct kernel_replication_layout layout = { };
	unsigned long text = (unsigned long)_text;
	/* the data segment's vm area has a guard page */
	unsigned long end = (unsigned long)_end + PAGE_SIZE;

	if (!krepl_enabled)
		return;

	arch_kernel_replication_layout(&layout);
	/* The layout's contract: the box holds the image. */
	if (WARN_ON(layout.box_start > text || layout.box_end < end ||
		    !is_power_of_2(layout.copy_align) ||
		    layout.copy_align < PAGE_SIZE)) {
		krepl_off_why = "off: the architecture's layout is invalid";
		krepl_enabled = false;
		return;
	}
	krepl_box_lo = layout.box_start;
	krepl_box_hi = layout.box_end;
	krepl_slot_lo = ALIGN_DOWN(krepl_box_lo, PGDIR_SIZE);
	krepl_slot_hi = ALIGN(krepl_box_hi, PGDIR_SIZE);
	if (IS_ENABLED(CONFIG_MODULES) && layout.window_start) {
		krepl_mw_lo = layout.window_start;
		krepl_mw_hi = layout.window_end;
		/* The layout's contract: modules are not replicated without. */
		if (WARN_ON(krepl_mw_lo < krepl_box_lo || krepl_mw_hi > text ||
			    !PAGE_ALIGNED(krepl_mw_lo) ||
			    !PAGE_ALIGNED(krepl_mw_hi) ||
			    krepl_mw_hi <= krepl_mw_lo ||
			    krepl_mw_hi - krepl_mw_lo > KREPL_MW_SIZE)) {
			krepl_mw_lo = 0;
			krepl_mw_hi = 0;
		}
	}

	krepl_copy_align = layout.copy_align;

	/* The module window is private like the image: so is its granule. */
	krepl_priv_lo = ALIGN_DOWN(krepl_mw_lo ?: text, krepl_granule());
	krepl_priv_hi = ALIGN(end, krepl_granule());
}

/*
 * Keep vmalloc out of the image's private tables: reserve the rest of the
 * private top-level entries, and the rest of the granules holding the
 * image and the module window (krepl_granule(): their tables are per
 * node), so that only the box's other granules can ever receive new
 * mappings, and give those their shared tables.  Only once a node has a
 * copy: otherwise nothing is reserved and vmalloc may map blocks there.
 * Before vmalloc_init(), which the early vm areas need.
 */
static int __init krepl_reserve_box(void)
{
	unsigned long text = (unsigned long)_text;
	unsigned long end = (unsigned long)_end + PAGE_SIZE;
	unsigned long lo = krepl_priv_lo;
	int ret;

	ret = krepl_populate_box();
	if (ret)
		return ret;
	krepl_hole(&krepl_holes[0], krepl_slot_lo, min(krepl_box_lo, lo));
	krepl_hole(&krepl_holes[1], lo, krepl_mw_lo ?: text);
	krepl_hole(&krepl_mw_vm, krepl_mw_lo, krepl_mw_lo ? text : 0);
	krepl_hole(&krepl_holes[2], end, krepl_priv_hi);
	krepl_hole(&krepl_holes[3], max(krepl_box_hi, krepl_priv_hi), krepl_slot_hi);
	return 0;
}

/* No copy will be used: tables in the box may be freed, no window. */
static void __init krepl_forget_box(void)
{
	krepl_slot_lo = 0;
	krepl_slot_hi = 0;
	krepl_mw_lo = 0;
	krepl_mw_hi = 0;
}

static bool krepl_has_copy(int nid)
{
	return krepl_nodes[nid].use == nid && nid != krepl_master_node;
}

/*
 * The node of @copies nearest to @nid by @distance.  Ties go to @master
 * (the image's node, which always has the text), then to the lowest node
 * number.  Kept apart from the node map for the KUnit test.
 */
static int krepl_nearest_of(int nid, const nodemask_t *copies, int master,
			    int (*distance)(int from, int to))
{
	int best = master, n;

	for_each_node_mask(n, *copies) {
		if (distance(nid, n) < distance(nid, best))
			best = n;
	}
	return best;
}

static int __init krepl_node_distance(int from, int to)
{
	return node_distance(from, to);
}

static int __init krepl_nearest(int nid)
{
	nodemask_t copies = NODE_MASK_NONE;
	int n;

	for_each_node(n) {
		if (krepl_nodes[n].use == n)
			node_set(n, copies);
	}
	return krepl_nearest_of(nid, &copies, krepl_master_node, krepl_node_distance);
}

/**
 * kernel_replication_reserve() - reserve a node-local copy of text and rodata
 *
 * Called from setup_arch() once every possible CPU's node is known.  Each
 * node with CPUs and memory, other than the image's, gets a physically
 * contiguous block congruent to the image modulo the layout's copy_align,
 * so every block and contiguous mapping of the master can be repeated for
 * the copy.  A node
 * without a copy (no memory, or the allocation failed) uses the nearest
 * node's copy; the master is always there to fall back to.
 */
void __init kernel_replication_reserve(void)
{
	nodemask_t want = NODE_MASK_NONE;
	phys_addr_t off, pa;
	unsigned int cpu;
	int nid;

	for_each_node(nid)
		krepl_nodes[nid].use = NUMA_NO_NODE;
	if (!krepl_enabled) {
		krepl_reason = krepl_off_why;
		krepl_forget_box();
		return;
	}
	/* mark_rodata_ro() is never called: the copies would never be used. */
	if (!rodata_enabled) {
		krepl_reason = "off (rodata=off: text and rodata are never final)";
		krepl_forget_box();
		return;
	}
	if (!percpu_pgtable_wanted()) {
		krepl_reason = "per-CPU kernel page tables are off";
		krepl_forget_box();
		return;
	}

	krepl_master_pa = __pa_symbol(_stext);
	krepl_size = PAGE_ALIGN((unsigned long)__end_rodata - (unsigned long)_stext);
	krepl_master_node = early_pfn_to_nid(PHYS_PFN(krepl_master_pa));
	krepl_nodes[krepl_master_node].base = krepl_master_pa;
	krepl_nodes[krepl_master_node].use = krepl_master_node;

	for_each_possible_cpu(cpu)
		node_set(early_cpu_to_node(cpu), want);

	off = krepl_master_pa & (krepl_copy_align - 1);
	for_each_node_mask(nid, want) {
		if (nid == krepl_master_node || !node_state(nid, N_MEMORY))
			continue;
		pa = 0;
		if (!krepl_test_alloc_fails(nid))
			pa = memblock_alloc_range_nid(off + krepl_size,
						      krepl_copy_align, 0,
						      MEMBLOCK_ALLOC_ACCESSIBLE,
						      nid, true);
		if (!pa) {
			pr_warn("node %d: cannot allocate a %zu KiB copy of text and rodata: its CPUs use another node's copy\n",
				nid, krepl_size >> 10);
			continue;
		}
		if (off)
			memblock_phys_free(pa, off);
		krepl_nodes[nid].base = pa + off;
		krepl_nodes[nid].use = nid;
		krepl_copies++;
	}

	for_each_node_mask(nid, want) {
		if (krepl_nodes[nid].use != NUMA_NO_NODE)
			continue;
		krepl_nodes[nid].use = krepl_nearest(nid);
		pr_info("node %d has no copy: its CPUs use node %d's\n", nid,
			krepl_nodes[nid].use);
	}
	if (!krepl_copies) {
		krepl_reason = "no node other than the image's has CPUs and a copy";
		krepl_forget_box();
		return;
	}
	if (krepl_reserve_box()) {
		/*
		 * The tables already installed stay, and so does the slot:
		 * memblock pages must never reach pmd_free_pte_page().
		 */
		pr_warn("cannot allocate the module box's page tables: every node uses the master copy\n");
		krepl_reason = "cannot allocate the module box's page tables";
		for_each_node_mask(nid, want) {
			if (krepl_has_copy(nid)) {
				memblock_phys_free(krepl_nodes[nid].base, krepl_size);
				krepl_nodes[nid].base = 0;
			}
			krepl_nodes[nid].use = krepl_master_node;
		}
		krepl_copies = 0;
		krepl_mw_lo = 0;
		krepl_mw_hi = 0;
	}
}

/**
 * kernel_replication_shared_table() - must this kernel page table stay?
 * @addr: virtual address covered by the table
 * @size: the size of the range it covers (PUD_SIZE for a PMD table,
 *	PMD_SIZE for a PTE table)
 *
 * Return: true if the entry pointing at the table covering @addr lies in
 * a table each node has its own copy of, under the private top-level
 * entries (a PUD table with four levels, a PMD table with three), so that
 * the table must not be freed: the node copies would keep pointing at it.
 * From boot when replication is enabled, not only once it is on.
 */
bool kernel_replication_shared_table(unsigned long addr, unsigned long size)
{
	/*
	 * From boot, not from the switch: a table freed while the node
	 * tables are being built would be as bad, and a block mapping in
	 * the module box is not worth the window.
	 */
	return krepl_slot_hi && addr >= krepl_slot_lo && addr < krepl_slot_hi &&
	       size >= krepl_granule();
}

/*
 * The root whose module window entries the node's CPUs use, if the node
 * has window tables of its own: the master's for the image's node.
 */
static __always_inline pgd_t *krepl_mw_root(int nid)
{
	return nid == krepl_master_node ? init_mm.pgd : krepl_node_pgd(nid);
}

/*
 * The PTE of @addr in the module window of @root, for the text patching
 * path only, which runs under a raw spinlock with interrupts off and must
 * not be traced: apply_to_page_range() takes each PTE table's spinlock on
 * a node's mm and is neither.  A lockless read is safe there: the window's
 * tables exist from boot and are never freed, and the entries it reads do
 * not change while the module can be patched (see krepl_mw_lock).
 */
static __always_inline pte_t *krepl_mw_ptep(pgd_t *root, unsigned long addr)
{
	p4d_t *p4dp = p4d_offset(pgd_offset_pgd(root, addr), addr);
	pmd_t *pmdp = pmd_offset(pud_offset(p4dp, addr), addr);

	return pte_offset_kernel(pmdp, addr);
}

/*
 * Every physical copy of the bytes being patched: found by
 * kernel_replication_prepare() before the first byte changes, written by
 * kernel_replication_write().  The text patching primitives call both under
 * the text patching lock, which serialises them and owns the alias
 * arch_kernel_replication_poke() writes through.
 */
struct krepl_target {
	phys_addr_t pa;
	bool master;		/* the caller writes it itself */
};

static struct krepl_target krepl_targets[MAX_NUMNODES];
static unsigned int krepl_nr_targets;

static __always_inline void krepl_add_target(phys_addr_t pa, bool master)
{
	krepl_targets[krepl_nr_targets].pa = pa;
	krepl_targets[krepl_nr_targets].master = master;
	krepl_nr_targets++;
}

/*
 * Module text: every node's copy of the page and the master's, found
 * through each node's window entry.
 */
static __always_inline int krepl_mw_prepare(unsigned long a)
{
	pte_t mpte = ptep_get(krepl_mw_ptep(init_mm.pgd, a));
	int nid;

	if (!pte_present(mpte))
		return -EFAULT;
	for_each_node(nid) {
		pgd_t *root = krepl_mw_root(nid);
		pte_t pte;

		if (!root)
			continue;
		pte = ptep_get(krepl_mw_ptep(root, a));
		/* Cleared only while nothing may patch the module. */
		if (WARN_ON_ONCE(!pte_present(pte))) {
			krepl_nr_targets = 0;
			return -EFAULT;
		}
		if (nid != krepl_master_node && pte_pfn(pte) == pte_pfn(mpte))
			continue;
		krepl_add_target(PFN_PHYS(pte_pfn(pte)) + offset_in_page(a),
				 nid == krepl_master_node);
	}
	return 0;
}

/**
 * kernel_replication_prepare() - find every copy of text about to be patched
 * @addr: kernel or module text address
 * @len: bytes to be written there, within one page
 *
 * The first half of a text write: resolves every copy before anything is
 * written, so that a write either fails here, having changed nothing, or
 * cannot fail.  Call kernel_replication_write() once the master is written.
 *
 * Context: under the text patching lock, interrupts off.
 * Return: 0, or -EFAULT if @addr is module text that is not mapped.
 */
notrace int kernel_replication_prepare(void *addr, size_t len)
{
	unsigned long a = (unsigned long)addr;
	int nid;

	krepl_nr_targets = 0;
	if (!READ_ONCE(krepl_active))
		return 0;
	if (kernel_replication_module_addr(a))
		return krepl_mw_prepare(a);
	if (a < (unsigned long)_stext || a + len > (unsigned long)_etext)
		return 0;
	for_each_node(nid) {
		if (krepl_nodes[nid].use == nid)
			krepl_add_target(krepl_nodes[nid].base + (a - (unsigned long)_stext),
					 nid == krepl_master_node);
	}
	return 0;
}

NOKPROBE_SYMBOL(kernel_replication_prepare);

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
/*
 * For KUnit: the copies the last write at krepl_watch maintained.  QEMU keeps
 * instruction fetch coherent with any store, so only a record can show a
 * copy that missed its maintenance.
 */
static unsigned long krepl_watch;
static phys_addr_t krepl_cleaned[MAX_NUMNODES];
static unsigned int krepl_nr_cleaned;

static __always_inline void krepl_record(void *addr, phys_addr_t pa)
{
	if ((unsigned long)addr == READ_ONCE(krepl_watch))
		krepl_cleaned[krepl_nr_cleaned++] = pa;
}

/**
 * kernel_replication_test_watch() - record the copies written at an address
 * @addr: the text address whose next writes are recorded, or NULL to stop
 *
 * For the architecture's KUnit test of text patching.  The record of each
 * write replaces the last one's.
 */
void kernel_replication_test_watch(void *addr)
{
	/*
	 * A write that skipped its copies must not find the last record:
	 * start a new one.  Stopping (NULL) keeps it for the checks.
	 */
	if (addr)
		krepl_nr_cleaned = 0;
	WRITE_ONCE(krepl_watch, (unsigned long)addr);
}

/**
 * kernel_replication_test_nr_maintained() - copies the last write maintained
 *
 * Return: how many copies the last write at the watched address made
 * visible to instruction fetch.
 */
unsigned int kernel_replication_test_nr_maintained(void)
{
	return krepl_nr_cleaned;
}

/**
 * kernel_replication_test_maintained() - did the last write maintain a copy?
 * @pa: physical address in the copy
 *
 * Return: true if the last write at the watched address made @pa visible
 * to instruction fetch.
 */
bool kernel_replication_test_maintained(phys_addr_t pa)
{
	unsigned int i;

	for (i = 0; i < krepl_nr_cleaned; i++) {
		if (krepl_cleaned[i] == pa)
			return true;
	}
	return false;
}

/**
 * kernel_replication_test_copies() - how many copies a text write writes
 *
 * Return: the number of copies, the master's included, while replication
 * is active; 0 before the switch or when it is off.
 */
unsigned int kernel_replication_test_copies(void)
{
	unsigned int copies = 0;
	int nid;

	for_each_node(nid)
		copies += READ_ONCE(krepl_active) && krepl_nodes[nid].use == nid;
	return copies;
}

/**
 * kernel_replication_test_node() - the node whose copy a CPU runs
 * @cpu: an online CPU
 *
 * Return: the node of the copy @cpu translates the image to: its node's
 * choice once it runs on a root of its own with replication active, else
 * the master's node.
 */
int kernel_replication_test_node(unsigned int cpu)
{
	if (READ_ONCE(krepl_active) && percpu_pgtable_root(cpu))
		return krepl_nodes[cpu_to_node(cpu)].use;
	/* Not krepl_master_node: unset when replication is off. */
	return page_to_nid(phys_to_page(__pa_symbol(_stext)));
}
#else
static __always_inline void krepl_record(void *addr, phys_addr_t pa)
{
}
#endif

/**
 * kernel_replication_write() - write patched kernel text into every copy
 * @addr: the address kernel_replication_prepare() was called for
 * @src: the bytes the caller just wrote to the master there
 * @len: how many
 *
 * Writes each node's copy, and makes every copy, the master's included,
 * visible to instruction fetch, by arch_kernel_replication_poke(): the
 * caller's own maintenance by @addr reaches only the copy its CPU
 * translates to.  Nothing here can fail.
 *
 * Context: under the architecture's text patching lock, interrupts off,
 * after kernel_replication_prepare().
 */
notrace void kernel_replication_write(void *addr, const void *src, size_t len)
{
	unsigned int i;

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
	if ((unsigned long)addr == READ_ONCE(krepl_watch))
		krepl_nr_cleaned = 0;
#endif
	for (i = 0; i < krepl_nr_targets; i++) {
		struct krepl_target *t = &krepl_targets[i];

		/*
		 * The one place a copy is made visible to instruction fetch,
		 * and recorded as such: no copy gets one without the other.
		 */
		arch_kernel_replication_poke(t->pa, t->master ? NULL : src, len);
		krepl_record(addr, t->pa);
	}
	krepl_nr_targets = 0;
}

NOKPROBE_SYMBOL(kernel_replication_write);

/* What the node tables being built are walked with: see krepl_build_range(). */
struct krepl_build {
	int nid;
	unsigned long start, end;
};

/*
 * A copy, on the node, of the table a shared entry points to.  Nothing
 * walks the node's tables yet: no break-before-make when the entry is
 * pointed at it.
 */
static void *krepl_copy_table(int nid, void *table)
{
	struct page *page = alloc_pages_node(nid, GFP_PGTABLE_KERNEL, 0);

	if (!page)
		return NULL;
	copy_page(page_address(page), table);
	krepl_table_pages++;
	return page_address(page);
}

/*
 * As krepl_copy_table(), for a PTE table: with the constructor that gives
 * it the lock apply_to_page_range() takes on the node's mm.
 */
static pte_t *krepl_copy_pte_table(int nid, pte_t *table)
{
	pte_t *copy = krepl_copy_table(nid, table);

	if (copy && !pagetable_pte_ctor(virt_to_ptdesc(copy))) {
		free_page((unsigned long)copy);
		krepl_table_pages--;
		return NULL;
	}
	return copy;
}

/*
 * The master's entries at @addr, to tell an entry of the node's tables
 * that still points where the master's does (shared) from one already
 * made the node's own.
 */
static p4d_t krepl_master_p4d(unsigned long addr)
{
	return p4dp_get(p4d_offset(pgd_offset_k(addr), addr));
}

static pud_t krepl_master_pud(unsigned long addr)
{
	return pudp_get(pud_offset(p4d_offset(pgd_offset_k(addr), addr), addr));
}

static pmd_t krepl_master_pmd(unsigned long addr)
{
	pud_t *pudp = pud_offset(p4d_offset(pgd_offset_k(addr), addr), addr);

	return pmdp_get(pmd_offset(pudp, addr));
}

/* Is [pa, pa + size) inside the master's text and rodata? */
static bool krepl_in_image(phys_addr_t pa, unsigned long size)
{
	return pa >= krepl_master_pa && pa + size <= krepl_master_pa + krepl_size;
}

/* The node's copy of master physical address @pa. */
static phys_addr_t krepl_node_pa(int nid, phys_addr_t pa)
{
	return krepl_nodes[nid].base + (pa - krepl_master_pa);
}

/*
 * Point a leaf of the node's tables at the node's copy, with the master's
 * attributes.  The copy is congruent to the master modulo the layout's
 * copy_align, so blocks and hinted ranges up to that size keep their
 * alignment (a block needs PMD_SIZE, or the node is not built); the
 * architecture drops a hint the copy's address does not allow, and
 * refuses one that covers entries outside what this walk relocates.
 */
static int krepl_move_pte(struct krepl_build *b, pte_t *ptep, unsigned long addr)
{
	pte_t pte = ptep_get(ptep);
	phys_addr_t pa;

	if (!pte_present(pte))
		return -EFAULT;
	pa = PFN_PHYS(pte_pfn(pte));
	if (!krepl_in_image(pa, PAGE_SIZE))
		return -EFAULT;
	return arch_kernel_replication_move_pte(ptep, addr,
						krepl_node_pa(b->nid, pa),
						b->start, b->end);
}

static int krepl_move_pmd(struct krepl_build *b, pmd_t *pmdp, unsigned long addr)
{
	phys_addr_t pa = PFN_PHYS(pmd_pfn(pmdp_get(pmdp)));

	if (!krepl_in_image(pa, PMD_SIZE))
		return -EFAULT;
	/* A copy aligned less than a block cannot repeat it. */
	if (!IS_ALIGNED(krepl_node_pa(b->nid, pa), PMD_SIZE))
		return -EINVAL;
	return arch_kernel_replication_move_pmd(pmdp, addr,
						krepl_node_pa(b->nid, pa),
						b->start, b->end);
}

/*
 * A block of the master that covers both what is replicated and what
 * stays shared (the linker may end rodata inside the block that also maps
 * the image's page tables): the node gets a PTE table of its own for it,
 * still mapping the master's pages, so that only the replicated pages move
 * to the node's copy.  What stays shared keeps the master's translation,
 * which nothing changes after mark_rodata_ro(), before this runs.
 */
static int krepl_split(int nid, pmd_t *pmdp, pmd_t block)
{
	struct page *page;
	int ret;

	page = alloc_pages_node(nid, GFP_PGTABLE_KERNEL, 0);
	if (!page)
		return -ENOMEM;
	ret = arch_kernel_replication_split_pmd(block, page_address(page));
	if (ret) {
		__free_page(page);
		return ret;
	}
	/* Nothing walks the node's tables yet: no break-before-make. */
	pmd_populate_kernel(&init_mm, pmdp, page_address(page));
	krepl_table_pages++;
	return 0;
}

/*
 * Give an unused copy back to the page allocator; the node's CPUs use the
 * master.  Its tables, if any, are leaked (a few pages): they may be half
 * built.
 */
static void krepl_free_copy(int nid)
{
	phys_addr_t base = krepl_nodes[nid].base;

	/* memblock_free_late() is __init, and init memory is gone by now. */
	kmemleak_free_part_phys(base, krepl_size);
	free_reserved_area(__va(base), __va(base + krepl_size), -1,
			   "kernel replication");
	krepl_nodes[nid].base = 0;
	krepl_nodes[nid].use = krepl_master_node;
}

/*
 * The node's tables are built by walking them (walk_kernel_page_table_range()
 * on the node's root), starting from copies of the master's top-level
 * entries.  Each callback makes the entry it is given the node's own
 * where it still points at the master's table (a copy of that table,
 * on the node), and the walker then descends into the copy: it reads
 * each entry again after its callback.  The p?d_entry callbacks are
 * called for folded levels too, with the same entry as the level above:
 * a table is copied only at the level whose next table is real.
 */
static int krepl_walk_p4d(p4d_t *p4dp, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct krepl_build *b = walk->private;
	p4d_t p4d = p4dp_get(p4dp);
	pud_t *table;

	/* Folded at build time, or at boot (LPA2 without the feature). */
	if (mm_pud_folded(&init_mm) ||
	    p4d_val(p4d) != p4d_val(krepl_master_p4d(addr)))
		return 0;
	table = krepl_copy_table(b->nid, p4d_pgtable(p4d));
	if (!table)
		return -ENOMEM;
	p4d_populate(&init_mm, p4dp, table);
	return 0;
}

static int krepl_walk_pud(pud_t *pudp, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct krepl_build *b = walk->private;
	pud_t pud = pudp_get(pudp);
	pmd_t *table;

	if (!pud_present(pud) || pud_leaf(pud))
		return -EFAULT;
	if (pud_val(pud) != pud_val(krepl_master_pud(addr)))
		return 0;
	table = krepl_copy_table(b->nid, pud_pgtable(pud));
	if (!table)
		return -ENOMEM;
	pud_populate(&init_mm, pudp, table);
	return 0;
}

static int krepl_walk_pmd(pmd_t *pmdp, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct krepl_build *b = walk->private;
	pmd_t pmd = pmdp_get(pmdp);
	pte_t *table;

	if (!pmd_present(pmd))
		return -EFAULT;
	/* A block all inside the range moves whole; the walk stops there. */
	if (pmd_leaf(pmd) && IS_ALIGNED(addr, PMD_SIZE) && next - addr == PMD_SIZE)
		return krepl_move_pmd(b, pmdp, addr);
	/* Once per table: an earlier range may have made it the node's. */
	if (pmd_val(pmd) != pmd_val(krepl_master_pmd(addr)))
		return 0;
	/* A block only partly replicated becomes a table of the node's. */
	if (pmd_leaf(pmd))
		return krepl_split(b->nid, pmdp, pmd);
	table = krepl_copy_pte_table(b->nid, (pte_t *)pmd_page_vaddr(pmd));
	if (!table)
		return -ENOMEM;
	pmd_populate_kernel(&init_mm, pmdp, table);
	return 0;
}

static int krepl_walk_pte(pte_t *ptep, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	return krepl_move_pte(walk->private, ptep, addr);
}

/* Everything walked is mapped in the master (the node's tables start as it). */
static int krepl_walk_hole(unsigned long addr, unsigned long next, int depth,
			   struct mm_walk *walk)
{
	return -EFAULT;
}

/* A part of the image: its leaves move to the node's copy. */
static const struct mm_walk_ops krepl_image_ops = {
	.p4d_entry = krepl_walk_p4d,
	.pud_entry = krepl_walk_pud,
	.pmd_entry = krepl_walk_pmd,
	.pte_entry = krepl_walk_pte,
	.pte_hole = krepl_walk_hole,
};

/* The module window: the node gets PTE tables of its own, as they are. */
static const struct mm_walk_ops krepl_window_ops = {
	.p4d_entry = krepl_walk_p4d,
	.pud_entry = krepl_walk_pud,
	.pmd_entry = krepl_walk_pmd,
	.pte_hole = krepl_walk_hole,
};

/* Build the node's translation of [start, end). */
static int krepl_build_range(int nid, unsigned long start, unsigned long end,
			     const struct mm_walk_ops *ops)
{
	struct krepl_build b = { .nid = nid, .start = start, .end = end };
	int ret;

	/* The walker's rule for kernel tables; nothing walks these yet. */
	mmap_read_lock(&init_mm);
	ret = walk_kernel_page_table_range(start, end, ops, krepl_node_pgd(nid), &b);
	mmap_read_unlock(&init_mm);
	return ret;
}

static int krepl_build(int nid)
{
	unsigned long addr;
	int ret;

	/*
	 * Charged, if at all, to kernel_init's root memory cgroup.  The mm
	 * is never freed, not even if the build fails: an mm holding
	 * kernel-range tables cannot go through mmput().
	 */
	krepl_nodes[nid].mm = mm_alloc();
	if (!krepl_nodes[nid].mm)
		return -ENOMEM;
	for (addr = krepl_slot_lo; addr < krepl_slot_hi; addr += PGDIR_SIZE)
		set_pgd(pgd_offset(krepl_nodes[nid].mm, addr), READ_ONCE(*pgd_offset_k(addr)));

	ret = krepl_build_range(nid, (unsigned long)_stext,
				(unsigned long)_etext, &krepl_image_ops);
	if (!ret)
		ret = krepl_build_range(nid, (unsigned long)__start_rodata,
					(unsigned long)__end_rodata,
					&krepl_image_ops);
	if (!ret && krepl_mw_lo)
		ret = krepl_build_range(nid, krepl_mw_lo, krepl_mw_hi,
					&krepl_window_ops);
	/*
	 * Published by the core's root writes.  Every entry written above
	 * went through set_p?d(), p?d_populate() or the move hooks, which
	 * make it visible to the table walker (on arm64, DSB ISHST after
	 * the write) before the root that reaches it is written.
	 */
	return ret;
}

/* apply_to_page_range() callback: the tables are all that is wanted. */
static int krepl_no_pte(pte_t *ptep, unsigned long addr, void *data)
{
	return 0;
}

/*
 * Give the module window its PTE tables, which the node tables copy:
 * apply_to_page_range() allocates every one, with nothing to do per
 * entry.  The window is reserved, so nothing else maps there.  The box's
 * shared tables exist since krepl_populate_box().
 */
static int krepl_prepare_box(void)
{
	if (!krepl_mw_lo)
		return 0;
	return apply_to_page_range(&init_mm, krepl_mw_lo,
				   krepl_mw_hi - krepl_mw_lo, krepl_no_pte, NULL);
}

static pgd_t krepl_populate(struct percpu_pgtable_client *client,
			    unsigned int cpu, unsigned long addr)
{
	int use = krepl_nodes[early_cpu_to_node(cpu)].use;

	if (use == NUMA_NO_NODE || !krepl_node_pgd(use))
		return READ_ONCE(*pgd_offset_k(addr));
	return READ_ONCE(*pgd_offset_pgd(krepl_node_pgd(use), addr));
}

/*
 * Runs on one CPU under stop_machine(), every other online CPU spinning
 * with interrupts off, before any CPU switches to a root that maps the
 * copies (percpu_pgtable_register_client() replaces every root, since the
 * image's top-level entries are live).  No patcher runs meanwhile:
 * text patching lock holders keep interrupts off, so stop_machine() waits
 * for them.  From here on every text write goes to every copy.
 */
static int krepl_prepare(struct percpu_pgtable_client *client)
{
	unsigned long master = (unsigned long)lm_alias(_stext);
	int nid;

	/*
	 * A patcher may have written the master and been preempted before
	 * its own maintenance by the text address, which from now on reaches
	 * its node's copy only: clean the master here.
	 */
	arch_kernel_replication_sync_icache(master, master + krepl_size);
	for_each_node(nid) {
		unsigned long va;

		if (!krepl_has_copy(nid) || !krepl_node_pgd(nid))
			continue;
		va = (unsigned long)__va(krepl_nodes[nid].base);
		memcpy((void *)va, (void *)master, krepl_size);
		/* Fetches from the copy must see what was written. */
		arch_kernel_replication_sync_icache(va, va + krepl_size);
	}
	WRITE_ONCE(krepl_active, true);
	return 0;
}

static struct percpu_pgtable_client krepl_client = {
	.name = "kernel_replication",
	.populate = krepl_populate,
	.prepare = krepl_prepare,
};

/*
 * The mm whose tables translate the node's module window: init_mm for the
 * image's node, NULL for a node without tables of its own.
 */
static __maybe_unused struct mm_struct *krepl_mw_mm(int nid)
{
	return nid == krepl_master_node ? &init_mm : krepl_nodes[nid].mm;
}

/*
 * The window's entries change through apply_to_page_range() and
 * apply_to_existing_page_range() on each node's mm, as set_memory_*()
 * changes vmalloc's through them on init_mm; the master's page behind an
 * address is vmalloc_to_page()'s.  Every PTE table a node's mm walks
 * there has the PTE lock those take on an mm other than init_mm
 * (krepl_walk_pmd()), and every table exists from boot: apply_to_page_range()
 * allocates none.  A node's build fails if one is missing (the window's
 * walk has no holes: krepl_walk_hole()), and KUnit checks every node's
 * window tables.  Were one missing, apply_to_page_range() would allocate
 * it as a user table, with a PXN table entry.  The callbacks get a
 * struct krepl_mw_op; they are given page-aligned ranges only, which
 * apply_to_pte_range() needs to stop.
 */
struct krepl_mw_op {
	unsigned long start;		/* of the range applied to */
	struct page **pages;		/* per page of it, or NULL */
	pte_t *old;			/* per page of it, or NULL */
	struct list_head *free;		/* pages unmapped, to be freed */
	pte_fn_t change;		/* set_memory_*()'s callback */
	void *data;			/* and its argument */
	bool master;			/* the mm is init_mm */
	bool alias;			/* a linear alias changed */
	bool write;			/* the change grants write permission */
	unsigned long n;		/* entries seen */
};

static __maybe_unused unsigned long krepl_mw_index(struct krepl_mw_op *op,
						   unsigned long addr)
{
	return (addr - op->start) >> PAGE_SHIFT;
}

#ifdef CONFIG_MODULES

/* Map a fresh page: no entry was there, nothing to break before making. */
static int krepl_mw_map_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;

	if (WARN_ON_ONCE(!pte_none(ptep_get(ptep))))
		return -EBUSY;
	set_pte_at(&init_mm, addr, ptep,
		   mk_pte(op->pages[krepl_mw_index(op, addr)], PAGE_KERNEL));
	return 0;
}

/* Undo krepl_mw_map_pte(): clear an entry only if it maps one of ours. */
static int krepl_mw_unmap_new_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	pte_t pte = ptep_get(ptep);

	if (pte_present(pte) && pte_page(pte) == op->pages[krepl_mw_index(op, addr)])
		pte_clear(&init_mm, addr, ptep);
	return 0;
}

/*
 * Clear a mapped entry, and queue its page for freeing: on a node, only
 * its own copy; the master's page with the master's entry, cleared last.
 */
static int krepl_mw_clear_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	pte_t pte = ptep_get(ptep);
	struct page *page = pte_page(pte), *master;

	/* The window's entries are valid or zero: never queue a page twice. */
	if (WARN_ON_ONCE(!pte_present(pte)))
		goto clear;
	if (op->master) {
		krepl_mw_pages--;
		list_add(&page->lru, op->free);
		goto clear;
	}
	master = vmalloc_to_page((void *)addr);
	if (!WARN_ON_ONCE(!master) && page != master) {
		krepl_mw_copies--;
		list_add(&page->lru, op->free);
	}
clear:
	pte_clear(&init_mm, addr, ptep);
	return 0;
}

/*
 * Unmap [start, end) from every table and free its pages, the node copies
 * and the master's, once no TLB holds them.  Their linear aliases get back
 * their default permissions first, as vm_reset_perms() does for vmalloc.
 */
static void krepl_mw_unmap(unsigned long start, unsigned long end)
{
	struct page *page, *next;
	LIST_HEAD(pages);
	struct krepl_mw_op op = { .start = start, .free = &pages };
	int nid;

	lockdep_assert_held(&krepl_mw_lock);
	if (WARN_ON_ONCE(!PAGE_ALIGNED(start | end)))
		return;
	/* The nodes first: vmalloc_to_page() tells their copies apart. */
	for_each_node(nid) {
		if (nid != krepl_master_node && krepl_mw_mm(nid))
			apply_to_existing_page_range(krepl_mw_mm(nid), start,
						     end - start,
						     krepl_mw_clear_pte, &op);
	}
	op.master = true;
	apply_to_existing_page_range(&init_mm, start, end - start,
				     krepl_mw_clear_pte, &op);
	flush_tlb_kernel_range(start, end);

	list_for_each_entry(page, &pages, lru)
		set_direct_map_default_noflush(page);
	flush_tlb_all();
	list_for_each_entry_safe(page, next, &pages, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/*
 * Map fresh pages of the image's node at [addr, addr + size) in every
 * table, all or none: returns false, having mapped nothing, if a page
 * cannot be had.
 */
static bool krepl_mw_populate(unsigned long addr, unsigned long size)
{
	unsigned long npages = size >> PAGE_SHIFT, i;
	struct krepl_mw_op op = { .start = addr };
	bool ok = false;
	int nid, ret = 0;

	if (WARN_ON_ONCE(!PAGE_ALIGNED(addr | size)))
		return false;
	op.pages = kvcalloc(npages, sizeof(*op.pages), GFP_KERNEL);
	if (!op.pages)
		return false;
	for (i = 0; i < npages; i++) {
		op.pages[i] = alloc_pages_node(krepl_master_node,
					       GFP_KERNEL | __GFP_NOWARN, 0);
		if (!op.pages[i])
			goto out;
	}
	mutex_lock(&krepl_mw_lock);
	/*
	 * Cannot fail: every table exists and the range is free, else a
	 * bug (krepl_mw_map_pte() warns) is undone here, in every table.
	 */
	for_each_node(nid) {
		if (!ret && krepl_mw_mm(nid))
			ret = apply_to_page_range(krepl_mw_mm(nid), addr, size,
						  krepl_mw_map_pte, &op);
	}
	if (WARN_ON(ret)) {
		for_each_node(nid) {
			if (krepl_mw_mm(nid))
				apply_to_existing_page_range(krepl_mw_mm(nid), addr, size,
							     krepl_mw_unmap_new_pte, &op);
		}
		flush_tlb_kernel_range(addr, addr + size);
	} else {
		krepl_mw_pages += npages;
	}
	mutex_unlock(&krepl_mw_lock);
	ok = !ret;
out:
	for (i = 0; !ok && i < npages && op.pages[i]; i++)
		__free_page(op.pages[i]);
	kvfree(op.pages);
	return ok;
}

/**
 * module_arch_mem_alloc() - allocate module text or rodata in the window
 * @mod: the module being loaded
 * @type: which of its memory types
 * @size: page-aligned size in bytes
 *
 * Core text and rodata only: init text runs once, on the CPU that loads
 * the module, and is freed right after, so a copy per node would cost
 * more than it saves.  The pages come from the image's node and are mapped
 * read-write, as execmem's are, in every node's tables until
 * module_arch_mem_protected().
 *
 * Return: the memory, or NULL (window full or replication off) for the
 * default allocation, which is not replicated.
 */
void *module_arch_mem_alloc(struct module *mod, enum mod_mem_type type,
			    unsigned int size)
{
	unsigned long addr, need;
	void *ptr;

	if (type != MOD_TEXT && type != MOD_RODATA)
		return NULL;
	/* Pairs with the release in krepl_mw_setup(): the pool is there. */
	if (!smp_load_acquire(&krepl_mw_ready))
		return NULL;
	/*
	 * A module is replicated whole or not at all: its text comes first
	 * (for_each_mod_mem_type()) and only with room for its rodata too,
	 * and its rodata only follows replicated text.  The room is not
	 * reserved: a concurrent load, a free range too fragmented for the
	 * rodata, or no page for it leaves the rodata alone unreplicated,
	 * with the warning.
	 */
	if (type == MOD_RODATA &&
	    !kernel_replication_module_addr((unsigned long)mod->mem[MOD_TEXT].base))
		return NULL;
	need = size + PAGE_SIZE;
	if (type == MOD_TEXT && mod->mem[MOD_RODATA].size)
		need += PAGE_ALIGN(mod->mem[MOD_RODATA].size) + PAGE_SIZE;
	addr = 0;
	if (gen_pool_avail(krepl_mw_pool) >= need)
		addr = gen_pool_alloc(krepl_mw_pool, size + PAGE_SIZE);
	if (!addr) {
		pr_warn_ratelimited("module window full: %s%s is not replicated\n",
				    mod->name, type == MOD_TEXT ? "" : "'s rodata");
		return NULL;
	}

	if (!krepl_mw_populate(addr, size)) {
		gen_pool_free(krepl_mw_pool, addr, size + PAGE_SIZE);
		pr_warn_ratelimited("out of memory on node %d: %s%s is not replicated\n",
				    krepl_master_node, mod->name,
				    type == MOD_TEXT ? "" : "'s rodata");
		return NULL;
	}

	ptr = kasan_unpoison_vmalloc((void *)addr, size,
				     KASAN_VMALLOC_PROT_NORMAL);
	kmemleak_alloc(ptr, size, 1, GFP_KERNEL);
	/* Text and rodata hold no references, and the BBM must not fault it. */
	kmemleak_no_scan(ptr);
	return kasan_reset_tag(ptr);
}

/**
 * module_arch_mem_free() - free module memory of the window
 * @mod: the module
 * @type: which of its memory types
 *
 * Return: true if it was in the window, and so is freed now.
 */
bool module_arch_mem_free(struct module *mod, enum mod_mem_type type)
{
	unsigned long addr = (unsigned long)mod->mem[type].base;
	unsigned int size = mod->mem[type].size;

	if (!kernel_replication_module_addr(addr))
		return false;
	kmemleak_free((void *)addr);
	kasan_poison_vmalloc((void *)addr, size);
	mutex_lock(&krepl_mw_lock);
	krepl_mw_unmap(addr, addr + size);
	mutex_unlock(&krepl_mw_lock);
	gen_pool_free(krepl_mw_pool, addr, size + PAGE_SIZE);
	return true;
}

/*
 * Break: clear a node's entry that gets a copy, noting the entry for its
 * attributes.  Only valid entries: the window's are valid or zero.
 */
static int krepl_mw_break_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	unsigned long i = krepl_mw_index(op, addr);
	pte_t pte = ptep_get(ptep);

	if (!op->pages[i] || WARN_ON_ONCE(!pte_present(pte)))
		return 0;
	op->old[i] = pte;
	pte_clear(&init_mm, addr, ptep);
	return 0;
}

/*
 * Make: point a broken entry at the node's copy, with the attributes it
 * had.  A copy whose entry was not broken goes back on op->free: it is
 * not used.
 */
static int krepl_mw_make_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	unsigned long i = krepl_mw_index(op, addr);
	struct page *page = op->pages[i];

	if (!page)
		return 0;
	if (pte_none(op->old[i]) || WARN_ON_ONCE(!pte_none(ptep_get(ptep)))) {
		list_add(&page->lru, op->free);
		return 0;
	}
	set_pte_at(&init_mm, addr, ptep,
		   pfn_pte(page_to_pfn(page), pte_pgprot(op->old[i])));
	krepl_mw_copies++;
	return 0;
}

/*
 * Point the node's entries for [addr, addr + size) at node-local copies
 * of the master's pages.  Returns how many pages could not be copied:
 * those stay on the master's, which is slower but correct.
 */
static unsigned long krepl_mw_copy(int nid, unsigned long addr, unsigned long size)
{
	unsigned long npages = size >> PAGE_SHIFT, i, failed = 0;
	struct mm_struct *mm = krepl_mw_mm(nid);
	LIST_HEAD(unused);
	struct krepl_mw_op op = { .start = addr, .free = &unused };
	struct page *page, *next;

	if (WARN_ON_ONCE(!PAGE_ALIGNED(addr | size)))
		return 0;
	op.pages = kvcalloc(npages, sizeof(*op.pages), GFP_KERNEL);
	/* Zeroed: pte_none() until krepl_mw_break_pte() notes an entry. */
	op.old = kvcalloc(npages, sizeof(*op.old), GFP_KERNEL);
	if (!op.pages || !op.old) {
		failed = npages;
		goto out;
	}
	for (i = 0; i < npages; i++) {
		struct page *master = vmalloc_to_page((void *)(addr + i * PAGE_SIZE));
		void *dst;

		op.pages[i] = alloc_pages_node(nid, GFP_KERNEL | __GFP_THISNODE |
					       __GFP_NOWARN, 0);
		if (!op.pages[i]) {
			failed++;
			continue;
		}
		dst = page_address(op.pages[i]);
		copy_page(dst, page_address(master));
		/* Fetches from the copy must see what was written. */
		arch_kernel_replication_sync_icache((unsigned long)dst,
						    (unsigned long)dst + PAGE_SIZE);
		/* As for the master's pages, per set_memory_ro(). */
		if (arch_kernel_replication_protect_aliases() &&
		    set_direct_map_ro_noflush(op.pages[i]))
			pr_warn_once("the linear alias of module copies stays writable\n");
	}
	/*
	 * One flush for the linear aliases.  A page vfree()d lately may still
	 * be writable through a lazily unmapped vmalloc alias: purge those
	 * before it becomes text, as change_memory_common() does.
	 */
	if (arch_kernel_replication_protect_aliases())
		flush_tlb_all();
	vm_unmap_aliases();

	/*
	 * Break before make: the module is not visible yet, so nothing but
	 * a stale TLB entry can translate these addresses meanwhile.  The
	 * entries are all mapped (module_arch_mem_protected()'s caller
	 * holds the module), so both walks see every page.
	 */
	apply_to_existing_page_range(mm, addr, size, krepl_mw_break_pte, &op);
	flush_tlb_kernel_range(addr, addr + size);
	/* Every table exists, so this allocates none and cannot fail. */
	WARN_ON(apply_to_page_range(mm, addr, size, krepl_mw_make_pte, &op));

	/* Copies not used (a WARN said why): as krepl_mw_unmap() frees. */
	list_for_each_entry(page, &unused, lru) {
		set_direct_map_default_noflush(page);
		failed++;
	}
	if (!list_empty(&unused))
		flush_tlb_all();
	list_for_each_entry_safe(page, next, &unused, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
out:
	kvfree(op.old);
	kvfree(op.pages);
	return failed;
}

/**
 * module_arch_mem_protected() - give every node its copy of a module
 * @mod: the module, whose text and rodata are now final and read-only
 *
 * Called under module_mutex before the module becomes visible, so no text
 * patch can be in flight on it (see the comment on krepl_mw_lock): the copies
 * are made from the master's pages without the text patching lock.
 */
void module_arch_mem_protected(struct module *mod)
{
	static const enum mod_mem_type types[] = { MOD_TEXT, MOD_RODATA };
	unsigned long failed = 0;
	int i, nid;

	mutex_lock(&krepl_mw_lock);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		unsigned long addr = (unsigned long)mod->mem[types[i]].base;

		if (!kernel_replication_module_addr(addr))
			continue;
		for_each_node(nid) {
			if (nid != krepl_master_node && krepl_mw_mm(nid))
				failed += krepl_mw_copy(nid, addr,
						     mod->mem[types[i]].size);
		}
	}
	krepl_mw_failed += failed;
	mutex_unlock(&krepl_mw_lock);
	if (failed)
		pr_warn("%s: %lu pages could not be copied to their node: those CPUs use the master's\n",
			mod->name, failed);
}

/*
 * For the master's entries: try the change on a copy of the entry, so
 * that nothing changes yet, and note whether it grants write permission.
 */
static int krepl_mw_try_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	pte_t old = ptep_get(ptep), want = old;
	int ret;

	ret = op->change(&want, addr, op->data);
	if (ret)
		return ret;
	op->write |= !pte_write(old) && pte_write(want);
	op->n++;
	return 0;
}

/* For a node's entries: has the node its own copy of this page? */
static int krepl_mw_own_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;

	op->n++;
	if (pte_page(ptep_get(ptep)) == vmalloc_to_page((void *)addr))
		return 0;
	/* A caller's mistake, not the kernel's: no splat, it stays read-only. */
	pr_warn_ratelimited("%#lx: replicated module text stays read-only (set_memory_rw() refused)\n",
			    addr);
	return -EBUSY;
}

/*
 * Check [addr, end) before anything changes: all mapped in every table,
 * and, if the change would grant write permission, no page of it has a
 * node copy yet.  Writable copies would take writes on one node only:
 * once a node has its own copy, the range stays read-only.
 */
static int krepl_mw_prot_ok(struct krepl_mw_op *op, unsigned long addr,
			    unsigned long end)
{
	unsigned long npages = (end - addr) >> PAGE_SHIFT;
	int nid, ret;

	lockdep_assert_held(&krepl_mw_lock);
	op->n = 0;
	ret = apply_to_existing_page_range(&init_mm, addr, end - addr,
					   krepl_mw_try_pte, op);
	if (ret || op->n != npages)
		return ret ?: -EINVAL;
	for_each_node(nid) {
		if (nid == krepl_master_node || !krepl_mw_mm(nid))
			continue;
		op->n = 0;
		ret = apply_to_existing_page_range(krepl_mw_mm(nid), addr, end - addr,
						   op->write ? krepl_mw_own_pte :
						   krepl_mw_try_pte, op);
		if (ret || op->n != npages)
			return ret ?: -EINVAL;
	}
	return 0;
}

/*
 * Apply the change to one entry, and, if it took or gave write permission,
 * to the linear alias of the page behind it when the linear map can be
 * changed page by page: the master's page once, with the master's entry,
 * and each node's own copy with the node's.
 */
static int krepl_mw_prot_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;
	pte_t old = ptep_get(ptep), pte;
	struct page *page = pte_page(old);

	/* Cannot fail: krepl_mw_prot_ok() tried it on this entry's value. */
	op->change(ptep, addr, op->data);
	pte = ptep_get(ptep);
	/*
	 * The linear alias is changed from the callback.  On init_mm no PTE
	 * lock is held; on a node's mm one is, but a node's own copy never
	 * changes its write permission (copies are read-only and stay so),
	 * so set_direct_map_*_noflush(), which walks init_mm, runs from the
	 * master's pass only.
	 */
	if (pte_write(old) == pte_write(pte) ||
	    !arch_kernel_replication_protect_aliases() ||
	    (!op->master && page == vmalloc_to_page((void *)addr)))
		return 0;
	if (pte_write(pte))
		set_direct_map_default_noflush(page);
	else
		set_direct_map_ro_noflush(page);
	op->alias = true;
	return 0;
}

/**
 * kernel_replication_module_prot() - set_memory_*() for the module window
 * @addr: page-aligned start
 * @numpages: number of pages
 * @change: the architecture's callback that changes one entry for
 *	set_memory_*(), as it gives apply_to_page_range() for vmalloc areas
 * @data: its argument
 *
 * Applies @change to the master's and every node's entry of each page,
 * through apply_to_existing_page_range() on each one's mm: the same change
 * set_memory_*() makes to a vmalloc area.  A page that loses or gains
 * write permission takes the linear alias of every page behind it along,
 * as change_memory_common() does for vmalloc areas.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL if the range is not all mapped in the window, or
 * -EBUSY if @change grants write permission to pages that have node
 * copies.
 */
int kernel_replication_module_prot(unsigned long addr, int numpages,
				   pte_fn_t change, void *data)
{
	unsigned long end = addr + (unsigned long)numpages * PAGE_SIZE;
	struct krepl_mw_op op = { .change = change, .data = data };
	int nid, ret;

	if (numpages < 0 || end > krepl_mw_hi || end < addr ||
	    !kernel_replication_module_addr(addr) || !PAGE_ALIGNED(addr))
		return -EINVAL;
	if (!numpages)
		return 0;
	/* As change_memory_common(): no stale alias may keep other rights. */
	vm_unmap_aliases();
	mutex_lock(&krepl_mw_lock);
	ret = krepl_mw_prot_ok(&op, addr, end);
	if (ret)
		goto out;
	/* The master first, while each node's pages are told apart by it. */
	op.master = true;
	apply_to_existing_page_range(&init_mm, addr, end - addr,
				     krepl_mw_prot_pte, &op);
	op.master = false;
	for_each_node(nid) {
		if (nid != krepl_master_node && krepl_mw_mm(nid))
			apply_to_existing_page_range(krepl_mw_mm(nid), addr,
						     end - addr,
						     krepl_mw_prot_pte, &op);
	}
	flush_tlb_kernel_range(addr, end);
	/* The linear aliases, once for all pages. */
	if (op.alias)
		flush_tlb_all();
out:
	mutex_unlock(&krepl_mw_lock);
	return ret;
}

/* Called once every node's tables are live. */
static void krepl_mw_setup(void)
{
	if (!krepl_mw_lo)
		return;
	if (!krepl_mw_limit) {
		krepl_mw_reason = "kernel_replication_modules=0";
		pr_info("modules: their text is not replicated (%s)\n", krepl_mw_reason);
		return;
	}
	krepl_mw_reason = "cannot set up the window's allocator";
	krepl_mw_pool = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!krepl_mw_pool)
		goto fail;
	if (gen_pool_add(krepl_mw_pool, krepl_mw_lo,
			 min(krepl_mw_limit, krepl_mw_hi - krepl_mw_lo), NUMA_NO_NODE))
		goto fail;
	/* Poisoned until allocated, as vmalloc's shadow is. */
	if (kasan_populate_vmalloc(krepl_mw_lo, krepl_mw_hi - krepl_mw_lo,
				   GFP_KERNEL)) {
		krepl_mw_reason = "cannot map the window's KASAN shadow";
		goto fail;
	}
	krepl_mw_reason = "";
	/* Pairs with the acquire in module_arch_mem_alloc(). */
	smp_store_release(&krepl_mw_ready, true);
	return;
fail:
	pr_warn("modules: %s: their text is not replicated\n", krepl_mw_reason);
	if (krepl_mw_pool)
		gen_pool_destroy(krepl_mw_pool);
	krepl_mw_pool = NULL;
}

#else /* !CONFIG_MODULES */

int kernel_replication_module_prot(unsigned long addr, int numpages,
				   pte_fn_t change, void *data)
{
	return -EINVAL;
}

static void krepl_mw_setup(void)
{
}

#endif /* CONFIG_MODULES */

/* Why replication cannot be on for this boot, or NULL if it can. */
static const char *krepl_unusable(void)
{
	if (!krepl_enabled || !krepl_copies)
		return krepl_reason;
	if (!percpu_pgtable_active())
		return "per-CPU kernel page tables are off";
	return arch_kernel_replication_unusable();
}

/*
 * Build every node's tables.  A node whose tables cannot be built gives
 * its copy back and uses the master, as do the nodes that would have
 * used its copy.  Returns how many copies are left.
 */
static unsigned int krepl_build_nodes(void)
{
	int nid, ret;

	for_each_node(nid) {
		if (!krepl_has_copy(nid))
			continue;
		ret = krepl_build(nid);
		if (ret) {
			/* Not published: the tables are left, the node uses the master. */
			pr_warn("node %d: cannot build its tables (%d): its CPUs use the master copy\n",
				nid, ret);
			krepl_nodes[nid].mm = NULL;
			krepl_free_copy(nid);
			krepl_nodes[nid].use = krepl_master_node;
			krepl_copies--;
		}
	}
	for_each_node(nid) {
		int use = krepl_nodes[nid].use;

		if (use != NUMA_NO_NODE && use != nid && use != krepl_master_node &&
		    !krepl_node_pgd(use))
			krepl_nodes[nid].use = krepl_master_node;
	}
	return krepl_copies;
}

/* Once live: protect each copy's linear alias, and say where it is. */
static void krepl_protect_copies(void)
{
	unsigned long npages = krepl_size >> PAGE_SHIFT;
	phys_addr_t end;
	int nid;

	for_each_node(nid) {
		if (nid != krepl_master_node && !krepl_has_copy(nid))
			continue;
		end = krepl_nodes[nid].base + krepl_size - 1;
		/* As rodata=full does for the image's own alias. */
		if (nid != krepl_master_node &&
		    arch_kernel_replication_protect_aliases() &&
		    set_direct_map_ro((unsigned long)__va(krepl_nodes[nid].base), npages))
			pr_warn("node %d: the linear alias of the copy stays writable (linear map not page-mapped)\n",
				nid);
		pr_info("node %d: %s copy of text and rodata at %pa-%pa, %zu KiB\n",
			nid, nid == krepl_master_node ? "master" : "own",
			&krepl_nodes[nid].base, &end, krepl_size >> 10);
	}
}

/**
 * kernel_replication_init() - copy text and rodata to every node and switch to them
 *
 * Called at the end of mark_rodata_ro(): text and rodata are final, every
 * CPU that boots from now on finds its root already pointing at its node's
 * tables.  On any failure the CPUs keep the master and a warning says why.
 *
 * Context: process context (kernel_init), before userspace; sleeps.
 */
void kernel_replication_init(void)
{
	u64 t0 = ktime_get_ns();
	const char *why;
	int nid, ret;

	why = krepl_unusable();
	if (why) {
		krepl_reason = why;
		goto inactive;
	}

	krepl_client.start = krepl_slot_lo;
	krepl_client.end = krepl_slot_hi;
	ret = krepl_prepare_box();
	if (ret) {
		krepl_reason = "cannot prepare the module box's tables";
		pr_warn("%s (%d): one copy only\n", krepl_reason, ret);
		goto inactive;
	}
	if (!krepl_build_nodes()) {
		krepl_reason = "no copy could be mapped";
		goto inactive;
	}

	/*
	 * Every CPU moves to a new root that maps its node's copy: no live
	 * translation of the text changes (break-before-make by TTBR1).
	 */
	ret = percpu_pgtable_register_client(&krepl_client);
	if (ret) {
		/*
		 * krepl_prepare() is registration's last step and cannot
		 * fail: a refused client never had its copies switched on.
		 * Writing the flag here, outside stop_machine(), could race
		 * with a patcher that read it (see
		 * kernel_replication_text_active()).
		 */
		WARN_ON_ONCE(READ_ONCE(krepl_active));
		krepl_reason = "the per-CPU page tables refused the client";
		pr_warn("%s (%d): one copy only\n", krepl_reason, ret);
		goto inactive;
	}

	krepl_protect_copies();
	krepl_reason = "";
	pr_info("active: %u copies besides the master, %lu table pages, %llu us to switch\n",
		krepl_copies, krepl_table_pages, (ktime_get_ns() - t0) / NSEC_PER_USEC);
	krepl_mw_setup();
	if (krepl_mw_ready)
		pr_info("modules: text and rodata replicated in %#lx-%#lx\n",
			krepl_mw_lo, krepl_mw_hi);
	return;

inactive:
	for_each_node(nid) {
		if (krepl_has_copy(nid))
			krepl_free_copy(nid);
	}
	pr_info("inactive: %s\n", krepl_reason);
}

#ifdef CONFIG_DEBUG_FS

static int krepl_status_show(struct seq_file *m, void *v)
{
	int nid;

	seq_printf(m, "active: %s\n", READ_ONCE(krepl_active) ? "yes" : "no");
	if (!READ_ONCE(krepl_active))
		seq_printf(m, "reason: %s\n", krepl_reason);
	seq_printf(m, "text: %lu bytes\n", (unsigned long)(_etext - _stext));
	seq_printf(m, "rodata: %lu bytes\n",
		   (unsigned long)(__end_rodata - __start_rodata));
	seq_printf(m, "private: %#lx-%#lx\n", krepl_slot_lo, krepl_slot_hi);
	seq_printf(m, "size: %zu\n", krepl_size);
	seq_printf(m, "table pages: %lu\n", krepl_table_pages);
	for_each_node(nid) {
		int use = krepl_nodes[nid].use;
		phys_addr_t end;

		if (use == NUMA_NO_NODE)
			continue;
		if (use != nid) {
			seq_printf(m, "node %d: uses node %d\n", nid, use);
			continue;
		}
		end = krepl_nodes[nid].base + krepl_size;
		seq_printf(m, "node %d: %pa-%pa %s\n", nid, &krepl_nodes[nid].base,
			   &end, nid == krepl_master_node ? "master" : "copy");
	}
	if (READ_ONCE(krepl_mw_ready)) {
		mutex_lock(&krepl_mw_lock);
		seq_printf(m, "modules: %#lx-%#lx, %lu pages, %lu node copies, %lu failed, %lu KiB usable, %zu KiB free\n",
			   krepl_mw_lo, krepl_mw_hi, krepl_mw_pages, krepl_mw_copies,
			   krepl_mw_failed, krepl_mw_limit >> 10,
			   gen_pool_avail(krepl_mw_pool) >> 10);
		mutex_unlock(&krepl_mw_lock);
	} else {
		seq_printf(m, "modules: not replicated (%s)\n", krepl_mw_reason);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krepl_status);

/*
 * Bytes of @a that differ from @b, page by page.  A page is compared again
 * a few times before it counts: a patch may be between two copies.
 */
static unsigned long krepl_compare(struct seq_file *m, const char *what,
				   const u8 *a, const u8 *b, size_t size,
				unsigned long va)
{
	unsigned long bad = 0, shown = 0;
	size_t off, i;
	int try;

	for (off = 0; off < size; off += PAGE_SIZE) {
		for (try = 0; try < 3; try++) {
			if (!memcmp(a + off, b + off, PAGE_SIZE))
				break;
			usleep_range(100, 200);
		}
		if (try < 3)
			continue;
		for (i = 0; i < PAGE_SIZE; i++) {
			if (a[off + i] == b[off + i])
				continue;
			if (shown++ < 8)
				seq_printf(m, "%s: mismatch at %pS\n", what,
					   (void *)(va + off + i));
			bad++;
		}
		cond_resched();
	}
	return bad;
}

struct krepl_view {
	struct seq_file *m;
	unsigned long bad;
	unsigned long mw_bytes;
};

/* The master's page behind @addr in the module window, if mapped. */
static struct page *krepl_mw_master(unsigned long addr)
{
	return vmalloc_to_page((void *)addr);
}

/* What this CPU really reads through the image's addresses. */
static long krepl_view_cpu(void *data)
{
	struct krepl_view *view = data;
	char what[16];

	snprintf(what, sizeof(what), "cpu%d", raw_smp_processor_id());
	/*
	 * Read through the image's own addresses, across the redzones KASAN
	 * keeps around globals in rodata: only the bytes matter here.
	 */
	kasan_disable_current();
	view->bad = krepl_compare(view->m, what, (const u8 *)_stext,
				  lm_alias(_stext), krepl_size, (unsigned long)_stext);
	kasan_enable_current();

	/* Module pages cannot go away: the caller holds krepl_mw_lock. */
	if (READ_ONCE(krepl_mw_ready)) {
		unsigned long addr;

		for (addr = krepl_mw_lo; addr < krepl_mw_hi; addr += PAGE_SIZE) {
			struct page *page = krepl_mw_master(addr);

			if (!page)
				continue;
			kasan_disable_current();
			view->bad += krepl_compare(view->m, what, (const u8 *)addr,
						page_address(page), PAGE_SIZE,
						addr);
			kasan_enable_current();
			view->mw_bytes += PAGE_SIZE;
		}
	}
	return 0;
}

/* Note the page behind each mapped entry of a node's window. */
static int krepl_mw_note_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct krepl_mw_op *op = data;

	op->pages[krepl_mw_index(op, addr)] = pte_page(ptep_get(ptep));
	return 0;
}

/*
 * One node's copy of every module page, against the master's: the node's
 * entries are noted first, under the PTE locks apply_to_existing_page_range()
 * takes, then compared with them dropped (krepl_compare() sleeps).
 */
static unsigned long krepl_mw_verify_node(struct seq_file *m, int nid,
					  struct krepl_mw_op *op,
					  unsigned long *copies,
					  unsigned long *shared)
{
	unsigned long addr, bad = 0, i;
	char what[24];

	memset(op->pages, 0, ((krepl_mw_hi - krepl_mw_lo) >> PAGE_SHIFT) *
	       sizeof(*op->pages));
	apply_to_existing_page_range(krepl_mw_mm(nid), krepl_mw_lo,
				     krepl_mw_hi - krepl_mw_lo,
				     krepl_mw_note_pte, op);
	snprintf(what, sizeof(what), "node%d module", nid);
	for (addr = krepl_mw_lo, i = 0; addr < krepl_mw_hi; addr += PAGE_SIZE, i++) {
		struct page *page = krepl_mw_master(addr);

		if (page == op->pages[i]) {
			*shared += !!page;
			continue;
		}
		if (!page || !op->pages[i]) {
			seq_printf(m, "%s: %#lx mapped %s only\n", what, addr,
				   page ? "by the master" : "by the node");
			bad++;
			continue;
		}
		bad += krepl_compare(m, what, page_address(op->pages[i]),
				     page_address(page), PAGE_SIZE, addr);
		(*copies)++;
	}
	return bad;
}

/* Every node's copy of every module page, against the master's. */
static unsigned long krepl_mw_verify(struct seq_file *m, unsigned long *bytes)
{
	unsigned long addr, bad = 0, pages = 0, copies = 0, shared = 0;
	struct krepl_mw_op op = { .start = krepl_mw_lo };
	int nid;

	for (addr = krepl_mw_lo; addr < krepl_mw_hi; addr += PAGE_SIZE)
		pages += !!krepl_mw_master(addr);
	op.pages = kvcalloc((krepl_mw_hi - krepl_mw_lo) >> PAGE_SHIFT,
			    sizeof(*op.pages), GFP_KERNEL);
	/* A failed comparison, not a silent pass. */
	if (!op.pages)
		return 1;
	for_each_node(nid) {
		if (nid != krepl_master_node && krepl_mw_mm(nid))
			bad += krepl_mw_verify_node(m, nid, &op, &copies, &shared);
	}
	kvfree(op.pages);
	*bytes += copies * PAGE_SIZE;
	seq_printf(m, "modules: %lu pages, %lu node copies compared, %lu shared with the master\n",
		   pages, copies, shared);
	return bad;
}

static int krepl_verify_show(struct seq_file *m, void *v)
{
	unsigned long bad, total = 0, bytes = 0;
	unsigned int cpu;
	int nid;

	if (!READ_ONCE(krepl_active)) {
		seq_printf(m, "inactive: %s\n", krepl_reason);
		return 0;
	}
	for_each_node(nid) {
		char what[16];

		if (!krepl_has_copy(nid))
			continue;
		snprintf(what, sizeof(what), "node%d", nid);
		bad = krepl_compare(m, what, __va(krepl_nodes[nid].base),
				    lm_alias(_stext), krepl_size, (unsigned long)_stext);
		seq_printf(m, "node %d: %zu bytes compared, %lu differ\n", nid,
			   krepl_size, bad);
		total += bad;
		bytes += krepl_size;
	}
	cpus_read_lock();
	mutex_lock(&krepl_mw_lock);
	if (READ_ONCE(krepl_mw_ready))
		total += krepl_mw_verify(m, &bytes);
	else
		seq_printf(m, "modules: not replicated (%s)\n", krepl_mw_reason);
	for_each_online_cpu(cpu) {
		struct krepl_view view = { .m = m };

		work_on_cpu(cpu, krepl_view_cpu, &view);
		seq_printf(m, "cpu%u: node %d view: %zu bytes compared, %lu differ\n",
			   cpu, cpu_to_node(cpu), krepl_size + view.mw_bytes,
			   view.bad);
		total += view.bad;
		bytes += krepl_size + view.mw_bytes;
	}
	mutex_unlock(&krepl_mw_lock);
	cpus_read_unlock();
	seq_printf(m, "compared: %lu\n", bytes);
	seq_printf(m, "mismatches: %lu\n", total);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krepl_verify);

static int __init krepl_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kernel_replication", NULL);

	debugfs_create_file("status", 0400, dir, NULL, &krepl_status_fops);
	debugfs_create_file("verify", 0400, dir, NULL, &krepl_verify_fops);
	return 0;
}
late_initcall(krepl_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
#include "tests/kernel_replication-kunit.h"
#endif

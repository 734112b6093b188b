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
 *    good: the image's own tables, and the module box's PMD tables, which
 *    are allocated before the copies are made and which pud_free_pmd_page()
 *    refuses to free (text_replica_shared_table());
 *  - empty in a range reserved from vmalloc at boot (text_replica_reserve_va()),
 *    so that no generic code ever maps there;
 *  - a leaf of the module window, a range reserved the same way right
 *    below the image, whose PTE tables exist from boot, one set per node
 *    and the master's: this file maps module text and rodata there
 *    itself, in every set, under tr_mw_lock (see "Modules" below).
 *
 * See Documentation/mm/text-replication.rst.
 */

#define pr_fmt(fmt) "text_replica: " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/genalloc.h>
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/ktime.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/moduleloader.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/pagewalk.h>
#include <linux/percpu_pgtable.h>
#include <linux/seq_file.h>
#include <linux/stop_machine.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <asm/cacheflush.h>
#include <asm/fixmap.h>
#include <asm/mmu_context.h>
#include <asm/pgalloc.h>
#include <asm/sections.h>
#include <asm/set_memory.h>
#include <asm/text_replica.h>
#include <asm/tlbflush.h>
#include <asm/virt.h>

/**
 * struct tr_node - what the CPUs of one node translate the image to
 * @base: physical address of this node's copy of [_stext, __end_rodata)
 *	(the master's address on the node that holds the image)
 * @pgd: a top-level table of which only the private entries are used:
 *	they point at this node's tables (NULL: the master's entries)
 * @use: the node whose copy this node's CPUs use: itself when it has a
 *	copy, else the nearest node that has one; NUMA_NO_NODE for nodes
 *	without CPUs
 */
struct tr_node {
	phys_addr_t base;
	pgd_t *pgd;
	int use;
};

/*
 * Written at boot and by text_replica_init(), which runs after rodata has
 * become read-only: hence __read_mostly, not __ro_after_init.
 */
static struct tr_node tr_nodes[MAX_NUMNODES] __read_mostly;
static int tr_master_node __read_mostly = NUMA_NO_NODE;
static phys_addr_t tr_master_pa __read_mostly;
static size_t tr_size __read_mostly;
static unsigned int tr_copies __read_mostly;
static unsigned long tr_table_pages;
static const char *tr_reason __read_mostly =
	"waiting for mark_rodata_ro(), which rodata=off never calls";

/*
 * Set under stop_machine() when every copy is made and the roots point at
 * them; read by text_replica_write() under patch_lock.  stop_machine()
 * runs while no CPU holds patch_lock (it is a raw spinlock taken with
 * interrupts off), so no patch can fall between the copy and the switch.
 */
static bool tr_active __read_mostly;

/* The module box and the top-level range that holds it and the image. */
static unsigned long tr_box_lo, tr_box_hi;
static unsigned long tr_slot_lo, tr_slot_hi;

/*
 * Modules: text and rodata of modules are allocated in the module window
 * [tr_mw_lo, tr_mw_hi), right below the image and so in direct branch
 * range of it.  Vmalloc never maps there (a vm area reserves it), and its
 * PTE tables are allocated before the node tables are built, which copy
 * them: every node's CPUs, and the master's, translate the window through
 * PTE tables of their own, which only this file writes.  A module's pages
 * are mapped to the master's pages in every table while it loads, and
 * each node's entries are pointed at a node-local copy once its text and
 * rodata are final (module_arch_mem_protected()).  The entries are the
 * only record of which page is where.
 *
 * tr_mw_lock serialises the writers of those entries: allocation,
 * set_memory_*(), the switch to the copies, freeing, and verify.  The text
 * patching primitives read them under patch_lock without it: until
 * module_arch_mem_protected() has returned, a module is patched only by
 * its own loader thread (ftrace_module_init()), when every node still
 * maps the master's pages; after it, every node's entries are final until
 * the module's memory is freed, by which time nothing patches it.  Nothing
 * else reads a module's window range meanwhile: it is not visible, not
 * scanned by kmemleak, and a hole for /proc/kcore.  Each allocation is
 * followed by an unmapped guard page, as vmalloc's are.
 */
#define TR_MW_SIZE	SZ_32M

static unsigned long tr_mw_lo, tr_mw_hi;
static struct vm_struct tr_mw_vm;
static struct gen_pool *tr_mw_pool;
static bool tr_mw_ready __read_mostly;
static DEFINE_MUTEX(tr_mw_lock);
/* Under tr_mw_lock: pages mapped, node copies, copies that failed. */
static unsigned long tr_mw_pages, tr_mw_copies, tr_mw_failed;
static const char *tr_mw_reason = "text replication is inactive";

static bool tr_enabled __ro_after_init = true;
static nodemask_t tr_testfail __initdata;
/* How much of the window the allocator hands out: kernel_replication_modules=. */
static unsigned long tr_mw_limit __ro_after_init = TR_MW_SIZE;

static int __init text_replica_param(char *arg)
{
	if (arg && !strcmp(arg, "on")) {
		tr_enabled = true;
	} else if (arg && !strcmp(arg, "off")) {
		tr_enabled = false;
	} else {
		pr_warn("kernel_replication=%s: unknown value, expected 'on' or 'off'; using the default (on)\n",
			arg ?: "");
		tr_enabled = true;
	}
	return 0;
}
early_param("kernel_replication", text_replica_param);

/*
 * The window's size is fixed by the layout; a smaller limit leaves room
 * for fewer modules (0: none is replicated), which is how the tests fill it.
 */
static int __init text_replica_modules_param(char *arg)
{
	unsigned long long size = 0;
	char *end = arg;

	if (arg)
		size = memparse(arg, &end);
	/* Anything but 0 must hold one page and its guard. */
	if (!arg || end == arg || *end || size > TR_MW_SIZE ||
	    (size && size < 2 * PAGE_SIZE)) {
		pr_warn("kernel_replication_modules=%s: expected 0 or a size from %luK to %uM; using %uM\n",
			arg ?: "", 2 * PAGE_SIZE >> 10, TR_MW_SIZE >> 20,
			TR_MW_SIZE >> 20);
		size = TR_MW_SIZE;
	}
	tr_mw_limit = PAGE_ALIGN(size);
	return 0;
}
early_param("kernel_replication_modules", text_replica_modules_param);

/* For tests: pretend that the copy for these nodes cannot be allocated. */
static int __init text_replica_testfail_param(char *arg)
{
	if (!arg || nodelist_parse(arg, tr_testfail)) {
		pr_warn("kernel_replication_testfail=%s: expected a node list such as 1 or 1-2; ignored\n",
			arg ?: "");
		nodes_clear(tr_testfail);
	}
	return 0;
}
early_param("kernel_replication_testfail", text_replica_testfail_param);

static struct vm_struct tr_holes[4];

static void __init tr_hole(struct vm_struct *vm, unsigned long start,
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
	vm->caller = text_replica_reserve_va;
	vm_area_add_early(vm);
}

/**
 * text_replica_module_base() - the lowest address of replicated module text
 *
 * Return: the start of the module window, which module_init_limits() must
 * keep in branch range of the image, or 0 if there is none.
 */
unsigned long text_replica_module_base(void)
{
	return tr_mw_lo;
}

/**
 * text_replica_module_addr() - is this address in the module window?
 * @addr: virtual address
 *
 * Return: true if @addr belongs to replicated module text or rodata, whose
 * permissions text_replica_module_prot() changes.
 */
bool text_replica_module_addr(unsigned long addr)
{
	return addr >= tr_mw_lo && addr < tr_mw_hi;
}

/**
 * text_replica_reserve_va() - keep vmalloc out of the image's private tables
 *
 * Called from declare_kernel_vmas(), before vmalloc_init().  The private
 * top-level entries are those covering the image and its module box: every
 * module and its PLT target lies in a 2 GiB box containing the image (see
 * module_init_limits()), so the box is [_end - 2G, _text + 2G).  Reserve
 * the rest of those entries, and the rest of the 1 GiB ranges holding the
 * image (their PMD tables are per node), so that only the box's other
 * 1 GiB ranges can ever receive new mappings; their PMD tables are
 * allocated before the copies and shared.
 */
void __init text_replica_reserve_va(void)
{
	unsigned long text = (unsigned long)_text;
	/* the data segment's vm area has a guard page */
	unsigned long end = (unsigned long)_end + PAGE_SIZE;

	unsigned long lo;

	if (!tr_enabled)
		return;

	tr_box_lo = (unsigned long)_end - SZ_2G;
	tr_box_hi = text + SZ_2G;
	tr_slot_lo = ALIGN_DOWN(tr_box_lo, PGDIR_SIZE);
	tr_slot_hi = ALIGN(tr_box_hi, PGDIR_SIZE);
	if (IS_ENABLED(CONFIG_MODULES)) {
		tr_mw_hi = ALIGN_DOWN(text, PMD_SIZE);
		tr_mw_lo = tr_mw_hi - TR_MW_SIZE;
	}

	/* The module window is private like the image: so is its 1 GiB range. */
	lo = ALIGN_DOWN(tr_mw_lo ?: text, PUD_SIZE);
	tr_hole(&tr_holes[0], tr_slot_lo, min(tr_box_lo, lo));
	tr_hole(&tr_holes[1], lo, tr_mw_lo ?: text);
	tr_hole(&tr_mw_vm, tr_mw_lo, tr_mw_lo ? text : 0);
	tr_hole(&tr_holes[2], end, ALIGN(end, PUD_SIZE));
	tr_hole(&tr_holes[3], max(tr_box_hi, ALIGN(end, PUD_SIZE)), tr_slot_hi);
}

/*
 * The node of @copies nearest to @nid by @distance.  Ties go to @master
 * (the image's node, which always has the text), then to the lowest node
 * number.  Kept apart from the node map for the KUnit test.
 */
static int tr_nearest_of(int nid, const nodemask_t *copies, int master,
			 int (*distance)(int from, int to))
{
	int best = master, n;

	for_each_node_mask(n, *copies) {
		if (distance(nid, n) < distance(nid, best))
			best = n;
	}
	return best;
}

static int __init tr_node_distance(int from, int to)
{
	return node_distance(from, to);
}

static int __init tr_nearest(int nid)
{
	nodemask_t copies = NODE_MASK_NONE;
	int n;

	for_each_node(n) {
		if (tr_nodes[n].use == n)
			node_set(n, copies);
	}
	return tr_nearest_of(nid, &copies, tr_master_node, tr_node_distance);
}

/**
 * text_replica_reserve() - reserve a node-local copy of text and rodata
 *
 * Called from setup_arch() once every possible CPU's node is known.  Each
 * node with CPUs and memory, other than the image's, gets a physically
 * contiguous block congruent to the image modulo 2 MiB, so every block and
 * contiguous mapping of the master can be repeated for the copy.  A node
 * without a copy (no memory, or the allocation failed) uses the nearest
 * node's copy; the master is always there to fall back to.
 */
void __init text_replica_reserve(void)
{
	nodemask_t want = NODE_MASK_NONE;
	phys_addr_t off, pa;
	unsigned int cpu;
	int nid;

	for_each_node(nid)
		tr_nodes[nid].use = NUMA_NO_NODE;
	if (!tr_enabled) {
		tr_reason = "off (kernel_replication=off)";
		return;
	}

	tr_master_pa = __pa_symbol(_stext);
	tr_size = PAGE_ALIGN((unsigned long)__end_rodata - (unsigned long)_stext);
	tr_master_node = early_pfn_to_nid(PHYS_PFN(tr_master_pa));
	tr_nodes[tr_master_node].base = tr_master_pa;
	tr_nodes[tr_master_node].use = tr_master_node;

	for_each_possible_cpu(cpu)
		node_set(early_cpu_to_node(cpu), want);

	off = tr_master_pa & (PMD_SIZE - 1);
	for_each_node_mask(nid, want) {
		if (nid == tr_master_node || !node_state(nid, N_MEMORY))
			continue;
		pa = 0;
		if (!node_isset(nid, tr_testfail))
			pa = memblock_alloc_range_nid(off + tr_size, PMD_SIZE, 0,
						      MEMBLOCK_ALLOC_ACCESSIBLE,
						      nid, true);
		if (!pa) {
			pr_warn("node %d: cannot allocate a %zu KiB copy of text and rodata: its CPUs use another node's copy\n",
				nid, tr_size >> 10);
			continue;
		}
		if (off)
			memblock_phys_free(pa, off);
		tr_nodes[nid].base = pa + off;
		tr_nodes[nid].use = nid;
		tr_copies++;
	}

	for_each_node_mask(nid, want) {
		if (tr_nodes[nid].use != NUMA_NO_NODE)
			continue;
		tr_nodes[nid].use = tr_nearest(nid);
		pr_info("node %d has no copy: its CPUs use node %d's\n", nid,
			tr_nodes[nid].use);
	}
	if (!tr_copies)
		tr_reason = "no node other than the image's has CPUs and a copy";
}

/**
 * text_replica_shared_table() - is a kernel page table shared with node copies?
 * @addr: virtual address covered by the table
 *
 * Return: true if the node tables of the text replica may point at the
 * table covering @addr below a top-level entry (once replication is on,
 * and from boot when it is enabled), so it must not be freed.
 */
bool text_replica_shared_table(unsigned long addr)
{
	/*
	 * From boot, not from the switch: a table freed while the node
	 * tables are being built would be as bad, and a 1 GiB mapping in
	 * the module box is not worth the window.
	 */
	return tr_slot_hi && addr >= tr_slot_lo && addr < tr_slot_hi;
}

/*
 * Make a copy's bytes at @start..@end (a linear or fixmap alias) visible
 * to instruction fetch from it on every CPU.  Only the assembly helpers
 * and inline instructions: this runs inside the patching primitives,
 * which must not recurse into ftrace or kprobes.
 */
static __always_inline void tr_sync_icache(unsigned long start, unsigned long end)
{
	if (icache_is_aliasing()) {
		dcache_clean_pou(start, end);
		icache_inval_all_pou();
	} else {
		caches_clean_inval_pou(start, end);
	}
}

static bool tr_has_copy(int nid)
{
	return tr_nodes[nid].use == nid && nid != tr_master_node;
}

/*
 * The root whose module window entries the node's CPUs use, if the node
 * has window tables of its own: the master's for the image's node.
 */
static __always_inline pgd_t *tr_mw_root(int nid)
{
	return nid == tr_master_node ? init_mm.pgd : tr_nodes[nid].pgd;
}

/* The PTE of @addr in the module window: its tables exist from boot. */
static __always_inline pte_t *tr_mw_ptep(pgd_t *root, unsigned long addr)
{
	p4d_t *p4dp = p4d_offset(pgd_offset_pgd(root, addr), addr);
	pmd_t *pmdp = pmd_offset(pud_offset(p4dp, addr), addr);

	return pte_offset_kernel(pmdp, addr);
}

/*
 * Every physical copy of the bytes being patched: found by
 * text_replica_prepare() before the first byte changes, written by
 * text_replica_write().  The text patching primitives call both under
 * patch_lock, which serialises them and owns FIX_TEXT_POKE0.
 */
struct tr_target {
	phys_addr_t pa;
	bool master;		/* the caller writes it itself */
};

static struct tr_target tr_targets[MAX_NUMNODES];
static unsigned int tr_nr_targets;

static __always_inline void tr_add_target(phys_addr_t pa, bool master)
{
	tr_targets[tr_nr_targets].pa = pa;
	tr_targets[tr_nr_targets].master = master;
	tr_nr_targets++;
}

/*
 * Module text: every node's copy of the page and the master's, found
 * through each node's window entry.
 */
static __always_inline int tr_mw_prepare(unsigned long a)
{
	pte_t mpte = __ptep_get(tr_mw_ptep(init_mm.pgd, a));
	int nid;

	if (!pte_present(mpte))
		return -EFAULT;
	for_each_node(nid) {
		pgd_t *root = tr_mw_root(nid);
		pte_t pte;

		if (!root)
			continue;
		pte = __ptep_get(tr_mw_ptep(root, a));
		/* Cleared only while nothing may patch the module. */
		if (WARN_ON_ONCE(!pte_present(pte))) {
			tr_nr_targets = 0;
			return -EFAULT;
		}
		if (nid != tr_master_node && pte_pfn(pte) == pte_pfn(mpte))
			continue;
		tr_add_target(PFN_PHYS(pte_pfn(pte)) + offset_in_page(a),
			      nid == tr_master_node);
	}
	return 0;
}

/**
 * text_replica_prepare() - find every copy of text about to be patched
 * @addr: kernel or module text address
 * @len: bytes to be written there, within one page
 *
 * The first half of a text write: resolves every copy before anything is
 * written, so that a write either fails here, having changed nothing, or
 * cannot fail.  Call text_replica_write() once the master is written.
 *
 * Context: under patch_lock, interrupts off.
 * Return: 0, or -EFAULT if @addr is module text that is not mapped.
 */
notrace int text_replica_prepare(void *addr, size_t len)
{
	unsigned long a = (unsigned long)addr;
	int nid;

	tr_nr_targets = 0;
	if (!READ_ONCE(tr_active))
		return 0;
	if (text_replica_module_addr(a))
		return tr_mw_prepare(a);
	if (a < (unsigned long)_stext || a + len > (unsigned long)_etext)
		return 0;
	for_each_node(nid) {
		if (tr_nodes[nid].use == nid)
			tr_add_target(tr_nodes[nid].base + (a - (unsigned long)_stext),
				      nid == tr_master_node);
	}
	return 0;
}

NOKPROBE_SYMBOL(text_replica_prepare);

#ifdef CONFIG_KERNEL_TEXT_REPLICATION_KUNIT_TEST
/*
 * For KUnit: the copies the last write at tr_watch maintained.  QEMU keeps
 * instruction fetch coherent with any store, so only a record can show a
 * copy that missed its maintenance.
 */
static unsigned long tr_watch;
static phys_addr_t tr_cleaned[MAX_NUMNODES];
static unsigned int tr_nr_cleaned;

static __always_inline void tr_record(void *addr, phys_addr_t pa)
{
	if ((unsigned long)addr == READ_ONCE(tr_watch))
		tr_cleaned[tr_nr_cleaned++] = pa;
}
#else
static __always_inline void tr_record(void *addr, phys_addr_t pa)
{
}
#endif

/*
 * The one place a written copy is made visible to instruction fetch, and
 * recorded as such: no copy gets one without the other.
 */
static __always_inline void tr_maintain(void *addr, phys_addr_t pa,
					unsigned long waddr, size_t len)
{
	tr_sync_icache(waddr, waddr + len);
	tr_record(addr, pa);
}

/**
 * text_replica_write() - write patched kernel text into every copy
 * @addr: the address text_replica_prepare() was called for
 * @src: the bytes the caller just wrote to the master there
 * @len: how many
 *
 * Writes each node's copy through FIX_TEXT_POKE0, then cleans the D-cache
 * and invalidates the I-cache of every copy, the master's included, by
 * that alias (DC CVAU, IC IVAU: by physical address for PIPT and
 * non-aliasing VIPT I-caches, in the Inner Shareable domain; IC IALLUIS
 * for an aliasing one).  The caller's maintenance by @addr reaches only
 * the copy its own CPU translates to.  Nothing here can fail.
 *
 * Context: under patch_lock, interrupts off, after text_replica_prepare().
 */
notrace void text_replica_write(void *addr, const void *src, size_t len)
{
	unsigned int i;

#ifdef CONFIG_KERNEL_TEXT_REPLICATION_KUNIT_TEST
	if ((unsigned long)addr == READ_ONCE(tr_watch))
		tr_nr_cleaned = 0;
#endif
	for (i = 0; i < tr_nr_targets; i++) {
		struct tr_target *t = &tr_targets[i];
		unsigned long waddr = set_fixmap_offset(FIX_TEXT_POKE0, t->pa);

		/* Just mapped writable: a fault here is a kernel bug. */
		if (!t->master)
			WARN_ON_ONCE(copy_to_kernel_nofault((void *)waddr, src, len));
		tr_maintain(addr, t->pa, waddr, len);
		clear_fixmap(FIX_TEXT_POKE0);
	}
	tr_nr_targets = 0;
}

NOKPROBE_SYMBOL(text_replica_write);

/* What the node tables being built are walked with: see tr_build_range(). */
struct tr_build {
	int nid;
	unsigned long start, end;
};

/*
 * A copy, on the node, of the table a shared entry points to.  Nothing
 * walks the node's tables yet: no break-before-make when the entry is
 * pointed at it.
 */
static void *tr_copy_table(int nid, void *table)
{
	struct page *page = alloc_pages_node(nid, GFP_PGTABLE_KERNEL, 0);

	if (!page)
		return NULL;
	copy_page(page_address(page), table);
	tr_table_pages++;
	return page_address(page);
}

/*
 * The master's entries at @addr, to tell an entry of the node's tables
 * that still points where the master's does (shared) from one already
 * made the node's own.
 */
static p4d_t tr_master_p4d(unsigned long addr)
{
	return p4dp_get(p4d_offset(pgd_offset_k(addr), addr));
}

static pud_t tr_master_pud(unsigned long addr)
{
	return pudp_get(pud_offset(p4d_offset(pgd_offset_k(addr), addr), addr));
}

static pmd_t tr_master_pmd(unsigned long addr)
{
	pud_t *pudp = pud_offset(p4d_offset(pgd_offset_k(addr), addr), addr);

	return pmdp_get(pmd_offset(pudp, addr));
}

/*
 * Is [pa, pa + size) inside the master's text and rodata, and, for a
 * contiguous range of @cont bytes around @addr, is all of it inside what
 * this walk relocates?  A range half relocated would map two copies under
 * one hint.
 */
static int tr_leaf_ok(struct tr_build *b, phys_addr_t pa, unsigned long size,
		      unsigned long addr, bool cont, unsigned long span)
{
	if (pa < tr_master_pa || pa + size > tr_master_pa + tr_size)
		return -EFAULT;
	if (cont && (ALIGN_DOWN(addr, span) < b->start ||
		     ALIGN_DOWN(addr, span) + span > b->end))
		return -EINVAL;
	return 0;
}

/* The node's copy of master physical address @pa. */
static phys_addr_t tr_node_pa(int nid, phys_addr_t pa)
{
	return tr_nodes[nid].base + (pa - tr_master_pa);
}

/*
 * Point a leaf of the node's tables at the node's copy, with the master's
 * attributes.  The copy is congruent to the master modulo PMD_SIZE, so
 * blocks and contiguous PTE ranges keep their alignment; a contiguous PMD
 * range keeps its hint only if the copy happens to be congruent modulo
 * its size too.
 */
static int tr_move_pte(struct tr_build *b, pte_t *ptep, unsigned long addr)
{
	pte_t pte = __ptep_get(ptep);
	phys_addr_t pa, npa;
	int ret;

	if (!pte_present(pte))
		return -EFAULT;
	pa = PFN_PHYS(pte_pfn(pte));
	ret = tr_leaf_ok(b, pa, PAGE_SIZE, addr, pte_cont(pte), CONT_PTE_SIZE);
	if (ret)
		return ret;
	npa = tr_node_pa(b->nid, pa);
	if (pte_cont(pte) && ((npa ^ pa) & (CONT_PTE_SIZE - 1)))
		pte = pte_mknoncont(pte);
	/* Published with the rest by tr_build()'s barrier. */
	__set_pte_nosync(ptep, pfn_pte(PHYS_PFN(npa), pte_pgprot(pte)));
	return 0;
}

static int tr_move_pmd(struct tr_build *b, pmd_t *pmdp, unsigned long addr)
{
	pmd_t pmd = pmdp_get(pmdp);
	phys_addr_t pa, npa;
	int ret;

	pa = PFN_PHYS(pmd_pfn(pmd));
	ret = tr_leaf_ok(b, pa, PMD_SIZE, addr, pmd_cont(pmd), CONT_PMD_SIZE);
	if (ret)
		return ret;
	npa = tr_node_pa(b->nid, pa);
	if (pmd_cont(pmd) && ((npa ^ pa) & (CONT_PMD_SIZE - 1)))
		pmd = pte_pmd(pte_mknoncont(pmd_pte(pmd)));
	set_pmd(pmdp, pfn_pmd(PHYS_PFN(npa), pmd_pgprot(pmd)));
	return 0;
}

/*
 * The PTEs of a block, page by page, with the block's attributes and
 * without a contiguous hint (tr_split() refuses hinted blocks; the test
 * feeds one).
 */
static void tr_split_block(pmd_t block, pte_t *ptes)
{
	pgprot_t prot = pmd_pgprot(block);
	unsigned long pfn = pmd_pfn(block);
	unsigned int i;

	prot = __pgprot((pgprot_val(prot) & ~(PMD_TYPE_MASK | PTE_CONT)) |
			PTE_TYPE_PAGE);
	for (i = 0; i < PTRS_PER_PTE; i++)
		ptes[i] = pfn_pte(pfn + i, prot);
}

/*
 * A block of the master that covers both what is replicated and what
 * stays shared (the linker may end rodata inside the block that also maps
 * the image's page tables): the node gets a PTE table of its own for it,
 * still mapping the master's pages, so that only the replicated pages move
 * to the node's copy.  What stays shared keeps the master's translation,
 * which nothing changes after mark_rodata_ro(), before this runs.
 */
static int tr_split(int nid, pmd_t *pmdp, pmd_t block)
{
	struct page *page;

	/* Its siblings would keep a hint this table breaks. */
	if (pmd_cont(block))
		return -EINVAL;
	page = alloc_pages_node(nid, GFP_PGTABLE_KERNEL, 0);
	if (!page)
		return -ENOMEM;
	tr_split_block(block, page_address(page));
	/* Nothing walks the node's tables yet: no break-before-make. */
	pmd_populate_kernel(&init_mm, pmdp, page_address(page));
	tr_table_pages++;
	return 0;
}

/*
 * Give an unused copy back to the page allocator; the node's CPUs use the
 * master.  Its tables, if any, are leaked (a few pages): they may be half
 * built.
 */
static void tr_free_copy(int nid)
{
	phys_addr_t base = tr_nodes[nid].base;

	/* memblock_free_late() is __init, and init memory is gone by now. */
	kmemleak_free_part_phys(base, tr_size);
	free_reserved_area(__va(base), __va(base + tr_size), -1, "text replica");
	tr_nodes[nid].base = 0;
	tr_nodes[nid].use = tr_master_node;
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
static int tr_walk_p4d(p4d_t *p4dp, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct tr_build *b = walk->private;
	p4d_t p4d = p4dp_get(p4dp);
	pud_t *table;

	/* Folded at build time, or at boot (LPA2 without the feature). */
	if (mm_pud_folded(&init_mm) ||
	    p4d_val(p4d) != p4d_val(tr_master_p4d(addr)))
		return 0;
	table = tr_copy_table(b->nid, p4d_pgtable(p4d));
	if (!table)
		return -ENOMEM;
	p4d_populate(&init_mm, p4dp, table);
	return 0;
}

static int tr_walk_pud(pud_t *pudp, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct tr_build *b = walk->private;
	pud_t pud = pudp_get(pudp);
	pmd_t *table;

	if (!pud_present(pud) || pud_leaf(pud))
		return -EFAULT;
	if (pud_val(pud) != pud_val(tr_master_pud(addr)))
		return 0;
	table = tr_copy_table(b->nid, pud_pgtable(pud));
	if (!table)
		return -ENOMEM;
	pud_populate(&init_mm, pudp, table);
	return 0;
}

static int tr_walk_pmd(pmd_t *pmdp, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct tr_build *b = walk->private;
	pmd_t pmd = pmdp_get(pmdp);
	pte_t *table;

	if (!pmd_present(pmd))
		return -EFAULT;
	/* A block all inside the range moves whole; the walk stops there. */
	if (pmd_leaf(pmd) && IS_ALIGNED(addr, PMD_SIZE) && next - addr == PMD_SIZE)
		return tr_move_pmd(b, pmdp, addr);
	/* Once per table: an earlier range may have made it the node's. */
	if (pmd_val(pmd) != pmd_val(tr_master_pmd(addr)))
		return 0;
	/* A block only partly replicated becomes a table of the node's. */
	if (pmd_leaf(pmd))
		return tr_split(b->nid, pmdp, pmd);
	table = tr_copy_table(b->nid, (void *)pmd_page_vaddr(pmd));
	if (!table)
		return -ENOMEM;
	pmd_populate_kernel(&init_mm, pmdp, table);
	return 0;
}

static int tr_walk_pte(pte_t *ptep, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	return tr_move_pte(walk->private, ptep, addr);
}

/* Everything walked is mapped in the master (the node's tables start as it). */
static int tr_walk_hole(unsigned long addr, unsigned long next, int depth,
			struct mm_walk *walk)
{
	return -EFAULT;
}

/* A part of the image: its leaves move to the node's copy. */
static const struct mm_walk_ops tr_image_ops = {
	.p4d_entry = tr_walk_p4d,
	.pud_entry = tr_walk_pud,
	.pmd_entry = tr_walk_pmd,
	.pte_entry = tr_walk_pte,
	.pte_hole = tr_walk_hole,
};

/* The module window: the node gets PTE tables of its own, as they are. */
static const struct mm_walk_ops tr_window_ops = {
	.p4d_entry = tr_walk_p4d,
	.pud_entry = tr_walk_pud,
	.pmd_entry = tr_walk_pmd,
	.pte_hole = tr_walk_hole,
};

/* Build the node's translation of [start, end). */
static int tr_build_range(int nid, unsigned long start, unsigned long end,
			  const struct mm_walk_ops *ops)
{
	struct tr_build b = { .nid = nid, .start = start, .end = end };
	int ret;

	/* The walker's rule for kernel tables; nothing walks these yet. */
	mmap_read_lock(&init_mm);
	ret = walk_kernel_page_table_range(start, end, ops, tr_nodes[nid].pgd, &b);
	mmap_read_unlock(&init_mm);
	return ret;
}

static int tr_build(int nid)
{
	unsigned long addr;
	int ret;

	tr_nodes[nid].pgd = (pgd_t *)get_zeroed_page(GFP_KERNEL);
	if (!tr_nodes[nid].pgd)
		return -ENOMEM;
	for (addr = tr_slot_lo; addr < tr_slot_hi; addr += PGDIR_SIZE)
		*pgd_offset_pgd(tr_nodes[nid].pgd, addr) = READ_ONCE(*pgd_offset_k(addr));

	ret = tr_build_range(nid, (unsigned long)_stext, (unsigned long)_etext,
			     &tr_image_ops);
	if (!ret)
		ret = tr_build_range(nid, (unsigned long)__start_rodata,
				     (unsigned long)__end_rodata, &tr_image_ops);
	if (!ret && tr_mw_lo)
		ret = tr_build_range(nid, tr_mw_lo, tr_mw_hi, &tr_window_ops);
	/* Published by the core's root writes, which order after this. */
	dsb(ishst);
	return ret;
}

/* apply_to_page_range() callback: the tables are all that is wanted. */
static int tr_no_pte(pte_t *ptep, unsigned long addr, void *data)
{
	return 0;
}

/*
 * Give every 1 GiB range of the module box its PMD table now, in the
 * master, so that the node tables can share them and nothing ever writes
 * a PUD entry under the private top-level entries again.  A PUD block
 * there (a 1 GiB vmalloc mapping made before this) cannot be shared.
 * Give the module window its PTE tables, which the node tables copy:
 * apply_to_page_range() allocates every one, with nothing to do per entry.
 */
static int tr_prepare_box(void)
{
	unsigned long addr;
	int ret;

	if (tr_mw_lo) {
		ret = apply_to_page_range(&init_mm, tr_mw_lo, TR_MW_SIZE,
					  tr_no_pte, NULL);
		if (ret)
			return ret;
	}

	for (addr = ALIGN_DOWN(tr_box_lo, PUD_SIZE); addr < tr_box_hi;
	     addr += PUD_SIZE) {
		pgd_t *pgdp = pgd_offset_k(addr);
		p4d_t *p4dp = p4d_alloc(&init_mm, pgdp, addr);
		pud_t *pudp = p4dp ? pud_alloc(&init_mm, p4dp, addr) : NULL;

		if (!pudp || !pmd_alloc(&init_mm, pudp, addr))
			return -ENOMEM;
		if (pud_leaf(READ_ONCE(*pudp)))
			return -EBUSY;
	}
	return 0;
}

static pgd_t tr_populate(struct percpu_pgtable_client *client,
			 unsigned int cpu, unsigned long addr)
{
	int use = tr_nodes[early_cpu_to_node(cpu)].use;

	if (use == NUMA_NO_NODE || !tr_nodes[use].pgd)
		return READ_ONCE(*pgd_offset_k(addr));
	return READ_ONCE(*pgd_offset_pgd(tr_nodes[use].pgd, addr));
}

/*
 * Runs on one CPU under stop_machine(), every other online CPU spinning
 * with interrupts off, before any CPU switches to a root that maps the
 * copies (percpu_pgtable_register_client() replaces every root, since the
 * image's top-level entries are live).  No patcher runs meanwhile:
 * patch_lock holders keep interrupts off, so stop_machine() waits for
 * them.  From here on every text write goes to every copy.
 */
static int tr_prepare(struct percpu_pgtable_client *client)
{
	unsigned long master = (unsigned long)lm_alias(_stext);
	int nid;

	/*
	 * A patcher may have written the master and been preempted before
	 * its own maintenance by the text address, which from now on reaches
	 * its node's copy only: clean the master here.
	 */
	tr_sync_icache(master, master + tr_size);
	for_each_node(nid) {
		unsigned long va;

		if (!tr_has_copy(nid) || !tr_nodes[nid].pgd)
			continue;
		va = (unsigned long)__va(tr_nodes[nid].base);
		memcpy((void *)va, (void *)master, tr_size);
		/* Fetches from the copy must see what was written. */
		tr_sync_icache(va, va + tr_size);
	}
	WRITE_ONCE(tr_active, true);
	return 0;
}

static struct percpu_pgtable_client tr_client = {
	.name = "text_replica",
	.populate = tr_populate,
	.prepare = tr_prepare,
};

#ifdef CONFIG_MODULES

/* Point @addr at @pte in the master's and every node's window tables. */
static void tr_mw_set(unsigned long addr, pte_t pte)
{
	int nid;

	for_each_node(nid) {
		if (tr_mw_root(nid))
			__set_pte(tr_mw_ptep(tr_mw_root(nid), addr), pte);
	}
}

/*
 * Unmap [start, end) from every table and free its pages, the node copies
 * and the master's, once no TLB holds them.  Their linear aliases get back
 * their default permissions first, as vm_reset_perms() does for vmalloc.
 */
static void tr_mw_unmap(unsigned long start, unsigned long end)
{
	struct page *page, *next;
	unsigned long addr;
	LIST_HEAD(pages);
	int nid;

	lockdep_assert_held(&tr_mw_lock);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		pte_t *mptep = tr_mw_ptep(init_mm.pgd, addr);
		pte_t mpte = __ptep_get(mptep);

		if (!pte_present(mpte))
			continue;
		for_each_node(nid) {
			pte_t *ptep;
			pte_t pte;

			if (nid == tr_master_node || !tr_mw_root(nid))
				continue;
			ptep = tr_mw_ptep(tr_mw_root(nid), addr);
			pte = __ptep_get(ptep);
			if (pte_present(pte) && pte_pfn(pte) != pte_pfn(mpte)) {
				list_add(&pte_page(pte)->lru, &pages);
				tr_mw_copies--;
			}
			__pte_clear(&init_mm, addr, ptep);
		}
		list_add(&pte_page(mpte)->lru, &pages);
		__pte_clear(&init_mm, addr, mptep);
		tr_mw_pages--;
	}
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
 * table, all or none: returns false, having unmapped and freed what it
 * mapped, if a page cannot be had.
 */
static bool tr_mw_populate(unsigned long addr, unsigned long size)
{
	unsigned long a;

	mutex_lock(&tr_mw_lock);
	for (a = addr; a < addr + size; a += PAGE_SIZE) {
		struct page *page = alloc_pages_node(tr_master_node,
						     GFP_KERNEL | __GFP_NOWARN, 0);

		if (!page)
			break;
		/* Was not mapped: nothing to break before making it. */
		tr_mw_set(a, mk_pte(page, PAGE_KERNEL));
		tr_mw_pages++;
	}
	if (a < addr + size)
		tr_mw_unmap(addr, a);
	mutex_unlock(&tr_mw_lock);
	return a >= addr + size;
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
	/* Pairs with the release in tr_mw_setup(): the pool is there. */
	if (!smp_load_acquire(&tr_mw_ready))
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
	    !text_replica_module_addr((unsigned long)mod->mem[MOD_TEXT].base))
		return NULL;
	need = size + PAGE_SIZE;
	if (type == MOD_TEXT && mod->mem[MOD_RODATA].size)
		need += PAGE_ALIGN(mod->mem[MOD_RODATA].size) + PAGE_SIZE;
	addr = 0;
	if (gen_pool_avail(tr_mw_pool) >= need)
		addr = gen_pool_alloc(tr_mw_pool, size + PAGE_SIZE);
	if (!addr) {
		pr_warn_ratelimited("module window full: %s%s is not replicated\n",
				    mod->name, type == MOD_TEXT ? "" : "'s rodata");
		return NULL;
	}

	if (!tr_mw_populate(addr, size)) {
		gen_pool_free(tr_mw_pool, addr, size + PAGE_SIZE);
		pr_warn_ratelimited("out of memory on node %d: %s%s is not replicated\n",
				    tr_master_node, mod->name,
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

	if (!text_replica_module_addr(addr))
		return false;
	kmemleak_free((void *)addr);
	kasan_poison_vmalloc((void *)addr, size);
	mutex_lock(&tr_mw_lock);
	tr_mw_unmap(addr, addr + size);
	mutex_unlock(&tr_mw_lock);
	gen_pool_free(tr_mw_pool, addr, size + PAGE_SIZE);
	return true;
}

/*
 * Point the node's entries for [addr, addr + size) at node-local copies
 * of the master's pages.  Returns how many pages could not be copied:
 * those stay on the master's, which is slower but correct.
 */
static unsigned long tr_mw_copy(int nid, unsigned long addr, unsigned long size)
{
	unsigned long npages = size >> PAGE_SHIFT, i, failed = 0;
	pgd_t *root = tr_mw_root(nid);
	struct page **pages;

	pages = kvcalloc(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return npages;
	for (i = 0; i < npages; i++) {
		pte_t mpte = __ptep_get(tr_mw_ptep(init_mm.pgd, addr + i * PAGE_SIZE));
		void *dst;

		pages[i] = alloc_pages_node(nid, GFP_KERNEL | __GFP_THISNODE |
					    __GFP_NOWARN, 0);
		if (!pages[i]) {
			failed++;
			continue;
		}
		dst = page_address(pages[i]);
		copy_page(dst, page_address(pte_page(mpte)));
		/* Fetches from the copy must see what was written. */
		tr_sync_icache((unsigned long)dst, (unsigned long)dst + PAGE_SIZE);
		/* As for the master's pages, per set_memory_ro(). */
		if (rodata_full && set_direct_map_ro_noflush(pages[i]))
			pr_warn_once("the linear alias of module copies stays writable\n");
	}
	/*
	 * One flush for the linear aliases.  A page vfree()d lately may still
	 * be writable through a lazily unmapped vmalloc alias: purge those
	 * before it becomes text, as change_memory_common() does.
	 */
	if (rodata_full)
		flush_tlb_all();
	vm_unmap_aliases();

	/*
	 * Break before make: the module is not visible yet, so nothing but
	 * a stale TLB entry can translate these addresses meanwhile.
	 */
	for (i = 0; i < npages; i++) {
		if (pages[i])
			__pte_clear(&init_mm, addr + i * PAGE_SIZE,
				    tr_mw_ptep(root, addr + i * PAGE_SIZE));
	}
	flush_tlb_kernel_range(addr, addr + size);
	for (i = 0; i < npages; i++) {
		unsigned long a = addr + i * PAGE_SIZE;
		pte_t mpte = __ptep_get(tr_mw_ptep(init_mm.pgd, a));

		if (!pages[i])
			continue;
		__set_pte(tr_mw_ptep(root, a),
			  pfn_pte(page_to_pfn(pages[i]), pte_pgprot(mpte)));
		tr_mw_copies++;
	}
	kvfree(pages);
	return failed;
}

/**
 * module_arch_mem_protected() - give every node its copy of a module
 * @mod: the module, whose text and rodata are now final and read-only
 *
 * Called under module_mutex before the module becomes visible, so no text
 * patch can be in flight on it (see the comment on tr_mw_lock): the copies
 * are made from the master's pages without patch_lock.
 */
void module_arch_mem_protected(struct module *mod)
{
	static const enum mod_mem_type types[] = { MOD_TEXT, MOD_RODATA };
	unsigned long failed = 0;
	int i, nid;

	mutex_lock(&tr_mw_lock);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		unsigned long addr = (unsigned long)mod->mem[types[i]].base;

		if (!text_replica_module_addr(addr))
			continue;
		for_each_node(nid) {
			if (nid != tr_master_node && tr_mw_root(nid))
				failed += tr_mw_copy(nid, addr,
						     mod->mem[types[i]].size);
		}
	}
	tr_mw_failed += failed;
	mutex_unlock(&tr_mw_lock);
	if (failed)
		pr_warn("%s: %lu pages could not be copied to their node: those CPUs use the master's\n",
			mod->name, failed);
}

/*
 * Check [addr, end) before anything changes: all mapped, and, if write
 * permission is asked for, no page of it has a node copy yet.  Writable
 * copies would take writes on one node only: once a node has its own
 * copy, the range stays read-only.
 */
static int tr_mw_prot_ok(unsigned long addr, unsigned long end, bool rw)
{
	unsigned long a;
	int nid;

	lockdep_assert_held(&tr_mw_lock);
	for (a = addr; a < end; a += PAGE_SIZE) {
		pte_t mpte = __ptep_get(tr_mw_ptep(init_mm.pgd, a));

		if (!pte_present(mpte))
			return -EINVAL;
		for_each_node(nid) {
			pte_t pte;

			if (!rw || nid == tr_master_node || !tr_mw_root(nid))
				continue;
			pte = __ptep_get(tr_mw_ptep(tr_mw_root(nid), a));
			if (pte_pfn(pte) != pte_pfn(mpte)) {
				/*
				 * A caller's mistake, not the kernel's: no
				 * splat, the range stays read-only.
				 */
				pr_warn_ratelimited("%#lx: replicated module text stays read-only (set_memory_rw() refused)\n",
						    a);
				return -EBUSY;
			}
		}
	}
	return 0;
}

/**
 * text_replica_module_prot() - set_memory_*() for the module window
 * @addr: page-aligned start
 * @numpages: number of pages
 * @set_mask: attributes to set
 * @clear_mask: attributes to clear
 *
 * Changes the master's and every node's entries, and, like
 * change_memory_common() with rodata=full, the linear alias of every page
 * behind them when read-only permission changes.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL if the range is not all mapped in the window, or
 * -EBUSY if write permission is asked for pages that have node copies.
 */
int text_replica_module_prot(unsigned long addr, int numpages,
			     pgprot_t set_mask, pgprot_t clear_mask)
{
	unsigned long end = addr + (unsigned long)numpages * PAGE_SIZE, a;
	bool ro = pgprot_val(set_mask) == PTE_RDONLY;
	bool rw = pgprot_val(clear_mask) == PTE_RDONLY;
	int nid, ret;

	if (numpages < 0 || end > tr_mw_hi || end < addr)
		return -EINVAL;
	/* As change_memory_common(): no stale alias may keep other rights. */
	vm_unmap_aliases();
	mutex_lock(&tr_mw_lock);
	ret = tr_mw_prot_ok(addr, end, rw);
	if (ret)
		goto out;
	for (a = addr; a < end; a += PAGE_SIZE) {
		unsigned long mpfn = pte_pfn(__ptep_get(tr_mw_ptep(init_mm.pgd, a)));

		for_each_node(nid) {
			pte_t *ptep;
			pte_t pte;

			if (!tr_mw_root(nid))
				continue;
			ptep = tr_mw_ptep(tr_mw_root(nid), a);
			pte = __ptep_get(ptep);
			pte = clear_pte_bit(pte, clear_mask);
			pte = set_pte_bit(pte, set_mask);
			__set_pte(ptep, pte);
			if (!rodata_full || (!ro && !rw) ||
			    (nid != tr_master_node && pte_pfn(pte) == mpfn))
				continue;
			if (ro)
				set_direct_map_ro_noflush(pte_page(pte));
			else
				set_direct_map_default_noflush(pte_page(pte));
		}
	}
	flush_tlb_kernel_range(addr, end);
	/* The linear aliases, once for all pages. */
	if ((ro || rw) && rodata_full)
		flush_tlb_all();
out:
	mutex_unlock(&tr_mw_lock);
	return ret;
}

/* Called once every node's tables are live. */
static void tr_mw_setup(void)
{
	if (!tr_mw_lo)
		return;
	if (!tr_mw_limit) {
		tr_mw_reason = "kernel_replication_modules=0";
		pr_info("modules: their text is not replicated (%s)\n", tr_mw_reason);
		return;
	}
	tr_mw_reason = "cannot set up the window's allocator";
	tr_mw_pool = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!tr_mw_pool)
		goto fail;
	if (gen_pool_add(tr_mw_pool, tr_mw_lo, tr_mw_limit, NUMA_NO_NODE))
		goto fail;
	/* Poisoned until allocated, as vmalloc's shadow is. */
	if (kasan_populate_vmalloc(tr_mw_lo, TR_MW_SIZE, GFP_KERNEL)) {
		tr_mw_reason = "cannot map the window's KASAN shadow";
		goto fail;
	}
	tr_mw_reason = "";
	/* Pairs with the acquire in module_arch_mem_alloc(). */
	smp_store_release(&tr_mw_ready, true);
	return;
fail:
	pr_warn("modules: %s: their text is not replicated\n", tr_mw_reason);
	if (tr_mw_pool)
		gen_pool_destroy(tr_mw_pool);
	tr_mw_pool = NULL;
}

#else /* !CONFIG_MODULES */

int text_replica_module_prot(unsigned long addr, int numpages,
			     pgprot_t set_mask, pgprot_t clear_mask)
{
	return -EINVAL;
}

static void tr_mw_setup(void)
{
}

#endif /* CONFIG_MODULES */

/* Why replication cannot be on for this boot, or NULL if it can. */
static const char *tr_unusable(void)
{
	if (!tr_enabled || !tr_copies)
		return tr_reason;
	if (!percpu_pgtable_active())
		return "per-CPU kernel page tables are off";
	/* The hypervisor owns .hyp.text, inside the text: no copy can read it. */
	if (is_protected_kvm_enabled())
		return "protected KVM owns part of the text";
	return NULL;
}

/*
 * Build every node's tables.  A node whose tables cannot be built gives
 * its copy back and uses the master, as do the nodes that would have
 * used its copy.  Returns how many copies are left.
 */
static unsigned int tr_build_nodes(void)
{
	int nid, ret;

	for_each_node(nid) {
		if (!tr_has_copy(nid))
			continue;
		ret = tr_build(nid);
		if (ret) {
			/* Not published: the tables are left, the node uses the master. */
			pr_warn("node %d: cannot build its tables (%d): its CPUs use the master copy\n",
				nid, ret);
			tr_nodes[nid].pgd = NULL;
			tr_free_copy(nid);
			tr_nodes[nid].use = tr_master_node;
			tr_copies--;
		}
	}
	for_each_node(nid) {
		int use = tr_nodes[nid].use;

		if (use != NUMA_NO_NODE && use != nid && use != tr_master_node &&
		    !tr_nodes[use].pgd)
			tr_nodes[nid].use = tr_master_node;
	}
	return tr_copies;
}

/* Once live: protect each copy's linear alias, and say where it is. */
static void tr_protect_copies(void)
{
	unsigned long npages = tr_size >> PAGE_SHIFT;
	phys_addr_t end;
	int nid;

	for_each_node(nid) {
		if (nid != tr_master_node && !tr_has_copy(nid))
			continue;
		end = tr_nodes[nid].base + tr_size - 1;
		/* As rodata=full does for the image's own alias. */
		if (nid != tr_master_node &&
		    set_direct_map_ro((unsigned long)__va(tr_nodes[nid].base), npages))
			pr_warn("node %d: the linear alias of the copy stays writable (linear map not page-mapped)\n",
				nid);
		pr_info("node %d: %s copy of text and rodata at %pa-%pa, %zu KiB\n",
			nid, nid == tr_master_node ? "master" : "own",
			&tr_nodes[nid].base, &end, tr_size >> 10);
	}
}

/**
 * text_replica_init() - copy text and rodata to every node and switch to them
 *
 * Called at the end of mark_rodata_ro(): text and rodata are final, every
 * CPU that boots from now on finds its root already pointing at its node's
 * tables.  On any failure the CPUs keep the master and a warning says why.
 *
 * Context: process context (kernel_init), before userspace; sleeps.
 */
void text_replica_init(void)
{
	u64 t0 = ktime_get_ns();
	const char *why;
	int nid, ret;

	why = tr_unusable();
	if (why) {
		tr_reason = why;
		goto inactive;
	}

	tr_client.start = tr_slot_lo;
	tr_client.end = tr_slot_hi;
	ret = tr_prepare_box();
	if (ret) {
		tr_reason = "cannot prepare the module box's tables";
		pr_warn("%s (%d): one copy only\n", tr_reason, ret);
		goto inactive;
	}
	if (!tr_build_nodes()) {
		tr_reason = "no copy could be mapped";
		goto inactive;
	}

	/*
	 * Every CPU moves to a new root that maps its node's copy: no live
	 * translation of the text changes (break-before-make by TTBR1).
	 */
	ret = percpu_pgtable_register_client(&tr_client);
	if (ret) {
		WRITE_ONCE(tr_active, false);
		tr_reason = "the per-CPU page tables refused the client";
		pr_warn("%s (%d): one copy only\n", tr_reason, ret);
		goto inactive;
	}

	tr_protect_copies();
	tr_reason = "";
	pr_info("active: %u copies besides the master, %lu table pages, %llu us to switch\n",
		tr_copies, tr_table_pages, (ktime_get_ns() - t0) / NSEC_PER_USEC);
	tr_mw_setup();
	if (tr_mw_ready)
		pr_info("modules: text and rodata replicated in %#lx-%#lx\n",
			tr_mw_lo, tr_mw_hi);
	return;

inactive:
	for_each_node(nid) {
		if (tr_has_copy(nid))
			tr_free_copy(nid);
	}
	pr_info("inactive: %s\n", tr_reason);
}

#ifdef CONFIG_DEBUG_FS

static int tr_status_show(struct seq_file *m, void *v)
{
	int nid;

	seq_printf(m, "active: %s\n", READ_ONCE(tr_active) ? "yes" : "no");
	if (!READ_ONCE(tr_active))
		seq_printf(m, "reason: %s\n", tr_reason);
	seq_printf(m, "text: %lu bytes\n", (unsigned long)(_etext - _stext));
	seq_printf(m, "rodata: %lu bytes\n",
		   (unsigned long)(__end_rodata - __start_rodata));
	seq_printf(m, "private: %#lx-%#lx\n", tr_slot_lo, tr_slot_hi);
	seq_printf(m, "size: %zu\n", tr_size);
	seq_printf(m, "table pages: %lu\n", tr_table_pages);
	for_each_node(nid) {
		int use = tr_nodes[nid].use;
		phys_addr_t end;

		if (use == NUMA_NO_NODE)
			continue;
		if (use != nid) {
			seq_printf(m, "node %d: uses node %d\n", nid, use);
			continue;
		}
		end = tr_nodes[nid].base + tr_size;
		seq_printf(m, "node %d: %pa-%pa %s\n", nid, &tr_nodes[nid].base,
			   &end, nid == tr_master_node ? "master" : "copy");
	}
	if (READ_ONCE(tr_mw_ready)) {
		mutex_lock(&tr_mw_lock);
		seq_printf(m, "modules: %#lx-%#lx, %lu pages, %lu node copies, %lu failed, %lu KiB usable, %zu KiB free\n",
			   tr_mw_lo, tr_mw_hi, tr_mw_pages, tr_mw_copies,
			   tr_mw_failed, tr_mw_limit >> 10,
			   gen_pool_avail(tr_mw_pool) >> 10);
		mutex_unlock(&tr_mw_lock);
	} else {
		seq_printf(m, "modules: not replicated (%s)\n", tr_mw_reason);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr_status);

/*
 * Bytes of @a that differ from @b, page by page.  A page is compared again
 * a few times before it counts: a patch may be between two copies.
 */
static unsigned long tr_compare(struct seq_file *m, const char *what,
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

struct tr_view {
	struct seq_file *m;
	unsigned long bad;
	unsigned long mw_bytes;
};

/* The master's page behind @addr in the module window, if mapped. */
static struct page *tr_mw_master(unsigned long addr)
{
	pte_t pte = __ptep_get(tr_mw_ptep(init_mm.pgd, addr));

	return pte_present(pte) ? pte_page(pte) : NULL;
}

/* What this CPU really reads through the image's addresses. */
static long tr_view_cpu(void *data)
{
	struct tr_view *view = data;
	char what[16];

	snprintf(what, sizeof(what), "cpu%d", raw_smp_processor_id());
	/*
	 * Read through the image's own addresses, across the redzones KASAN
	 * keeps around globals in rodata: only the bytes matter here.
	 */
	kasan_disable_current();
	view->bad = tr_compare(view->m, what, (const u8 *)_stext,
			       lm_alias(_stext), tr_size, (unsigned long)_stext);
	kasan_enable_current();

	/* Module pages cannot go away: the caller holds tr_mw_lock. */
	if (READ_ONCE(tr_mw_ready)) {
		unsigned long addr;

		for (addr = tr_mw_lo; addr < tr_mw_hi; addr += PAGE_SIZE) {
			struct page *page = tr_mw_master(addr);

			if (!page)
				continue;
			kasan_disable_current();
			view->bad += tr_compare(view->m, what, (const u8 *)addr,
						page_address(page), PAGE_SIZE,
						addr);
			kasan_enable_current();
			view->mw_bytes += PAGE_SIZE;
		}
	}
	return 0;
}

/* Every node's copy of every module page, against the master's. */
static unsigned long tr_mw_verify(struct seq_file *m, unsigned long *bytes)
{
	unsigned long addr, bad = 0, pages = 0, copies = 0, shared = 0;
	int nid;

	for (addr = tr_mw_lo; addr < tr_mw_hi; addr += PAGE_SIZE) {
		struct page *page = tr_mw_master(addr);

		if (!page)
			continue;
		pages++;
		for_each_node(nid) {
			pte_t pte;
			char what[24];

			if (nid == tr_master_node || !tr_mw_root(nid))
				continue;
			pte = __ptep_get(tr_mw_ptep(tr_mw_root(nid), addr));
			if (!pte_present(pte) || pte_page(pte) == page) {
				shared++;
				continue;
			}
			snprintf(what, sizeof(what), "node%d module", nid);
			bad += tr_compare(m, what, page_address(pte_page(pte)),
					  page_address(page), PAGE_SIZE, addr);
			copies++;
		}
	}
	*bytes += copies * PAGE_SIZE;
	seq_printf(m, "modules: %lu pages, %lu node copies compared, %lu shared with the master\n",
		   pages, copies, shared);
	return bad;
}

static int tr_verify_show(struct seq_file *m, void *v)
{
	unsigned long bad, total = 0, bytes = 0;
	unsigned int cpu;
	int nid;

	if (!READ_ONCE(tr_active)) {
		seq_printf(m, "inactive: %s\n", tr_reason);
		return 0;
	}
	for_each_node(nid) {
		char what[16];

		if (!tr_has_copy(nid))
			continue;
		snprintf(what, sizeof(what), "node%d", nid);
		bad = tr_compare(m, what, __va(tr_nodes[nid].base),
				 lm_alias(_stext), tr_size, (unsigned long)_stext);
		seq_printf(m, "node %d: %zu bytes compared, %lu differ\n", nid,
			   tr_size, bad);
		total += bad;
		bytes += tr_size;
	}
	cpus_read_lock();
	mutex_lock(&tr_mw_lock);
	if (READ_ONCE(tr_mw_ready))
		total += tr_mw_verify(m, &bytes);
	else
		seq_printf(m, "modules: not replicated (%s)\n", tr_mw_reason);
	for_each_online_cpu(cpu) {
		struct tr_view view = { .m = m };

		work_on_cpu(cpu, tr_view_cpu, &view);
		seq_printf(m, "cpu%u: node %d view: %zu bytes compared, %lu differ\n",
			   cpu, cpu_to_node(cpu), tr_size + view.mw_bytes,
			   view.bad);
		total += view.bad;
		bytes += tr_size + view.mw_bytes;
	}
	mutex_unlock(&tr_mw_lock);
	cpus_read_unlock();
	seq_printf(m, "compared: %lu\n", bytes);
	seq_printf(m, "mismatches: %lu\n", total);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr_verify);

static int __init tr_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("text_replica", NULL);

	debugfs_create_file("status", 0400, dir, NULL, &tr_status_fops);
	debugfs_create_file("verify", 0400, dir, NULL, &tr_verify_fops);
	return 0;
}
late_initcall(tr_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

#ifdef CONFIG_KERNEL_TEXT_REPLICATION_KUNIT_TEST
#include <kunit/test.h>

#include <asm/patching.h>
#include <asm/sysreg.h>

/*
 * Returns the immediate of its first instruction, which the test patches.
 * Only ever called directly (BL): it has no BTI landing pad.
 */
int tr_kunit_fn(void);
asm(".pushsection .text, \"ax\"\n"
	"	.align	2\n"
	"	.type	tr_kunit_fn, %function\n"
	"tr_kunit_fn:\n"
	"	mov	w0, #1\n"
	"	ret\n"
	"	.size	tr_kunit_fn, . - tr_kunit_fn\n"
	"	.popsection\n");

struct tr_kunit_cpu {
	int ret;
	phys_addr_t pa;
	u32 insn;
};

/* On each CPU: run the function, and read what its own table maps it to. */
static void tr_kunit_run(void *data)
{
	struct tr_kunit_cpu *c = (struct tr_kunit_cpu *)data + smp_processor_id();
	u64 par;

	c->ret = tr_kunit_fn();
	asm volatile("at s1e1r, %0" : : "r" (tr_kunit_fn));
	isb();
	par = read_sysreg_par();
	c->pa = 0;
	if (par & SYS_PAR_EL1_F)
		return;
	c->pa = (par & SYS_PAR_EL1_PA) | offset_in_page(tr_kunit_fn);
	/* The copy's linear alias: the bytes, not what fetch saw. */
	c->insn = le32_to_cpu(*(__le32 *)phys_to_virt(c->pa));
}

static bool tr_kunit_cleaned(phys_addr_t pa)
{
	unsigned int i;

	for (i = 0; i < tr_nr_cleaned; i++) {
		if (tr_cleaned[i] == pa)
			return true;
	}
	return false;
}

/*
 * Patch kernel text to MOVZ W0, #2 and back to #1: every CPU must run the
 * new instruction from its own node's copy (found by AT S1E1R, not from
 * the bookkeeping), which must hold it, and that copy and the master's
 * must be among those tr_maintain() was called for.
 */
static void tr_test_patch_every_copy(struct kunit *test)
{
	phys_addr_t master = __pa_symbol(tr_kunit_fn);
	struct tr_kunit_cpu *c;
	unsigned int cpu, copies = 0;
	bool active;
	int imm, nid;

	/*
	 * At boot KUnit runs before the switch (ktext_maint.sh runs this
	 * again through debugfs): then only the master may be written and
	 * every CPU runs it.  No skip: KUnit never reruns a skipped case.
	 */
	active = READ_ONCE(tr_active);
	for_each_node(nid)
		copies += active && tr_nodes[nid].use == nid;
	c = kunit_kcalloc(test, nr_cpu_ids, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (imm = 2; imm >= 1; imm--) {
		u32 insn = 0x52800000 | (imm << 5);	/* MOVZ W0, #imm */

		WRITE_ONCE(tr_watch, (unsigned long)tr_kunit_fn);
		KUNIT_ASSERT_EQ(test,
				aarch64_insn_patch_text_nosync(tr_kunit_fn, insn), 0);
		WRITE_ONCE(tr_watch, 0);
		KUNIT_EXPECT_EQ(test, tr_nr_cleaned, copies);
		if (active)
			KUNIT_EXPECT_TRUE_MSG(test, tr_kunit_cleaned(master),
					      "master %pa not maintained", &master);
		cpus_read_lock();
		for_each_online_cpu(cpu) {
			int want = active && percpu_pgtable_root(cpu) ?
				   tr_nodes[cpu_to_node(cpu)].use :
				   page_to_nid(phys_to_page(master));

			smp_call_function_single(cpu, tr_kunit_run, c, 1);
			KUNIT_EXPECT_EQ_MSG(test, c[cpu].ret, imm, "cpu%u ran the old text", cpu);
			/* No assertion: it would leave with the hotplug lock held. */
			KUNIT_EXPECT_NE_MSG(test, c[cpu].pa, 0, "cpu%u: text not mapped", cpu);
			if (!c[cpu].pa)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, page_to_nid(phys_to_page(c[cpu].pa)), want,
					    "cpu%u runs %pa", cpu, &c[cpu].pa);
			KUNIT_EXPECT_EQ_MSG(test, c[cpu].insn, insn, "cpu%u's copy %pa",
					    cpu, &c[cpu].pa);
			if (active)
				KUNIT_EXPECT_TRUE_MSG(test, tr_kunit_cleaned(c[cpu].pa),
						      "cpu%u's copy %pa not maintained", cpu,
						      &c[cpu].pa);
		}
		cpus_read_unlock();
	}
}

/*
 * A synthetic read-only executable block, contiguous hint set, split as a
 * block that rodata ends inside is: every PTE maps the block's page with
 * the block's attributes, as the same mapping made of pages would.
 */
static void tr_test_split_block(struct kunit *test)
{
	unsigned long pfn = 0x40000;	/* any PMD-aligned frame: not mapped */
	pmd_t block = pmd_mkcont(pmd_mkhuge(pfn_pmd(pfn, PAGE_KERNEL_ROX)));
	pte_t *ptes = kunit_kcalloc(test, PTRS_PER_PTE, sizeof(*ptes), GFP_KERNEL);
	unsigned int i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, ptes);
	KUNIT_ASSERT_TRUE(test, pmd_leaf(block));
	tr_split_block(block, ptes);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t want = pfn_pte(pfn + i, PAGE_KERNEL_ROX);

		if (pte_val(ptes[i]) != pte_val(want) && bad++ < 4)
			KUNIT_FAIL(test, "pte %u: %#llx, want %#llx", i,
				   (u64)pte_val(ptes[i]), (u64)pte_val(want));
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
}

/*
 * set_memory_rw() of module text once nodes have their own copies is
 * refused, and every node's entry stays read-only: a write would reach
 * one copy only.  Without copies (one node) it is allowed, as for
 * execmem memory.
 */
static void tr_test_module_rw_refused(struct kunit *test)
{
	unsigned long addr;
	struct module *mod;
	int nid, ret, copies = 0;
	void *text;

	/* At boot the window is not set up yet: ktext_maint.sh reruns it. */
	if (!smp_load_acquire(&tr_mw_ready))
		return;
	mod = kunit_kzalloc(test, sizeof(*mod), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mod);
	strscpy(mod->name, "text_replica_kunit", sizeof(mod->name));
	text = module_arch_mem_alloc(mod, MOD_TEXT, PAGE_SIZE);
	if (!text)
		kunit_skip(test, "no room in the module window");
	addr = (unsigned long)text;
	mod->mem[MOD_TEXT].base = text;
	mod->mem[MOD_TEXT].size = PAGE_SIZE;
	memset(text, 0, PAGE_SIZE);	/* UDF #0 */
	KUNIT_EXPECT_EQ(test, set_memory_ro(addr, 1), 0);
	KUNIT_EXPECT_EQ(test, set_memory_x(addr, 1), 0);
	module_arch_mem_protected(mod);
	/* The copies made, not the nodes that could have one. */
	for_each_node(nid)
		copies += nid != tr_master_node && tr_mw_root(nid) &&
			  pte_pfn(__ptep_get(tr_mw_ptep(tr_mw_root(nid), addr))) !=
			  pte_pfn(__ptep_get(tr_mw_ptep(init_mm.pgd, addr)));

	ret = set_memory_rw(addr, 1);
	KUNIT_EXPECT_EQ(test, ret, copies ? -EBUSY : 0);
	for_each_node(nid) {
		pte_t pte;

		if (!tr_mw_root(nid))
			continue;
		pte = __ptep_get(tr_mw_ptep(tr_mw_root(nid), addr));
		KUNIT_EXPECT_TRUE_MSG(test, pte_present(pte), "node %d: unmapped", nid);
		KUNIT_EXPECT_EQ_MSG(test, !pte_write(pte), !!copies,
				    "node %d: pte %#llx", nid, (u64)pte_val(pte));
	}
	module_arch_mem_free(mod, MOD_TEXT);
}

/* SLIT distances need not be symmetric: 1 -> 3 is 15, 3 -> 1 is 25. */
static const int tr_test_dist[4][4] = {
	{ 10, 20, 20, 20 },
	{ 20, 10, 15, 15 },
	{ 20, 15, 10, 15 },
	{ 20, 25, 15, 10 },
};

static int tr_test_distance(int from, int to)
{
	return tr_test_dist[from][to];
}

/*
 * A node without a copy uses the nearest node's, on a synthetic distance
 * table: node 0 holds the image, nodes 1-3 are 15 from each other (but 3
 * to 1 is 25) and 20 from node 0.
 */
static void tr_test_nearest(struct kunit *test)
{
	nodemask_t copies = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs 4 possible nodes");
	node_set(0, copies);
	/* Only the master: everybody uses it. */
	KUNIT_EXPECT_EQ(test, tr_nearest_of(3, &copies, 0, tr_test_distance), 0);
	node_set(2, copies);
	/* Node 2 is nearer to 1 and 3 than the master. */
	KUNIT_EXPECT_EQ(test, tr_nearest_of(3, &copies, 0, tr_test_distance), 2);
	KUNIT_EXPECT_EQ(test, tr_nearest_of(1, &copies, 0, tr_test_distance), 2);
	node_set(1, copies);
	/* From 3, not to 3: 1 is 25 away, 2 is 15 (to 3 both are 15). */
	KUNIT_EXPECT_EQ(test, tr_nearest_of(3, &copies, 0, tr_test_distance), 2);
	/* A node with its own copy is its own nearest. */
	KUNIT_EXPECT_EQ(test, tr_nearest_of(2, &copies, 0, tr_test_distance), 2);
	/* From 1, nodes 2 and 3 tie: the lower number. */
	nodes_clear(copies);
	node_set(0, copies);
	node_set(2, copies);
	node_set(3, copies);
	KUNIT_EXPECT_EQ(test, tr_nearest_of(1, &copies, 0, tr_test_distance), 2);
	/* With node 2 as the master, its tie with node 3 goes to it. */
	nodes_clear(copies);
	node_set(3, copies);
	KUNIT_EXPECT_EQ(test, tr_nearest_of(1, &copies, 2, tr_test_distance), 2);
}

static struct kunit_case tr_test_cases[] = {
	KUNIT_CASE(tr_test_nearest),
	KUNIT_CASE(tr_test_split_block),
	KUNIT_CASE(tr_test_patch_every_copy),
	KUNIT_CASE(tr_test_module_rw_refused),
	{}
};

static struct kunit_suite tr_test_suite = {
	.name = "text_replica",
	.test_cases = tr_test_cases,
};

kunit_test_suite(tr_test_suite);
#endif

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
 *    so that no generic code ever maps there.
 *
 * See Documentation/mm/text-replication.rst.
 */

#define pr_fmt(fmt) "text_replica: " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/ktime.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/percpu_pgtable.h>
#include <linux/seq_file.h>
#include <linux/stop_machine.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <asm/cacheflush.h>
#include <asm/fixmap.h>
#include <asm/pgalloc.h>
#include <asm/ptdump.h>
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

static bool tr_enabled __ro_after_init = true;
static nodemask_t tr_testfail __initdata;

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
	vm->flags = VM_NO_GUARD;
	vm->caller = text_replica_reserve_va;
	vm_area_add_early(vm);
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

	if (!tr_enabled)
		return;

	tr_box_lo = (unsigned long)_end - SZ_2G;
	tr_box_hi = text + SZ_2G;
	tr_slot_lo = ALIGN_DOWN(tr_box_lo, PGDIR_SIZE);
	tr_slot_hi = ALIGN(tr_box_hi, PGDIR_SIZE);

	tr_hole(&tr_holes[0], tr_slot_lo, tr_box_lo);
	tr_hole(&tr_holes[1], ALIGN_DOWN(text, PUD_SIZE), text);
	tr_hole(&tr_holes[2], end, ALIGN(end, PUD_SIZE));
	tr_hole(&tr_holes[3], tr_box_hi, tr_slot_hi);
}

static int __init tr_nearest(int nid)
{
	int best = tr_master_node, n;

	for_each_node(n) {
		if (tr_nodes[n].use != n)
			continue;
		if (node_distance(nid, n) < node_distance(nid, best))
			best = n;
	}
	return best;
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

/**
 * text_replica_write() - write patched kernel text into every copy
 * @addr: text address the master was just written at
 * @src: the bytes written
 * @len: how many (at most up to the end of the page)
 *
 * Called by the text patching primitives under patch_lock, after they have
 * written the master through FIX_TEXT_POKE0, the fixmap slot that lock
 * owns.  Writes each node's copy through the same slot, then cleans the
 * D-cache and invalidates the I-cache of each copy, the master included,
 * by that alias: the I-cache is physically
 * indexed, and the caller's maintenance by the text address reaches only
 * the copy its own CPU translates to.
 *
 * Return: 0, or the first error of a write.
 */
notrace int text_replica_write(void *addr, const void *src, size_t len)
{
	unsigned long a = (unsigned long)addr;
	int nid, err, ret = 0;

	if (!READ_ONCE(tr_active) || a < (unsigned long)_stext ||
	    a + len > (unsigned long)_etext)
		return 0;

	for_each_node(nid) {
		unsigned long waddr;

		if (tr_nodes[nid].use != nid)
			continue;
		waddr = set_fixmap_offset(FIX_TEXT_POKE0, tr_nodes[nid].base +
					  (a - (unsigned long)_stext));
		if (nid != tr_master_node) {
			err = copy_to_kernel_nofault((void *)waddr, src, len);
			if (err && !ret)
				ret = err;
		}
		tr_sync_icache(waddr, waddr + len);
		clear_fixmap(FIX_TEXT_POKE0);
	}
	return ret;
}

NOKPROBE_SYMBOL(text_replica_write);

/*
 * Give the node an entry of its own: a copy of the table @entry points at,
 * on the node.  Nothing walks the node's tables yet.
 */
static int tr_privatize(int nid, u64 *entry)
{
	u64 val = READ_ONCE(*entry);
	struct page *page;

	page = alloc_pages_node(nid, GFP_PGTABLE_KERNEL, 0);
	if (!page)
		return -ENOMEM;
	copy_page(page_address(page), __va(__pte_to_phys(__pte(val))));
	WRITE_ONCE(*entry, (val & ~PTE_ADDR_LOW) |
		   __phys_to_pte_val(page_to_phys(page)));
	tr_table_pages++;
	return 0;
}

/*
 * Point a leaf of the node's tables at the node's copy.  The copy is
 * congruent to the master modulo PMD_SIZE, so blocks and contiguous PTE
 * ranges keep their alignment; a contiguous PMD range keeps its hint only
 * if the copy happens to be congruent modulo its size too.  A contiguous
 * range must lie wholly inside what is replicated.
 */
static int tr_relocate(int nid, u64 *entry, u64 val, unsigned long addr,
		       unsigned long size, unsigned long cont,
		       unsigned long start, unsigned long end)
{
	phys_addr_t pa = __pte_to_phys(__pte(val));
	phys_addr_t npa;

	if (pa < tr_master_pa || pa + size > tr_master_pa + tr_size)
		return -EFAULT;
	npa = tr_nodes[nid].base + (pa - tr_master_pa);
	if (val & PTE_CONT) {
		if (ALIGN_DOWN(addr, cont) < start || ALIGN_DOWN(addr, cont) + cont > end)
			return -EINVAL;
		if ((npa ^ pa) & (cont - 1))
			val &= ~PTE_CONT;
	}
	WRITE_ONCE(*entry, (val & ~PTE_ADDR_LOW) | __phys_to_pte_val(npa));
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

/* Build the node's translation of [start, end) (a part of the image). */
static int tr_build_range(int nid, unsigned long start, unsigned long end)
{
	unsigned long addr, next;
	int ret;

	for (addr = start; addr < end; addr = next) {
		pgd_t *mpgdp = pgd_offset_k(addr);
		pgd_t *pgdp = pgd_offset_pgd(tr_nodes[nid].pgd, addr);
		p4d_t *mp4dp = p4d_offset(mpgdp, addr), *p4dp = p4d_offset(pgdp, addr);
		pud_t *mpudp, *pudp, mpud;
		pmd_t *mpmdp, *pmdp, mpmd;

		if (!p4d_present(READ_ONCE(*mp4dp)))
			return -EFAULT;
		if (p4d_val(READ_ONCE(*p4dp)) == p4d_val(READ_ONCE(*mp4dp))) {
			ret = tr_privatize(nid, (u64 *)p4dp);
			if (ret)
				return ret;
		}

		mpudp = pud_offset(mp4dp, addr);
		pudp = pud_offset(p4dp, addr);
		mpud = READ_ONCE(*mpudp);
		if (!pud_present(mpud) || pud_leaf(mpud))
			return -EFAULT;
		if (pud_val(READ_ONCE(*pudp)) == pud_val(mpud)) {
			ret = tr_privatize(nid, (u64 *)pudp);
			if (ret)
				return ret;
		}

		mpmdp = pmd_offset(mpudp, addr);
		pmdp = pmd_offset(pudp, addr);
		mpmd = READ_ONCE(*mpmdp);
		next = pmd_addr_end(addr, end);
		if (!pmd_present(mpmd))
			return -EFAULT;
		if (pmd_leaf(mpmd)) {
			/* A block must not cover anything that stays shared. */
			if (!IS_ALIGNED(addr, PMD_SIZE) || next - addr != PMD_SIZE)
				return -EINVAL;
			ret = tr_relocate(nid, (u64 *)pmdp, pmd_val(mpmd), addr,
					  PMD_SIZE, CONT_PMD_SIZE, start, end);
			if (ret)
				return ret;
			continue;
		}
		if (pmd_val(READ_ONCE(*pmdp)) == pmd_val(mpmd)) {
			ret = tr_privatize(nid, (u64 *)pmdp);
			if (ret)
				return ret;
		}
		for (; addr < next; addr += PAGE_SIZE) {
			pte_t pte = ptep_get(pte_offset_kernel(mpmdp, addr));

			if (!pte_present(pte))
				return -EFAULT;
			ret = tr_relocate(nid, (u64 *)pte_offset_kernel(pmdp, addr),
					  pte_val(pte), addr, PAGE_SIZE,
					  CONT_PTE_SIZE, start, end);
			if (ret)
				return ret;
		}
	}
	return 0;
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

	ret = tr_build_range(nid, (unsigned long)_stext, (unsigned long)_etext);
	if (!ret)
		ret = tr_build_range(nid, (unsigned long)__start_rodata,
				     (unsigned long)__end_rodata);
	/* Published by the core's root writes, which order after this. */
	dsb(ishst);
	return ret;
}

/*
 * Give every 1 GiB range of the module box its PMD table now, in the
 * master, so that the node tables can share them and nothing ever writes
 * a PUD entry under the private top-level entries again.  A PUD block
 * there (a 1 GiB vmalloc mapping made before this) cannot be shared.
 */
static int tr_prepare_box(void)
{
	unsigned long addr;

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

static struct percpu_pgtable_client tr_client = {
	.name = "text_replica",
	.populate = tr_populate,
};

struct tr_switch {
	atomic_t arrived;
	int done;
	int ret;
};

/*
 * Runs on every online CPU with interrupts off.  The last to arrive fills
 * the copies from the master and switches the roots while the others
 * spin in this loop (as aarch64_insn_patch_text_cb() does), so no CPU runs
 * anything else while its text mapping changes.  The old and the new
 * translation of every text address have the same size and attributes and
 * map identical bytes.
 */
static int tr_switch_cpu(void *data)
{
	struct tr_switch *sw = data;
	unsigned long master = (unsigned long)lm_alias(_stext);
	int nid;

	if (atomic_inc_return(&sw->arrived) == num_online_cpus()) {
		/*
		 * A patcher may have written the master and been preempted
		 * before its own maintenance by the text address, which from
		 * now on reaches its node's copy only: clean the master here.
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
		/* Writes every CPU's entries, then flushes all TLBs. */
		sw->ret = percpu_pgtable_register_client(&tr_client);
		if (sw->ret)
			WRITE_ONCE(tr_active, false);
		/* Pairs with the acquire below: the waiters see it all done. */
		smp_store_release(&sw->done, 1);
	} else {
		/* Pairs with the leader's release. */
		while (!smp_load_acquire(&sw->done))
			cpu_relax();
	}
	/* Discard instructions fetched through the old translation. */
	isb();
	return 0;
}

/**
 * text_replica_init() - copy text and rodata to every node and switch to them
 *
 * Called at the end of mark_rodata_ro(): text and rodata are final, every
 * CPU that boots from now on finds its root already pointing at its node's
 * tables.  On any failure the CPUs keep the master and a warning says why.
 */
void text_replica_init(void)
{
	struct tr_switch sw = { .arrived = ATOMIC_INIT(0) };
	unsigned long npages = tr_size >> PAGE_SHIFT;
	u64 t0 = ktime_get_ns();
	int nid, ret;

	if (!tr_enabled || !tr_copies)
		goto inactive;
	if (!percpu_pgtable_active()) {
		tr_reason = "per-CPU kernel page tables are off";
		goto inactive;
	}
	/* The hypervisor owns .hyp.text, inside the text: no copy can read it. */
	if (is_protected_kvm_enabled()) {
		tr_reason = "protected KVM owns part of the text";
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
	if (!tr_copies) {
		tr_reason = "no copy could be mapped";
		goto inactive;
	}

	ret = stop_machine(tr_switch_cpu, &sw, cpu_online_mask);
	if (ret || sw.ret) {
		sw.ret = sw.ret ?: ret;
		tr_reason = "the per-CPU page tables refused the client";
		pr_warn("%s (%d): one copy only\n", tr_reason, sw.ret);
		goto inactive;
	}

	for_each_node(nid) {
		phys_addr_t end;

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
	tr_reason = "";
	pr_info("active: %u copies besides the master, %lu table pages, %llu us to switch\n",
		tr_copies, tr_table_pages, (ktime_get_ns() - t0) / NSEC_PER_USEC);
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
	seq_puts(m, "modules: not replicated\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr_status);

/*
 * Bytes of @a that differ from @b, page by page.  A page is compared again
 * a few times before it counts: a patch may be between two copies.
 */
static unsigned long tr_compare(struct seq_file *m, const char *what,
				const u8 *a, const u8 *b, size_t size)
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
					   _stext + off + i);
			bad++;
		}
		cond_resched();
	}
	return bad;
}

struct tr_view {
	struct seq_file *m;
	unsigned long bad;
};

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
			       lm_alias(_stext), tr_size);
	kasan_enable_current();
	return 0;
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
				 lm_alias(_stext), tr_size);
		seq_printf(m, "node %d: %zu bytes compared, %lu differ\n", nid,
			   tr_size, bad);
		total += bad;
		bytes += tr_size;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct tr_view view = { .m = m };

		work_on_cpu(cpu, tr_view_cpu, &view);
		seq_printf(m, "cpu%u: node %d view: %zu bytes compared, %lu differ\n",
			   cpu, cpu_to_node(cpu), tr_size, view.bad);
		total += view.bad;
		bytes += tr_size;
	}
	cpus_read_unlock();
	seq_puts(m, "modules: not replicated\n");
	seq_printf(m, "compared: %lu\n", bytes);
	seq_printf(m, "mismatches: %lu\n", total);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr_verify);

#ifdef CONFIG_PTDUMP
static int tr_tables_show(struct seq_file *m, void *v)
{
	unsigned int cpu = (unsigned long)m->private;
	pgd_t *root = percpu_pgtable_root(cpu);

	ptdump_walk_kernel_root_pa(m, root ?: swapper_pg_dir);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr_tables);
#endif

static int __init tr_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("text_replica", NULL);
#ifdef CONFIG_PTDUMP
	struct dentry *tables = debugfs_create_dir("tables", dir);
	unsigned int cpu;
	char name[16];

	for_each_possible_cpu(cpu) {
		snprintf(name, sizeof(name), "cpu%u", cpu);
		debugfs_create_file(name, 0400, tables, (void *)(unsigned long)cpu,
				    &tr_tables_fops);
	}
#endif
	debugfs_create_file("status", 0400, dir, NULL, &tr_status_fops);
	debugfs_create_file("verify", 0400, dir, NULL, &tr_verify_fops);
	return 0;
}
late_initcall(tr_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

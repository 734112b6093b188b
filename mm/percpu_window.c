// SPDX-License-Identifier: GPL-2.0
/*
 * The this_cpu window: every CPU's kernel page table maps one virtual
 * range, the window, onto that CPU's percpu memory, at a constant offset
 * from every percpu pointer.  The architecture can then implement
 * this_cpu_*() as a single access to "pointer + offset", which reaches
 * the copy of whichever CPU executes it: no preemption disabling, no
 * per-CPU offset register.
 *
 * Layout.  Every percpu chunk lies in [PCPU_WINDOW_VM_START,
 * PCPU_WINDOW_VM_END) (the first chunk, of the page type, at its very
 * start): pcpu_window_setup_first_chunk() forces both before the first
 * chunk exists, but only when the per-CPU tables are in use, so that
 * percpu_pgtable=off leaves percpu exactly as without the window.  A percpu pointer p
 * of any chunk is "address in unit 0 - pcpu_base_addr + __per_cpu_start",
 * so CPU c's window maps
 *
 *	pcpw_base + (address in unit 0 - pcpu_base_addr)
 *
 * onto the page of c's unit at the same offset, and the op's address is
 * p + (pcpw_base - __per_cpu_start) on every CPU.  The architecture picks
 * pcpw_base inside its window range (arm64: so that the offset is a
 * multiple of 4 GiB and fits one instruction).
 *
 * Ownership and locking.  CPU c's window tables hang below one private
 * top-level entry of c's root (a percpu_pgtable client) and belong to
 * pcpw_mm[c], an mm that owns nothing else and never runs.  They are
 * kernel page tables: allocated with kernel flags (GFP_PGTABLE_KERNEL,
 * nothing charged to the memory cgroup of whoever populates a percpu
 * page) and the constructors apply_to_page_range() relies on (the PTE
 * lock), as arm64 builds efi_mm's, before apply_to_page_range() fills
 * them, so that it never allocates one itself.  Their entries are
 * written as kernel mappings (set_pte_at() on init_mm: never folded into
 * contiguous ranges, which live kernel mappings cannot tolerate).  They
 * are written only here, always under pcpu_alloc_mutex, which also
 * serialises every populate and depopulate of percpu memory (the W^X
 * KUnit case alone changes the permission of the static area's first
 * page for a moment, under its PTE lock: nothing else rewrites that
 * entry).  The window of a page is
 * written right after its canonical mapping and cleared right before it.
 * Tables are never freed, as vmalloc never frees its own: they cover at
 * most the virtual range chunks have ever occupied, which is bounded by
 * the largest percpu footprint (plus what lazily freed vmap areas keep
 * out of reuse until the next purge).  Ordering against the
 * CPU walking its window: set_pte_at() of a valid kernel entry ends in
 * DSB ISHST; ISB, and an access through the window happens only for
 * memory that was allocated, hence populated, before; a cleared entry is
 * flushed by VA with a broadcast TLBI (pcpw_flush()) before the page is
 * freed.  The window VA is the same on every CPU, so one flush reaches
 * every CPU's TLB.
 */
#define pr_fmt(fmt) "this_cpu_window: " fmt

#include <linux/bitmap.h>
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/percpu_pgtable.h>
#include <linux/this_cpu_window.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>
#include <asm/pgalloc.h>
#include <asm/sections.h>
#include <asm/tlbflush.h>

#include "percpu-internal.h"

/* Every chunk in [PCPU_WINDOW_VM_START, PCPU_WINDOW_VM_END). */
bool pcpu_window_bounded __ro_after_init;

static struct mm_struct *pcpw_mm[NR_CPUS] __ro_after_init;
static unsigned long pcpw_base __ro_after_init;
/* Bytes of the window a CPU may use: the whole percpu range. */
#define PCPW_SIZE	((unsigned long)(PCPU_WINDOW_VM_END - PCPU_WINDOW_VM_START))
/* Windows exist for every possible CPU; written under pcpu_alloc_mutex. */
static bool pcpw_ready;
/* Window entries set, over every CPU: under pcpu_alloc_mutex too. */
static unsigned long pcpw_pages;
/* Offset from a percpu pointer to its window address, 0 while unused. */
static unsigned long pcpw_offset __ro_after_init;

static unsigned long pcpw_addr(struct pcpu_chunk *chunk, int page)
{
	return pcpw_base + (chunk->base_addr - pcpu_base_addr) +
	       ((unsigned long)page << PAGE_SHIFT);
}

/* The private entry of CPU @cpu's root: its window mm's entry. */
static pgd_t pcpw_populate(struct percpu_pgtable_client *client,
			   unsigned int cpu, unsigned long addr)
{
	struct mm_struct *mm = pcpw_mm[cpu];

	return mm ? READ_ONCE(*pgd_offset(mm, addr)) : __pgd(0);
}

static struct percpu_pgtable_client pcpw_client = {
	.name = "this_cpu_window",
	.start = THIS_CPU_WINDOW_START,
	.end = THIS_CPU_WINDOW_END,
	.populate = pcpw_populate,
};

struct pcpw_fill {
	struct mm_struct *mm;
	struct page **pages;
	int i;
};

/* Window entries are kernel mappings: init_mm, not the window's mm. */
static int pcpw_set_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct pcpw_fill *f = data;
	pte_t old = ptep_get(ptep);
	pte_t pte = mk_pte(f->pages[f->i++], THIS_CPU_WINDOW_PROT);

	/*
	 * Percpu populates only pages it does not have, whose window entries
	 * a depopulate or a failed populate cleared: an entry to another page
	 * would be a stale alias of a page given back to the allocator, read
	 * and written by every access through the window.  The same entry
	 * again is the boot mapping of a page two chunks share (the static
	 * area ends in the page where the first dynamic chunk begins).
	 */
	WARN_ON_ONCE(!pte_none(old) && !pte_same(old, pte));
	set_pte_at(&init_mm, addr, ptep, pte);
	if (pte_none(old))
		pcpw_pages++;
	return 0;
}

/* Called for mapped entries only (apply_to_existing_page_range()). */
static int pcpw_clear_pte(pte_t *ptep, unsigned long addr, void *data)
{
	pte_clear(&init_mm, addr, ptep);
	pcpw_pages--;
	return 0;
}

/*
 * A PTE table as a kernel table, with the constructor that gives it the
 * lock apply_to_page_range() takes on an mm other than init_mm.
 */
static int pcpw_alloc_pte(pmd_t *pmd)
{
	struct ptdesc *ptdesc;

	if (!pmd_none(pmdp_get(pmd)))
		return 0;
	ptdesc = pagetable_alloc(GFP_PGTABLE_KERNEL & ~__GFP_HIGHMEM, 0);
	if (!ptdesc)
		return -ENOMEM;
	if (!pagetable_pte_ctor(ptdesc)) {
		pagetable_free(ptdesc);
		return -ENOMEM;
	}
	/* The zeroed table before the entry, as __pte_alloc_kernel() does. */
	smp_wmb();
	pmd_populate_kernel(&init_mm, pmd, ptdesc_address(ptdesc));
	return 0;
}

/*
 * Every table down to the PTE level for [@addr, @end) of @mm.  The upper
 * levels come from the generic allocators called for init_mm, which is
 * what selects kernel allocation flags and constructors there; only the
 * tables' place, below @mm's window entry, is @mm's.
 */
static int pcpw_alloc_tables(struct mm_struct *mm, unsigned long addr, unsigned long end)
{
	for (; addr < end; addr = (addr + PMD_SIZE) & PMD_MASK) {
		p4d_t *p4d = p4d_alloc(&init_mm, pgd_offset(mm, addr), addr);
		pud_t *pud = p4d ? pud_alloc(&init_mm, p4d, addr) : NULL;
		pmd_t *pmd = pud ? pmd_alloc(&init_mm, pud, addr) : NULL;

		if (!pmd || pcpw_alloc_pte(pmd))
			return -ENOMEM;
	}
	return 0;
}

/* Map @nr pages at window address @addr of @cpu's window. */
static int pcpw_map(unsigned int cpu, unsigned long addr, struct page **pages, int nr)
{
	struct pcpw_fill f = { .mm = pcpw_mm[cpu], .pages = pages };
	unsigned long size = (unsigned long)nr << PAGE_SHIFT;
	int ret;

	/*
	 * With every table in place apply_to_page_range() allocates none
	 * (its allocators would be the user ones on this mm): it only takes
	 * each PTE table's lock and fills the entries.
	 */
	ret = pcpw_alloc_tables(f.mm, addr, addr + size);
	if (!ret)
		ret = apply_to_page_range(f.mm, addr, size, pcpw_set_pte, &f);
	return ret;
}

/**
 * pcpu_window_map() - map pages of a chunk into a CPU's window
 * @cpu: whose window
 * @chunk: the chunk
 * @page_start: first page index in the unit
 * @page_end: end page index
 * @pages: @cpu's pages for [@page_start, @page_end)
 *
 * Context: pcpu_alloc_mutex held; may allocate page tables (GFP_KERNEL).
 * Return: 0 or -ENOMEM.
 */
int pcpu_window_map(unsigned int cpu, struct pcpu_chunk *chunk,
		    int page_start, int page_end, struct page **pages)
{
	if (!pcpw_ready)
		return 0;
	return pcpw_map(cpu, pcpw_addr(chunk, page_start), pages, page_end - page_start);
}

/**
 * pcpu_window_unmap() - unmap pages of a chunk from a CPU's window
 * @cpu: whose window
 * @chunk: the chunk
 * @page_start: first page index in the unit
 * @page_end: end page index
 *
 * The caller flushes with pcpu_window_flush() before freeing the pages.
 * Context: pcpu_alloc_mutex held.
 */
void pcpu_window_unmap(unsigned int cpu, struct pcpu_chunk *chunk,
		       int page_start, int page_end)
{
	struct mm_struct *mm = pcpw_mm[cpu];
	unsigned long size = (unsigned long)(page_end - page_start) << PAGE_SHIFT;

	if (!pcpw_ready)
		return;
	/* Only what exists: unmap may also undo a partly failed map. */
	apply_to_existing_page_range(mm, pcpw_addr(chunk, page_start), size,
				     pcpw_clear_pte, NULL);
}

/**
 * pcpu_window_flush() - flush unmapped window pages from every TLB
 * @chunk: the chunk
 * @page_start: first page index in the unit
 * @page_end: end page index
 *
 * Context: pcpu_alloc_mutex held.
 */
void pcpu_window_flush(struct pcpu_chunk *chunk, int page_start, int page_end)
{
	if (!pcpw_ready)
		return;
	flush_tlb_kernel_range(pcpw_addr(chunk, page_start), pcpw_addr(chunk, page_end));
}

/*
 * Map what already exists at offsets [@start, @end) from pcpu_base_addr
 * (page aligned) into every CPU's window: the page behind the canonical
 * address of each CPU's copy.
 */
static int __init pcpw_map_existing(unsigned long start, unsigned long end)
{
	int i, nr = (end - start) >> PAGE_SHIFT, ret = 0;
	struct page **pages;
	unsigned int cpu;

	pages = kmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		for (i = 0; i < nr; i++) {
			unsigned long off = start + ((unsigned long)i << PAGE_SHIFT);

			pages[i] = vmalloc_to_page((void *)((unsigned long)__per_cpu_start +
							    per_cpu_offset(cpu) + off));
		}
		ret = pcpw_map(cpu, pcpw_base + start, pages, nr);
		if (ret)
			break;
	}
	kfree(pages);
	return ret;
}

/* The populated pages of a chunk that existed before the windows. */
static int __init pcpw_map_chunk(struct pcpu_chunk *chunk)
{
	unsigned long base = chunk->base_addr - pcpu_base_addr;
	unsigned int rs, re;
	int ret = 0;

	for_each_set_bitrange(rs, re, chunk->populated, chunk->nr_pages) {
		ret = pcpw_map_existing(base + ((unsigned long)rs << PAGE_SHIFT),
					base + ((unsigned long)re << PAGE_SHIFT));
		if (ret)
			break;
	}
	return ret;
}

/**
 * pcpu_window_setup_first_chunk() - choose the first chunk for the window
 *
 * Called by setup_per_cpu_areas() before the first chunk is set up, after
 * percpu_pgtable_init().  When every possible CPU has a per-CPU kernel
 * table, the window will be used: it needs every chunk in one bounded
 * range, which only the page first chunk gives, so force that one and
 * bound every later chunk.  Otherwise change nothing: the embed first chunk places each
 * node's group at that node's memory, and later chunks must be free to
 * lie as far apart anywhere in vmalloc space.
 */
void __init pcpu_window_setup_first_chunk(void)
{
	unsigned int cpu;

	if (!percpu_pgtable_active())
		return;
	/* pcpu_window_prepare() will leave the window off: see there. */
	for_each_possible_cpu(cpu) {
		if (!percpu_pgtable_root(cpu))
			return;
	}
	pcpu_chosen_fc = PCPU_FC_PAGE;
	pcpu_window_bounded = true;
}

/**
 * pcpu_window_prepare() - build every possible CPU's window tables
 *
 * Allocates each CPU's window mm and the tables down to the first leaf
 * table, and installs them in the CPU's root.  Leaves the window off, with
 * a message, when the per-CPU tables are off or the layout is not the
 * windowed one, and with a warning on allocation failure.  Called once,
 * before SMP, without pcpu_alloc_mutex: mm_alloc() allocates percpu
 * memory itself.
 *
 * Return: true if pcpu_window_init() should map the chunks and enable.
 */
bool __init pcpu_window_prepare(void)
{
	unsigned long first = (unsigned long)pcpu_base_addr;
	unsigned int cpu;
	int ret;

	if (!percpu_pgtable_active()) {
		pr_info("inactive: per-CPU kernel page tables are off; this_cpu ops mask interrupts\n");
		return false;
	}
	for_each_possible_cpu(cpu) {
		if (!percpu_pgtable_root(cpu)) {
			pr_warn("inactive: CPU%u runs on the master table; this_cpu ops mask interrupts\n",
				cpu);
			return false;
		}
	}
	if (!pcpu_window_bounded || first != PCPU_WINDOW_VM_START) {
		pr_warn("inactive: first percpu chunk at %#lx, not at %#lx (percpu_alloc=page layout); this_cpu ops mask interrupts\n",
			first, (unsigned long)PCPU_WINDOW_VM_START);
		return false;
	}
	pcpw_base = arch_this_cpu_window_base();
	if (WARN_ON(pcpw_base < THIS_CPU_WINDOW_START ||
		    pcpw_base + PCPW_SIZE > THIS_CPU_WINDOW_END))
		return false;

	for_each_possible_cpu(cpu) {
		struct mm_struct *mm = mm_alloc();

		/*
		 * One page creates every level down to the leaf table, so the
		 * window's top-level entry exists when the client registers.
		 * mm_alloc() runs at boot, before any memory cgroup exists.
		 */
		if (!mm || pcpw_alloc_tables(mm, pcpw_base, pcpw_base + PAGE_SIZE)) {
			/*
			 * What was built is left allocated: an mm holding
			 * kernel-range tables cannot go through mmput().
			 */
			pr_warn("no memory for CPU%u's window; this_cpu ops mask interrupts\n",
				cpu);
			return false;
		}
		pcpw_mm[cpu] = mm;
	}
	ret = percpu_pgtable_register_client(&pcpw_client);
	if (ret) {
		pr_warn("cannot reserve the window range (%d); this_cpu ops mask interrupts\n",
			ret);
		return false;
	}
	return true;
}

/**
 * pcpu_window_init() - map every chunk into the windows and enable them
 *
 * Maps every chunk populated so far into every CPU's window; from then on
 * populate and depopulate keep the windows in step.  Then hands the window
 * offset to the architecture, which switches this_cpu ops to the window.
 * Called once, after pcpu_window_prepare() succeeded, before SMP.
 *
 * Context: pcpu_alloc_mutex held.
 */
void __init pcpu_window_init(void)
{
	struct pcpu_chunk *chunk;
	int slot, ret;

	pcpw_ready = true;
	/*
	 * The static area of the first chunk belongs to neither the reserved
	 * nor the first dynamic chunk; the page first chunk populated it.
	 */
	ret = pcpw_map_existing(0, PAGE_ALIGN(__per_cpu_end - __per_cpu_start));
	if (!ret)
		ret = pcpw_map_chunk(pcpu_first_chunk);
	if (!ret && pcpu_reserved_chunk)
		ret = pcpw_map_chunk(pcpu_reserved_chunk);
	for (slot = 0; !ret && slot < pcpu_nr_slots; slot++)
		list_for_each_entry(chunk, &pcpu_chunk_lists[slot], list)
			if (chunk != pcpu_first_chunk && !ret)
				ret = pcpw_map_chunk(chunk);
	if (ret) {
		/* Windows stay mapped but unused: ops keep masking interrupts. */
		pr_warn("cannot map percpu memory into the windows (%d); this_cpu ops mask interrupts\n",
			ret);
		return;
	}

	pcpw_offset = pcpw_base - (unsigned long)__per_cpu_start;
	arch_this_cpu_window_enable(pcpw_offset);
	pr_info("enabled: window %#lx-%#lx, offset %#lx, %lu pages mapped for %u CPUs\n",
		pcpw_base, pcpw_base + PCPW_SIZE, pcpw_offset, pcpw_pages,
		num_possible_cpus());
}

#ifdef CONFIG_THIS_CPU_WINDOW_KUNIT_TEST
#include "tests/percpu_window-kunit.h"
#endif

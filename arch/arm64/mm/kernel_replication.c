// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 side of kernel replication (mm/kernel_replication.c): where the
 * image's branch-range box and the module window are, how one copy is
 * written and made visible to instruction fetch, and what a contiguous
 * hint means when a leaf moves to a node's copy.
 */
#define pr_fmt(fmt) "kernel_replication: " fmt

#include <linux/cpu.h>
#include <linux/kernel_replication.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include <asm/cacheflush.h>
#include <asm/cache.h>
#include <asm/fixmap.h>
#include <asm/pgtable.h>
#include <asm/mmu_context.h>
#include <asm/sections.h>
#include <asm/virt.h>

/**
 * arch_kernel_replication_layout() - the image's box and the module window
 * @layout: filled in here
 *
 * Every module and its PLT targets lie in a 2 GiB box containing the image
 * (module_init_limits()), so the box is [_end - 2G, _text + 2G).  The
 * module window lies right below the image, in direct branch range of it,
 * at a 2 MiB boundary as the image's own mappings are.
 */
void __init arch_kernel_replication_layout(struct kernel_replication_layout *layout)
{
	unsigned long text = (unsigned long)_text;

	layout->box_start = (unsigned long)_end - SZ_2G;
	layout->box_end = text + SZ_2G;
	layout->window_end = ALIGN_DOWN(text, SZ_2M);
	layout->window_start = layout->window_end - KERNEL_REPLICATION_WINDOW_MAX;
	/*
	 * The largest mapping of the image: a block (2 MiB with 4K pages,
	 * 32 MiB with 16K), or with 64K pages a contiguous PTE range (2 MiB):
	 * a 512 MiB block is larger than the image and never maps it, and a
	 * larger alignment would only make the copies harder to allocate.
	 */
	layout->copy_align = IS_ENABLED(CONFIG_ARM64_64K_PAGES) ? CONT_PTE_SIZE : PMD_SIZE;
}

/**
 * arch_kernel_replication_unusable() - can this boot not replicate at all?
 *
 * Return: why not, or NULL.  The hypervisor owns .hyp.text, inside the
 * text, under protected KVM: no copy can read it.
 */
const char *arch_kernel_replication_unusable(void)
{
	if (is_protected_kvm_enabled())
		return "protected KVM owns part of the text";
	return NULL;
}

/**
 * arch_kernel_replication_protect_aliases() - keep linear aliases read-only?
 *
 * Return: rodata_full, the policy change_memory_common() applies to the
 * linear alias of vmalloc'd text (rodata=full, the default).
 */
bool arch_kernel_replication_protect_aliases(void)
{
	return rodata_full;
}

/**
 * arch_kernel_replication_sync_icache() - make a copy's bytes fetchable
 * @start: start of the bytes, through a linear or fixmap alias
 * @end: their end
 *
 * DC CVAU and IC IVAU by the alias, in the Inner Shareable domain: the
 * I-cache is PIPT or non-aliasing VIPT, so invalidating by one alias
 * reaches every virtual address of the same bytes.  An aliasing VIPT
 * I-cache is invalidated whole (IC IALLUIS).  Only the assembly helpers:
 * this runs inside the patching primitives, which must not recurse into
 * ftrace or kprobes.
 */
notrace void arch_kernel_replication_sync_icache(unsigned long start,
						 unsigned long end)
{
	if (icache_is_aliasing()) {
		dcache_clean_pou(start, end);
		icache_inval_all_pou();
	} else {
		caches_clean_inval_pou(start, end);
	}
}

NOKPROBE_SYMBOL(arch_kernel_replication_sync_icache);

/**
 * arch_kernel_replication_poke() - write one copy of patched text
 * @pa: physical address of the bytes in the copy
 * @src: what to write there, or NULL for the master, written already
 * @len: how many bytes, within one page
 *
 * Through FIX_TEXT_POKE0, which patch_lock owns, as the master's write.
 */
notrace void arch_kernel_replication_poke(phys_addr_t pa, const void *src,
					  size_t len)
{
	unsigned long waddr = set_fixmap_offset(FIX_TEXT_POKE0, pa);

	/* Just mapped writable: a fault here is a kernel bug. */
	if (src)
		WARN_ON_ONCE(copy_to_kernel_nofault((void *)waddr, src, len));
	arch_kernel_replication_sync_icache(waddr, waddr + len);
	clear_fixmap(FIX_TEXT_POKE0);
}

NOKPROBE_SYMBOL(arch_kernel_replication_poke);

/*
 * Is the naturally aligned @span around @addr all inside [start, end)?
 * The entries of a contiguous range must all move, or none.
 */
static bool krepl_span_inside(unsigned long addr, unsigned long span,
			      unsigned long start, unsigned long end)
{
	unsigned long first = ALIGN_DOWN(addr, span);

	return first >= start && first + span <= end;
}

/**
 * arch_kernel_replication_move_pte() - relocate a leaf PTE of the image
 * @ptep: the entry in a node's table, still a copy of the master's
 * @addr: the virtual address it maps
 * @pa: the physical address of the node's copy of that page
 * @start: start of the virtual range being relocated
 * @end: its end
 *
 * The contiguous bit stays if @pa is congruent to the master's address
 * modulo CONT_PTE_SIZE, and is dropped if not.  The entry is written with
 * its barrier (__set_pte()): the core publishes the node's tables after.
 *
 * Return: 0, or -EINVAL if the contiguous range reaches outside
 * [@start, @end).
 */
int arch_kernel_replication_move_pte(pte_t *ptep, unsigned long addr,
				     phys_addr_t pa, unsigned long start,
				     unsigned long end)
{
	pte_t pte = __ptep_get(ptep);

	if (pte_cont(pte)) {
		if (!krepl_span_inside(addr, CONT_PTE_SIZE, start, end))
			return -EINVAL;
		if ((pa ^ PFN_PHYS(pte_pfn(pte))) & (CONT_PTE_SIZE - 1))
			pte = pte_mknoncont(pte);
	}
	__set_pte(ptep, pfn_pte(PHYS_PFN(pa), pte_pgprot(pte)));
	return 0;
}

/**
 * arch_kernel_replication_move_pmd() - relocate a block mapping of the image
 * @pmdp: the entry in a node's table, a leaf, still a copy of the master's
 * @addr: the virtual address it maps
 * @pa: the physical address of the node's copy of the block
 * @start: start of the virtual range being relocated
 * @end: its end
 *
 * As arch_kernel_replication_move_pte(), with CONT_PMD_SIZE, which is
 * larger than the copies' alignment: a contiguous PMD range keeps its
 * hint only if the copy happens to be congruent modulo its size too.
 *
 * Return: 0, or -EINVAL as for arch_kernel_replication_move_pte().
 */
int arch_kernel_replication_move_pmd(pmd_t *pmdp, unsigned long addr,
				     phys_addr_t pa, unsigned long start,
				     unsigned long end)
{
	pmd_t pmd = pmdp_get(pmdp);

	if (!krepl_span_inside(addr, PMD_SIZE, start, end))
		return -EINVAL;
	if (pmd_cont(pmd)) {
		if (!krepl_span_inside(addr, CONT_PMD_SIZE, start, end))
			return -EINVAL;
		if ((pa ^ PFN_PHYS(pmd_pfn(pmd))) & (CONT_PMD_SIZE - 1))
			pmd = pte_pmd(pte_mknoncont(pmd_pte(pmd)));
	}
	set_pmd(pmdp, pfn_pmd(PHYS_PFN(pa), pmd_pgprot(pmd)));
	return 0;
}

/**
 * arch_kernel_replication_split_pmd() - the PTEs of a block mapping
 * @block: a leaf PMD of the image
 * @ptes: PTRS_PER_PTE entries to fill in
 *
 * Page by page, with the block's attributes and without a contiguous
 * hint: the same mapping made of pages.
 *
 * Return: 0, or -EINVAL for a block with a contiguous hint, whose
 * siblings would keep a hint the new table breaks.
 */
int arch_kernel_replication_split_pmd(pmd_t block, pte_t *ptes)
{
	pgprot_t prot = pmd_pgprot(block);
	unsigned long pfn = pmd_pfn(block);
	unsigned int i;

	if (pmd_cont(block))
		return -EINVAL;
	prot = __pgprot((pgprot_val(prot) & ~PMD_TYPE_MASK) | PTE_TYPE_PAGE);
	for (i = 0; i < PTRS_PER_PTE; i++)
		ptes[i] = pfn_pte(pfn + i, prot);
	return 0;
}

#ifdef CONFIG_KERNEL_REPLICATION_KUNIT_TEST
#include <kunit/test.h>

#include <asm/patching.h>
#include <asm/sysreg.h>

/*
 * Returns the immediate of its first instruction, which the test patches.
 * Only ever called directly (BL): it has no BTI landing pad.
 */
asmlinkage int krepl_kunit_fn(void);
asm(".pushsection .text, \"ax\"\n"
	"	.align	2\n"
	"	.type	krepl_kunit_fn, %function\n"
	"krepl_kunit_fn:\n"
	"	mov	w0, #1\n"
	"	ret\n"
	"	.size	krepl_kunit_fn, . - krepl_kunit_fn\n"
	"	.popsection\n");

/*
 * Returns the 64-bit literal just before it, which the test rewrites as
 * ftrace rewrites the ops pointer before a function.  The load goes
 * through the image's mapping: each CPU reads its own node's copy.  Only
 * ever called directly, as krepl_kunit_fn().
 */
asmlinkage u64 krepl_kunit_lit_fn(void);
asm(".pushsection .text, \"ax\"\n"
	"	.align	3\n"
	"	.quad	1\n"
	"	.type	krepl_kunit_lit_fn, %function\n"
	"krepl_kunit_lit_fn:\n"
	"	ldr	x0, . - 8\n"
	"	ret\n"
	"	.size	krepl_kunit_lit_fn, . - krepl_kunit_lit_fn\n"
	"	.popsection\n");

struct krepl_kunit_cpu {
	u64 ret;
	phys_addr_t pa;
	u64 bytes;
};

/* What the CPUs run and read: the instruction or the literal. */
struct krepl_kunit_probe {
	bool literal;
	struct krepl_kunit_cpu *cpus;
};

static void *krepl_kunit_addr(bool literal)
{
	return literal ? (void *)krepl_kunit_lit_fn - sizeof(u64) : (void *)krepl_kunit_fn;
}

/* On each CPU: run the function, and read what its own table maps it to. */
static void krepl_kunit_run(void *data)
{
	struct krepl_kunit_probe *p = data;
	struct krepl_kunit_cpu *c = &p->cpus[smp_processor_id()];
	void *addr = krepl_kunit_addr(p->literal);
	u64 par;

	c->ret = p->literal ? krepl_kunit_lit_fn() : krepl_kunit_fn();
	asm volatile("at s1e1r, %0" : : "r" (addr));
	isb();
	par = read_sysreg_par();
	c->pa = 0;
	if (par & SYS_PAR_EL1_F)
		return;
	c->pa = (par & SYS_PAR_EL1_PA) | offset_in_page(addr);
	/* The copy's linear alias: the bytes, not what fetch or load saw. */
	if (p->literal)
		c->bytes = le64_to_cpu(*(__le64 *)phys_to_virt(c->pa));
	else
		c->bytes = le32_to_cpu(*(__le32 *)phys_to_virt(c->pa));
}

/*
 * After one write of @bytes: every CPU must get @ret from its own node's
 * copy (found by AT S1E1R, not from the bookkeeping), which must hold
 * @bytes, and that copy and the master's must be among the @copies
 * arch_kernel_replication_poke() was called for.
 */
static void krepl_kunit_check(struct kunit *test, struct krepl_kunit_probe *p,
			      unsigned int copies, u64 ret, u64 bytes)
{
	phys_addr_t master = __pa_symbol(krepl_kunit_addr(p->literal));
	struct krepl_kunit_cpu *c = p->cpus;
	unsigned int cpu;

	KUNIT_EXPECT_EQ(test, kernel_replication_test_nr_maintained(), copies);
	if (copies)
		KUNIT_EXPECT_TRUE_MSG(test, kernel_replication_test_maintained(master),
				      "master %pa not maintained", &master);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		int want = kernel_replication_test_node(cpu);

		smp_call_function_single(cpu, krepl_kunit_run, p, 1);
		KUNIT_EXPECT_EQ_MSG(test, c[cpu].ret, ret, "cpu%u got the old value", cpu);
		/* No assertion: it would leave with the hotplug lock held. */
		KUNIT_EXPECT_NE_MSG(test, c[cpu].pa, 0, "cpu%u: text not mapped", cpu);
		if (!c[cpu].pa)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, page_to_nid(phys_to_page(c[cpu].pa)), want,
				    "cpu%u runs %pa", cpu, &c[cpu].pa);
		KUNIT_EXPECT_EQ_MSG(test, c[cpu].bytes, bytes, "cpu%u's copy %pa",
				    cpu, &c[cpu].pa);
		if (copies)
			KUNIT_EXPECT_TRUE_MSG(test,
					      kernel_replication_test_maintained(c[cpu].pa),
					      "cpu%u's copy %pa not maintained", cpu,
					      &c[cpu].pa);
	}
	cpus_read_unlock();
}

/*
 * How many copies a write reaches now.  At boot KUnit runs before the
 * switch (ktext_maint.sh runs the suite again through debugfs): then only
 * the master may be written and every CPU runs it.  No skip: KUnit never
 * reruns a skipped case.
 */
static unsigned int krepl_kunit_copies(struct kunit *test)
{
	unsigned int copies = kernel_replication_test_copies();

	/* ktext_maint.sh compares it with the status: a stale result shows. */
	kunit_info(test, "copies written: %u", copies);
	return copies;
}

/* Patch kernel text to MOVZ W0, #2 and back to #1. */
static void krepl_test_patch_every_copy(struct kunit *test)
{
	struct krepl_kunit_probe p = { .literal = false };
	unsigned int copies = krepl_kunit_copies(test);
	int imm;

	p.cpus = kunit_kcalloc(test, nr_cpu_ids, sizeof(*p.cpus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p.cpus);
	for (imm = 2; imm >= 1; imm--) {
		u32 insn = 0x52800000 | (imm << 5);	/* MOVZ W0, #imm */

		kernel_replication_test_watch(krepl_kunit_fn);
		KUNIT_ASSERT_EQ(test,
				aarch64_insn_patch_text_nosync(krepl_kunit_fn, insn), 0);
		kernel_replication_test_watch(NULL);
		krepl_kunit_check(test, &p, copies, imm, insn);
	}
}

/*
 * Rewrite a 64-bit literal in kernel text, as ftrace rewrites a
 * function's ops pointer, and put it back: aarch64_insn_write_literal_u64()
 * has its own path to the copies.
 */
static void krepl_test_patch_literal(struct kunit *test)
{
	static const u64 vals[] = { 0x0123456789abcdefULL, 1 };
	struct krepl_kunit_probe p = { .literal = true };
	unsigned int copies = krepl_kunit_copies(test);
	void *lit = krepl_kunit_addr(true);
	unsigned int i;

	p.cpus = kunit_kcalloc(test, nr_cpu_ids, sizeof(*p.cpus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p.cpus);
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		kernel_replication_test_watch(lit);
		KUNIT_ASSERT_EQ(test, aarch64_insn_write_literal_u64(lit, vals[i]), 0);
		kernel_replication_test_watch(NULL);
		krepl_kunit_check(test, &p, copies, vals[i], vals[i]);
	}
}

/*
 * A synthetic read-only executable block, split as a block that rodata
 * ends inside is: every PTE maps the block's page with the block's
 * attributes, as the same mapping made of pages would.  The same block
 * with a contiguous hint is refused: its siblings would keep the hint.
 */
static void krepl_test_split_block(struct kunit *test)
{
	unsigned long pfn = 0x40000;	/* any PMD-aligned frame: not mapped */
	pmd_t block = pmd_mkhuge(pfn_pmd(pfn, PAGE_KERNEL_ROX));
	pte_t *ptes = kunit_kcalloc(test, PTRS_PER_PTE, sizeof(*ptes), GFP_KERNEL);
	unsigned int i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, ptes);
	KUNIT_ASSERT_TRUE(test, pmd_leaf(block));
	KUNIT_ASSERT_EQ(test, arch_kernel_replication_split_pmd(block, ptes), 0);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t want = pfn_pte(pfn + i, PAGE_KERNEL_ROX);

		if (pte_val(ptes[i]) != pte_val(want) && bad++ < 4)
			KUNIT_FAIL(test, "pte %u: %#llx, want %#llx", i,
				   (u64)pte_val(ptes[i]), (u64)pte_val(want));
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_split_pmd(pmd_mkcont(block), ptes),
			-EINVAL);

	/* rodata: never executable, which the split must not lose. */
	block = pmd_mkhuge(pfn_pmd(pfn, PAGE_KERNEL_RO));
	KUNIT_ASSERT_EQ(test, arch_kernel_replication_split_pmd(block, ptes), 0);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t want = pfn_pte(pfn + i, PAGE_KERNEL_RO);

		if (pte_val(ptes[i]) != pte_val(want) && bad++ < 4)
			KUNIT_FAIL(test, "ro pte %u: %#llx, want %#llx", i,
				   (u64)pte_val(ptes[i]), (u64)pte_val(want));
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
}

/*
 * A contiguous range of read-only executable PTEs, in a scratch table,
 * moved as the image's are: to a copy at the same offset modulo
 * CONT_PTE_SIZE the hint stays, to one that is not it goes, and a walk
 * that covers only part of the range is refused with nothing written.
 * A page mapping without a hint moves alone.
 */
static void krepl_test_move_pte(struct kunit *test)
{
	unsigned long pfn = 0x40000, addr = 0x100000000UL, end;
	pte_t *ptes = kunit_kcalloc(test, CONT_PTES, sizeof(*ptes), GFP_KERNEL);
	pte_t cont = pte_mkcont(pfn_pte(pfn, PAGE_KERNEL_ROX));
	phys_addr_t same = PFN_PHYS(pfn) + 4 * CONT_PTE_SIZE;
	phys_addr_t skew = same + PAGE_SIZE * CONT_PTES / 2;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ptes);
	for (i = 0; i < CONT_PTES; i++)
		ptes[i] = pte_advance_pfn(cont, i);
	for (i = 0; i < CONT_PTES; i++)
		KUNIT_EXPECT_EQ(test,
				arch_kernel_replication_move_pte(&ptes[i], addr + i * PAGE_SIZE,
								 same + i * PAGE_SIZE,
								 addr, addr + CONT_PTE_SIZE), 0);
	for (i = 0; i < CONT_PTES; i++) {
		pte_t want = pte_mkcont(pfn_pte(PHYS_PFN(same) + i, PAGE_KERNEL_ROX));

		KUNIT_EXPECT_EQ_MSG(test, pte_val(ptes[i]), pte_val(want), "pte %u", i);
	}

	for (i = 0; i < CONT_PTES; i++) {
		pte_t want = pfn_pte(PHYS_PFN(skew) + i, PAGE_KERNEL_ROX);

		ptes[i] = pte_advance_pfn(cont, i);
		KUNIT_EXPECT_EQ(test,
				arch_kernel_replication_move_pte(&ptes[i], addr + i * PAGE_SIZE,
								 skew + i * PAGE_SIZE,
								 addr, addr + CONT_PTE_SIZE), 0);
		KUNIT_EXPECT_EQ_MSG(test, pte_val(ptes[i]), pte_val(want), "skewed pte %u", i);
	}

	/* A walk that starts inside the range. */
	ptes[1] = pte_advance_pfn(cont, 1);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pte(&ptes[1], addr + PAGE_SIZE,
							       same + PAGE_SIZE,
							       addr + PAGE_SIZE,
							       addr + CONT_PTE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, pte_val(ptes[1]), pte_val(pte_advance_pfn(cont, 1)));

	ptes[0] = cont;
	end = addr + CONT_PTE_SIZE - PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pte(&ptes[0], addr, same,
							       addr, end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pte_val(ptes[0]), pte_val(cont));

	ptes[0] = pfn_pte(pfn, PAGE_KERNEL_ROX);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pte(&ptes[0], addr, skew,
							       addr, addr + PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pte_val(ptes[0]),
			pte_val(pfn_pte(PHYS_PFN(skew), PAGE_KERNEL_ROX)));
}

/*
 * A read-only executable block moved to a copy: the whole block inside
 * the walk moves with its attributes; a contiguous PMD hint stays only if
 * the copy is congruent modulo CONT_PMD_SIZE; a block the walk covers
 * only part of is refused with nothing written.
 */
static void krepl_test_move_pmd(struct kunit *test)
{
	unsigned long pfn = PHYS_PFN(SZ_4G), addr = 16 * CONT_PMD_SIZE;
	pmd_t block = pmd_mkhuge(pfn_pmd(pfn, PAGE_KERNEL_ROX)), pmd, want;
	phys_addr_t same = SZ_4G + 2 * CONT_PMD_SIZE, skew = same + PMD_SIZE;

	pmd = block;
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pmd(&pmd, addr, skew, addr,
							       addr + PMD_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pmd_val(pmd),
			pmd_val(pmd_mkhuge(pfn_pmd(PHYS_PFN(skew), PAGE_KERNEL_ROX))));

	pmd = pmd_mkcont(block);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pmd(&pmd, addr, same, addr,
							       addr + CONT_PMD_SIZE), 0);
	want = pmd_mkcont(pmd_mkhuge(pfn_pmd(PHYS_PFN(same), PAGE_KERNEL_ROX)));
	KUNIT_EXPECT_EQ(test, pmd_val(pmd), pmd_val(want));

	pmd = pmd_mkcont(block);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pmd(&pmd, addr, skew, addr,
							       addr + CONT_PMD_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pmd_val(pmd),
			pmd_val(pmd_mkhuge(pfn_pmd(PHYS_PFN(skew), PAGE_KERNEL_ROX))));

	pmd = pmd_mkcont(block);
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pmd(&pmd, addr, same, addr,
							       addr + PMD_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmd_val(pmd), pmd_val(pmd_mkcont(block)));

	pmd = block;
	KUNIT_EXPECT_EQ(test, arch_kernel_replication_move_pmd(&pmd, addr, same, addr,
							       addr + PMD_SIZE - PAGE_SIZE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pmd_val(pmd), pmd_val(block));
}

static struct kunit_case krepl_arch_test_cases[] = {
	KUNIT_CASE(krepl_test_split_block),
	KUNIT_CASE(krepl_test_move_pte),
	KUNIT_CASE(krepl_test_move_pmd),
	KUNIT_CASE(krepl_test_patch_every_copy),
	KUNIT_CASE(krepl_test_patch_literal),
	{}
};

static struct kunit_suite krepl_arch_test_suite = {
	.name = "kernel_replication_arch",
	.test_cases = krepl_arch_test_cases,
};

kunit_test_suite(krepl_arch_test_suite);
#endif /* CONFIG_KERNEL_REPLICATION_KUNIT_TEST */

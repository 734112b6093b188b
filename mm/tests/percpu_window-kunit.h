/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the this_cpu window, included by mm/percpu_window.c.
 *
 * Every check runs on every online CPU (work_on_cpu()) and compares what
 * that CPU reaches through the window with what per_cpu_ptr() reaches
 * from anywhere: static, reserved and dynamic percpu memory, the latter
 * across several chunks and after frees.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/ptdump.h>
#include <linux/sched/task.h>
#include <linux/workqueue.h>

static DEFINE_PER_CPU(u64, pcpw_test_static);

struct pcpw_test_obj {
	u64 __percpu *p;
	size_t size;		/* bytes, a multiple of 8 */
};

struct pcpw_test_run {
	struct pcpw_test_obj *objs;
	int nr;
	u64 salt;
	unsigned long bad;	/* words that differ */
};

static u64 pcpw_test_word(u64 salt, unsigned int cpu, int obj, size_t i)
{
	return salt ^ ((u64)cpu << 48) ^ ((u64)obj << 24) ^ i;
}

/* On one CPU: every word read through the window must be that CPU's. */
static long pcpw_test_check_cpu(void *data)
{
	struct pcpw_test_run *run = data;
	unsigned int cpu = raw_smp_processor_id();
	int o;

	for (o = 0; o < run->nr; o++) {
		u64 *w = (u64 *)((unsigned long)run->objs[o].p + pcpw_offset);
		size_t i;

		for (i = 0; i < run->objs[o].size / 8; i++)
			if (READ_ONCE(w[i]) != pcpw_test_word(run->salt, cpu, o, i))
				run->bad++;
		/* And a write through the window lands in this CPU's copy. */
		WRITE_ONCE(w[0], ~pcpw_test_word(run->salt, cpu, o, 0));
	}
	return 0;
}

static void pcpw_test_fill_check(struct kunit *test, struct pcpw_test_run *run)
{
	unsigned int cpu;
	int o;

	for_each_possible_cpu(cpu)
		for (o = 0; o < run->nr; o++) {
			u64 *c = per_cpu_ptr(run->objs[o].p, cpu);
			size_t i;

			for (i = 0; i < run->objs[o].size / 8; i++)
				c[i] = pcpw_test_word(run->salt, cpu, o, i);
		}

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		run->bad = 0;
		work_on_cpu(cpu, pcpw_test_check_cpu, run);
		KUNIT_EXPECT_EQ_MSG(test, run->bad, 0,
				    "cpu%u read other bytes through its window", cpu);
		for (o = 0; o < run->nr; o++)
			KUNIT_EXPECT_EQ_MSG(test, *per_cpu_ptr(run->objs[o].p, cpu),
					    ~pcpw_test_word(run->salt, cpu, o, 0),
					    "cpu%u: window write of object %d elsewhere",
					    cpu, o);
	}
	cpus_read_unlock();
}

static void pcpw_test_enabled(struct kunit *test)
{
	if (!pcpw_offset)
		kunit_skip(test, "window not in use");
	KUNIT_EXPECT_EQ(test, (unsigned long)pcpu_base_addr, (unsigned long)PCPU_VM_START);
	KUNIT_EXPECT_GE(test, pcpw_base, (unsigned long)THIS_CPU_WINDOW_START);
	KUNIT_EXPECT_LE(test, pcpw_base + PCPW_SIZE, (unsigned long)THIS_CPU_WINDOW_END);
	KUNIT_EXPECT_EQ(test, pcpw_offset, pcpw_base - (unsigned long)__per_cpu_start);
}

static void pcpw_test_static_reserved(struct kunit *test)
{
	struct pcpw_test_obj objs[2] = {
		{ .p = &pcpw_test_static, .size = sizeof(u64) },
		{ .size = 64 },
	};
	struct pcpw_test_run run = { .objs = objs, .nr = 2, .salt = 0x5157a71c };

	if (!pcpw_offset)
		kunit_skip(test, "window not in use");
	objs[1].p = (u64 __percpu *)__alloc_reserved_percpu(objs[1].size, 8);
	KUNIT_ASSERT_NOT_NULL(test, objs[1].p);
	pcpw_test_fill_check(test, &run);
	free_percpu(objs[1].p);
}

/*
 * Enough 8 KiB objects to need several chunks; check, free every other
 * one, allocate again (reusing and depopulating pages), check again.
 */
#define PCPW_TEST_OBJS	96

static void pcpw_test_dynamic(struct kunit *test)
{
	struct pcpw_test_run run = { .nr = PCPW_TEST_OBJS, .salt = 0xd1ca0000 };
	unsigned long lo = ULONG_MAX, hi = 0;
	int o, round;

	if (!pcpw_offset)
		kunit_skip(test, "window not in use");
	run.objs = kunit_kcalloc(test, PCPW_TEST_OBJS, sizeof(*run.objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, run.objs);

	for (round = 0; round < 3; round++) {
		for (o = 0; o < PCPW_TEST_OBJS; o++) {
			if (run.objs[o].p)
				continue;
			run.objs[o].size = SZ_8K;
			run.objs[o].p = __alloc_percpu(SZ_8K, 8);
			KUNIT_ASSERT_NOT_NULL(test, run.objs[o].p);
			lo = min_t(unsigned long, lo, (unsigned long)run.objs[o].p);
			hi = max_t(unsigned long, hi, (unsigned long)run.objs[o].p + SZ_8K);
		}
		run.salt += round;
		pcpw_test_fill_check(test, &run);
		for (o = round & 1; o < PCPW_TEST_OBJS; o += 2) {
			free_percpu(run.objs[o].p);
			run.objs[o].p = NULL;
		}
	}
	for (o = 0; o < PCPW_TEST_OBJS; o++)
		free_percpu(run.objs[o].p);
	/* 768 KiB per CPU cannot fit one unit: more than one chunk was used. */
	KUNIT_EXPECT_GT(test, hi - lo, (unsigned long)pcpu_first_chunk->nr_pages << PAGE_SHIFT);
}

struct pcpw_test_ops {
	u8 b;
	u16 h;
	u32 w;
	u64 d;
	s8 sb;
	s16 sh;
	s32 sw;
	s64 sd;
#ifdef CONFIG_ARCH_SUPPORTS_INT128
	u128 q;
#endif
};

/*
 * Run every this_cpu op on one field and keep a reference value computed
 * in C; after each op the CPU's copy, read with per_cpu_ptr(), must equal
 * it and the op's return value must be what the reference predicts.
 */
#define PCPW_TEST_OPS(f, type, init)					\
do {									\
	type ref = (type)(init), r, o;					\
	type *c = &per_cpu_ptr(t->p, cpu)->f;				\
									\
	this_cpu_write(t->p->f, ref);					\
	bad += *c != ref;						\
	bad += this_cpu_read(t->p->f) != ref;				\
	this_cpu_add(t->p->f, (type)0x31);	ref += 0x31;		\
	bad += *c != ref;						\
	this_cpu_sub(t->p->f, (type)0x13);	ref -= 0x13;		\
	bad += *c != ref;						\
	this_cpu_inc(t->p->f);			ref++;			\
	bad += *c != ref;						\
	this_cpu_dec(t->p->f);			ref--;			\
	bad += *c != ref;						\
	this_cpu_and(t->p->f, (type)0xf0f0f0f0f0f0f0f0ULL);		\
	ref &= (type)0xf0f0f0f0f0f0f0f0ULL;				\
	bad += *c != ref;						\
	this_cpu_or(t->p->f, (type)0x0303030303030303ULL);		\
	ref |= (type)0x0303030303030303ULL;				\
	bad += *c != ref;						\
	r = this_cpu_add_return(t->p->f, (type)7);	ref += 7;	\
	bad += r != ref || *c != ref;					\
	r = this_cpu_xchg(t->p->f, (type)(ref ^ 0xff));			\
	bad += r != ref;	ref ^= 0xff;				\
	bad += *c != ref;						\
	r = this_cpu_cmpxchg(t->p->f, (type)(ref + 1), (type)0);	\
	bad += r != ref || *c != ref;	/* no match: unchanged */	\
	r = this_cpu_cmpxchg(t->p->f, ref, (type)(ref - 3));		\
	bad += r != ref;	ref -= 3;				\
	bad += *c != ref;						\
	o = ref;							\
	bad += !this_cpu_try_cmpxchg(t->p->f, &o, (type)(ref * 3));	\
	ref *= 3;							\
	bad += *c != ref;						\
	o = ref + 1;							\
	bad += this_cpu_try_cmpxchg(t->p->f, &o, (type)0) || o != ref;	\
	bad += *c != ref;						\
	/* All bits set: the compare must see the whole width only. */	\
	this_cpu_write(t->p->f, (type)-1);				\
	r = this_cpu_cmpxchg(t->p->f, (type)-1, (type)1);		\
	bad += r != (type)-1 || *c != (type)1;				\
	r = this_cpu_cmpxchg(t->p->f, (type)-1, (type)2);		\
	bad += r != (type)1 || *c != (type)1;				\
	this_cpu_write(t->p->f, (type)-1);				\
	o = (type)-1;							\
	bad += !this_cpu_try_cmpxchg(t->p->f, &o, (type)-2);		\
	bad += *c != (type)-2;						\
	o = (type)-1;							\
	bad += this_cpu_try_cmpxchg(t->p->f, &o, (type)3) || o != (type)-2; \
	bad += *c != (type)-2;						\
	r = this_cpu_xchg(t->p->f, (type)-1);				\
	bad += r != (type)-2 || *c != (type)-1;				\
	r = this_cpu_add_return(t->p->f, (type)-1);			\
	bad += r != (type)-2 || *c != (type)-2;				\
	bad += this_cpu_read(t->p->f) != (type)-2;			\
} while (0)

struct pcpw_test_ops_run {
	struct pcpw_test_ops __percpu *p;
	unsigned long bad[NR_CPUS];
};

static long pcpw_test_ops_cpu(void *data)
{
	struct pcpw_test_ops_run *t = data;
	unsigned int cpu = raw_smp_processor_id();
	unsigned long bad = 0;

	PCPW_TEST_OPS(b, u8, 0x5a);
	PCPW_TEST_OPS(h, u16, 0x5a5a);
	PCPW_TEST_OPS(w, u32, 0x5a5a5a5a);
	PCPW_TEST_OPS(d, u64, 0x5a5a5a5a5a5a5a5aULL);
	/* Signed, starting with the sign bit set. */
	PCPW_TEST_OPS(sb, s8, -0x5b);
	PCPW_TEST_OPS(sh, s16, -0x5a5b);
	PCPW_TEST_OPS(sw, s32, -0x5a5a5a5b);
	PCPW_TEST_OPS(sd, s64, -0x5a5a5a5a5a5a5a5bLL);
	PCPW_TEST_OPS(b, u8, 0xa5);
	PCPW_TEST_OPS(h, u16, 0xa5a5);
#ifdef CONFIG_ARCH_SUPPORTS_INT128
	if (system_has_cmpxchg128()) {
		u128 *c = &per_cpu_ptr(t->p, cpu)->q;
		u128 ref = ((u128)0x1122334455667788ULL << 64) | cpu, r;

		*c = ref;
		r = this_cpu_cmpxchg128(t->p->q, ref + 1, (u128)0);
		bad += r != ref || *c != ref;	/* no match: unchanged */
		r = this_cpu_cmpxchg128(t->p->q, ref, ~ref);
		bad += r != ref || *c != ~ref;
	}
#endif
	t->bad[cpu] = bad;
	return 0;
}

/*
 * Every op at every size on every CPU, against per_cpu_ptr().  Runs
 * whether or not the window is in use: the interrupt-masking fallback
 * must give the same results.
 */
static void pcpw_test_ops(struct kunit *test)
{
	struct pcpw_test_ops_run *t;
	unsigned int cpu;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->p = alloc_percpu(struct pcpw_test_ops);
	KUNIT_ASSERT_NOT_NULL(test, t->p);

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		t->bad[cpu] = ULONG_MAX;
		work_on_cpu(cpu, pcpw_test_ops_cpu, t);
		KUNIT_EXPECT_EQ_MSG(test, t->bad[cpu], 0,
				    "cpu%u: this_cpu ops disagree with per_cpu_ptr()", cpu);
	}
	/* Each CPU wrote only its own copy: the others' are untouched (0). */
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			KUNIT_EXPECT_EQ(test, per_cpu_ptr(t->p, cpu)->d, 0);
	cpus_read_unlock();
	free_percpu(t->p);
}

/*
 * Without the window, percpu chunks may lie anywhere in vmalloc space:
 * the embed first chunk places each node's group at its memory, so on a
 * machine whose nodes are far apart every later chunk needs areas that
 * far apart too.  Ask for two areas one top-level entry apart, more than
 * the window's bounded range holds.
 */
static void pcpw_test_unbounded(struct kunit *test)
{
	const unsigned long offsets[2] = { 0, PGDIR_SIZE };
	const size_t sizes[2] = { PAGE_SIZE, PAGE_SIZE };
	struct vm_struct **vms;

	if (pcpu_window_bounded) {
		/* A first chunk that did not fit lifts the bound (pcpu_vm_unbound()). */
		KUNIT_ASSERT_EQ_MSG(test, (unsigned long)pcpu_base_addr,
				    (unsigned long)PCPU_WINDOW_VM_START,
				    "chunks bounded, but the first chunk lies outside the range");
		kunit_skip(test, "the page first chunk is in use: chunks are bounded by design");
	}
	vms = pcpu_get_vm_areas(offsets, sizes, 2, PAGE_SIZE);
	KUNIT_EXPECT_NOT_NULL_MSG(test, vms,
				  "no percpu areas %#lx apart: chunks bounded without the window",
				  offsets[1]);
	if (vms)
		pcpu_free_vm_areas(vms, 2);
}

/* PTE tables below @cpu's window entry, counted in the tables themselves. */
static unsigned long pcpw_test_pte_tables(unsigned int cpu)
{
	struct mm_struct *mm = pcpw_mm[cpu];
	unsigned long addr = pcpw_base & PUD_MASK, end = pcpw_base + PCPW_SIZE, n = 0;

	while (addr < end) {
		pud_t *pud = pud_offset(p4d_offset(pgd_offset(mm, addr), addr), addr);
		unsigned long next = pud_addr_end(addr, end);

		if (!pud_none(pudp_get(pud))) {
			pmd_t *pmd = pmd_offset(pud, addr);

			for (; addr < next; addr = pmd_addr_end(addr, next), pmd++)
				n += !pmd_none(pmdp_get(pmd));
		}
		addr = next;
	}
	return n;
}

/*
 * How many chunks there are, and in @bytes (if not NULL) the size of the
 * largest: the first chunk may be smaller than a unit.
 */
static unsigned int pcpw_test_chunks(unsigned long *bytes)
{
	struct pcpu_chunk *chunk;
	unsigned long largest = 0;
	unsigned int n = 0;
	int slot;

	spin_lock_irq(&pcpu_lock);
	for (slot = 0; slot < pcpu_nr_slots; slot++)
		list_for_each_entry(chunk, &pcpu_chunk_lists[slot], list) {
			largest = max(largest, (unsigned long)chunk->nr_pages << PAGE_SHIFT);
			n++;
		}
	spin_unlock_irq(&pcpu_lock);
	if (bytes)
		*bytes = largest;
	return n;
}

static unsigned int pcpw_test_nr_chunks(void)
{
	return pcpw_test_chunks(NULL);
}

/*
 * Window tables are never freed, so they must stay bounded: chunks that
 * are destroyed give their virtual range back (after a vmap purge), the
 * next chunks reuse it, and so do their window tables.  Four rounds of
 * filling two new chunks, freeing everything and waiting until the
 * empty chunks are gone must end with no more window tables than the
 * first.
 *
 * How many objects fill two new chunks depends on the unit size, which
 * grows with the page size (the free space of the existing chunks is
 * at most their size), so allocate until two chunks were added.
 */
static void pcpw_test_tables_bounded(struct kunit *test)
{
	void __percpu **objs;
	unsigned long tables[4], bytes;
	unsigned int chunks0, i, max, nr;
	int round, o;

	if (!pcpw_offset)
		kunit_skip(test, "window not in use");
	chunks0 = pcpw_test_chunks(&bytes);
	max = DIV_ROUND_UP((chunks0 + 2) * bytes, SZ_8K) + 1;
	objs = kunit_kcalloc(test, max, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	for (round = 0; round < 4; round++) {
		for (nr = 0; nr < max && pcpw_test_nr_chunks() < chunks0 + 2; nr++) {
			objs[nr] = __alloc_percpu(SZ_8K, 8);
			KUNIT_ASSERT_NOT_NULL(test, objs[nr]);
		}
		KUNIT_EXPECT_GE_MSG(test, pcpw_test_nr_chunks(), chunks0 + 2,
				    "round %d: %u objects of 8K added no two chunks",
				    round, nr);
		for (o = 0; o < nr; o++)
			free_percpu(objs[o]);
		/* The balance work destroys empty chunks, keeping one spare. */
		for (i = 0; i < 50 && pcpw_test_nr_chunks() > chunks0 + 1; i++)
			msleep(100);
		KUNIT_EXPECT_LE_MSG(test, pcpw_test_nr_chunks(), chunks0 + 1,
				    "round %d: empty chunks were not destroyed", round);
		vm_unmap_aliases();
		tables[round] = pcpw_test_pte_tables(0);
	}
	kunit_info(test, "cpu0 window PTE tables after each round: %lu %lu %lu %lu (%u objects of 8K)\n",
		   tables[0], tables[1], tables[2], tables[3], nr);
	KUNIT_EXPECT_LE(test, tables[3], tables[0]);
}

struct pcpw_test_ctr {
	u64 inc;
	s8 b;
	s16 h;
};

#define PCPW_TEST_MIG_THREADS	4

struct pcpw_test_mig {
	struct pcpw_test_ctr __percpu *p;
	bool stop;
	unsigned long done_ops[PCPW_TEST_MIG_THREADS];
	struct completion done;
};

struct pcpw_test_mig_arg {
	struct pcpw_test_mig *m;
	int i;
};

/*
 * Unpinned and preemptible: the thread may be migrated, and interrupted,
 * between any two instructions, including inside an op's LL/SC loop.
 * Each op is atomic on whichever CPU's copy it reaches, so every
 * this_cpu_inc() and every successful try_cmpxchg() adds exactly one to
 * some copy.  The s8 and s16 counters wrap through -1 over and over.
 */
static int pcpw_test_mig_fn(void *data)
{
	struct pcpw_test_mig_arg *a = data;
	struct pcpw_test_mig *m = a->m;
	unsigned long i;

	for (i = 0; !READ_ONCE(m->stop); i++) {
		s8 ob = this_cpu_read(m->p->b);
		s16 oh = this_cpu_read(m->p->h);

		this_cpu_inc(m->p->inc);
		while (!this_cpu_try_cmpxchg(m->p->b, &ob, ob + 1))
			;
		while (!this_cpu_try_cmpxchg(m->p->h, &oh, oh + 1))
			;
		if (!(i & 63))
			cond_resched();
	}
	m->done_ops[a->i] = i;
	complete(&m->done);
	return 0;
}

/*
 * Sums over CPUs must be exact whichever copy each op reached, while the
 * threads are moved from CPU to CPU: a lost update on any path (an LL/SC
 * compare that never matches, a store to a stale copy) shows here.
 */
static void pcpw_test_migrate(struct kunit *test)
{
	struct pcpw_test_mig_arg arg[PCPW_TEST_MIG_THREADS];
	struct task_struct *tsk[PCPW_TEST_MIG_THREADS];
	unsigned long moves = 0, want, end;
	struct pcpw_test_mig *m;
	unsigned int cpu, next = 0;
	u64 inc = 0;
	u16 h = 0;
	u8 b = 0;
	int i;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->p = alloc_percpu(struct pcpw_test_ctr);
	KUNIT_ASSERT_NOT_NULL(test, m->p);
	init_completion(&m->done);

	for (i = 0; i < PCPW_TEST_MIG_THREADS; i++) {
		arg[i] = (struct pcpw_test_mig_arg){ .m = m, .i = i };
		tsk[i] = kthread_create(pcpw_test_mig_fn, &arg[i], "pcpw_mig/%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(tsk[i]));
		get_task_struct(tsk[i]);
		wake_up_process(tsk[i]);
	}
	/* Move every thread to another CPU every tick, for a second. */
	for (end = jiffies + HZ; time_before(jiffies, end);) {
		for (i = 0; i < PCPW_TEST_MIG_THREADS; i++) {
			next = cpumask_next(next, cpu_online_mask);
			if (next >= nr_cpu_ids)
				next = cpumask_first(cpu_online_mask);
			if (!set_cpus_allowed_ptr(tsk[i], cpumask_of(next)))
				moves++;
		}
		schedule_timeout_uninterruptible(1);
	}
	WRITE_ONCE(m->stop, true);
	for (i = 0; i < PCPW_TEST_MIG_THREADS; i++)
		wait_for_completion(&m->done);
	for (i = 0; i < PCPW_TEST_MIG_THREADS; i++)
		put_task_struct(tsk[i]);

	for_each_possible_cpu(cpu) {
		struct pcpw_test_ctr *c = per_cpu_ptr(m->p, cpu);

		inc += c->inc;
		b += (u8)c->b;
		h += (u16)c->h;
	}
	/* Every thread has finished: done_ops[] are complete. */
	want = 0;
	for (i = 0; i < PCPW_TEST_MIG_THREADS; i++)
		want += m->done_ops[i];
	KUNIT_EXPECT_EQ(test, inc, (u64)want);
	KUNIT_EXPECT_EQ_MSG(test, b, (u8)want, "s8 try_cmpxchg() lost or invented updates");
	KUNIT_EXPECT_EQ_MSG(test, h, (u16)want, "s16 try_cmpxchg() lost or invented updates");
	KUNIT_EXPECT_GT(test, moves, 0UL);
	kunit_info(test, "%lu ops per counter, %lu migrations\n", want, moves);
	free_percpu(m->p);
}

#ifdef CONFIG_DEBUG_WX
struct pcpw_test_entry {
	pte_t old, new;
	bool exec;		/* e->new is e->old made executable */
	int n;
};

/*
 * The bits that keep PAGE_KERNEL from executing (arm64: PXN): clearing
 * only those keeps every other attribute of a live entry, the nG bit
 * included, whose change would need break-before-make.
 */
static pteval_t pcpw_test_nx_bits(void)
{
	return pgprot_val(PAGE_KERNEL) ^ pgprot_val(PAGE_KERNEL_EXEC);
}

static int pcpw_test_swap_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct pcpw_test_entry *e = data;

	e->old = ptep_get(ptep);
	if (e->exec)
		e->new = __pte(pte_val(e->old) & ~pcpw_test_nx_bits());
	set_pte_at(&init_mm, addr, ptep, e->new);
	e->n++;
	return 0;
}

/*
 * Swap CPU @cpu's window entry of @addr for @pte, or, with @exec, for
 * itself made executable; returns the old entry.
 */
static pte_t pcpw_test_swap(struct kunit *test, unsigned int cpu, unsigned long addr,
			    pte_t pte, bool exec)
{
	struct pcpw_test_entry e = { .new = pte, .exec = exec };

	KUNIT_EXPECT_EQ(test, apply_to_existing_page_range(pcpw_mm[cpu], addr, PAGE_SIZE,
							   pcpw_test_swap_pte, &e), 0);
	flush_tlb_kernel_range(addr, addr + PAGE_SIZE);
	KUNIT_EXPECT_EQ_MSG(test, e.n, 1, "cpu%u: window %#lx not mapped", cpu, addr);
	return e.old;
}

/*
 * The W^X check walks each CPU's window entry for that CPU alone: a
 * writable and executable page in the last CPU's window must fail it.
 * The first page of the window, the static area's, is mapped from boot
 * and never changes, so it is safe to make executable for a moment (a
 * permission change: no break-before-make) and put back.  The check's
 * warning is expected: the markers around it tell the console check so.
 */
static void pcpw_test_wx(struct kunit *test)
{
	unsigned int cpu, last = nr_cpu_ids;
	pte_t old;
	bool ok;

	if (!pcpw_offset)
		kunit_skip(test, "window not in use");
	for_each_possible_cpu(cpu) {
		if (pcpw_mm[cpu] && percpu_pgtable_root(cpu))
			last = cpu;
	}
	if (last >= nr_cpu_ids)
		kunit_skip(test, "no CPU runs on a root of its own");
	/* Only the non-executable bits change: a permission change. */
	KUNIT_ASSERT_NE(test, pcpw_test_nx_bits(), 0);
	old = pcpw_test_swap(test, last, pcpw_base, __pte(0), true);
	KUNIT_EXPECT_EQ(test, pte_val(old) & pcpw_test_nx_bits(), pcpw_test_nx_bits());
	pr_warn("PCPT-EXPECT-WARN-BEGIN note_page|note_prot_wx\n");
	ok = ptdump_check_wx();
	pr_warn("PCPT-EXPECT-WARN-END note_page|note_prot_wx\n");
	pcpw_test_swap(test, last, pcpw_base, old, false);
	KUNIT_EXPECT_FALSE_MSG(test, ok, "cpu%u: a W+X page in its window passed the check", last);
	KUNIT_EXPECT_TRUE_MSG(test, ptdump_check_wx(), "the check fails with the page put back");
	kunit_info(test, "W^X: a W+X page in cpu%u's window, then none\n", last);
}
#else
static void pcpw_test_wx(struct kunit *test)
{
	kunit_skip(test, "CONFIG_DEBUG_WX=n");
}
#endif

static struct kunit_case pcpw_test_cases[] = {
	KUNIT_CASE(pcpw_test_enabled),
	KUNIT_CASE(pcpw_test_static_reserved),
	KUNIT_CASE(pcpw_test_dynamic),
	KUNIT_CASE(pcpw_test_ops),
	KUNIT_CASE(pcpw_test_migrate),
	KUNIT_CASE(pcpw_test_unbounded),
	KUNIT_CASE(pcpw_test_tables_bounded),
	KUNIT_CASE(pcpw_test_wx),
	{}
};

static struct kunit_suite pcpw_test_suite = {
	.name = "this_cpu_window",
	.test_cases = pcpw_test_cases,
};

kunit_test_suite(pcpw_test_suite);

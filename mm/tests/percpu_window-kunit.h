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
#include <linux/cpu.h>
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
#ifdef CONFIG_ARCH_SUPPORTS_INT128
	u128 q;
#endif
};

/*
 * Run every this_cpu op on one field and keep a reference value computed
 * in C; after each op the CPU's copy, read with per_cpu_ptr(), must equal
 * it and the op's return value must be what the reference predicts.
 */
#define PCPW_TEST_OPS(f, type)						\
do {									\
	type ref = (type)0x5a5a5a5a5a5a5a5aULL, r, o;			\
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

	PCPW_TEST_OPS(b, u8);
	PCPW_TEST_OPS(h, u16);
	PCPW_TEST_OPS(w, u32);
	PCPW_TEST_OPS(d, u64);
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

static struct kunit_case pcpw_test_cases[] = {
	KUNIT_CASE(pcpw_test_enabled),
	KUNIT_CASE(pcpw_test_static_reserved),
	KUNIT_CASE(pcpw_test_dynamic),
	KUNIT_CASE(pcpw_test_ops),
	{}
};

static struct kunit_suite pcpw_test_suite = {
	.name = "this_cpu_window",
	.test_cases = pcpw_test_cases,
};

kunit_test_suite(pcpw_test_suite);

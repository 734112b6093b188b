// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU TCG plugin: kernel path length.  Counts the instructions every vCPU
 * executes, kernel (virtual address with bit 63 set) and user apart, and
 * snapshots all the counts each time a marker block runs, so a guest
 * workload can bracket each measured loop with a cheap, otherwise unused
 * system call.
 *
 * Arguments (-plugin pathlen_plugin.so,out=FILE,mark=VA[:VA...]):
 *   out   file the snapshots are written to at exit
 *   mark  kernel virtual addresses (with nokaslr), at most MAX_MARK_VAS,
 *         colon-separated: function entries; every execution of the block
 *         holding one takes a snapshot tagged with the address's index.
 *         The bench gives the marker system call's handler first, then
 *         functions that begin boot phases
 *
 * It also counts, over all vCPUs, the kernel instructions of the form
 * "movz Xd, #imm, lsl #32" executed, per immediate (the first MAX_IMMS
 * seen; a line "# imms full" says when more were): the first instruction
 * of every this_cpu window operation, whose immediate is the window
 * offset's bits [47:32].
 *
 * And it counts, over all vCPUs, the kernel's TLB invalidations (TLBI,
 * any form) and "dsb ish" (the wait for broadcast maintenance).
 *
 * Output:
 *   vcpus N
 *   imms I0 I1 ..
 *   mark I vcpu V id K kernel K0 .. K(N-1) user U0 .. U(N-1) movz M0 M1 .. tlbi T dsbish D
 *   ...
 *   end kernel K0 .. user U0 .. movz M0 .. tlbi T dsbish D
 * where M are the counts of each immediate of the imms line, in order.
 * where the counts are totals since QEMU started, per vCPU, V is the vCPU
 * that ran the marked block and K the index of its address.  Differences
 * between snapshots are the path lengths; the guest knows which loop ran
 * between which two marks.
 *
 * A block is counted whole when it starts (its exec callback runs before
 * it), so a block left early by an exception counts in full; that is the
 * same on every run, so counts stay comparable.  Counts of a vCPU are
 * written by the thread that runs it only; the snapshot reads the other
 * vCPUs' counts with relaxed loads, which is exact for a vCPU that is
 * idle (WFI executes nothing) and within one block otherwise.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

PCPT_PLUGIN_VERSION;

#define MAX_VCPUS	64
#define MAX_MARKS	4096
#define MAX_MARK_VAS	32
#define MAX_IMMS	64

struct snap {
	unsigned int vcpu;
	unsigned int id;
	uint64_t kern[MAX_VCPUS];
	uint64_t user[MAX_VCPUS];
	uint64_t movz[MAX_IMMS];
	uint64_t maint[2];
};

static uint64_t kern[MAX_VCPUS], user[MAX_VCPUS];
/* Per vCPU, so a vCPU's thread is the only writer of its counts. */
static uint64_t movz[MAX_VCPUS][MAX_IMMS];
/* [0]: TLBI, [1]: DSB ISH; per vCPU, as above. */
static uint64_t maint[MAX_VCPUS][2];
static uint16_t imms[MAX_IMMS];
static unsigned int nr_imms;
static bool imms_full;
static pthread_mutex_t imms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct snap *snaps;
static unsigned int nr_marks;
static uint64_t mark_va[MAX_MARK_VAS];
static unsigned int nr_mark_vas;
static unsigned int nr_vcpus;
static const char *out_path;

/* The userdata of a block's exec callback: its instruction count. */
static void kern_exec(unsigned int vcpu, void *userdata)
{
	if (vcpu < MAX_VCPUS)
		__atomic_store_n(&kern[vcpu], kern[vcpu] + (uintptr_t)userdata,
				 __ATOMIC_RELAXED);
}

static void user_exec(unsigned int vcpu, void *userdata)
{
	if (vcpu < MAX_VCPUS)
		__atomic_store_n(&user[vcpu], user[vcpu] + (uintptr_t)userdata,
				 __ATOMIC_RELAXED);
}

/* The userdata of a movz's exec callback: its immediate's index. */
static void movz_exec(unsigned int vcpu, void *userdata)
{
	uintptr_t i = (uintptr_t)userdata;

	if (vcpu < MAX_VCPUS)
		__atomic_store_n(&movz[vcpu][i], movz[vcpu][i] + 1, __ATOMIC_RELAXED);
}

/* The userdata: 0 for a TLBI, 1 for a DSB ISH. */
static void maint_exec(unsigned int vcpu, void *userdata)
{
	uintptr_t i = (uintptr_t)userdata;

	if (vcpu < MAX_VCPUS)
		__atomic_store_n(&maint[vcpu][i], maint[vcpu][i] + 1, __ATOMIC_RELAXED);
}

/* The index of @imm in imms[], added if new; -1 when imms[] is full. */
static int imm_index(uint16_t imm)
{
	unsigned int i;
	int ret = -1;

	pthread_mutex_lock(&imms_lock);
	for (i = 0; i < nr_imms; i++)
		if (imms[i] == imm)
			ret = i;
	if (ret < 0 && nr_imms < MAX_IMMS) {
		imms[nr_imms] = imm;
		ret = nr_imms++;
	} else if (ret < 0) {
		imms_full = true;
	}
	pthread_mutex_unlock(&imms_lock);
	return ret;
}

/* The userdata: the mark address's index. */
static void mark_exec(unsigned int vcpu, void *userdata)
{
	unsigned int i = __atomic_fetch_add(&nr_marks, 1, __ATOMIC_RELAXED);
	unsigned int v;

	if (i >= MAX_MARKS)
		return;
	snaps[i].vcpu = vcpu;
	snaps[i].id = (uintptr_t)userdata;
	for (v = 0; v < nr_vcpus; v++) {
		unsigned int k;

		snaps[i].kern[v] = __atomic_load_n(&kern[v], __ATOMIC_RELAXED);
		snaps[i].user[v] = __atomic_load_n(&user[v], __ATOMIC_RELAXED);
		for (k = 0; k < MAX_IMMS; k++)
			snaps[i].movz[k] += __atomic_load_n(&movz[v][k], __ATOMIC_RELAXED);
		for (k = 0; k < 2; k++)
			snaps[i].maint[k] += __atomic_load_n(&maint[v][k], __ATOMIC_RELAXED);
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	int marked = -1;
	unsigned int k;
	uint64_t va;

	(void)id;
	if (!n)
		return;
	va = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
	if (!(va >> 63)) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, user_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t w;
		int imm;

		va = qemu_plugin_insn_vaddr(insn);
		for (k = 0; k < nr_mark_vas && marked < 0; k++)
			if (va == mark_va[k])
				marked = k;
		if (qemu_plugin_insn_size(insn) != 4)
			continue;
		memcpy(&w, qemu_plugin_insn_data(insn), 4);
		/* SYS #op1, C8, Cm, #op2 (TLBI), and DSB ISH (CRm 0b1011). */
		if ((w & 0xfff8f000) == 0xd5088000 || w == 0xd5033b9f) {
			uintptr_t dsb = w == 0xd5033b9f;

			qemu_plugin_register_vcpu_insn_exec_cb(insn, maint_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)dsb);
			continue;
		}
		/* MOVZ, 64-bit, hw = 2: "movz Xd, #imm, lsl #32". */
		if ((w & 0xffe00000) != 0xd2c00000)
			continue;
		imm = imm_index((w >> 5) & 0xffff);
		if (imm >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, movz_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)imm);
	}
	/* The marker's block counts before the snapshot: callbacks run in order. */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, kern_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	if (marked >= 0)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, mark_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)marked);
}

static void print_counts(FILE *f, const uint64_t *k, const uint64_t *u,
			 const uint64_t *m, const uint64_t *t)
{
	unsigned int v;

	fprintf(f, " kernel");
	for (v = 0; v < nr_vcpus; v++)
		fprintf(f, " %" PRIu64, k[v]);
	fprintf(f, " user");
	for (v = 0; v < nr_vcpus; v++)
		fprintf(f, " %" PRIu64, u[v]);
	fprintf(f, " movz");
	for (v = 0; v < nr_imms; v++)
		fprintf(f, " %" PRIu64, m[v]);
	fprintf(f, " tlbi %" PRIu64 " dsbish %" PRIu64 "\n", t[0], t[1]);
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	unsigned int i, v, n = nr_marks;
	uint64_t total[MAX_IMMS] = { 0 }, tm[2] = { 0 };

	(void)id;
	(void)userdata;
	if (!f) {
		qemu_plugin_outs("pathlen_plugin: cannot write the output file\n");
		return;
	}
	if (imms_full)
		fprintf(f, "# imms full: more than %d immediates seen\n", MAX_IMMS);
	fprintf(f, "vcpus %u\nimms", nr_vcpus);
	for (i = 0; i < nr_imms; i++)
		fprintf(f, " %u", imms[i]);
	fprintf(f, "\n");
	if (n > MAX_MARKS)
		fprintf(f, "# %u marks, only the first %u kept\n", n, MAX_MARKS);
	for (i = 0; i < n && i < MAX_MARKS; i++) {
		fprintf(f, "mark %u vcpu %u id %u", i, snaps[i].vcpu, snaps[i].id);
		print_counts(f, snaps[i].kern, snaps[i].user, snaps[i].movz, snaps[i].maint);
	}
	for (v = 0; v < nr_vcpus; v++)
		for (i = 0; i < MAX_IMMS; i++)
			total[i] += movz[v][i];
	for (v = 0; v < nr_vcpus; v++)
		for (i = 0; i < 2; i++)
			tm[i] += maint[v][i];
	fprintf(f, "end");
	print_counts(f, kern, user, total, tm);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_path = argv[i] + 4;
		} else if (!strncmp(argv[i], "mark=", 5)) {
			char *p = argv[i] + 5, *end;

			while (*p && nr_mark_vas < MAX_MARK_VAS) {
				mark_va[nr_mark_vas++] = strtoull(p, &end, 0);
				if (end == p || (*end && *end != ':'))
					break;
				p = *end ? end + 1 : end;
			}
			if (*p) {
				fprintf(stderr,
					"pathlen_plugin: mark='%s': at most %d addresses, colon-separated\n",
					argv[i] + 5, MAX_MARK_VAS);
				return -1;
			}
		} else {
			fprintf(stderr,
				"pathlen_plugin: unknown argument '%s' (accepted: out=, mark=)\n",
				argv[i]);
			return -1;
		}
	}
	if (!out_path || !nr_mark_vas || !info->system_emulation) {
		fprintf(stderr, "pathlen_plugin: needs system emulation, out=FILE and mark=VA\n");
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	if (nr_vcpus > MAX_VCPUS) {
		fprintf(stderr, "pathlen_plugin: %u vCPUs, at most %d counted\n",
			nr_vcpus, MAX_VCPUS);
		return -1;
	}
	snaps = calloc(MAX_MARKS, sizeof(*snaps));
	if (!snaps) {
		fprintf(stderr, "pathlen_plugin: out of memory\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}

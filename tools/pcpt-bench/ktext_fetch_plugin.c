// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU TCG plugin: count the kernel instructions each vCPU executes by the
 * NUMA node of the guest memory they are fetched from.
 *
 * QEMU 7.2 has no plugin call that returns an instruction's guest physical
 * address, but qemu_plugin_insn_haddr() returns the host address of the
 * instruction inside a RAM block.  Give every guest node its own
 * memory-backend-file whose mem-path= is a directory .../pcpt-nodeN: QEMU
 * creates its backing file there, so the file shows in /proc/self/maps
 * with the node in its path, and a host address maps to a node.
 *
 * Arguments (-plugin ktext_fetch_plugin.so,out=FILE,cpus_per_node=N[,mark=VA]):
 *   out            file the counts are written to at exit
 *   cpus_per_node  vCPU i belongs to node i / cpus_per_node
 *   mark           a kernel virtual address (ksys_sync with nokaslr): the
 *                  first execution of the block holding it starts the
 *                  count, the second stops it, so a guest brackets its
 *                  workload with two sync(2) calls; without it everything
 *                  from boot to exit counts
 *   img_lo, img_hi the kernel image's virtual range [_text, _end): kernel
 *                  instructions outside it (modules, BPF, trampolines)
 *                  are counted apart
 *
 * Output, one line per vCPU: "vcpu V node N local L remote R unknown U
 * other_local OL other_remote OR other_unknown OU", kernel instructions
 * (virtual address with bit 63 set) only, from the image (local, remote,
 * unknown) and from outside it (other_*).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

PCPT_PLUGIN_VERSION;

#define MAX_NODES	16
#define MAX_VCPUS	64
#define UNKNOWN		MAX_NODES

/* Per vCPU, only ever written by that vCPU's thread; [1]: outside the image. */
struct counts {
	uint64_t insns[2][MAX_NODES + 1];
};

static struct counts now[MAX_VCPUS], start_snap[MAX_VCPUS], stop_snap[MAX_VCPUS];
static int marks_seen;
static uint64_t mark, img_lo, img_hi = UINT64_MAX;
static unsigned int cpus_per_node = 1;
static int nr_vcpus;
static const char *out_path;

/* What one translated block adds when it runs. */
struct tb_info {
	uint32_t insns[2][MAX_NODES + 1];
};

struct range {
	uintptr_t start, end;
	int node;
};

static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static struct range ranges[64];
static int nr_ranges;

/* Host mappings of the node backing files, from /proc/self/maps. */
static void load_ranges(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");

	nr_ranges = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nr_ranges < 64) {
		unsigned long s, e;
		char *p = strstr(line, "/pcpt-node");
		int node;

		if (!p || sscanf(line, "%lx-%lx", &s, &e) != 2 ||
		    sscanf(p, "/pcpt-node%d/", &node) != 1 ||
		    node < 0 || node >= MAX_NODES)
			continue;
		ranges[nr_ranges].start = s;
		ranges[nr_ranges].end = e;
		ranges[nr_ranges].node = node;
		nr_ranges++;
	}
	fclose(f);
}

static int node_of(const void *haddr)
{
	static int reloads;
	uintptr_t a = (uintptr_t)haddr;
	int i, node = UNKNOWN;

	pthread_mutex_lock(&ranges_lock);
	for (;;) {
		for (i = 0; i < nr_ranges; i++) {
			if (a >= ranges[i].start && a < ranges[i].end) {
				node = ranges[i].node;
				break;
			}
		}
		/* RAM may have been mapped after the last look. */
		if (node != UNKNOWN || reloads >= 100)
			break;
		reloads++;
		load_ranges();
		if (!nr_ranges)
			break;
	}
	pthread_mutex_unlock(&ranges_lock);
	return node;
}

static void tb_exec(unsigned int vcpu, void *userdata)
{
	struct tb_info *info = userdata;
	int i;

	if (vcpu >= MAX_VCPUS)
		return;
	for (i = 0; i <= MAX_NODES; i++) {
		now[vcpu].insns[0][i] += info->insns[0][i];
		now[vcpu].insns[1][i] += info->insns[1][i];
	}
}

static void mark_exec(unsigned int vcpu, void *userdata)
{
	int n = __atomic_add_fetch(&marks_seen, 1, __ATOMIC_SEQ_CST);

	if (n == 1)
		memcpy(start_snap, now, sizeof(now));
	else if (n == 2)
		memcpy(stop_snap, now, sizeof(now));
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct tb_info *info;
	bool marked = false;
	int last_node = -1;
	uintptr_t last_page = 0;

	if (!n || !(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) >> 63))
		return;
	info = calloc(1, sizeof(*info));
	if (!info)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uintptr_t h = (uintptr_t)qemu_plugin_insn_haddr(insn);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		int outside = va < img_lo || va >= img_hi;

		/* A block spans at most two pages: look up each page once. */
		if (last_node < 0 || (h >> 12) != last_page) {
			last_node = h ? node_of((void *)h) : UNKNOWN;
			last_page = h >> 12;
		}
		info->insns[outside][last_node]++;
		if (mark && qemu_plugin_insn_vaddr(insn) == mark)
			marked = true;
	}
	/* Never freed: QEMU may run the block until exit. */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, info);
	if (marked)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, mark_exec,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	int v, i;

	if (!f) {
		qemu_plugin_outs("ktext_fetch_plugin: cannot write the output file\n");
		return;
	}
	fprintf(f, "# marks %d\n", marks_seen);
	for (v = 0; v < nr_vcpus && v < MAX_VCPUS; v++) {
		int node = v / cpus_per_node, k;
		uint64_t local[2] = { 0 }, remote[2] = { 0 }, unknown[2];
		uint64_t c[2][MAX_NODES + 1];

		for (k = 0; k < 2; k++) {
			for (i = 0; i <= MAX_NODES; i++) {
				if (mark && marks_seen >= 2)
					c[k][i] = stop_snap[v].insns[k][i] -
						  start_snap[v].insns[k][i];
				else
					c[k][i] = now[v].insns[k][i];
			}
			for (i = 0; i < MAX_NODES; i++) {
				if (i == node)
					local[k] += c[k][i];
				else
					remote[k] += c[k][i];
			}
			unknown[k] = c[k][UNKNOWN];
		}
		fprintf(f, "vcpu %d node %d local %" PRIu64 " remote %" PRIu64
			" unknown %" PRIu64 " other_local %" PRIu64
			" other_remote %" PRIu64 " other_unknown %" PRIu64 "\n",
			v, node, local[0], remote[0], unknown[0], local[1],
			remote[1], unknown[1]);
	}
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
		} else if (!strncmp(argv[i], "cpus_per_node=", 14)) {
			cpus_per_node = strtoul(argv[i] + 14, NULL, 0);
		} else if (!strncmp(argv[i], "mark=", 5)) {
			mark = strtoull(argv[i] + 5, NULL, 0);
		} else if (!strncmp(argv[i], "img_lo=", 7)) {
			img_lo = strtoull(argv[i] + 7, NULL, 0);
		} else if (!strncmp(argv[i], "img_hi=", 7)) {
			img_hi = strtoull(argv[i] + 7, NULL, 0);
		} else {
			fprintf(stderr, "ktext_fetch_plugin: unknown argument '%s'",
				argv[i]);
			fprintf(stderr,
				" (accepted: out=, cpus_per_node=, mark=, img_lo=, img_hi=)\n");
			return -1;
		}
	}
	if (!out_path || !cpus_per_node || !info->system_emulation) {
		fprintf(stderr,
			"ktext_fetch_plugin: needs system emulation, out=FILE, cpus_per_node>0\n");
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}

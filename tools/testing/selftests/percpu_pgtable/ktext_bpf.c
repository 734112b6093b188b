// SPDX-License-Identifier: GPL-2.0
/*
 * ktext_bpf KPROBE_ID: run a JIT-compiled BPF program on every online CPU.
 *
 * Loads a BPF kprobe program that counts its runs in a per-CPU array,
 * attaches it to the kprobe event KPROBE_ID (tracefs events/kprobes/X/id,
 * a probe on vfs_read), then, pinned to each CPU in
 * turn, calls read(2).  Prints "cpuN: RUNS" per online CPU and "ready",
 * then keeps the program loaded until its standard input reaches end of
 * file, so that the caller can look at the JIT image (its address is in
 * /proc/kallsyms).  A CPU whose own page table did not map the image
 * would fault running it; one that ran another copy would still count,
 * which is why the caller also compares what every CPU reads there.
 * Static, as the guest has no libraries to link with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* sched_setaffinity(), lib.mk defines it */
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* CPU ids run 0..N-1 for the N possible CPUs: the highest one, plus 1. */
static int possible_cpus(void)
{
	char buf[256], *last;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int n = -1;

	if (f && fgets(buf, sizeof(buf), f)) {
		last = strrchr(buf, '-');
		if (!last || strrchr(buf, ',') > last)
			last = strrchr(buf, ',');
		n = atoi(last ? last + 1 : buf) + 1;
	}
	if (f)
		fclose(f);
	return n;
}

static int bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

int main(int argc, char **argv)
{
	union bpf_attr attr;
	__u64 *values;
	int map, prog, cpu, ncpus, bad = 0;
	__u32 key = 0;
	char log[4096], c;

	if (argc != 2) {
		fprintf(stderr, "usage: %s KPROBE_ID\n", argv[0]);
		return 2;
	}
	/* A per-CPU array's value comes as one u64 per possible CPU. */
	ncpus = possible_cpus();
	values = ncpus > 0 ? calloc(ncpus, sizeof(*values)) : NULL;
	if (!values) {
		fprintf(stderr, "ktext_bpf: no possible CPU list\n");
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = 1;
	map = bpf(BPF_MAP_CREATE, &attr);
	if (map < 0) {
		perror("ktext_bpf: BPF_MAP_CREATE");
		return 1;
	}

	/* key = 0; v = lookup(map, &key); if (v) *v += 1; return 0; */
	struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = (uintptr_t)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "ktext_bpf");
	prog = bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0) {
		/* Again, for the verifier's log. */
		attr.log_buf = (uintptr_t)log;
		attr.log_size = sizeof(log);
		attr.log_level = 1;
		log[0] = '\0';
		bpf(BPF_PROG_LOAD, &attr);
		fprintf(stderr, "ktext_bpf: BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
		return 1;
	}

	/*
	 * The program runs from the probe on whichever CPU hits it: the
	 * event of one CPU attaches it to the probe (a second attach of the
	 * same program would be refused with EEXIST).
	 */
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr pa = {
			.type = PERF_TYPE_TRACEPOINT,
			.size = sizeof(pa),
			.config = strtoull(argv[1], NULL, 10),
			.sample_period = 1,
			.wakeup_events = 1,
		};
		int ev = syscall(SYS_perf_event_open, &pa, -1, cpu, -1, 0);

		if (ev < 0 && errno == ENODEV)	/* offline */
			continue;
		if (ev < 0) {
			perror("ktext_bpf: perf_event_open");
			return 1;
		}
		if (ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog) ||
		    ioctl(ev, PERF_EVENT_IOC_ENABLE, 0)) {
			perror("ktext_bpf: attach");
			return 1;
		}
		break;
	}

	for (cpu = 0; cpu < ncpus; cpu++) {
		cpu_set_t set;
		int fd;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			continue;	/* offline */
		fd = open("/proc/self/stat", O_RDONLY);
		if (fd < 0 || read(fd, log, sizeof(log)) < 0) {
			perror("ktext_bpf: read");
			return 1;
		}
		close(fd);
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)values;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		perror("ktext_bpf: BPF_MAP_LOOKUP_ELEM");
		return 1;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			continue;
		printf("cpu%d: %llu\n", cpu, (unsigned long long)values[cpu]);
		if (!values[cpu])
			bad = 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return bad;
}

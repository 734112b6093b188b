// SPDX-License-Identifier: GPL-2.0
/*
 * Guest workload for the kernel path-length bench (pathlen_plugin.c).
 *
 * Runs each operation in a loop on one CPU while the other CPUs idle, and
 * brackets the loops with the marker system call (getcpu(2), which nothing
 * else in the bench guest calls): for every operation, a mark, N
 * operations, a mark, 2N operations, a mark.  The plugin's snapshots give
 * the kernel instructions of each loop; (2N loop - N loop) / N is the cost
 * of one operation with the marks' own cost and the loop set-up cancelled
 * out.  Prints one line per operation, in the order of the marks:
 *
 *   PCPT-PATHLEN <op> <N> <cpu>
 *
 * and "PCPT-PATHLEN-SKIP <op> <why>" for one this kernel cannot run.
 *
 * Usage: pathlen CPU OTHER_CPU MODULE BENCH_MODULE [OPS...]
 *   CPU           the CPU the loops run on
 *   OTHER_CPU     the pipe round trip's other end
 *   MODULE        a .ko loaded and unloaded by the module operation
 *   BENCH_MODULE  pcpt_bench_mod.ko, loaded (loops=0) after the first
 *                 mark for the new_top_entry, top_entry_clear and
 *                 module_key operations
 *   OPS           the operations to run (default: all), each NAME or
 *                 NAME:N to run it with N in place of its default
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int cpu, other_cpu;
static const char *module, *bench_module;
static int zero_fd, ping[2], pong[2];
static pid_t partner;

static void die(const char *what)
{
	fprintf(stderr, "pathlen: %s: %s\n", what, strerror(errno));
	printf("PCPT-BENCH-ERROR pathlen: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void marker(void)
{
	unsigned int c, n;

	syscall(SYS_getcpu, &c, &n, NULL);
}

/* 0, or the errno of a failed open or write. */
static int try_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		die(path);
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die(path);
	close(fd);
}

static void op_getppid(void)
{
	syscall(SYS_getppid);
}

static void op_read1(void)
{
	char c;

	if (read(zero_fd, &c, 1) != 1)
		die("read /dev/zero");
}

static void op_pipe(void)
{
	char c = 0;

	if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
		die("pipe round trip");
}

static void op_fork(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(0);
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid");
}

static void op_fault(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* The store must happen: it is the fault. */
	__atomic_store_n(p, 1, __ATOMIC_RELAXED);
	if (munmap(p, 4096))
		die("munmap");
}

static void op_open(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0)
		die("open /dev/null");
	close(fd);
}

/* The sched_switch tracepoint's static key, on and off. */
static void op_static_key(void)
{
	write_file(TRACEFS "/events/sched/sched_switch/enable", "1");
	write_file(TRACEFS "/events/sched/sched_switch/enable", "0");
}

/* A key with one site in the bench module's text, on and off. */
static void op_module_key(void)
{
	write_file("/sys/kernel/debug/pcpt_bench_key", "1");
}

/* The function tracer on one function (set up before), on and off. */
static void op_ftrace(void)
{
	write_file(TRACEFS "/current_tracer", "function");
	write_file(TRACEFS "/current_tracer", "nop");
}

/* A vmalloc()+vfree() that creates a kernel top-level entry. */
static void op_new_top(void)
{
	write_file("/sys/kernel/debug/vmalloc_new_top", "1");
}

/*
 * A kernel top-level entry made and cleared (vmemmap_populate() and
 * vmemmap_free() of one page, as memory hot-add and hot-remove do).
 */
static void op_vmemmap_top(void)
{
	write_file("/sys/kernel/debug/vmemmap_top", "1");
}

static void op_module(void)
{
	int fd = open(module, O_RDONLY);
	char name[64];
	const char *b = strrchr(module, '/');

	if (fd < 0)
		die(module);
	if (syscall(SYS_finit_module, fd, "", 0))
		die("finit_module");
	close(fd);
	snprintf(name, sizeof(name), "%s", b ? b + 1 : module);
	name[strcspn(name, ".")] = 0;
	if (syscall(SYS_delete_module, name, O_NONBLOCK))
		die("delete_module");
}

static const struct op {
	const char *name;
	void (*fn)(void);
	int n;
} ops[] = {
	/*
	 * N per loop (each runs 4N times: warm-up, N, 2N).  Enough that work
	 * one iteration defers (RCU callbacks, kworkers, the module loader's
	 * freeing) is a small part of a loop's count; the slow operations
	 * stop where a boot under TCG would take minutes.  A new top-level
	 * entry uses a vmalloc slot of its own each time (page tables are not
	 * freed): 64 of about 250 with 4K pages and 1000 with 16K; with 64K
	 * pages, 30 in all, main() takes 4.
	 */
	{ "getppid", op_getppid, 4000 },
	{ "read1", op_read1, 4000 },
	{ "pipe_rtt", op_pipe, 2000 },
	{ "fork_exit_wait", op_fork, 1000 },
	{ "page_fault", op_fault, 4000 },
	{ "open_close", op_open, 4000 },
	{ "static_key", op_static_key, 500 },
	{ "module_key", op_module_key, 2000 },
	{ "ftrace", op_ftrace, 100 },
	{ "module", op_module, 200 },
	{ "new_top_entry", op_new_top, 16 },
	{ "top_entry_clear", op_vmemmap_top, 500 },
};

static void bad_arg(const char *arg, const char *why)
{
	size_t i;

	fprintf(stderr, "pathlen: %s: %s; operations:", arg, why);
	printf("PCPT-BENCH-ERROR pathlen: %s: %s\n", arg, why);
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		fprintf(stderr, " %s", ops[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

static void start_partner(void)
{
	char c;

	if (pipe(ping) || pipe(pong))
		die("pipe");
	partner = fork();
	if (partner < 0)
		die("fork");
	if (!partner) {
		/* EOF on ping when the parent closes its end: no other writer. */
		close(ping[1]);
		close(pong[0]);
		pin(other_cpu);
		while (read(ping[0], &c, 1) == 1)
			if (write(pong[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
}

static void run(const struct op *o)
{
	int i;

	/* A first pass warms caches, TLBs and lazily set-up state. */
	for (i = 0; i < o->n; i++)
		o->fn();
	/*
	 * Let the work it deferred (RCU callbacks, kworkers) run before the
	 * count starts; under -icount,sleep=off idle time costs nothing.
	 */
	usleep(200000);
	marker();
	for (i = 0; i < o->n; i++)
		o->fn();
	marker();
	for (i = 0; i < 2 * o->n; i++)
		o->fn();
	marker();
	printf("PCPT-PATHLEN %s %d %d\n", o->name, o->n, cpu);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t i;
	int a, fd;

	if (argc < 5) {
		fprintf(stderr, "usage: pathlen CPU OTHER_CPU MODULE BENCH_MODULE [OPS...]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	other_cpu = atoi(argv[2]);
	module = argv[3];
	bench_module = argv[4];
	/* Every OPS word names an operation; N is 1 to 1000000. */
	for (a = 5; a < argc; a++) {
		const char *colon = strchr(argv[a], ':');
		size_t len = colon ? (size_t)(colon - argv[a]) : strlen(argv[a]);
		char *end;
		long n;

		for (i = 0; i < ARRAY_SIZE(ops); i++)
			if (strlen(ops[i].name) == len && !strncmp(argv[a], ops[i].name, len))
				break;
		if (i == ARRAY_SIZE(ops))
			bad_arg(argv[a], "not an operation");
		if (colon) {
			errno = 0;
			n = strtol(colon + 1, &end, 10);
			if (errno || end == colon + 1 || *end || n < 1 || n > 1000000)
				bad_arg(argv[a], "N must be a number from 1 to 1000000");
		}
	}
	pin(cpu);
	/* The start: boot phases end here; module loads come after. */
	marker();
	fd = open(bench_module, O_RDONLY);
	if (fd < 0 || syscall(SYS_finit_module, fd, "loops=0", 0))
		die(bench_module);
	close(fd);
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0)
		die("open /dev/zero");
	start_partner();
	write_file(TRACEFS "/set_ftrace_filter", "vfs_read");
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		struct op o = ops[i];
		const char *arg = NULL;

		if (argc > 5) {
			size_t len = strlen(o.name);

			for (a = 5; a < argc && !arg; a++)
				if (!strncmp(argv[a], o.name, len) &&
				    (argv[a][len] == 0 || argv[a][len] == ':'))
					arg = argv[a];
			if (!arg)
				continue;
			if (arg[len] == ':')
				o.n = strtol(arg + len + 1, NULL, 10);
		}
		/*
		 * With 64K pages a top-level slot is 4 TiB and the vmalloc
		 * range holds about 30: 4N must stay below that, whatever
		 * was asked (the scaling part asks for 16).
		 */
		if (!strcmp(o.name, "new_top_entry") && o.n > 4 &&
		    sysconf(_SC_PAGESIZE) >= 65536) {
			fprintf(stderr, "pathlen: new_top_entry: %d iterations, 4 with 64K pages\n",
				o.n);
			o.n = 4;
		}
		/*
		 * With 64K pages the vmemmap lies in one top-level slot,
		 * always in use: nothing to make and clear there.  A first
		 * write, before the loops, tells.
		 */
		if (!strcmp(o.name, "top_entry_clear") &&
		    try_write_file("/sys/kernel/debug/vmemmap_top", "1") == ENOSPC) {
			printf("PCPT-PATHLEN-SKIP %s no empty top-level slot in the vmemmap\n",
			       o.name);
			fflush(stdout);
			continue;
		}
		run(&o);
	}
	close(ping[1]);
	waitpid(partner, NULL, 0);
	return 0;
}

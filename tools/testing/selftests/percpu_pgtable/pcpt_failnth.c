// SPDX-License-Identifier: GPL-2.0
/*
 * pcpt_failnth N module FILE
 * pcpt_failnth N write FILE DATA
 *
 * Make the Nth slab or page allocation of one system call fail
 * (/proc/self/fail-nth, Documentation/fault-injection/): finit_module(2)
 * of FILE, or write(2) of DATA to FILE.  Everything the call needs is
 * opened before the fault is armed, so the count starts at the call
 * itself.  Prints "fired F errno E": F is 1 when the Nth allocation was
 * reached (and failed), 0 when the call made fewer; E is the call's
 * errno, 0 on success.  Static, for the guest's initramfs
 * (pcpt_faults.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char left[32];
	int nth, fd, ret, err;
	ssize_t len;

	if (argc < 4 || ((strcmp(argv[2], "module") || argc != 4) &&
			 (strcmp(argv[2], "write") || argc != 5))) {
		fprintf(stderr, "usage: %s N module FILE | N write FILE DATA\n", argv[0]);
		return 2;
	}
	nth = open("/proc/self/fail-nth", O_RDWR);
	fd = open(argv[3], argv[2][0] == 'm' ? O_RDONLY : O_WRONLY);
	if (nth < 0 || fd < 0) {
		perror("pcpt_failnth: open");
		return 2;
	}
	if (write(nth, argv[1], strlen(argv[1])) < 0) {
		perror("pcpt_failnth: arming fail-nth");
		return 2;
	}
	if (argv[2][0] == 'm')
		ret = syscall(SYS_finit_module, fd, "", 0);
	else
		ret = write(fd, argv[4], strlen(argv[4])) < 0 ? -1 : 0;
	err = ret ? errno : 0;
	/* What is left of the count: 0 once the Nth allocation failed. */
	len = pread(nth, left, sizeof(left) - 1, 0);
	if (len <= 0) {
		perror("pcpt_failnth: reading fail-nth back");
		return 2;
	}
	left[len] = '\0';
	/* Disarmed before anything else allocates: the output's pipe. */
	if (write(nth, "0", 1) < 0) {
		perror("pcpt_failnth: disarming fail-nth");
		return 2;
	}
	printf("fired %d errno %d\n", atoi(left) == 0, err);
	return 0;
}

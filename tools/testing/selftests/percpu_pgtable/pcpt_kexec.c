// SPDX-License-Identifier: GPL-2.0
/*
 * pcpt_kexec IMAGE INITRD CMDLINE: load IMAGE with INITRD and CMDLINE
 * through kexec_file_load(2) and reboot into it, for the guest's /init
 * (pcpt.kexec=1).  Static, so that it needs nothing from the initramfs.
 */
#include <fcntl.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int kfd, ifd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s IMAGE INITRD CMDLINE\n", argv[0]);
		return 2;
	}
	kfd = open(argv[1], O_RDONLY);
	ifd = open(argv[2], O_RDONLY);
	if (kfd < 0 || ifd < 0) {
		perror("pcpt_kexec: open");
		return 1;
	}
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(argv[3]) + 1, argv[3], 0UL)) {
		perror("pcpt_kexec: kexec_file_load");
		return 1;
	}
	sync();
	reboot(LINUX_REBOOT_CMD_KEXEC);
	perror("pcpt_kexec: reboot");
	return 1;
}

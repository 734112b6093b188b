#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test guest (busybox).  What it does is chosen by
# pcpt.mode= on the kernel command line, written by scripts/pcpt/boot.sh:
#
#   run    print the report and power off
#   check  print the report, run the installed kselftests (TAP) and
#          power off
#   bench  run /bench/run.sh and power off
#   shell  print the report and start an interactive shell
#   resumefail
#          the host booted to restore a hibernation image (scripts/pcpt/
#          boot.sh); a fresh /init means the image was not restored
#
# The host reads the console between the PCPT-* markers.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
# The kselftest runner calls "timeout --foreground", which busybox lacks;
# the guest has no job control to lose, so the option can be dropped.
rm -f /usr/bin/timeout
printf '#!/bin/sh\n[ "$1" = --foreground ] && shift\nexec /bin/busybox timeout "$@"\n' > /usr/bin/timeout
chmod 755 /usr/bin/timeout
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
# devtmpfs has no /dev/std*; the kselftest runner writes to /dev/stdout.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

# opt NAME DEFAULT: the last pcpt.NAME= on the command line (the host
# appends to the line to override what it said before).
opt()
{
	v=$2
	for w in $(cat /proc/cmdline); do
		case "$w" in "pcpt.$1="*) v=${w#*=} ;; esac
	done
	echo "$v"
}

report()
{
	echo "PCPT-REPORT-BEGIN"
	pages=$(zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_ARM64_\([0-9]*K\)_PAGES=y/\1/p')
	vabits=$(zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_ARM64_VA_BITS=//p')
	# A 52-bit VA kernel runs with 48 bits on a CPU without FEAT_LVA.
	running=
	[ "$vabits" = 52 ] && ! dmesg | grep -q '52-bit Virtual Addressing (LVA)' &&
		running=", running with 48-bit VA (no LVA)"
	echo "kernel:  $(uname -r) ($(uname -m)), ${pages:-?} pages, ${vabits:-?}-bit VA$running"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "nodes:   $(cat /sys/devices/system/node/online) online"
	for n in /sys/devices/system/node/node[0-9]*; do
		kb=$(awk '/MemTotal/ { print $4 }' "$n/meminfo")
		echo "  ${n##*/}: cpus $(cat "$n/cpulist"), memory $((kb / 1024)) MiB"
	done
	echo "cpus:    $(cat /sys/devices/system/cpu/online) online"
	# For scripts/pcpt/qmp-regs.py: the KASLR offset of a hung guest.
	echo "text:    _text at 0x$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)"
	# Feature status lines: every client prints one pr_info line with
	# this prefix at boot (see Documentation/mm/percpu-pgtable.rst).  Not
	# the W^X check's lines: the KUnit cases' expected failures among
	# them count only between their markers, which this copy leaves out.
	dmesg | grep -E 'percpu_pgtable:|kernel_replication:|this_cpu_window:' |
		grep -v -e PCPT-EXPECT -e 'Checked W+X mappings' | sed 's/^\[[^]]*\] /  /'
	tr=/sys/kernel/debug/kernel_replication
	[ -d $tr ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -r $tr/status ]; then
		echo "text replica (debugfs kernel_replication/status, verify):"
		sed 's/^/  /' $tr/status
		grep -E '^(compared|mismatches):' $tr/verify | sed 's/^/  verify /'
	fi
	echo "PCPT-REPORT-END"
}

mode=$(opt mode run)
# pcpt.kexec=1 (make ... KEXEC=1): boot this kernel again through
# kexec_file_load(2), with the inner initramfs the host packed beside it,
# before anything else; the new kernel runs the requested mode.
if [ "$(opt kexec 0)" = 1 ]; then
	cmd=$(sed -e 's/pcpt\.kexec=1/pcpt.kexec=0 pcpt.kexeced=1/' -e 's/ *kunit\.enable=0//' /proc/cmdline)
	echo "PCPT-KEXEC: $cmd"
	/kselftest/percpu_pgtable/pcpt_kexec /kexec/Image /kexec/initramfs.cpio "$cmd"
	echo "PCPT-ERROR: kexec into the same kernel failed"
	poweroff -f
fi
case "$mode" in
run)
	report
	;;
check)
	report
	cd /kselftest || exit 1
	[ "$(opt broken 0)" = 1 ] &&
		echo "percpu_pgtable:harness_broken.sh" >> kselftest-list.txt
	# pcpt.only=WORD: run only the selftests whose name contains WORD
	# (for development; the harness_* tests always run).
	only=$(opt only "")
	if [ -n "$only" ]; then
		grep -E "harness_|$only" kselftest-list.txt > kselftest-list.only
		mv kselftest-list.only kselftest-list.txt
	fi
	# pcpt.extra=NAME.sh: also run an installed script that is not a
	# test (an investigation, see its header).
	extra=$(opt extra "")
	[ -n "$extra" ] && echo "percpu_pgtable:$extra" >> kselftest-list.txt
	# pcpt.ksft_timeout=S: each test's time limit instead of the
	# settings file's (make soak).
	to=$(opt ksft_timeout "")
	echo "PCPT-KSELFTEST-BEGIN"
	./run_kselftest.sh ${to:+-o "$to"}
	echo "PCPT-KSELFTEST-END"
	cd /
	;;
bench)
	echo "PCPT-BENCH-BEGIN"
	sh /bench/run.sh
	echo "PCPT-BENCH-END"
	;;
shell)
	report
	echo "pcpt: interactive shell; 'exit' powers the guest off"
	setsid cttyhack sh -l
	;;
resumefail)
	# No PCPT-DONE: the run counts as failed.
	echo "PCPT-ERROR: booted to restore the hibernation image, but it was not restored"
	dmesg | grep -iE 'PM: |hibernat|swsusp|resume' | tail -20
	poweroff -f
	;;
*)
	echo "PCPT-ERROR: unknown pcpt.mode=$mode (accepted: run, check, bench, shell)"
	;;
esac
# Let the console drain, then power off through PSCI.
sync
echo "PCPT-DONE"
poweroff -f

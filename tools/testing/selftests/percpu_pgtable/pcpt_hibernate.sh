#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Hibernation round trip.  The CPU that hibernates comes back through
# _cpu_resume with the MMU enabled on the table the image header names,
# and runs C code (MTE tags, crash kernel protection, lockdep and irq
# tracing with this_cpu ops) before anything else can switch it: it must
# be its own root, never the master, which has no this_cpu window.
#
# The guest writes the image to its swap disk (pcpt.hibernate=1) and
# powers off; the host starts QEMU again with resume=, and this script
# goes on in the restored kernel: the write to /sys/power/state returns.
# Then every CPU must translate through its own table, the tables must
# match the master, this_cpu ops must reach each CPU's own copy and
# every copy of the kernel text must still equal the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

[ "$(cmdline_opt hibernate 0)" = 1 ] ||
	skip "no swap disk for a hibernation image (pcpt.hibernate=1 and a swap disk at /dev/vda)"
debugfs_mount
grep -qw disk /sys/power/state ||
	{ fail "'disk' not in /sys/power/state ($(cat /sys/power/state)):" \
		"CONFIG_HIBERNATION?"; finish; }
[ -b /dev/vda ] || { fail "no /dev/vda: the swap disk is missing"; finish; }
mkswap /dev/vda >/dev/null && swapon /dev/vda || { fail "cannot use /dev/vda as swap"; finish; }

# virtio-mem refuses to hibernate; pcpt_memhotplug.sh has run already.
for d in /sys/bus/virtio/drivers/virtio_mem/virtio*; do
	[ -e "$d" ] && echo "${d##*/}" > /sys/bus/virtio/drivers/virtio_mem/unbind
done
cpu0=$(grep '^cpu0: ' "$PCPT_DEBUGFS/status" 2>/dev/null)
echo "# before: $cpu0"
# Write the image and power off (PSCI SYSTEM_OFF); the host restores it.
echo shutdown > /sys/power/disk
# Straight to the console: the runner buffers what tests print.
echo "PCPT-HIBERNATE: powering off" > /dev/console
if echo disk > /sys/power/state; then
	pass "hibernated and restored"
else
	fail "hibernation failed: $(dmesg | grep -iE 'PM: |hibernat' | tail -3 | tr '\n' ';')"
	swapoff /dev/vda
	finish
fi
swapoff /dev/vda
echo "# restored: $(dmesg | grep -E 'PM: (hibernation|Image)|Hibernated on CPU' |
	tail -3 | tr '\n' ';')"
echo "# after: $(grep '^cpu0: ' "$PCPT_DEBUGFS/status" 2>/dev/null)"

pcpt_active && pcpt_check "resume"
# The same checks as on a fresh boot, in the restored kernel.
for t in pcpt_status.sh pcpw_counter.sh ktext_verify.sh; do
	out=$(PCPT_pcpw_seconds=2 sh "$DIR/$t" 2>&1)
	rc=$?
	echo "$out" | sed "s/^/# $t: /"
	case $rc in
	0) pass "$t after resume" ;;
	"$ksft_skip")
		# pcpt_status.sh skips only without its debugfs file (the
		# others never skip: pcpw_counter.sh has no skip, ktext_verify.sh
		# fails without its file); any other skip after resume hides a
		# check.
		if [ "$t" = pcpt_status.sh ] && [ ! -e "$PCPT_DEBUGFS/status" ]; then
			echo "# $t skipped after resume: no $PCPT_DEBUGFS/status"
		else
			fail "$t skipped after resume"
		fi ;;
	*) fail "$t after resume (status $rc)" ;;
	esac
done
finish

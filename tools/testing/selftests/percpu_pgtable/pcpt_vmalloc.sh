#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vmalloc stress (lib/test_vmalloc.c) with a thread per CPU, then every
# table must still match the master and every CPU run on its own.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
ko=$(find /lib/modules -name 'test_vmalloc.ko*' 2>/dev/null | head -1)
[ -n "$ko" ] || skip "test_vmalloc.ko not installed (CONFIG_TEST_VMALLOC=m)"
nr=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)" | wc -w)
loops=$(cmdline_opt vmalloc_loops 100)

# fix_size, random_size and fix_align (mask 25): the others are
# slow under TCG, and align_shift_alloc_test (64) is meant to fail.
# test_vmalloc runs at load time and then refuses to stay (-EAGAIN).
# Only what the module prints counts; the log is not cleared, other
# tests look for boot lines in it.
before=$(dmesg | wc -l)
insmod "$ko" nr_threads="$nr" test_loop_count="$loops" run_test_mask=25 2>/dev/null
log=$(dmesg | tail -n +$((before + 1)))
summaries=$(echo "$log" | grep -c 'Summary: .* passed: ')
[ "$summaries" -gt 0 ] && pass "test_vmalloc: $summaries test/thread summaries" ||
	fail "test_vmalloc printed no summary"
bad=$(echo "$log" | grep 'Summary: ' | grep -v 'failed: 0 ')
[ -z "$bad" ] && pass "test_vmalloc: no failed test" ||
	{ fail "test_vmalloc reported failures"; echo "$bad" | head -10 | sed 's/^/#   /'; }
if pcpt_active; then
	pcpt_check "test_vmalloc"
	pcpt_loaded_ok "test_vmalloc"
fi
finish

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kexec into the same kernel: with pcpt.kexec=1 the guest's /init first
# boots this kernel again through kexec_file_load(2) (the old kernel
# turns the MMU off in the idmap and jumps to the new one) and the tests
# run in the new kernel, which must have built its own per-CPU roots
# and run every CPU on its own.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
[ "$(cmdline_opt kexeced 0)" = 1 ] ||
	skip "not booted by kexec (pcpt.kexeced=1 on the kexec command line)"
pass "booted by kexec_file_load"
if grep -qw 'percpu_pgtable=off' /proc/cmdline; then
	finish
fi
pcpt_active || { fail "per-CPU kernel page tables not active after kexec"; finish; }
pcpt_loaded_ok "kexec"
pcpt_check "kexec"
finish

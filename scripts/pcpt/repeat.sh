#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the same kernel COUNT times in a row ('make check-one'), each time
# running only the selftests whose name contains WORD (pcpt.only=), and
# stop at the first boot that fails.  Prints one line per boot and "N of
# COUNT consecutive boots passed".  'make repeat' runs it.
#
# Usage: repeat.sh MAKE COUNT WORD SELFTEST_MAKEFILE [CMDLINE]
set -uo pipefail

[ $# -ge 4 ] || { echo "usage: repeat.sh MAKE COUNT WORD SELFTEST_MAKEFILE [CMDLINE]" >&2; exit 2; }
make=$1 count=$2 word=$3 tests=$4 cmdline=${5:-}
case "$count" in
'' | *[!0-9]* | 0) echo "pcpt: error: REPEAT=$count is not accepted; use a count from 1" >&2; exit 2 ;;
esac
# A word that matches no test would run the harness tests alone, and pass.
names=$(sed -n 's/^[[:space:]]*\([a-z_]*\.sh\).*/\1/p' "$tests" | grep -v '^harness_\|^lib\.sh$')
if [ -z "$word" ] || ! echo "$names" | grep -q -- "$word"; then
	echo "pcpt: error: TEST=$word matches no selftest; accepted: a word of one of:" $names >&2
	exit 2
fi
for ((i = 1; i <= count; i++)); do
	tag=repeat-$word-$i
	if ! $make -s --no-print-directory check-one CMDLINE="pcpt.only=$word $cmdline" \
		LOGTAG="$tag" > "/tmp/pcpt-$tag.out" 2>&1; then
		tail -20 "/tmp/pcpt-$tag.out"
		echo "pcpt: boot $i failed; $((i - 1)) of $count consecutive boots passed ($word)"
		exit 1
	fi
	echo "pcpt: boot $i: $(tail -1 "/tmp/pcpt-$tag.out")"
done
echo "pcpt: $count of $count consecutive boots passed ($word)"

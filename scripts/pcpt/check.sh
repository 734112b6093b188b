#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run 'make check-one' for each CONFIG:PAGES:CMDLINE[:NODES] entry (CMDLINE
# may be empty; a comma in it stands for a space; NODES, when given,
# overrides the number of NUMA nodes for that boot), then print every
# failure and the final "N passed, N failed" line.  Exits non-zero on any
# failure.
#
# Usage: check.sh MAKE LOGDIR "ENTRY..."
set -uo pipefail

make=$1 logdir=$2 entries=$3
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
jsons=()
for e in $entries; do
	IFS=: read -r cfg pages cmd nodes <<<"$e"
	cmd=${cmd//,/ }
	[ -n "$cmd" ] || cmd=${CMDLINE:-}
	tag="$cfg-$pages${cmd:+-$(echo "$cmd" | tr -c 'A-Za-z0-9_.\n-' '_')}${nodes:+-${nodes}node}"
	t0=$(date +%s)
	$make -s --no-print-directory check-one CONFIG="$cfg" PAGES="$pages" \
		CMDLINE="$cmd" LOGTAG="$tag" ${nodes:+NODES="$nodes"}
	echo "pcpt: $tag took $(($(date +%s) - t0)) s"
	jsons+=("$logdir/check-$tag.log.json")
done
echo "pcpt: whole check took $(($(date +%s) - start)) s"
python3 "$here/results.py" total "${jsons[@]}"

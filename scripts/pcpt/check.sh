#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run 'make check-one' for each CONFIG:PAGES:CMDLINE[:FIELD...] entry, then
# print every failure and the final "N passed, N failed" line.  Exits
# non-zero on any failure.
#
# CMDLINE may be empty; a comma in it stands for a space, a '~' for a
# comma.  The CMDLINE of the environment (make check CMDLINE=...) is
# appended to every entry's.  Each further FIELD is NAME=VALUE for one boot option of that
# run (NODES, NODE_MEM, CPU, HIBERNATE, KEXEC, MEMLESS, TCG_THREAD; see the
# Makefile), a bare number, which is NODES, or TAG=NAME, the log's name
# when CMDLINE is too long for one.
#
# Usage: check.sh MAKE LOGDIR "ENTRY..."
set -uo pipefail

make=$1 logdir=$2 entries=$3
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
jsons=()
for e in $entries; do
	IFS=: read -r cfg pages cmd rest <<<"$e"
	cmd=${cmd//,/ }
	cmd=${cmd//\~/,}
	# make check CMDLINE=...: appended to every boot's own options
	# (after them: of a pcpt.NAME= given twice, the tests take the last).
	cmd="$cmd${CMDLINE:+${cmd:+ }$CMDLINE}"
	opts=() suffix= name=
	IFS=: read -ra fields <<<"$rest"
	for f in "${fields[@]}"; do
		case "$f" in
		'') ;;
		TAG=*)
			name=${f#*=}
			case "$name" in
			''|*[!A-Za-z0-9_.-]*)
				echo "pcpt: error: '$f' in check entry '$e': a TAG is letters, digits, '_', '.' or '-'" >&2
				exit 2 ;;
			esac ;;
		[0-9]*) opts+=("NODES=$f"); suffix+="-${f}node" ;;
		NODES=*|NODE_MEM=*|CPU=*|HIBERNATE=*|KEXEC=*|MEMLESS=*|TCG_THREAD=*)
			opts+=("$f")
			case "$f" in
			NODES=*) suffix+="-${f#*=}node" ;;
			NODE_MEM=*) suffix+="-${f#*=}M" ;;
			MEMLESS=*) suffix+="-memless${f#*=}" ;;
			TCG_THREAD=*) suffix+="-tcg${f#*=}" ;;
			CPU=*) suffix+="-${f#*=}" ;;
			KEXEC=1) suffix+="-kexec" ;;
			esac ;;
		*) echo "pcpt: error: '$f' in check entry '$e' is not accepted (NODES=, NODE_MEM=, CPU=, HIBERNATE=, KEXEC=, MEMLESS=, TCG_THREAD=, TAG= or a node count)" >&2
		   exit 2 ;;
		esac
	done
	tag="$cfg-$pages${cmd:+-$(echo "$cmd" | tr -c 'A-Za-z0-9_.\n-' '_')}$suffix"
	[ -n "$name" ] && tag="$cfg-$pages-$name$suffix"
	t0=$(date +%s)
	$make -s --no-print-directory check-one CONFIG="$cfg" PAGES="$pages" \
		CMDLINE="$cmd" LOGTAG="$tag" "${opts[@]}"
	echo "pcpt: $tag took $(($(date +%s) - t0)) s"
	# The slowest tests of that boot (host seconds, boot.sh's .times).
	sort -rn "$logdir/check-$tag.log.times" 2>/dev/null | head -3 |
		sed 's/^/pcpt:   slow: /'
	jsons+=("$logdir/check-$tag.log.json")
done
echo "pcpt: whole check took $(($(date +%s) - start)) s"
# make check's git-only checks of the series (series.sh verify).
[ -z "${SERIES_JSON:-}" ] || jsons=("$SERIES_JSON" "${jsons[@]}")
python3 "$here/results.py" total "${jsons[@]}"

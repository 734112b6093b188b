#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build every prefix of the series (make series-check, run by make matrix).
#
# Usage: series-check.sh REPO TREE OUTDIR JSON
#
# For each patch of out/linux's pcpt-series (patches/ as git am made them;
# make sync lays them and series-verify proves them equal), in order:
# check it out in a worktree of its own (OUTDIR/linux) and build it twice
# with W=1, Image and modules:
#   on   the default fragments (pcpt.config, pcpt-$PAGES.config): every
#        project option the prefix lets be set is on;
#   off  the same with pcpt-off.config: every project option off.
# A prefix passes when both builds succeed and W=1 reports no warning in
# a file the series has touched by then.  Where the two configurations
# come out the same (before the architecture lets the options be set),
# off is configured and compared, not built again.  Every prefix is built (a break
# does not hide a later one); the summary names the first that breaks.
# One result per prefix and kind goes to JSON, for results.py total.
#
# Incremental: one build directory per kind, reconfigured at every prefix
# (Kconfig changes with the series), so a patch rebuilds what it touches.
# OUTDIR/linux and OUTDIR/build/KIND sit at the same relative place as
# out/linux and out/build/LABEL, so ccache (CCACHE_BASEDIR) shares hits
# with the ordinary builds.
#
# Environment: PAGES (4k, 16k, 64k, 64k52; default 4k), SERIES_FROM and
# SERIES_TO (first and last patch number to build, default the whole
# series), SERIES_KINDS ("on off" by default), SERIES_REF (the top of
# the series in TREE, default pcpt-series: another history to check, such
# as one broken on purpose to see this fail).
set -uo pipefail

[ $# -eq 4 ] || { echo "usage: series-check.sh REPO TREE OUTDIR JSON" >&2; exit 2; }
repo=$(cd "$1" && pwd) tree=$(cd "$2" && pwd) out=$3 json=$4
here=$repo/scripts/pcpt
. "$here/lib.sh"
unset GIT_INDEX_FILE

pages=${PAGES:-4k}
cfgdir=$repo/arch/arm64/configs
[ -f "$cfgdir/pcpt-$pages.config" ] ||
	die "PAGES=$pages: accepted: $(cd "$cfgdir" && ls pcpt-*k*.config | sed 's/pcpt-//; s/\.config//' | tr '\n' ' ')"
kinds=${SERIES_KINDS:-on off}
for k in $kinds; do
	case "$k" in on|off) ;; *) die "SERIES_KINDS has '$k'; accepted: on off" ;; esac
done
ref=${SERIES_REF:-pcpt-series}
git -C "$tree" rev-parse -q --verify "$ref^{commit}" >/dev/null ||
	die "SERIES_REF=$ref: not a commit in $tree (accepted: a ref or commit above pcpt-base)"
mapfile -t commits < <(git -C "$tree" rev-list --reverse "pcpt-base..$ref")
n=${#commits[@]}
[ "$n" -gt 0 ] || die "no series in $tree (pcpt-base..$ref): run make sync"
from=${SERIES_FROM:-1} to=${SERIES_TO:-$n}
for v in "SERIES_FROM=$from" "SERIES_TO=$to"; do
	case "${v#*=}" in
	''|*[!0-9]*|0*) die "$v: a patch number from 1 to $n expected" ;;
	esac
	[ "${v#*=}" -le "$n" ] || die "$v: a patch number from 1 to $n expected"
done
[ "$from" -le "$to" ] || die "SERIES_FROM=$from is after SERIES_TO=$to"

# The project's own options: a prefix may not define them yet, or not
# let them be set (the architecture selects ARCH_HAS_* later).
lax="CONFIG_PERCPU_PGTABLE CONFIG_THIS_CPU_WINDOW CONFIG_KERNEL_REPLICATION"
lax+=" CONFIG_PERCPU_PGTABLE_KUNIT_TEST CONFIG_THIS_CPU_WINDOW_KUNIT_TEST"
lax+=" CONFIG_KERNEL_REPLICATION_KUNIT_TEST"
frags_on=("$cfgdir/pcpt.config" "$cfgdir/pcpt-$pages.config")
frags_off=("${frags_on[@]}" "$cfgdir/pcpt-off.config")

wt=$out/linux
mkdir -p "$out/logs"
if [ ! -e "$wt/.git" ]; then
	rm -rf "$wt"
	git -C "$tree" worktree add -q --detach "$wt" pcpt-base ||
		die "could not add a worktree at $wt"
fi
git -C "$wt" reset -q --hard && git -C "$wt" clean -qfdx ||
	die "could not clean $wt"

results=()
result() {	# NAME pass|fail WHY
	results+=("$(python3 -c 'import json,sys; print(json.dumps({"name": "series-check: " + sys.argv[1], "status": sys.argv[2], "why": sys.argv[3]}))' "$1" "$2" "$3")")
}
first_bad= prev_on= prev_rc=1
start=$(date +%s)
for ((i = from; i <= to; i++)); do
	c=${commits[$((i - 1))]}
	nn=$(printf '%04d' "$i")
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c" || die "could not check out patch $nn in $wt"
	# Files the series has touched so far: W=1 warnings there are ours.
	mapfile -t touched < <(git -C "$wt" diff --name-only pcpt-base "$c")
	for k in $kinds; do
		bld=$out/build/$k
		log=$out/logs/$nn-$k.log
		: > "$log"
		frags=("${frags_on[@]}")
		[ "$k" = off ] && frags=("${frags_off[@]}")
		t0=$(date +%s)
		same=0
		if [ "$k" = off ] && [ "$prev_on" = "$i" ] &&
		   PCPT_CONFIG_ONLY=1 PCPT_RECONFIGURE=1 PCPT_LAX_SYMS="$lax" \
			bash "$here/build-kernel.sh" "$wt" "$bld" "${frags[@]}" > "$log" 2>&1 &&
		   cmp -s "$bld/.config" "$out/build/on/.config"; then
			same=1
		fi
		if [ $same -eq 1 ]; then
			rc=$prev_rc
			cp "$out/build/on/build.log" "$bld/build.log"
		else
			PCPT_RECONFIGURE=1 PCPT_LAX_SYMS="$lax" W=1 \
				bash "$here/build-kernel.sh" "$wt" "$bld" "${frags[@]}" >> "$log" 2>&1
			rc=$?
		fi
		if [ "$k" = on ]; then
			prev_on=$i prev_rc=$rc
		fi
		on=$(grep -oE '^CONFIG_(PERCPU_PGTABLE|THIS_CPU_WINDOW|KERNEL_REPLICATION)=y' "$bld/.config" 2>/dev/null |
		     sed 's/^CONFIG_//; s/=y$//' | tr '\n' ' ')
		why=
		if [ $rc -ne 0 ]; then
			why="build failed: $(grep -E 'error|Error' "$bld/build.log" "$log" 2>/dev/null |
				head -3 | sed 's/^[^:]*://' | tr '\n' ' ')(log: $log)"
		else
			ours=()
			while IFS= read -r w; do
				f=${w%%:*}
				f=${f#"$wt"/}
				while [[ $f == ../* ]]; do f=${f#../}; done
				f=${f#linux/}
				printf '%s\n' "${touched[@]}" | grep -qxF "$f" && ours+=("$w")
			done < <(grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: warning:' "$bld/build.log" | sort -u)
			[ ${#ours[@]} -eq 0 ] || why="W=1 warnings in files the series touches: ${ours[*]:0:3}"
		fi
		if [ -z "$why" ]; then
			result "$nn $k builds ($subj)" pass ""
			info "series-check: $nn $k: ok in $(($(date +%s) - t0)) s${on:+ (on: $on)}$([ $same -eq 1 ] && echo ': the configuration on has, not built again')"
		else
			result "$nn $k builds ($subj)" fail "$why"
			warn "series-check: $nn $k: FAILED: $why"
			[ -n "$first_bad" ] || first_bad="$nn $k ($subj)"
		fi
	done
done
info "series-check: patches $from-$to built in $(($(date +%s) - start)) s"
[ -z "$first_bad" ] || warn "series-check: the first patch that breaks: $first_bad"

mkdir -p "$(dirname "$json")"
{
	echo '{"label": "series-check", "log": "'"$out/logs"'", "results": ['
	(IFS=,; echo "${results[*]}")
	echo ']}'
} > "$json"
[ -z "$first_bad" ]

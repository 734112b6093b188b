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
# A prefix passes when both builds succeed and W=1 reports no warning
# that is the series' (series-check-warn.py: in a file the series has
# touched by then, any modpost, linker or Kconfig warning), and kernel-doc
# finds no more in a touched header than in the base's.  Where the two configurations
# come out the same (before the architecture lets the options be set),
# off is configured and compared, not built again.  Every prefix is built (a break
# does not hide a later one); the summary names the first that breaks.
# One result per prefix and kind goes to JSON, for results.py total.
#
# Incremental: one build directory per kind, reconfigured at every prefix
# (Kconfig changes with the series), so a patch rebuilds what it touches;
# ccache (CCACHE_BASEDIR) shares hits between the two kinds and between
# runs, not with the ordinary builds (W=1 changes the flags).
#
# The project's options may come out unset at a prefix that does not
# define them or does not let them be set yet; once one has been on, it
# must stay on, and at the last patch every one must be.
#
# Environment: PAGES (4k, 16k, 64k, 64k52; default 4k), SERIES_FROM and
# SERIES_TO (first and last patch number to build, default the whole
# series), SERIES_KINDS ("on off" by default), SERIES_REF (the top of
# the series in TREE, default pcpt-series: another history to check, such
# as one broken on purpose to see this fail).
set -uo pipefail

[ $# -eq 4 ] || { echo "usage: series-check.sh REPO TREE OUTDIR JSON" >&2; exit 2; }
repo=$(cd "$1" && pwd) tree=$(cd "$2" && pwd)
out=$(realpath -m "$3") json=$(realpath -m "$4")
here=$repo/scripts/pcpt
. "$here/lib.sh"
unset GIT_INDEX_FILE

pages=${PAGES:-4k}
cfgdir=$repo/arch/arm64/configs
case "$pages" in
4k|16k|64k|64k52) ;;
*) die "PAGES=$pages: accepted: 4k 16k 64k 64k52" ;;
esac
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
# A worktree whose repository was laid out again (make tree) is dead;
# one without .git would let git find the repository above out/.
if [ "$(git -C "$wt" rev-parse --show-toplevel 2>/dev/null)" != "$wt" ]; then
	rm -rf "$wt"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$wt" pcpt-base ||
		die "could not add a worktree at $wt"
fi
git -C "$wt" reset -q --hard && git -C "$wt" clean -qfdx ||
	die "could not clean $wt"

results=()
result() {	# NAME pass|fail WHY
	results+=("$(python3 -c 'import json,sys; print(json.dumps({"name": "series-check: " + sys.argv[1], "status": sys.argv[2], "why": sys.argv[3]}))' "$1" "$2" "$3")")
}
first_bad= prev_on= prev_rc=1 must=
start=$(date +%s)
for ((i = from; i <= to; i++)); do
	c=${commits[$((i - 1))]}
	nn=$(printf '%04d' "$i")
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c" || die "could not check out patch $nn in $wt"
	# Files the series has touched so far: W=1 warnings there are ours.
	git -C "$wt" diff --name-only pcpt-base "$c" > "$out/touched"
	# kernel-doc of touched headers (W=1 runs it on .c files only):
	# more warnings than the base's header has are the series'.
	kdoc=()
	while IFS= read -r f; do
		case "$f" in *.h) ;; *) continue ;; esac
		[ -f "$wt/$f" ] || continue
		# Messages without file and line: one fixed and one added
		# in the same header is one added.
		perl "$wt/scripts/kernel-doc" -none -Wall "$wt/$f" 2>&1 |
			grep -E 'warning|error' | sed -E 's/^[^ ]*:[0-9]+: //' | sort > "$out/kdoc.now"
		: > "$out/kdoc.was"
		if git -C "$wt" cat-file -e "pcpt-base:$f" 2>/dev/null; then
			git -C "$wt" show "pcpt-base:$f" > "$out/base.h"
			perl "$wt/scripts/kernel-doc" -none -Wall "$out/base.h" 2>&1 |
				grep -E 'warning|error' | sed -E 's/^[^ ]*:[0-9]+: //' | sort > "$out/kdoc.was"
		fi
		while IFS= read -r m; do
			kdoc+=("$f: kernel-doc: $m")
		done < <(comm -23 "$out/kdoc.now" "$out/kdoc.was")
	done < "$out/touched"
	# Options that were on once must be on from then; none may be off
	# at the last patch.
	lax_now=
	if [ "$i" -lt "$n" ]; then
		for s in $lax; do
			case " $must " in *" $s "*) ;; *) lax_now+=" $s" ;; esac
		done
	fi
	for k in $kinds; do
		bld=$out/build/$k
		log=$out/logs/$nn-$k.log
		: > "$log"
		frags=("${frags_on[@]}")
		[ "$k" = off ] && frags=("${frags_off[@]}")
		t0=$(date +%s)
		same=0
		if [ "$k" = off ] && [ "$prev_on" = "$i" ] &&
		   PCPT_CONFIG_ONLY=1 PCPT_RECONFIGURE=1 PCPT_LAX_SYMS="$lax_now" \
			bash "$here/build-kernel.sh" "$wt" "$bld" "${frags[@]}" > "$log" 2>&1 &&
		   cmp -s "$bld/.config" "$out/build/on/.config"; then
			same=1
		fi
		if [ $same -eq 1 ]; then
			rc=$prev_rc
			cp "$out/build/on/build.log" "$bld/build.log"
		else
			PCPT_RECONFIGURE=1 PCPT_LAX_SYMS="$lax_now" W=1 \
				bash "$here/build-kernel.sh" "$wt" "$bld" "${frags[@]}" >> "$log" 2>&1
			rc=$?
		fi
		if [ "$k" = on ]; then
			prev_on=$i prev_rc=$rc
			for s in $(grep -oE '^CONFIG_[A-Z0-9_]+=y' "$bld/.config" 2>/dev/null | sed 's/=y$//'); do
				case " $lax " in *" $s "*) must+=" $s" ;; esac
			done
		fi
		on=$(grep -oE '^CONFIG_(PERCPU_PGTABLE|THIS_CPU_WINDOW|KERNEL_REPLICATION)=y' "$bld/.config" 2>/dev/null |
		     sed 's/^CONFIG_//; s/=y$//' | tr '\n' ' ')
		why=
		if [ $rc -ne 0 ]; then
			# The compiler's or linker's first error, else what
			# build-kernel.sh said (a configuration that failed).
			err=$(grep -hE ': (fatal )?error: |: Error: |undefined reference to|relocation truncated|^ERROR: |\*\*\* No rule to make target' \
				"$bld/build.log" 2>/dev/null | head -3)
			[ -n "$err" ] || err=$(grep -E 'error|warning' "$log" | head -3)
			why="build failed: $(echo "$err" | tr '\n' ' ')(log: $log, $bld/build.log)"
		else
			mapfile -t ours < <(python3 "$here/series-check-warn.py" "$wt" "$out/touched" \
				"$bld/build.log" "$bld/config.log")
			ours+=("${kdoc[@]}")
			[ ${#ours[@]} -eq 0 ] ||
				why="${#ours[@]} warning(s) of the series: ${ours[*]:0:3} (log: $bld/build.log)"
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
	python3 -c 'import json,sys; print("{\"label\": \"series-check\", \"log\": %s, \"results\": [" % json.dumps(sys.argv[1]))' "$out/logs"
	(IFS=,; echo "${results[*]}")
	echo ']}'
} > "$json"
[ -z "$first_bad" ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series as reviewers would get it, from patches/ alone (git only, no
# build, no checkout of the tree):
#
#   series.sh write  REPO TREE OUTDIR   git format-patch --cover-letter of
#                                       patches/ into OUTDIR (make series)
#   series.sh verify REPO TREE JSON     the checks of make check, as results
#                                       in JSON for results.py total
#
# The series carries every file the project adds to the kernel, in the
# patch that introduces it; the repository also keeps each one at its
# kernel path (make export writes both from out/linux's history).  verify
# proves that the two agree, so that what make check builds (the base, the
# patches, the repository's files) is exactly the base plus the series:
#   - patches/ apply to the base in order with 'git apply' (no fuzz, no
#     offsets beyond git's, no rejects), as 'git am' would;
#   - every kernel file the repository owns (not the harness: configs,
#     scripts/pcpt, tools/pcpt-bench) is byte for byte, and mode, what
#     the series makes, and every file the series adds is one it owns;
#   - out/linux, which the boots build (local edits included), is the
#     series plus the harness;
#   - no patch touches the harness, patches/series lists every patch;
#   - every patch has a subject, a body and a Signed-off-by;
#   - the footprint in files the base has: at most 800 changed lines, 300
#     of them in mm/ and include/linux/;
#   - checkpatch.pl --strict reports no error or warning (what remains is
#     in scripts/pcpt/checkpatch-allow, each with its reason, and every
#     allowance still matches something);
#   - the output of 'write' applies to the base, gives the same tree and
#     carries the authors and messages git am made of patches/.
set -uo pipefail

[ $# -eq 4 ] || { echo "usage: series.sh write|verify REPO TREE OUTDIR|JSON" >&2; exit 2; }
cmd=$1 repo=$(cd "$2" && pwd) tree=$3 out=$4
. "$repo/scripts/pcpt/lib.sh"

[ -d "$tree/.git" ] || die "$tree is not laid out: run 'make tree' first"
git_t() { git -C "$tree" -c user.name=pcpt -c user.email=pcpt@localhost "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_INDEX_FILE=$tmp/index

# The harness: in the repository and the work tree, never in the series.
is_harness() {
	case "$1" in
	scripts/pcpt/*|tools/pcpt-bench/*|arch/arm64/configs/pcpt*.config) return 0 ;;
	esac
	return 1
}

patches=()
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	patches+=("$repo/patches/$p")
done < "$repo/patches/series"

# apply_all PATCH...: the tree (object id) the patches make from the base,
# each applied to the index alone, as git am does; a commit per patch in
# $tmp/commits (for format-patch).  Prints the failing patch on error.
apply_all() {
	local p prev tree_id msg c
	git_t read-tree pcpt-base || return 1
	tree_id=$(git_t rev-parse pcpt-base^{tree})
	prev=$(git_t rev-parse pcpt-base^{commit})
	: > "$tmp/commits"
	: > "$tmp/author"
	for p in "$@"; do
		if ! git_t apply --cached --whitespace=nowarn "$p" 2> "$tmp/apply.err"; then
			echo "$(basename "$p"): $(head -3 "$tmp/apply.err" | tr '\n' ' ')"
			return 1
		fi
		tree_id=$(git_t write-tree) || return 1
		git_t mailinfo "$tmp/msg" "$tmp/patch" < "$p" > "$tmp/info" || return 1
		msg=$(sed -n 's/^Subject: //p' "$tmp/info")$'\n\n'$(cat "$tmp/msg")
		c=$(GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$tmp/info") \
		    GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$tmp/info") \
		    GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$tmp/info") \
		    GIT_COMMITTER_NAME=pcpt GIT_COMMITTER_EMAIL=pcpt@localhost \
		    GIT_COMMITTER_DATE=$(sed -n 's/^Date: //p' "$tmp/info") \
		    git -C "$tree" commit-tree "$tree_id" -p "$prev" -m "$msg") || return 1
		echo "$c" >> "$tmp/commits"
		[ -s "$tmp/author" ] || sed -n 's/^\(Author\|Email\): //p' "$tmp/info" > "$tmp/author"
		prev=$c
	done
	echo "$tree_id"
}

write_series() {
	local dir=$1 t first last
	t=$(apply_all "${patches[@]}") || die "patches/ do not apply to the base: $t"
	first=$(head -1 "$tmp/commits") last=$(tail -1 "$tmp/commits")
	rm -rf "$dir" && mkdir -p "$dir"
	# The cover letter comes from the series' author.
	git -C "$tree" -c user.name="$(sed -n 1p "$tmp/author")" -c user.email="$(sed -n 2p "$tmp/author")" \
		format-patch -q --cover-letter --zero-commit --no-signature --abbrev=12 \
		-o "$dir" "$first~1..$last" >/dev/null ||
		die "git format-patch failed"
	python3 "$repo/scripts/pcpt/series-cover.py" "$repo" "$dir"/0000-cover-letter.patch ||
		die "could not write the cover letter"
	echo "$t"
}

case "$cmd" in
write)
	t=$(write_series "$out") || exit 1
	info "wrote $(ls "$out" | wc -l) files to $out (the cover letter and ${#patches[@]} patches)"
	exit 0 ;;
verify) ;;
*) echo "series.sh: unknown command '$cmd' (accepted: write, verify)" >&2; exit 2 ;;
esac

# verify: one result per check, for results.py total.
results=()
result() {	# NAME pass|fail WHY
	results+=("$(python3 -c 'import json,sys; print(json.dumps({"name": "series: " + sys.argv[1], "status": sys.argv[2], "why": sys.argv[3]}))' "$1" "$2" "$3")")
	[ "$2" = pass ] && info "series: $1: ok" || warn "series: $1: FAILED: $3"
}
# report NAME WHY: the check NAME failed with WHY if bad[] holds anything.
report() {
	if [ ${#bad[@]} -eq 0 ]; then
		result "$1" pass ""
	else
		result "$1" fail "$2"
	fi
}

if t=$(apply_all "${patches[@]}"); then
	result "patches/ apply to the base in order" pass ""
	ok=1
else
	result "patches/ apply to the base in order" fail "$t"
	ok=0 t=
fi

if [ $ok -eq 1 ]; then
	# Owned kernel files against the series' result.
	bad=()
	git_t ls-tree -r "$t" > "$tmp/series-files"
	while IFS= read -r f; do
		is_harness "$f" && continue
		h=$(git -C "$repo" hash-object "$f")
		mode=100644
		[ -x "$repo/$f" ] && mode=100755
		grep -qxF "$mode blob $h	$f" "$tmp/series-files" || bad+=("$f")
	done < <(owned_files "$repo")
	report "the repository's kernel files are what patches/ make" "differ or missing from the series: ${bad[*]} (fold the change into its patch in out/linux, then make export)"
	bad=()
	while IFS= read -r f; do
		[ -f "$repo/$f" ] || bad+=("$f")
	done < <(git_t diff-tree -r --name-only --diff-filter=A pcpt-base "$t")
	report "every file the series adds is in the repository" "only in patches/: ${bad[*]}"
	# What the boots build: out/linux as it is (make check builds local
	# edits with a warning), against the series, harness aside.
	bad=()
	while IFS= read -r f; do
		is_harness "$f" || bad+=("$f")
	done < <(cd "$tree" && env -u GIT_INDEX_FILE git diff --name-only "$t" -- . &&
		 env -u GIT_INDEX_FILE git ls-files --others --exclude-standard)
	report "the tree the boots build ($tree) is the series" "not in patches/: ${bad[*]} (make export, or make tree FORCE=1 to drop them)"
	bad=()
	while IFS= read -r f; do
		is_harness "$f" && bad+=("$f")
	done < <(git_t diff-tree -r --name-only pcpt-base "$t")
	report "no patch touches the harness" "${bad[*]}"
fi

bad=()
for p in "$repo"/patches/*.patch; do
	[ -e "$p" ] || continue
	grep -qxF "$(basename "$p")" "$repo/patches/series" || bad+=("$(basename "$p")")
done
report "patches/series lists every patch in patches/" "not listed: ${bad[*]}"

bad=()
for p in "${patches[@]}"; do
	git mailinfo "$tmp/msg" "$tmp/patch" < "$p" > "$tmp/info" 2>/dev/null
	grep -q '^Subject: ..*' "$tmp/info" && [ "$(grep -vc '^\(Signed-off-by:\|$\)' "$tmp/msg")" -gt 0 ] &&
		grep -q '^Signed-off-by: ' "$tmp/msg" || bad+=("$(basename "$p")")
done
report "every patch has a subject, a body and a Signed-off-by" "${bad[*]}"

# Footprint in files the base already has (issue 16's limits): changed
# lines of patches/ hunks, in all such files and in mm/ and include/linux/.
bad=()
git_t ls-tree -r --name-only pcpt-base > "$tmp/base-files"
read -r fp_all fp_mm < <(python3 - "$tmp/base-files" "${patches[@]}" <<'EOS'
import sys
base = set(open(sys.argv[1]).read().split('\n'))
total = core = 0
for p in sys.argv[2:]:
    cur = None
    for line in open(p, errors='replace'):
        if line.startswith('diff --git '):
            cur = line.rstrip('\n').split(' b/', 1)[1]
        elif line.startswith(('+++ ', '--- ')) or cur not in base:
            continue
        elif line.startswith(('+', '-')):
            total += 1
            core += cur.startswith(('mm/', 'include/linux/'))
print(total, core)
EOS
)
info "series: footprint in existing upstream files: ${fp_all:-?} changed lines (limit 800), ${fp_mm:-?} in mm/ and include/linux/ (limit 300)"
[ -n "${fp_all:-}" ] && [ "$fp_all" -le 800 ] && [ "$fp_mm" -le 300 ] ||
	bad+=("${fp_all:-?} changed lines in existing files (limit 800), ${fp_mm:-?} in mm/ and include/linux/ (limit 300)")
report "footprint in existing upstream files within 800 changed lines, 300 in mm/ and include/linux/" "${bad[*]}"

# checkpatch: errors and warnings fail unless allowed, with a reason, in
# checkpatch-allow ("patch-file-glob<TAB>TYPE<TAB>message-regex<TAB>reason",
# TYPE exactly as --show-types prints it); an allowance that matches
# nothing fails too, so the list cannot outlive what it excuses.
bad=()
allow=$repo/scripts/pcpt/checkpatch-allow
a_line=() a_glob=() a_type=() a_re=() used=()
n=0
while IFS=$'\t' read -r glob atype re why; do
	n=$((n + 1))
	case "$glob" in ''|'#'*) continue ;; esac
	a_line+=("$n") a_glob+=("$glob") a_type+=("$atype") a_re+=("$re") used+=(0)
done < <(cat "$allow" 2>/dev/null)
for p in "${patches[@]}"; do
	(cd "$tree" && perl scripts/checkpatch.pl --strict --no-tree --no-summary \
		--show-types --terse "$p") > "$tmp/cp" 2>&1
	rc=$?
	rm -f "$tree"/.checkpatch-camelcase.git.* 2>/dev/null
	# checkpatch exits 1 on checks too.
	if [ $rc -ne 0 ] && ! grep -Eq '^[^ ]+:[0-9]+: (ERROR|WARNING|CHECK):' "$tmp/cp"; then
		bad+=("$(basename "$p"): checkpatch.pl exited $rc without a finding: $(head -2 "$tmp/cp" | tr '\n' ' ')")
		continue
	fi
	while IFS= read -r line; do
		[[ $line =~ ^[^\ ]+:[0-9]+:\ (ERROR|WARNING):([A-Z_0-9]+):\ (.*)$ ]] || continue
		level=${BASH_REMATCH[1]} type=${BASH_REMATCH[2]} msg=${BASH_REMATCH[3]}
		allowed=0
		for i in "${!a_glob[@]}"; do
			# shellcheck disable=SC2254
			case "$(basename "$p")" in ${a_glob[$i]}) ;; *) continue ;; esac
			[ "${a_type[$i]}" = "$type" ] || continue
			if printf '%s\n' "$msg" | grep -Eq -- "${a_re[$i]}"; then
				allowed=1 used[$i]=1
				break
			fi
		done
		[ $allowed -eq 1 ] || bad+=("$(basename "$p"): $level:$type: $msg")
	done < "$tmp/cp"
done
for i in "${!a_glob[@]}"; do
	[ "${used[$i]}" = 1 ] ||
		bad+=("checkpatch-allow line ${a_line[$i]} (${a_glob[$i]} ${a_type[$i]}) matches nothing: drop it")
done
report "checkpatch.pl --strict: no error or warning in any patch" "$(printf '%s; ' "${bad[@]}")"

if [ $ok -eq 1 ]; then
	mkdir -p "$tmp/series"
	if t2=$(write_series "$tmp/series" 2>&1 | tail -1) &&
	   mapfile -t sent < <(ls "$tmp"/series/*.patch | grep -v '/0000-cover-letter.patch$') &&
	   [ ${#sent[@]} -eq ${#patches[@]} ] &&
	   t3=$(apply_all "${sent[@]}" 2>/dev/null | tail -1) && [ "$t3" = "$t" ]; then
		result "make series output applies to the base and gives the same tree" pass ""
	else
		result "make series output applies to the base and gives the same tree" fail "${t2:-} ${t3:-}"
	fi
	# ... and the same authors and messages as git am made of patches/
	# in out/linux (pcpt-series), compared commit by commit.
	bad=()
	mapfile -t mine < "$tmp/commits"
	mapfile -t laid < <(git_t rev-list --reverse pcpt-base..pcpt-series 2>/dev/null)
	fmt='%an <%ae>%n%s%n%n%b'
	if [ ${#mine[@]} -ne ${#laid[@]} ]; then
		bad+=("${#mine[@]} patches mailed, ${#laid[@]} laid in $tree")
	else
		for i in "${!mine[@]}"; do
			cmp -s <(git_t log -1 --format="$fmt" "${mine[$i]}" | sed 's/[[:space:]]*$//') \
			       <(git_t log -1 --format="$fmt" "${laid[$i]}" | sed 's/[[:space:]]*$//') ||
				bad+=("patch $((i + 1)): $(git_t log -1 --format=%s "${laid[$i]}")")
		done
	fi
	report "make series output carries every patch's author and message" "${bad[*]}"
fi

mkdir -p "$(dirname "$out")"
{
	echo '{"label": "series", "log": "'"$out"'", "results": ['
	(IFS=,; echo "${results[*]}")
	echo ']}'
} > "$out"
for r in "${results[@]}"; do case "$r" in *'"fail"'*) exit 1 ;; esac; done
exit 0

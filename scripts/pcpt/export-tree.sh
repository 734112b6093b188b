#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the work tree's changes back into the repository:
#
#   - every commit after pcpt-base becomes one patch in patches/ (git
#     format-patch, without the harness: scripts/pcpt, tools/pcpt-bench,
#     the pcpt*.config fragments), and patches/series lists them in
#     order: the series, each new file in the patch that adds it;
#   - edits to the project's files that no patch holds yet (uncommitted,
#     or made in the repository and laid as an "owned:" commit on top)
#     are first folded into the last patch that touched each file;
#   - every file that is not in the base (a project-owned file) is copied
#     back to the same path in the repository.
#
# A project file changed in the repository since the tree was laid is
# never overwritten: if the tree changed it too, export stops and names it.
# Running it with no edits in the tree changes nothing in the repository:
# a fixed hash length (12, as kernel commit references use) keeps the
# patches independent of how git would abbreviate in a given tree.
#
# Usage: export-tree.sh REPO TREE
{
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: export-tree.sh REPO TREE" >&2; exit 2; }
repo=$(cd "$1" && pwd)
tree=$2
. "$repo/scripts/pcpt/lib.sh"

[ -d "$tree/.git" ] || die "$tree is not laid out: run 'make tree' first"
git_t() { git -C "$tree" -c user.name=pcpt -c user.email=pcpt@localhost "$@"; }
laid=$(cat "$tree/.git/pcpt-laid")

git_t ls-tree -r --name-only pcpt-base | sort > "$tree/.git/pcpt-base-files"
# Project-owned files: in the tree (committed or not, not ignored) but not
# in the base.
mapfile -t owned < <(cd "$tree" && { git ls-files --cached --others --exclude-standard; } |
	sort -u | comm -23 - "$tree/.git/pcpt-base-files" |
	while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done)

# Upstream edits must be committed: a patch needs a subject and a message.
dirty_base=$(git_t status --porcelain --untracked-files=no | cut -c4- | sort |
	comm -12 - "$tree/.git/pcpt-base-files")
if [ -n "$dirty_base" ]; then
	die "uncommitted edits to base kernel files in $tree: commit them (one commit per patch) and run 'make export' again"
fi

# same_as_laid FILE SIDE: does SIDE's copy of FILE equal the laid version?
same_as_laid() {
	local f=$1 copy=$2
	if git_t cat-file -e "$laid:$f" 2>/dev/null; then
		[ -f "$copy" ] && cmp -s <(git_t cat-file -p "$laid:$f") "$copy"
	else
		[ ! -e "$copy" ]
	fi
}

# A file changed on one side only goes that way (the repository's
# change reaches the tree at the next sync); changed on both, it stops us.
conflicts=()
repo_newer=()
for f in "${owned[@]}"; do
	cmp -s "$tree/$f" "$repo/$f" && continue
	same_as_laid "$f" "$repo/$f" && continue
	if same_as_laid "$f" "$tree/$f"; then
		repo_newer+=("$f")
	else
		conflicts+=("$f")
	fi
done
if [ ${#conflicts[@]} -gt 0 ]; then
	for f in "${conflicts[@]}"; do warn "$f changed both in the repository and in $tree"; done
	die "resolve these by hand (copy one side over the other), then export again"
fi

# The series carries the project's kernel files too, each in the patch
# that adds it; only the harness stays out of it (series.sh: is_harness).
harness=(":(exclude)scripts/pcpt" ":(exclude)tools/pcpt-bench"
	":(exclude,glob)arch/arm64/configs/pcpt*.config")

# Edits to the project's files not yet in a patch (uncommitted, or in the
# "owned:" commits make tree adds on top when the repository's copy
# changed) go into the last patch that touched each file, as
# 'git commit --fixup' + 'rebase --autosquash' would: no later patch
# touches that file, so nothing can conflict.  A file no patch has yet
# must be added by hand in the patch that introduces it.
absorb_owned() {
	local head last f t owned_in base
	declare -A into=()
	for f in rebase-merge rebase-apply MERGE_HEAD CHERRY_PICK_HEAD; do
		[ ! -e "$tree/.git/$f" ] ||
			die "a git operation is in progress in $tree ($f): finish or abort it first"
	done
	# Uncommitted edits and deletions of the project's files first.
	git_t add -A -- $OWNED_DIRS 2>/dev/null || true
	if [ -n "$(git_t diff --cached --name-only)" ]; then
		git_t commit -q -m "owned: uncommitted edits"
	fi
	head=$(git_t rev-parse HEAD)
	# Everything below can be undone: git reset --hard refs/pcpt/pre-export.
	git_t update-ref refs/pcpt/pre-export "$head"
	undo="(the tree before export: git -C $tree reset --hard refs/pcpt/pre-export)"
	# "owned:" commits go on top, above commits made after make tree.
	owned_in=$(git_t rev-list --grep='^owned: ' pcpt-base..HEAD)
	last=$(git_t rev-list --topo-order -1 --invert-grep --grep='^owned: ' pcpt-base..HEAD)
	if [ -n "$owned_in" ] && [ -n "$last" ] &&
	   [ -n "$(git_t rev-list --grep='^owned: ' pcpt-base.."$last")" ]; then
		info "moving the 'owned:' commits above the patches"
		local ed
		ed=$(mktemp)
		cat > "$ed" <<'EOS'
#!/bin/sh
awk '/^(pick|p) [0-9a-f]+ owned: /{o = o $0 "\n"; next} {print} END {printf "%s", o}' "$1" > "$1.new" &&
	mv "$1.new" "$1"
EOS
		chmod +x "$ed"
		GIT_EDITOR=: GIT_SEQUENCE_EDITOR="$ed" git_t rebase -q -i pcpt-base >/dev/null 2>&1 ||
			{ rm -f "$ed"; git_t rebase --abort >/dev/null 2>&1
			  die "could not move the 'owned:' commits above the patches (a patch changes a harness file?) $undo"; }
		rm -f "$ed"
		last=$(git_t rev-list --topo-order -1 --invert-grep --grep='^owned: ' pcpt-base..HEAD)
	fi
	base=$(git_t rev-parse pcpt-base)
	[ -n "$last" ] || last=$base
	[ "$(git_t rev-parse HEAD)" != "$last" ] || return 0
	while IFS= read -r f; do
		t=$(git_t rev-list -1 "$last" -- "$f")
		if [ -z "$t" ] || [ "$t" = "$base" ]; then
			die "$f is in no patch yet: commit it in $tree in the patch that introduces it (git commit --fixup=<that patch>, git rebase -i --autosquash pcpt-base), then export again $undo"
		fi
		into[$t]+="$f"$'\n'
		info "folding $f into \"$(git_t log -1 --format=%s "$t")\", the last patch that touches it (if the change belongs to an earlier one, move it there with git rebase -i in $tree and export again)"
	done < <(git_t diff --name-only "$last" HEAD -- . "${harness[@]}")
	[ ${#into[@]} -gt 0 ] || return 0
	head=$(git_t rev-parse HEAD)
	git_t reset -q --hard "$last"
	for t in "${!into[@]}"; do
		mapfile -t files < <(printf '%s' "${into[$t]}")
		# restore, not checkout: it also deletes what $head deleted.
		git_t restore --source="$head" --staged --worktree -- "${files[@]}" ||
			die "could not fold ${files[*]} $undo"
		git_t commit -q --fixup="$t" || die "could not fold ${files[*]} $undo"
	done
	GIT_EDITOR=: GIT_SEQUENCE_EDITOR=: git_t rebase -q -i --autosquash pcpt-base >/dev/null ||
		{ git_t rebase --abort >/dev/null 2>&1; die "folding the edits failed (git rebase in $tree) $undo"; }
	# What is left (the harness) stays in one "owned:" commit on top.
	git_t restore --source="$head" --staged --worktree -- .
	[ -z "$(git_t diff --cached --name-only)" ] ||
		git_t commit -q -m "owned: files of this repository"
	[ -z "$(git_t diff "$head" --name-only)" ] || die "folding changed the tree's content $undo"
}
absorb_owned
series_top=$(git_t rev-list --topo-order -1 --invert-grep --grep='^owned: ' pcpt-base..HEAD)
[ -n "$series_top" ] || series_top=$(git_t rev-parse pcpt-base)
git_t tag -f pcpt-series "$series_top" >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git_t format-patch -q --zero-commit --no-signature --no-numbered --abbrev=12 \
	-o "$tmp" "pcpt-base..$series_top" -- . "${harness[@]}" >/dev/null

mkdir -p "$repo/patches"
{
	echo "# Patches to upstream files, applied in order on top of the base"
	echo "# (scripts/pcpt/lib.sh: BASE_PKG).  Written by 'make export'."
	(cd "$tmp" && ls -1 -- *.patch 2>/dev/null || true)
} > "$tmp/series.new"

changed=0
for p in "$tmp"/*.patch; do
	[ -e "$p" ] || continue
	if ! cmp -s "$p" "$repo/patches/$(basename "$p")"; then
		cp "$p" "$repo/patches/"
		info "wrote patches/$(basename "$p")"
		changed=1
	fi
done
for p in "$repo"/patches/*.patch; do
	[ -e "$p" ] || continue
	if [ ! -e "$tmp/$(basename "$p")" ]; then
		rm -f "$p"
		info "removed patches/$(basename "$p")"
		changed=1
	fi
done
if ! cmp -s "$tmp/series.new" "$repo/patches/series"; then
	cp "$tmp/series.new" "$repo/patches/series"
	info "wrote patches/series"
	changed=1
fi

for f in "${owned[@]}"; do
	case " $OWNED_DIRS " in *" ${f%%/*} "*) ;; *)
		warn "$f is outside the owned directories ($OWNED_DIRS): not exported"
		continue ;;
	esac
	case " ${repo_newer[*]} " in *" $f "*) continue ;; esac
	if ! cmp -s "$tree/$f" "$repo/$f"; then
		mkdir -p "$(dirname "$repo/$f")"
		cp -p "$tree/$f" "$repo/$f"
		info "wrote $f"
		changed=1
	fi
done
# Owned files removed from the tree leave the repository too, unless the
# repository changed them since the tree was laid.
while IFS= read -r f; do
	[ -e "$tree/$f" ] && continue
	same_as_laid "$f" "$repo/$f" || continue	# new or changed here: kept
	rm -f "$repo/$f"
	info "removed $f"
	changed=1
done < <(owned_files "$repo")

# The tree now is what the repository describes: later builds may sync
# into it again without calling it "local edits".
if [ -z "$(git_t status --porcelain)" ]; then
	git_t rev-parse HEAD > "$tree/.git/pcpt-laid"
	bash "$repo/scripts/pcpt/lay-tree.sh" --print-key "$repo" "$tree" > "$tree/.git/pcpt-key"
fi

[ $changed -eq 1 ] || info "nothing to export: the repository already matches $tree"
exit 0
}

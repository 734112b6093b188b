#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lay out (or bring up to date) the kernel work tree the project builds in:
#
#   commit "base"    Debian's linux-source-6.12 tarball, tagged pcpt-base
#   commits          one per patch in patches/series, tagged pcpt-series
#   commit "owned"   the files this repository owns at their kernel paths
#
# Usage: lay-tree.sh [--force] [--sync] REPO TREE
#
#   --sync   called before every build: lay the tree if it is missing,
#            re-apply the series if it changed, copy changed owned files.
#            A tree with local edits (dirty, or commits after the laid
#            state) is built as it is, with a warning.
#   --force  re-lay even over local edits (they are lost).
#
# Only files whose content changed are rewritten, so incremental builds
# stay incremental.  See README.md, "Developer round trip".
set -euo pipefail

force=0 sync=0 printkey=0
while [ $# -gt 2 ]; do
	case "$1" in
	--force) force=1 ;;
	--sync) sync=1 ;;
	--print-key) printkey=1 ;;
	*) echo "lay-tree.sh: unknown option '$1' (accepted: --force, --sync, --print-key)" >&2; exit 2 ;;
	esac
	shift
done
[ $# -eq 2 ] || { echo "usage: lay-tree.sh [--force] [--sync] REPO TREE" >&2; exit 2; }
repo=$(cd "$1" && pwd)
tree=$2

. "$repo/scripts/pcpt/lib.sh"

series_key() {
	{
		echo "$BASE_PKG $(installed_base_version)"
		{ grep -v '^[[:space:]]*\(#\|$\)' "$repo/patches/series" 2>/dev/null || true; } |
		while read -r p; do
			echo "== $p"
			cat "$repo/patches/$p"
		done
	} | sha256sum | cut -d' ' -f1
}

git_t() { git -C "$tree" -c user.name=pcpt -c user.email=pcpt@localhost \
	-c core.autocrlf=false -c advice.detachedHead=false "$@"; }

tree_has_local_edits() {
	[ -d "$tree/.git" ] || return 1
	[ -n "$(git_t status --porcelain --untracked-files=no)" ] && return 0
	[ "$(git_t rev-parse HEAD)" != "$(cat "$tree/.git/pcpt-laid" 2>/dev/null)" ]
}

create_base() {
	local tarball=/usr/src/$BASE_PKG.tar.xz
	[ -f "$tarball" ] || die "$tarball not found: run 'make deps' (installs $BASE_PKG)"
	check_base_version
	info "extracting $tarball into $tree"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	mv "$tree.tmp" "$tree"
	git_t init -q
	# The tarball ships no .gitignore for build products we never create
	# in-tree (we always build with O=), so plain 'add -A' is right.
	git_t add -A -f
	GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git_t commit -q -m "base: $BASE_PKG $(installed_base_version)"
	git_t tag -f pcpt-base >/dev/null
}

# Debian's tarball ends its .gitignore with "/*", which would hide every
# new file from git and so from 'make export'.  Drop that block from the
# working copy only; skip-worktree keeps the edit out of status and out
# of every patch.
fix_gitignore() {
	git_t update-index --skip-worktree .gitignore
	sed -i '/^# Debian packaging/,$d' "$tree/.gitignore"
}

apply_series() {
	git_t reset -q --hard pcpt-base
	git_t clean -q -fdx
	local p n=0
	if [ -f "$repo/patches/series" ]; then
		while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			[ -f "$repo/patches/$p" ] || die "patches/series names $p, which does not exist"
			if ! git_t am -q --keep-non-patch "$repo/patches/$p" >/dev/null 2>&1; then
				git_t am --abort >/dev/null 2>&1 || true
				die "patch $p does not apply to $BASE_PKG $(installed_base_version)"
			fi
			n=$((n + 1))
		done < "$repo/patches/series"
	fi
	git_t tag -f pcpt-series >/dev/null
	fix_gitignore
	info "applied $n patch(es) from patches/series"
}

# Copy the repository's own files into the tree.  A file the project owns
# must not exist in the base: edits to upstream files are patches.
overlay_owned() {
	local f changed=0
	while IFS= read -r f; do
		if git_t cat-file -e "pcpt-base:$f" 2>/dev/null; then
			die "$f exists in the base kernel: edits to upstream files belong in patches/, not as whole files"
		fi
		if ! cmp -s "$repo/$f" "$tree/$f"; then
			mkdir -p "$(dirname "$tree/$f")"
			cp -p "$repo/$f" "$tree/$f"
			changed=1
		fi
	done < <(owned_files "$repo")
	# Owned files deleted from the repository leave the tree too.
	while IFS= read -r f; do
		[ -e "$repo/$f" ] || { git_t rm -q -f -- "$f"; changed=1; }
	done < <(git_t diff --name-only --diff-filter=A pcpt-series HEAD 2>/dev/null || true)
	git_t add -A -- $OWNED_DIRS 2>/dev/null || true
	if [ -n "$(git_t status --porcelain)" ]; then
		if [ "$(git_t rev-parse HEAD)" != "$(git_t rev-parse pcpt-series)" ] &&
		   git_t log -1 --format=%s | grep -q '^owned: '; then
			git_t commit -q --amend -m "owned: files of this repository"
		else
			git_t commit -q -m "owned: files of this repository"
		fi
	fi
	git_t rev-parse HEAD > "$tree/.git/pcpt-laid"
	[ $changed -eq 0 ] || info "copied changed project files into $tree"
}

key=$(series_key)
if [ $printkey -eq 1 ]; then
	echo "$key"
	exit 0
fi
if [ ! -d "$tree/.git" ]; then
	create_base
	apply_series
	overlay_owned
	echo "$key" > "$tree/.git/pcpt-key"
	exit 0
fi

if tree_has_local_edits && [ $force -eq 0 ]; then
	if [ $sync -eq 1 ]; then
		warn "$tree has local edits: building them as they are ('make export' saves them, 'make tree FORCE=1' discards them)"
		exit 0
	fi
	die "$tree has local edits: save them with 'make export' or discard them with 'make tree FORCE=1'"
fi

if [ "$key" != "$(cat "$tree/.git/pcpt-key" 2>/dev/null)" ] || [ $sync -eq 0 ]; then
	apply_series
	echo "$key" > "$tree/.git/pcpt-key"
fi
overlay_owned

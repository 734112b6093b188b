# SPDX-License-Identifier: GPL-2.0
#
# Shared definitions for the scripts in scripts/pcpt/.  Sourced, not run.

# The one place the tested base is recorded.
BASE_PKG=linux-source-6.12
BASE_VERSION_TESTED=6.12.118-1~deb12u1

# Top-level directories whose files the project owns at their kernel paths.
OWNED_DIRS="arch block crypto Documentation drivers fs include init kernel lib mm net scripts tools"

info() { printf 'pcpt: %s\n' "$*" >&2; }
warn() { printf 'pcpt: warning: %s\n' "$*" >&2; }
die() { printf 'pcpt: error: %s\n' "$*" >&2; exit 1; }

installed_base_version() {
	dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null || echo none
}

check_base_version() {
	local v
	v=$(installed_base_version)
	[ "$v" = "$BASE_VERSION_TESTED" ] ||
		warn "$BASE_PKG $v is installed; this project was tested with $BASE_VERSION_TESTED (carrying on)"
}

# List the repository's owned files, relative to the repository root.
owned_files() {
	local d
	(cd "$1" && for d in $OWNED_DIRS; do
		[ -d "$d" ] && git ls-files --cached --others --exclude-standard -- "$d"
	done) | sort -u | while IFS= read -r f; do [ -f "$1/$f" ] && echo "$f"; done
}

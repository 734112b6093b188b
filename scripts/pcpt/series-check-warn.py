#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The warnings of one prefix build that are the series' (series-check.sh).

Usage: series-check-warn.py WORKTREE TOUCHED_LIST BUILD_LOG CONFIG_LOG

Prints one line per warning that counts against the prefix:
  - a compiler, assembler or kernel-doc warning (or kernel-doc error,
    which does not fail the build) located in a file the series has
    touched by then (the diagnostic's own file; a warning in
    an untouched file reached through a macro of a touched header is not
    attributed: the base has such warnings too, at lines that move);
  - any modpost or linker warning, and any assembler warning on a
    compiler's temporary file (the base configuration has none);
  - any Kconfig warning (unmet dependencies) from the configuration but
    the overrides pcpt-off.config makes on purpose.
"""
import re
import sys

wt, touched_list, build_log, config_log = sys.argv[1:5]
touched = set(l.strip() for l in open(touched_list) if l.strip())
DIAG = re.compile(r'^(\S+?):\d+(?::\d+)?: (?:warning|Warning|WARNING|error): ')
# modpost, the linker (also file:line:(section+offset): warning:), and the
# assembler on a compiler's temporary file (inline asm of a C file).
LINK = re.compile(r'WARNING: modpost: |\bld(?:\.bfd)?: warning: |^ld: .*warning|'
                  r':\(\S+\): warning: |^/tmp/\S+\.s:\d+: (?:Warning|Error): ')


def repo_path(path):
    if path.startswith(wt + '/'):
        return path[len(wt) + 1:]
    while path.startswith('../'):
        path = path[3:]
    return path[len('linux/'):] if path.startswith('linux/') else path


seen = set()
for line in open(build_log, errors='replace'):
    line = line.rstrip('\n')
    m = DIAG.match(line)
    if m and repo_path(m.group(1)) in touched or not m and LINK.search(line):
        if line not in seen:
            seen.add(line)
            print(line)
try:
    for line in open(config_log, errors='replace'):
        # pcpt-off.config sets the options the fragments set before it.
        if re.search(r'warning', line, re.I) and 'override: reassigning' not in line:
            print('config: ' + line.rstrip('\n'))
except FileNotFoundError:
    pass

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the instructions of the this_cpu probe functions in two objects.

Usage: insn-count.py --json OUT BASE.o PATCHED.o

Each pcpw_probe_* function (tools/pcpt-bench/this_cpu_probe.c) does one
this_cpu operation.  For each, in the base and the patched object: the
instructions of the function's own symbol range ([value, value + size) from
the symbol table, so out-of-line code after it does not count), not
counting NOPs (ftrace patch slots and alignment), and whether it reads
TPIDR, touches the preempt count (reads SP_EL0, where arm64 keeps the
current task), calls anything or builds a stack frame.
"""
import argparse
import json
import re
import subprocess
import sys

OBJDUMP = 'aarch64-linux-gnu-objdump'
NM = 'aarch64-linux-gnu-nm'


def functions(obj):
    """name -> (start, size) of every pcpw_probe_* function."""
    out = subprocess.run([NM, '-S', '--defined-only', obj], capture_output=True,
                         text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in 'tT' and parts[3].startswith('pcpw_probe_'):
            funcs[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return funcs


def analyse(obj):
    funcs = functions(obj)
    dis = subprocess.run([OBJDUMP, '-d', '--no-show-raw-insn', obj], capture_output=True,
                         text=True, check=True).stdout
    insns = []  # (address, text) in .text
    section = None
    for line in dis.splitlines():
        m = re.match(r'Disassembly of section (\S+):', line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r'\s*([0-9a-f]+):\s+(.*)$', line)
        if m and section == '.text':
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    res = {}
    for name, (start, size) in funcs.items():
        body = [t for a, t in insns if start <= a < start + size and not t.startswith('nop')]
        res[name[len('pcpw_probe_'):]] = {
            'insns': len(body),
            'tpidr': any(re.search(r'\bmrs\s.*tpidr_el[12]', t) for t in body),
            'preempt_count': any(re.search(r'\bmrs\s.*sp_el0', t) for t in body),
            'call': any(re.match(r'bl\s', t) for t in body),
            'frame': any(re.match(r'stp\s+x29,\s*x30', t) for t in body),
            'code': body,
        }
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--json', required=True)
    ap.add_argument('base')
    ap.add_argument('patched')
    a = ap.parse_args()
    base, patched = analyse(a.base), analyse(a.patched)
    if not base or set(base) != set(patched):
        sys.exit(f'insn-count: probe functions missing or different in {a.base} / {a.patched}')
    rows = []
    print(f"{'this_cpu probe':18} {'base':>5} {'patched':>7} {'ratio':>6}  patched has")
    for op in sorted(base):
        b, p = base[op], patched[op]
        flags = [k for k in ('tpidr', 'preempt_count', 'call', 'frame') if p[k]]
        print(f"{op:18} {b['insns']:5} {p['insns']:7} {p['insns'] / b['insns']:6.2f}  "
              f"{', '.join(flags) or 'none of: tpidr, preempt count, call, frame'}")
        rows.append({'op': op, 'base': b, 'patched': p})
    with open(a.json, 'w') as f:
        json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()

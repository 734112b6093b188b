#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print where every vCPU of a running guest is, through QMP.

Usage: qmp-regs.py SOCKET [SYSTEM_MAP [LOG]]

Asks QEMU for every vCPU's registers ("info registers -a") and prints one
line per vCPU, "pcpt-hang: cpuN pc=ADDR SYMBOL+OFF el=EL", the symbol from
SYSTEM_MAP when given, moved by the KASLR offset that the guest's report
line "text:    _text at ADDR" in LOG gives.  boot.sh runs it just before it kills a guest that
did not finish in time, so a hung run says what each CPU was doing.
"""
import bisect
import json
import re
import socket
import sys


def qmp_hmp(path, line):
    """Run one human monitor command; return its output."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(path)
        f = s.makefile('rw')
        f.readline()
        for cmd in ({'execute': 'qmp_capabilities'},
                    {'execute': 'human-monitor-command',
                     'arguments': {'command-line': line}}):
            f.write(json.dumps(cmd) + '\n')
            f.flush()
            while True:
                reply = json.loads(f.readline())
                if 'return' in reply or 'error' in reply:
                    break
        return reply.get('return', str(reply.get('error')))


def load_map(path):
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in 'tTwW':
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return syms


def kaslr_offset(syms, log):
    """Runtime _text (the guest's report in LOG) minus System.map's."""
    try:
        with open(log, errors='replace') as f:
            m = re.search(r'^text: +_text at 0x([0-9a-f]+)', f.read(), re.M)
    except OSError:
        return 0
    link = [a for a, n in syms if n == '_text']
    return int(m.group(1), 16) - link[0] if m and link else 0


def symbolize(syms, addr):
    if not syms:
        return ''
    i = bisect.bisect_right([a for a, _ in syms], addr) - 1
    if i < 0 or addr - syms[i][0] > 0x100000:
        return '?'
    return '%s+%#x' % (syms[i][1], addr - syms[i][0])


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit('usage: qmp-regs.py SOCKET [SYSTEM_MAP [LOG]]')
    try:
        out = qmp_hmp(sys.argv[1], 'info registers -a')
    except OSError as e:
        print('pcpt-hang: no registers from QMP: %s' % e)
        return
    syms = load_map(sys.argv[2]) if len(sys.argv) >= 3 else []
    off = kaslr_offset(syms, sys.argv[3]) if len(sys.argv) == 4 else 0
    cpu = None
    for line in out.splitlines():
        m = re.match(r'CPU#(\d+)', line)
        if m:
            cpu = m.group(1)
        m = re.search(r'\bPC=([0-9a-f]+)', line)
        if m and cpu is not None:
            pc = int(m.group(1), 16)
            el = re.search(r'\bEL(\d)', out.split('CPU#%s' % cpu, 1)[-1])
            print('pcpt-hang: cpu%s pc=%#x %s el=%s' %
                  (cpu, pc, symbolize(syms, pc - off), el.group(1) if el else '?'))
            cpu = None


if __name__ == '__main__':
    main()

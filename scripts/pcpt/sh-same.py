#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Check that reformatted shell scripts still parse to the same commands.
#
#   sh-same.py REV FILE...
#
# Compares each FILE with its version at git revision REV after bash's
# own normalisation (declare -f of a function holding the script), which
# drops comments, joins continuation lines and normalises blanks.  One
# difference is accepted and listed for review: a double-quoted message
# given to pass, fail, skip or echo split into several arguments at a
# space ("a b" -> "a" "b"), which those join again with one space.
# Exits 1 if any other difference remains.

import difflib
import os
import re
import subprocess
import sys

SPLIT_RE = re.compile(r'"\s+"')
MSG_RE = re.compile(r'(^|[\s;&|(])(pass|fail|skip|echo) ')


def norm(text):
    src = '__f() {\n' + text + '\n}\ndeclare -f __f\n'
    r = subprocess.run(['bash', '-c', src], capture_output=True, text=True)
    if r.returncode or r.stderr:
        sys.exit('sh-same: bash cannot parse it: ' + r.stderr)
    return r.stdout.splitlines()


def main():
    if len(sys.argv) < 3:
        sys.exit('usage: sh-same.py REV FILE...')
    rev, bad = sys.argv[1], 0
    for f in sys.argv[2:]:
        d = os.path.dirname(os.path.abspath(f))
        old = subprocess.run(['git', 'show', f'{rev}:./{os.path.basename(f)}'], cwd=d,
                             capture_output=True, text=True, check=True).stdout
        a, b = norm(old), norm(open(f).read())
        if a == b:
            print('same  ', f)
            continue
        ok = len(a) == len(b)
        if not ok:
            print('\n'.join(difflib.unified_diff(a, b, lineterm='', n=1)))
        for x, y in zip(a, b) if ok else []:
            if x == y:
                continue
            m = MSG_RE.search(y)
            if m and x[:m.end()] == y[:m.end()] and SPLIT_RE.sub(' ', y[m.end():]) == x[m.end():]:
                print('  split:', y.strip())
                continue
            print(f'  -{x}\n  +{y}')
            ok = False
        bad += not ok
        print('ok    ' if ok else 'DIFFER', f)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

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
# space ("a b" -> "a" "b") at the top level of their arguments, which
# those join again with one space.  Any other difference (a command
# rewritten, lines added) is printed for review by hand and exits 1.

import difflib
import os
import re
import subprocess
import sys

MSG_RE = re.compile(r'(pass|fail|skip|echo)\s')
KEYWORDS_RE = re.compile(r'(if|then|else|elif|do|while|until|!)\s')


def join_splits(s):
    """S with the message arguments of pass/fail/skip/echo joined where split.

    Only a closing and an opening double quote separated by blanks, at the
    top level of such a command's arguments, count ("a" "b" -> "a b");
    blanks inside quotes, $(...) or ${...}, in other commands, or after a
    redirection are left alone, so any other split shows as a difference.
    """
    out, stack, i = '', [], 0
    at_cmd, in_msg = True, False
    while i < len(s):
        c = s[i]
        ctx = stack[-1] if stack else None
        if c == '\\' and ctx != 'sq':
            out += s[i:i + 2]
            i += 2
            at_cmd = False
            continue
        if ctx is None:
            if c in ';&|(){}<>':
                at_cmd, in_msg = c not in '<>', False
                out += c
                i += 1
                continue
            if c.isspace():
                j = i
                while j < len(s) and s[j].isspace():
                    j += 1
                if in_msg and out.endswith('"') and not out.endswith('\\"') and \
                        s[j:j + 1] == '"':
                    out = out[:-1] + ' '
                    stack.append('dq')
                    i = j + 1
                    continue
                out += s[i:j]
                i = j
                continue
            if at_cmd:
                m = KEYWORDS_RE.match(s, i)
                if m:
                    out += m.group(0)
                    i = m.end()
                    continue
                in_msg = bool(MSG_RE.match(s, i))
                at_cmd = False
            if c == '"':
                stack.append('dq')
            elif c == "'":
                stack.append('sq')
        elif ctx == 'sq':
            if c == "'":
                stack.pop()
        elif ctx == 'dq':
            if c == '"':
                stack.pop()
            elif s.startswith('$(', i) or s.startswith('${', i):
                stack.append('cmd' if s[i + 1] == '(' else 'brace')
                out += s[i:i + 2]
                i += 2
                continue
        elif ctx == 'cmd':
            if c == '(':
                stack.append('cmd')
            elif c == ')':
                stack.pop()
            elif c == '"':
                stack.append('dq')
            elif c == "'":
                stack.append('sq')
        elif ctx == 'brace' and c == '}':
            stack.pop()
        out += c
        i += 1
    return out


def same_or_split(x, y):
    """X and Y are the same command, or Y splits X's message arguments."""
    return x == y or join_splits(x) == join_splits(y)


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
        ok = True
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if op == 'equal':
                continue
            if op == 'replace' and i2 - i1 == j2 - j1 and \
                    all(same_or_split(x, y) for x, y in zip(a[i1:i2], b[j1:j2])):
                for x, y in zip(a[i1:i2], b[j1:j2]):
                    if x != y:
                        print('  split:', y.strip())
                continue
            ok = False
            print(f'  {op}: review by hand')
            for x in a[i1:i2]:
                print(f'  -{x}')
            for y in b[j1:j2]:
                print(f'  +{y}')
        bad += not ok
        print('ok    ' if ok else 'DIFFER', f)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Copy a guest console to a log and act on the guest's QMP requests.

Usage: qmp-watch.py --log LOG [--qmp SOCKET] [--quiet] [--times FILE]

Reads QEMU's console output on stdin, appends every line to LOG and, unless
--quiet, to stdout.  A console line

    PCPT-QMP: qom-set DEVICE PROPERTY VALUE

is a request from a guest test to change a device property (the memory
hotplug selftest resizes its virtio-mem device this way).  Only the
(DEVICE, PROPERTY) pairs in ALLOWED are honoured; the outcome is written
to LOG as a "pcpt-qmp:" line so a failed request is visible next to the
test that made it.

With --times, each selftest's result line ("ok N selftests: ...") is
also appended to FILE with the host seconds since the previous one (or
since the runner started), so the slow tests of a boot can be found
without timestamps in the guest (TCG wall time: indicative only).
"""
import argparse
import json
import re
import socket
import sys
import time

ALLOWED = {("vm0", "requested-size")}
REQUEST = re.compile(rb"PCPT-QMP: qom-set (\S+) (\S+) (\d+)\s*$")
RESULT = re.compile(rb"^(?:not )?ok \d+ selftests: ")
RUNNER = re.compile(rb"^PCPT-KSELFTEST-BEGIN")


def qmp(path, command, arguments):
    """Run one QMP command on a fresh connection; return its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        f = s.makefile("rwb")

        def call(cmd, args=None):
            msg = {"execute": cmd}
            if args is not None:
                msg["arguments"] = args
            f.write(json.dumps(msg).encode() + b"\n")
            f.flush()
            while True:
                line = f.readline()
                if not line:
                    raise ConnectionError("QMP connection closed")
                reply = json.loads(line)
                if "return" in reply or "error" in reply:
                    return reply

        json.loads(f.readline())  # greeting
        call("qmp_capabilities")
        return call(command, arguments)


def handle(match, sock):
    dev, prop, value = (g.decode() for g in match.groups())
    if (dev, prop) not in ALLOWED:
        return f"refused qom-set {dev} {prop} (allowed: {sorted(ALLOWED)})"
    if not sock:
        return f"qom-set {dev} {prop} {value}: no QMP socket"
    try:
        reply = qmp(sock, "qom-set",
                    {"path": dev, "property": prop, "value": int(value)})
    except (OSError, ValueError) as e:
        return f"qom-set {dev} {prop} {value}: {e}"
    if "error" in reply:
        return f"qom-set {dev} {prop} {value}: {reply['error'].get('desc')}"
    return f"qom-set {dev} {prop} {value}: ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--qmp")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--times")
    a = ap.parse_args()
    out = sys.stdout.buffer
    times = open(a.times, "a", encoding="utf-8") if a.times else None
    last = time.monotonic()
    with open(a.log, "ab") as log:
        for line in sys.stdin.buffer:
            log.write(line)
            if RUNNER.match(line):
                last = time.monotonic()
            if times and RESULT.match(line):
                now = time.monotonic()
                text = line.decode(errors="replace").rstrip()
                times.write(f"{now - last:7.1f} {text}\n")
                times.flush()
                last = now
            if not a.quiet:
                out.write(line)
                out.flush()
            m = REQUEST.search(line)
            if m:
                note = f"pcpt-qmp: {handle(m, a.qmp)}\n".encode()
                log.write(note)
                if not a.quiet:
                    out.write(note)
            log.flush()


if __name__ == "__main__":
    main()

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own tests of what this work touches, run on the patched
# kernel: lib/percpu_test.c (this_cpu and __this_cpu ops against plain
# arithmetic; the former go through the window), lib/test_static_keys.c
# (jump label patching, which writes every copy of the modules' text;
# loaded from a CPU of every node) and the
# ftrace start-up self-tests (every tracer, dynamic ftrace patching at
# boot), read from the console.  The kprobes tests are KUnit
# (test_kprobes) and judged with the other suites; any WARN the tests
# raise fails the run on the host.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

modko()
{
	find /lib/modules -name "$1.ko*" 2>/dev/null | head -1
}

ko=$(modko percpu_test)
if [ -z "$ko" ]; then
	fail "percpu_test.ko not installed (CONFIG_PERCPU_TEST=m)"
else
	before=$(dmesg | wc -l)
	# Runs at load, then refuses to stay (-EAGAIN); a mismatch WARNs.
	insmod "$ko" 2>/dev/null
	log=$(dmesg | tail -n +$((before + 1)))
	if echo "$log" | grep -q 'percpu test done' && ! echo "$log" | grep -q 'WARNING:'; then
		pass "lib/percpu_test.c: every op as expected"
	else
		fail "lib/percpu_test.c:" \
			"$(echo "$log" | grep -E 'percpu test|WARNING' | tail -3 | tr '\n' ';')"
	fi
fi

base=$(modko test_static_key_base)
keys=$(modko test_static_keys)
if [ -z "$base" ] || [ -z "$keys" ]; then
	fail "test_static_keys.ko not installed (CONFIG_TEST_STATIC_KEYS=m)"
else
	# From a CPU of every node: each load flips the keys of the two
	# modules and patches their branches, in every copy of their text.
	for node in $(online_nodes); do
		cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" |
			awk '{ print $1 }')
		[ -n "$cpu" ] || continue
		if taskset -c "$cpu" insmod "$base" && taskset -c "$cpu" insmod "$keys"; then
			pass "lib/test_static_keys.c on cpu$cpu (node $node):" \
				"every key and branch as expected"
			rmmod test_static_keys
		else
			fail "lib/test_static_keys.c on cpu$cpu failed:" \
				"$(dmesg | tail -3 | tr '\n' ';')"
		fi
		rmmod test_static_key_base 2>/dev/null
	done
fi

# "Testing ...: " and its verdict are two printks: another message may
# come between them, so count verdicts rather than pair them.
tests=$(dmesg | grep -c 'PASSED$')
failed=$(dmesg | grep -E 'FAILED!|Selftest for tracer .* skipped')
if [ -n "$failed" ]; then
	fail "ftrace start-up self-tests: $(echo "$failed" | head -3 | tr '\n' ';')"
elif [ "$tests" -eq 0 ]; then
	fail "no ftrace start-up self-test on the console (CONFIG_FTRACE_STARTUP_TEST?)"
else
	pass "ftrace start-up self-tests: $tests passed"
fi
finish

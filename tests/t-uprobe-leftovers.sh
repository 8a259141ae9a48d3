#!/usr/bin/env bash
# Probe definitions are global (uprobe_events): a recorder killed with -9
# cannot remove its own, so its guard process does; and a later tracerec
# removes any left by a recorder that no longer runs, and says so.
. "$(dirname "$0")/lib.sh"
TFS=/sys/kernel/tracing
S=$B/samples
if [ "$(id -u)" != 0 ] || [ ! -w $TFS/uprobe_events ]; then
	test_skip "uprobe leftovers" "no writable $TFS/uprobe_events (not root, or no CONFIG_UPROBE_EVENTS)"
	test_done
	exit
fi
group_left() { grep -q "^[pr]:tpp_$1/" $TFS/uprobe_events; }

test_expect 'kill -9 of a recorder with uprobes: its guard removes them (and its instance)' '
	"$TRACEREC" record -q -o t.tpp -u "$S/s-chain:[abc]" -- sleep 30 >/dev/null 2>&1 & pid=$!
	for i in $(seq 100); do group_left $pid && break; sleep 0.05; done
	group_left $pid || { echo "no probes of $pid appeared"; exit 1; }
	sleep 0.3
	child=$(pgrep -P $pid -x sleep)
	kill -9 $pid; wait $pid 2>/dev/null
	[ -n "$child" ] && kill $child
	for i in $(seq 100); do group_left $pid || break; sleep 0.05; done
	grep "tpp_$pid/" $TFS/uprobe_events; ! group_left $pid && [ ! -d $TFS/instances/tracepp-$pid ]
'

# A group owned by a process that runs but is not tracerec: what a pid reused
# after the recorder's death looks like (kill -0 says alive, so recorders of
# concurrent test runs see no leftover meanwhile).
test_expect 'a later tracerec removes probes whose recorder no longer runs, and says so' '
	sleep 30 & owner=$!
	off=$(nm "$S/s-chain" | awk "\$3 == \"main\" { print \$1 }") && [ -n "$off" ] &&
	echo "p:tpp_$owner/stale $S/s-chain:0x$off" >>$TFS/uprobe_events && group_left $owner &&
	"$TRACEREC" record -q -e sched:sched_process_exit -o t.tpp -- true 2>err; st=$?
	kill $owner; cat err; [ $st = 0 ] && ! group_left $owner &&
	grep -q "^tracerec: removed 1 probe(s) left behind by tracerec process(es) no longer running: $owner$" err
'
test_done

#!/usr/bin/env bash
# The traced program's memory is untrusted: tracerec runs as root and reads
# the pool (recorder/rt/tpp_rt_abi.h) that the program can write. A program
# that writes over the pool's header, descriptors and chunks must neither
# crash tracerec nor make it write out of bounds (the sanitized pass runs
# this file under ASan+UBSan), must not get a damaged file out of it, and
# is told. And -A must never kill a program that a seccomp filter forbids
# process_vm_readv. Truth: the sample's own call counts (samples/src/
# w-scribble.c, w-seccomp.c), the program's exit status, the file's reader.
. "$(dirname "$0")/lib.sh"
S=$B/samples

# "name=count" of func entries (a0:func_entry included), sorted.
entries() { # FILE
	"$TRACEPP" dump "$1" --format=json | python3 -c '
import json, sys, collections
c = collections.Counter()
for l in sys.stdin:
    d = json.loads(l)
    if d["type"].split(":")[-1] == "func_entry":
        c[d.get("sym", "?")] += 1
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'
}

test_expect 'the header layout written over mid-run: no crash, every call still recorded, the damage reported' '
	"$TRACEREC" record -o t.tpp -- "$S/w-scribble-pg" hdr 2000 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && grep -q "^header: layout fields written over" out &&
	grep -q "warning: the traced command wrote over [1-9][0-9]* values of the function tracing pool" err &&
	"$TRACEPP" info t.tpp >info && ! grep -q "^damaged" info &&
	got=$(entries t.tpp) && echo "$got" && [ "$got" = "calls=2 leaf=4000 main=1 pool=1 scribble_header=1" ]
'

test_expect 'every descriptor, chunk header and process copy written over: no crash, no damaged file, the damage reported' '
	"$TRACEREC" record -b 512K -o t.tpp -- "$S/w-scribble-pg" slots 2000 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && grep -q "^slots: " out &&
	grep -q "warning: the traced command wrote over [1-9][0-9]* values of the function tracing pool" err &&
	! grep -q "[0-9]\{12,\} lost" err &&
	"$TRACEPP" info t.tpp >info 2>&1 && cat info && ! grep -q "damaged" info &&
	# what was recorded before the garbage is whole: at most the calls made
	got=$(entries t.tpp) && echo "$got" && python3 -c "
import sys
c = dict(kv.split(\"=\") for kv in sys.argv[1].split())
assert int(c.get(\"leaf\", 0)) <= 2000 and int(c.get(\"main\", 0)) <= 1, c" "$got"
'

test_expect '-A under a seccomp filter that kills on process_vm_readv: the program lives, -A is turned off there with one line' '
	"$TRACEREC" record -A greet:who,n -o t.tpp -- "$S/w-seccomp-pg" arm 3 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && [ "$(cat out)" = "greeted 3" ] &&
	[ "$(grep -c "warning: -A off in 1 process(es) (first: pid [0-9]*): process_vm_readv is refused" err)" = 1 ] &&
	got=$(entries t.tpp) && echo "$got" && [ "$got" = "arm=1 greet=3 main=2" ]
'

# The program sandboxes itself once it runs (the runtime's probe at load saw
# no filter): through prctl, and through syscall(SYS_seccomp) as libseccomp
# does. Before the runtime wrapped both, the first -A string read after the
# filter killed the program (SIGSYS, rc 159).
for how in late late-sys; do
test_expect "-A, then a seccomp filter the program installs itself ($how): it lives, values recorded before it, one line" '
	"$TRACEREC" record -A greet:who,n -o t.tpp -- "$S/w-seccomp-pg" '$how' 3 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && [ "$(cat out)" = "greeted 6" ] &&
	[ "$(grep -c "warning: -A off in 1 process(es) (first: pid [0-9]*): process_vm_readv is refused" err)" = 1 ] &&
	got=$(entries t.tpp) && echo "$got" && [ "$got" = "arm=1 greet=6 main=1" ] &&
	"$TRACEPP" replay t.tpp >r && grep greet r &&
	[ "$(grep -c "greet(who=\"early\", n=[0-9]) = [0-9]" r)" = 3 ] && ! grep -q "late" r
'
done

test_expect "-A, then a seccomp filter the program installs itself that lets process_vm_readv through: the values after it are recorded too, nothing is said" '
	"$TRACEREC" record -A greet:who,n -o t.tpp -- "$S/w-seccomp-pg" late-ok 3 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && [ "$(cat out)" = "greeted 6" ] && ! grep -q "A off" err &&
	"$TRACEPP" replay t.tpp >r && grep greet r && [ "$(grep -c "greet(who=\"late\", n=[0-9]) = [0-9]" r)" = 3 ]
'

test_expect '-A without a filter on the same program: the values are there and nothing is said' '
	"$TRACEREC" record -A greet:who,n -o t.tpp -- "$S/w-seccomp-pg" run 2 >out 2>err; rc=$?
	cat out err; [ $rc = 0 ] && ! grep -q "A off" err &&
	"$TRACEPP" replay t.tpp >r && cat r && grep -q "greet(who=\"world\", n=1) = 2" r
'

test_expect '-A twice for one function: both asked parameters recorded, once each' '
	"$TRACEREC" record -q -A greet:who -A greet:n,who -o t.tpp -- "$S/s-args-pg" >/dev/null &&
	"$TRACEPP" replay t.tpp >r && cat r && grep -q "greet(who=\"world\", n=21) = 42" r
'

test_expect '-A with --min-duration: one line says no values are recorded' '
	"$TRACEREC" record -q -A greet:who --min-duration 1 -o t.tpp -- "$S/s-args-pg" >/dev/null 2>err; rc=$?
	cat err; [ $rc = 0 ] && [ "$(grep -c "warning: -A: no arguments or return values are recorded with --min-duration" err)" = 1 ]
'
test_done

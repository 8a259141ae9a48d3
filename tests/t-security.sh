#!/usr/bin/env bash
# Safe on a shared host. tracerec and tracepp run as root where other users
# exist: each attack here is prepared by `nobody` in a world-writable sticky
# directory (like /tmp), with the kernel's own guards (fs.protected_*) off
# so that only the tools' care is tested, and root then runs the tool. After
# each, nothing outside the intended output may have changed: the victim
# file root owns, the attacker's planted entries, the directory's listing.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	test_skip 'attacks by another user against root' 'needs root, setpriv and the user nobody'
	test_done
	exit
fi
W=$(mktemp -d /tmp/tpp-sec.XXXXXX) && chmod 1777 "$W"
saved=$(sysctl -n fs.protected_symlinks fs.protected_regular fs.protected_fifos 2>/dev/null | tr '\n' ' ')
restore() {
	set -- $saved
	[ $# = 3 ] && sysctl -qw fs.protected_symlinks="$1" fs.protected_regular="$2" fs.protected_fifos="$3"
	rm -rf "$W" "$_scratch"
}
trap restore EXIT
sysctl -qw fs.protected_symlinks=0 fs.protected_regular=0 fs.protected_fifos=0 2>/dev/null ||
	echo "# fs.protected_* left as they are (cannot change them here)"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
V=$_scratch/victim # root's file, which no attack may change
echo precious >"$V" && chmod 644 "$V"
# the state an attack may not change: the victim and every entry of $W
# except the one named (the intended output)
state() { stat -c '%a %U %s %Y' "$V"; cat "$V"; (cd "$W" && find . -path "./$1" -prune -o -printf '%p %y %m %u %s %l\n' | sort); }
one_line() { [ "$(wc -l <"$1")" = 1 ] || { cat "$1"; return 1; }; }
record() { # OUT [OPTIONS]: a short recording by root
	local out=$1
	shift
	timeout 60 "$TRACEREC" record -q -e sched:sched_switch "$@" -o "$out" -- true
}

# ---------------------------------------------------------------- tracerec -o
test_expect 'tracerec -o through a planted symlink: refused, the target untouched' '
	as_nobody ln -s "$V" "$W/a.tpp" && before=$(state) &&
	! record "$W/a.tpp" 2>err && cat err && one_line err && grep -q "not a regular file of yours" err &&
	[ "$(state)" = "$before" ] && [ "$(readlink "$W/a.tpp")" = "$V" ]
'

test_expect 'tracerec -o onto a file another user planted (0666): refused, nothing written into it' '
	as_nobody sh -c "echo planted >\"$W/b.tpp\" && chmod 666 \"$W/b.tpp\"" && before=$(state) &&
	! record "$W/b.tpp" 2>err && cat err && one_line err && grep -q "not a regular file of yours" err &&
	[ "$(state)" = "$before" ] && [ "$(cat "$W/b.tpp")" = planted ]
'

test_expect 'tracerec -o onto a planted FIFO: refused at once, the reader gets nothing' '
	as_nobody mkfifo -m 666 "$W/c.tpp" && before=$(state) &&
	{ record "$W/c.tpp" 2>err; rc=$?; } ; cat err; echo "exit $rc (124: still blocked after 60 s)" &&
	[ $rc != 0 ] && [ $rc != 124 ] && one_line err && [ "$(state)" = "$before" ] && [ -p "$W/c.tpp" ]
'

test_expect 'tracerec -o a new file in the shared directory: created 0600, nothing else there changes' '
	before=$(state d.tpp) && record "$W/d.tpp" 2>err && cat err &&
	[ "$(stat -c "%a %U %F" "$W/d.tpp")" = "600 root regular file" ] && [ "$(state d.tpp)" = "$before" ] &&
	"$TRACEPP" info "$W/d.tpp" >/dev/null
'

test_expect 'tracerec -o replaces an old trace of the caller own, and only that' '
	echo old >mine.tpp && chmod 644 mine.tpp && record mine.tpp 2>err && cat err &&
	[ "$(stat -c %a mine.tpp)" = 600 ] && "$TRACEPP" info mine.tpp >/dev/null && ! ls -a | grep -q "^\.mine"
'

# ---------------------------------------------------------------- file modes
test_expect 'a trace is 0600 whatever the umask; --group GROUP makes it 0640 and that group s' '
	(umask 000 && record u.tpp) && [ "$(stat -c %a u.tpp)" = 600 ] &&
	(umask 000 && record g.tpp --group nogroup) && [ "$(stat -c "%a %G" g.tpp)" = "640 nogroup" ] &&
	! record x.tpp --group no-such-group-here 2>err && one_line err && grep -q "unknown group" err
'

# ------------------------------------------------------- report and plot
DEMO=$TOP/samples/traces/demo.tpp
if command -v gnuplot >/dev/null; then
test_expect 'report -o a directory another user made, index.html a symlink to root s file: refused, nothing written' '
	as_nobody sh -c "mkdir -m 777 \"$W/rep\" && ln -s \"$V\" \"$W/rep/index.html\"" && before=$(state) &&
	! "$TRACEPP" report -o "$W/rep" "$DEMO" >out 2>err && cat err && one_line err &&
	grep -q "not a directory only you can write" err && [ "$(state)" = "$before" ]
'

test_expect 'report -o a new name in the shared directory: made private (0700), index.html 0600' '
	before=$(state new-rep) && "$TRACEPP" report -o "$W/new-rep" "$DEMO" >out 2>err && cat out err &&
	[ "$(stat -c "%a %U" "$W/new-rep")" = "700 root" ] && [ "$(stat -c %a "$W/new-rep/index.html")" = 600 ] &&
	[ "$(state new-rep)" = "$before" ] && ! ls -a "$W" | grep -q "^\.new-rep" &&
	"$TRACEPP" report -o "$W/new-rep" "$DEMO" >out 2>err && ls "$W/new-rep" | grep -q timeline.gp
'

test_expect 'plot --keep beside a FIFO planted as its script: refused, gnuplot never runs what the attacker feeds' '
	as_nobody mkfifo -m 666 "$W/p.gp" &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups timeout 120 \
		sh -c "while :; do cat \"$W/p.gp\" >/dev/null; echo \"system \\\"touch $W/pwned\\\"\" >\"$W/p.gp\"; done" &
	feeder=$! # timeout, which passes the kill on to the loop and its cat
	before=$(state)
	timeout 60 "$TRACEPP" plot --type=timeline --keep -o "$W/p.png" "$DEMO" >out 2>err; rc=$?
	kill $feeder 2>/dev/null; wait $feeder 2>/dev/null
	cat err; echo "exit $rc"; [ $rc = 1 ] && one_line err && [ ! -e "$W/pwned" ] && [ "$(state)" = "$before" ]
'

test_expect 'plot -o through a planted symlink: refused, the target untouched' '
	as_nobody ln -s "$V" "$W/q.png" && before=$(state) &&
	! "$TRACEPP" plot --type=timeline -o "$W/q.png" "$DEMO" >out 2>err && cat err && one_line err &&
	[ "$(state)" = "$before" ]
'

test_expect 'a gnuplot planted in a PATH directory another user owns is never run' '
	as_nobody sh -c "mkdir \"$W/bin\" && printf \"#!/bin/sh\\ntouch $W/pwned2\\n\" >\"$W/bin/gnuplot\" && chmod 755 \"$W/bin/gnuplot\"" &&
	PATH="$W/bin:$PATH" "$TRACEPP" plot --type=timeline -o x.png "$DEMO" >out 2>err; rc=$?; cat err
	[ $rc = 0 ] && [ ! -e "$W/pwned2" ] && grep -q "not running $W/bin/gnuplot" err && [ -s x.png ] &&
	! TPP_GNUPLOT="$W/bin/gnuplot" "$TRACEPP" plot --type=timeline -o y.png "$DEMO" 2>err && cat err &&
	[ ! -e "$W/pwned2" ] && grep -q "can be changed by other users" err
'
else
	test_skip 'report and plot attacks' 'gnuplot is not installed'
fi

test_done

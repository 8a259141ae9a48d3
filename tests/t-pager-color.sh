#!/usr/bin/env bash
# The pager and colour every command takes (postproc/cmd/front.c): the pager
# runs when stdout is a terminal (a pty made by util-linux script), never on
# a pipe, with --no-pager, or for a command that writes files; the user's
# PAGER runs as /bin/sh -c PAGER, with LESS=FRSX unless LESS is set (as git
# sets it); colour escapes come out with --color=always, or on a terminal
# with auto (not with never, NO_COLOR or TERM=dumb), and never on a pipe.
# (The sanitized pass runs front.c in every other test; here, under
# script(1)'s terminals, it cost 9 s of the suite.)
# san: skip
. "$(dirname "$0")/lib.sh"
DEMO=$TOP/samples/traces/demo.tpp
if ! command -v script >/dev/null; then
	test_skip 'pager and colour on a terminal' 'no script(1) (util-linux) to make a terminal'
	test_done; exit
fi
# tty CMD: CMD run with a pseudo-terminal as its stdin, stdout and stderr
tty() { script -qec "$1" /dev/null </dev/null; }
ESC=$(printf '\033[') E=$(printf '\033')

test_expect 'the pager runs on a terminal, not on a pipe, not with --no-pager, not for export' '
	export PAGER="tee $PWD/paged; echo LESS=\$LESS >$PWD/env"
	unset TRACEPP_PAGER LESS
	tty "$TRACEPP info $DEMO" >out && grep -q "^file:" paged && grep -q "LESS=FRSX" env &&
	tr -d "\r" <out | grep -q "^file:" &&
	rm paged && "$TRACEPP" info "$DEMO" >out2 && ! [ -e paged ] && grep -q "^file:" out2 &&
	tty "$TRACEPP info --no-pager $DEMO" >out && ! [ -e paged ] &&
	tty "$TRACEPP --no-pager info $DEMO" >out && ! [ -e paged ] && tr -d "\r" <out | grep -q "^file:" &&
	tty "$TRACEPP export --format=chrome -o x.json $DEMO" >out && ! [ -e paged ] && [ -s x.json ] &&
	LESS=X tty "$TRACEPP sched $DEMO" >out && grep -q "LESS=X$" env && [ -s paged ] &&
	rm paged && TRACEPP_PAGER=cat tty "$TRACEPP sched $DEMO" >out && ! [ -e paged ] &&
	PAGER= tty "$TRACEPP sched --color=never $DEMO" >out && ! [ -e paged ] && tr -d "\r" <out | grep -q "^ *tid"
'

test_expect 'colour with always, on a terminal with auto; never on a pipe, with never, NO_COLOR or TERM=dumb' '
	export PAGER=
	"$TRACEPP" replay --color=always "$DEMO" >a 2>/dev/null && grep -qF -e "${ESC}32m" -e "${ESC}31m" -e "${ESC}33m" a &&
	"$TRACEPP" sched --color=always "$DEMO" >s && head -1 s | grep -qF "${ESC}1mtid${ESC}0m" &&
	"$TRACEPP" replay "$DEMO" >p 2>/dev/null && ! grep -qF "$ESC" p && "$TRACEPP" replay --color=auto "$DEMO" >p 2>/dev/null && ! grep -qF "$ESC" p &&
	TERM=xterm tty "$TRACEPP sched $DEMO" >t && head -1 t | grep -qF "${ESC}1m" &&
	TERM=xterm tty "$TRACEPP sched --color=never $DEMO" >t && ! grep -qF "$ESC" t &&
	TERM=xterm NO_COLOR=1 tty "$TRACEPP sched $DEMO" >t && ! grep -qF "$ESC" t &&
	TERM=dumb tty "$TRACEPP sched $DEMO" >t && ! grep -qF "$ESC" t &&
	tr -d "\r" <t | grep -q "^ *tid" &&
	# the same text once the escapes are taken out
	sed "s/$E\[[0-9]*m//g" a >a.plain && cmp a.plain p &&
	"$TRACEPP" sched "$DEMO" >s.plain && sed "s/$E\[[0-9]*m//g" s | cmp - s.plain
'

test_expect 'a bad --color is a usage error: one line, exit 2; --help lists both options' '
	"$TRACEPP" dump --color=sometimes "$DEMO" >out 2>err; [ $? = 2 ] && [ $(wc -l <err) = 1 ] && ! [ -s out ] &&
	grep -q "unknown --color .sometimes." err &&
	for c in dump replay sched; do "$TRACEPP" $c --help | grep -q -- "--no-pager" || exit 1; done &&
	"$TRACEPP" --help | grep -q -- "--color=WHEN" &&
	"$TRACEPP" --no-pager --help | grep -q "^usage: tracepp COMMAND" && "$TRACEPP" --no-pager --color=never -V | grep -q "^tracepp " &&
	{ "$TRACEPP" --color=never >out 2>err; [ $? = 2 ]; } && [ $(wc -l <err) = 1 ] && grep -q "no command after --color=never" err
'

test_expect 'the progress line (files over 4 Mi events) on the terminal without a pager, not over the pager'\''s screen: dump, script' '
	"$B/bench/tpp-gen" -o big.tpp -n 4300000 --mix sched >/dev/null 2>&1 &&
	tty "$TRACEPP dump big.tpp >/dev/null" | tr "\r" "\n" >p1 && grep -q "% [0-9]* events" p1 &&
	TRACEPP_PAGER="wc -l" tty "$TRACEPP dump big.tpp" | tr "\r" "\n" >p2 && grep -q "^4300000$" p2 &&
	! grep -q "events" p2 &&
	# script too (as dump and info), cleared before END prints; not with -q, not under the pager
	printf "%s\n" "tracepoint:sched:sched_switch { @n = count(); }" >n.bt &&
	tty "$TRACEPP script --no-pager n.bt big.tpp" | tr "\r" "\n" >p3 && grep -q "% [0-9]* events" p3 &&
	grep -q "^@n: 2150000" p3 && tty "$TRACEPP script --no-pager -q n.bt big.tpp" | tr "\r" "\n" >p4 &&
	grep -q "^@n: 2150000" p4 && ! grep -q "events" p4 &&
	TRACEPP_PAGER="cat >$PWD/paged" tty "$TRACEPP script n.bt big.tpp" | tr "\r" "\n" >p5 &&
	grep -q "^@n: 2150000" paged && ! grep -q "events" p5
'

test_expect 'a pager that cannot run or ends early: one line naming it and exit 1, never a silent exit 141; quit early, exit 0; a one-word pager that cannot run: the output on the terminal' '
	unset PAGER
	"$TRACEPP" sched --color=never "$DEMO" >plain 2>/dev/null &&
	TRACEPP_PAGER=/nonexistent tty "$TRACEPP sched --color=never $DEMO 2>err; echo rc=\$?" | tr -d "\r" >out &&
	grep -q "^rc=0$" out && grep -v "^rc=" out | cmp - plain &&
	[ "$(grep -c "^tracepp: cannot run the pager ./nonexistent.: No such file or directory" err)" = 1 ] &&
	for c in dump info; do
		TRACEPP_PAGER="/nonexistent -x" tty "$TRACEPP $c $DEMO 2>err; echo rc=\$?" | tr -d "\r" >out &&
		grep -q "^rc=1$" out && [ "$(grep -c "^tracepp: the pager ./nonexistent -x. could not run (exit status 127)" err)" = 1 ] || return 1
	done &&
	TRACEPP_PAGER=false tty "$TRACEPP dump $DEMO 2>err; echo rc=\$?" | tr -d "\r" >out &&
	grep -q "^rc=1$" out && grep -q "^tracepp: the pager .false. failed (exit status 1)" err &&
	TRACEPP_PAGER="head -2" tty "$TRACEPP dump $DEMO 2>err; echo rc=\$?" | tr -d "\r" >out &&
	grep -q "^rc=0$" out && [ "$(grep -c . out)" = 3 ] && ! grep -q "^tracepp" err &&
	# a small output fits the pipe: a pager that fails later is said at exit
	TRACEPP_PAGER="sleep 0.2; exit 3" tty "$TRACEPP info $DEMO 2>err; echo rc=\$?" | tr -d "\r" >out &&
	grep -q "^rc=1$" out && grep -q "^tracepp: the pager .sleep 0.2; exit 3. failed (exit status 3)" err
'

test_done

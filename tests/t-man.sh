#!/usr/bin/env bash
# The man pages (man/mkman.sh, from each program's own --help) and bash
# completion (completion/tracepp.bash) against the programs themselves:
# a page for every subcommand the programs list, each rendered by groff and
# man without a warning, every long option of every option table in the
# sources in the command's --help and in its page, and completion driven in
# a real bash for subcommands, options, files and tracerec's events.
# san: skip
. "$(dirname "$0")/lib.sh"
MAN=$B/man
COMP=$TOP/completion/tracepp.bash

# the subcommands a top-level help lists
commands() { "$1" --help | sed -n '/^commands:/,/^$/{/^  [a-z]/{s/^  \([a-z]*\).*/\1/p}}'; }

test_expect 'a page for each program and each subcommand they list, and no other' '
	{ echo tracepp; echo tracerec
	  for c in $(commands "$TRACEPP"); do echo tracepp-$c; done
	  for c in $(commands "$TRACEREC"); do echo tracerec-$c; done; } | sort >want &&
	ls "$MAN" | sed -n "s/\.1$//p" | sort >got && diff want got && [ $(wc -l <got) -ge 14 ]
'

test_expect 'every page renders without a groff warning, with its name, synopsis and options; man -l shows them' '
	for p in "$MAN"/*.1; do
		groff -man -Tutf8 -ww -z "$p" 2>warn && ! [ -s warn ] || { echo "$p:"; cat warn; exit 1; }
		n=$(basename "$p" .1)
		groff -man -Tutf8 -rLL=100n "$p" 2>err | col -bx >txt && ! [ -s err ] || { cat err; exit 1; }
		grep -q "^NAME" txt && grep -q "^SYNOPSIS" txt && grep -q "^EXIT STATUS" txt &&
		grep -qE "^ *$n +- " txt || { echo "$p: no NAME line for $n"; cat txt; exit 1; }
	done &&
	for p in tracepp tracerec tracepp-replay tracerec-record; do
		MANWIDTH=100 man -l "$MAN/$p.1" 2>err | col -bx >txt && ! [ -s err ] && grep -q "^NAME" txt || { cat err; exit 1; }
	done &&
	MANWIDTH=100 man -l "$MAN/tracepp-replay.1" | col -bx | grep -- "--tid=TID"
'

test_expect 'every long option in the sources option tables is in its --help and in its man page' '
	python3 - "$TOP" "$TRACEPP" "$TRACEREC" "$MAN" <<-"PY" &&
	import glob, os, re, subprocess, sys
	top, tracepp, tracerec, man = sys.argv[1:]

	def table(text):
	    names = []
	    for m in re.finditer(r"struct option\s+\w+\[\w*\]\s*=\s*\{(.*?)\};", text, re.S):
	        names += re.findall(r"\{\s*\"([a-z][a-z0-9-]*)\"", m.group(1))
	    return names

	cli = open(os.path.join(top, "postproc/cmd/an_cli.h")).read()
	common = re.findall(r"\{\"([a-z][a-z0-9-]*)\"", cli.split("define ACLI_LONGOPTS")[1].split("\n\n")[0])
	assert "tid" in common and "where" in common, common
	checks = []
	for src in sorted(glob.glob(os.path.join(top, "postproc/cmd/cmd_*.c"))):
	    text = open(src).read()
	    opts = set(table(text))
	    if "acli_start" in text and "no_tasks = 1" not in text:
	        opts |= set(common)
	    elif "acli_start" in text:
	        # refused with a usage error (checked below), so not advertised
	        opts |= set(common) - {"tid", "comm"}
	    checks.append(([tracepp, os.path.basename(src)[4:-2]], opts))
	checks.append(([tracerec, "record"], set(table(open(os.path.join(top, "recorder/rec_options.c")).read()))))
	bad = []
	for cmd, opts in checks:
	    assert opts, cmd
	    helptext = subprocess.run(cmd + ["--help"], capture_output=True, text=True).stdout
	    page = os.path.join(man, "%s-%s.1" % (os.path.basename(cmd[0]), cmd[1]))
	    mantext = subprocess.run("groff -man -Tutf8 -rLL=200n %s | col -bx" % page, shell=True, capture_output=True,
	                             text=True).stdout
	    for o in sorted(opts):
	        for where, text in (("--help", helptext), ("man page", mantext)):
	            if not re.search(r"--%s\b" % re.escape(o), text):
	                bad.append("%s: --%s not in its %s" % (" ".join(cmd[1:]), o, where))
	    print(" ".join(cmd[1:]), len(opts), "options")
	assert not bad, "\n".join(bad)
	PY
	for c in io net; do
		"$TRACEPP" $c --tid=1 "$TOP/samples/traces/demo.tpp" 2>err; [ $? = 2 ] && [ $(wc -l <err) = 1 ] && cat err || exit 1
	done
'

test_expect 'every short option of tracerec record has its long name, doing the same; -V is --version in both programs' '
	[ "$("$TRACEPP" -V)" = "$("$TRACEPP" --version)" ] && [ "$("$TRACEREC" -V)" = "$("$TRACEREC" --version)" ] &&
	"$TRACEREC" --version | grep -qx "tracerec $(cat "$TOP/VERSION")" &&
	"$TRACEREC" record --help | python3 -c "import re, sys
h = sys.stdin.read()
shorts = set(re.findall(r\"(?m)^  -([a-zA-Z])[ ,]\", h))
pairs = dict(re.findall(r\"(?m)^  -([a-zA-Z]), --([a-z-]+)\", h))
assert len(shorts) >= 13 and shorts <= set(pairs), sorted(shorts - set(pairs))
print(sorted(pairs.items()))" &&
	{ [ ! -d /sys/kernel/tracing/instances ] && echo "no tracefs: the recording part is not run" ||
	  { "$TRACEREC" record --event sched --all-cpus --duration 0.3 --output long.tpp --quiet &&
	    "$TRACEPP" info --format=json long.tpp | grep -q "sched_switch"; }; }
'

# complete WORDS...: what the completion function offers for the last word
complete_words() {
	bash --norc --noprofile -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		case $1 in *tracerec) _tracerec ;; *) _tracepp ;; esac; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@"
}

test_expect 'completion in bash: subcommands, a subcommand options, .tpp files, tracerec events and options' '
	[ "$(complete_words "$TRACEPP" re | tr "\n" " ")" = "replay report " ] &&
	complete_words "$TRACEPP" replay --ti | grep -qx -- "--tid=" &&
	complete_words "$TRACEPP" replay - | grep -qx -- "--where=" &&
	! complete_words "$TRACEPP" replay - | grep -qx -- "--filter" &&
	mkdir d && touch a.tpp b.txt && [ "$(complete_words "$TRACEPP" info "" | sort | tr "\n" " ")" = "a.tpp d/ " ] &&
	[ "$(complete_words "$TRACEREC" rec)" = record ] &&
	complete_words "$TRACEREC" record -e sched:sched_swi | grep -qx sched:sched_switch &&
	complete_words "$TRACEREC" record -e block,sch | grep -qx block,sched &&
	complete_words "$TRACEREC" record --buf | grep -qx -- --buffer-size &&
	complete_words "$TRACEREC" record -- l | grep -qx ls &&
	[ -z "$(complete_words "$TRACEREC" record -- ls a)" ] &&
	touch "x[ab].tpp" && complete_words "$TRACEPP" info "x[" | grep -qxF "x[ab].tpp"
'

test_expect 'make install puts only the products in place (programs, runtime, pages, completion, spec, licence); uninstall takes them away' '
	# install must not rebuild what the other tests use: it is up to date or the test stops
	make -q -C "$TOP" B="$B" "$B/tracepp" "$B/tracerec" "$B/libtpprt.so" "$B/man/.made" ||
		{ echo "the build under test is out of date: not installing from it"; exit 1; }
	make -s -C "$TOP" B="$B" install PREFIX=/usr DESTDIR="$T/root" >log 2>&1 || { cat log; exit 1; }
	(cd root && find . -type f | sort) >files && cat files &&
	grep -qx ./usr/bin/tracepp files && grep -qx ./usr/bin/tracerec files &&
	grep -qx ./usr/lib/tracepp/libtpprt.so files && grep -qx ./usr/share/man/man1/tracepp-replay.1 files &&
	grep -qx ./usr/share/bash-completion/completions/tracerec files &&
	grep -qx ./usr/share/doc/tracepp/format.md files && grep -qx ./usr/share/doc/tracepp/LICENSE files &&
	! grep -E "samples|bench|tests|README|\.dat" files &&
	root/usr/bin/tracepp --version && MANWIDTH=80 man -l root/usr/share/man/man1/tracerec-record.1 | grep -q buffer-size &&
	root/usr/bin/tracerec record -q -o one.tpp -- "$B/samples/s-one-pg" >/dev/null &&
	root/usr/bin/tracepp info one.tpp | grep -q "^calls: *[1-9]" &&
	make -s -C "$TOP" B="$B" uninstall PREFIX=/usr DESTDIR="$T/root" &&
	[ -z "$(find root -type f)" ]
'

test_done

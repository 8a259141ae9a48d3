#!/bin/sh
# mkman.sh BUILD OUTDIR: the man pages of tracepp and tracerec, made from the
# --help of the built binaries, so a page cannot say other than the program:
# tracepp(1) and tracerec(1) from the top-level help, one page per
# subcommand (tracepp-replay(1), tracerec-record(1) ...) from its own --help.
# The help text goes in verbatim (no-fill), escaped for roff.
set -eu
B=$1 OUT=$2
VERSION=$("$B/tracepp" --version | awk '{print $2}')
# the date of the last commit where there is one, so two builds of a commit
# make the same pages
[ -n "${SOURCE_DATE_EPOCH:-}" ] || SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
mkdir -p "$OUT"

# roff-safe text: backslashes and hyphens escaped, lines that start with a
# dot or a quote kept as text
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"; }

# page TOOL CMD SUMMARY: TOOL-CMD.1 (or TOOL.1 when CMD is empty) from the
# --help text on stdin
page() {
	tool=$1 cmd=$2 summary=$3
	name=$tool${cmd:+-$cmd}
	upper=$(echo "$name" | tr a-z A-Z)
	help=$(cat)
	{
		echo ".TH $upper 1 \"$DATE\" \"tracepp $VERSION\" \"tracepp manual\""
		echo ".SH NAME"
		printf '%s \\- %s\n' "$(echo "$name" | esc)" "$(echo "$summary" | esc)"
		echo ".SH SYNOPSIS"
		echo ".nf"
		printf '%s\n' "$help" | sed -n 's/^usage: //p' | esc
		echo ".fi"
		echo ".SH DESCRIPTION"
		echo ".nf"
		printf '%s\n' "$help" | sed '/^usage: /d' | esc
		echo ".fi"
		echo ".SH EXIT STATUS"
		if [ "$tool$cmd" = tracereclist ]; then
			echo "0 when the list was printed; 1 an error (one line names it); 2 a usage error."
		elif [ "$tool" = tracepp ]; then
			echo "0 with a result (also from a damaged file: what its intact chunks hold, and one"
			echo "warning line); 1 no result (the file cannot be read, or the output cannot be"
			echo "written); 2 a usage error. Filters that pass no event (--tid, --comm, --func, --type,"
			echo "--where, --time-range) are no error, as with perf script and uftrace replay: one"
			echo "line on stderr, \"tracepp COMMAND: no event of FILE passes --FILTER=VALUE ...\", and"
			echo "exit 0 with what the command prints for nothing."
		else
			echo "0 when the recording was written; 1 an error (one line names it; what was"
			echo "recorded before it is kept); 2 a usage error."
		fi
		echo ".SH SEE ALSO"
		if [ -n "$cmd" ]; then echo ".BR $tool (1)"; else echo "$see" | tr , '\n' | sed 's/^ //' | grep -vx "$name(1)" | paste -sd, - | sed 's/,/, /g' | esc; fi
	} >"$OUT/$name.1"
}

# the subcommands a top-level help lists: "  NAME   SUMMARY" under "commands:"
commands() { sed -n '/^commands:/,/^$/{/^  [a-z]/p}'; }

for tool in tracepp tracerec; do
	top=$("$B/$tool" --help)
	[ -n "$top" ] || { echo "mkman: $tool --help printed nothing" >&2; exit 1; }
	see=$( { echo "tracepp(1), tracerec(1)"; printf '%s\n' "$top" | commands | awk -v t=$tool '{printf ", %s-%s(1)", t, $1}'; } | tr -d '\n')
	# every subcommand answers --help before it touches the system (tracefs,
	# files): keep it so for a new one, this runs them all at build time
	printf '%s\n' "$top" | commands | while read -r cmd summary; do
		h=$("$B/$tool" "$cmd" --help) && [ -n "$h" ] ||
			{ echo "mkman: $tool $cmd --help failed or printed nothing" >&2; exit 1; }
		printf '%s\n' "$h" | page "$tool" "$cmd" "$summary"
	done
	case $tool in
	tracepp) summary="analyse a tracerec recording offline: call trees, latency, scheduler, IO, network, plots" ;;
	*) summary="record kernel events and the function calls of a command into one trace file" ;;
	esac
	printf '%s\n' "$top" | page "$tool" "" "$summary"
done

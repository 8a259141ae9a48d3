# bash completion for tracepp and tracerec.
#
# Subcommands and options are read from the program's own --help, the one
# the user is completing (so a newer build completes its newer options);
# tracerec's -e offers its event groups and the kernel's tracepoints from
# `tracerec list`; a FILE argument offers *.tpp files and directories.

# _tpp_help PROG [CMD]: the --help text, cached while the program is the
# same file (a rebuilt or upgraded one is asked again)
_tpp_help()
{
	local path key var
	path=$(type -P "$1") || path=$1
	key="$1 ${2:-} $(stat -c %Y "$path" 2>/dev/null)"
	var=_tpp_help_$(printf '%s' "$key" | cksum | cut -d' ' -f1)
	if [[ -z ${!var+set} ]]; then
		printf -v "$var" '%s' "$("$1" ${2:+"$2"} --help 2>&1)"
	fi
	printf '%s\n' "${!var}"
}

# the subcommands a top-level help lists under "commands:"
_tpp_commands()
{
	_tpp_help "$1" | sed -n '/^commands:/,/^$/{/^  [a-z]/{s/^  \([a-z]*\).*/\1/p}}'
}

# the options a subcommand's help lists (with their '=' when they take a
# value): those that open an item (at the indent, after a column gap, in a
# list "-b, --x" or "...: -F GLOB") or stand in brackets on the usage line,
# not those named in the prose of a description
_tpp_options()
{
	local opt='--?[a-zA-Z][a-zA-Z0-9-]*=?'
	_tpp_help "$1" "$2" | {
		grep -oE -- "(^ {1,4}|[^ ]   +|, |: |\\[)$opt" | grep -oE -- "$opt\$"
	} | sort -u
}

# COMPREPLY+= the lines of a command's output, taken as they are (no
# word splitting on spaces, no pathname expansion of [ab] or *)
_tpp_add()
{
	local -a w
	mapfile -t w < <("$@")
	COMPREPLY+=("${w[@]}")
}

_tpp_files()
{
	_tpp_add compgen -d -S / -- "$1"
	_tpp_add compgen -f -X '!*.tpp' -- "$1"
}

# tracerec's -e words: its groups (from its --help) and the kernel's events,
# read where tracefs already is: a Tab never mounts anything
_tpp_events()
{
	_tpp_help "$1" record | sed -n 's/^  -e, --event EVENTS *\(.*\), SUBSYS, .*/\1/p' | tr -d ' ' | tr , '\n'
	local f
	for f in /sys/kernel/tracing/available_events /sys/kernel/debug/tracing/available_events; do
		if [[ -r $f ]]; then
			cat "$f"
			sed 's/:.*//' "$f" | sort -u
			return
		fi
	done
}

_tracepp()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]:-}
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		_tpp_add compgen -W "$(_tpp_commands "$prog") --help --version" -- "$cur"
		return
	fi
	case $cur in
	--*=*) return ;;
	-*)
		_tpp_add compgen -W "$(_tpp_options "$prog" "$cmd")" -- "$cur"
		[[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace 2>/dev/null
		return
		;;
	esac
	_tpp_files "$cur"
	compopt -o filenames 2>/dev/null
}

_tracerec()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} prog=${COMP_WORDS[0]}
	local cmd=${COMP_WORDS[1]:-} i
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		_tpp_add compgen -W "$(_tpp_commands "$prog") --help --version" -- "$cur"
		return
	fi
	# after "--" the words are the traced command's: its name, then what
	# bash completes for any command
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				_tpp_add compgen -c -- "$cur"
			else
				compopt -o default 2>/dev/null
			fi
			return
		fi
	done
	case $prev in
	-e | --event)
		# comma-separated: complete the last item
		local head=${cur%,*} item=${cur##*,}
		[[ $cur == *,* ]] || head=
		_tpp_add compgen -W "$(_tpp_events "$prog")" ${head:+-P "$head,"} -- "$item"
		compopt -o nospace 2>/dev/null
		return
		;;
	-o | --output)
		_tpp_files "$cur"
		compopt -o filenames 2>/dev/null
		return
		;;
	-p | --pid)
		_tpp_add compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur"
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		_tpp_add compgen -W "$(_tpp_options "$prog" "$cmd")" -- "$cur"
		[[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace 2>/dev/null
	fi
}

complete -F _tracepp tracepp
complete -F _tracerec tracerec

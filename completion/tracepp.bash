# bash completion for tracepp and tracerec.
#
# Subcommands and options are read from the program's own --help, the one
# the user is completing (so a newer build completes its newer options);
# tracerec's -e offers its event groups and the kernel's tracepoints from
# `tracerec list`; a FILE argument offers *.tpp files and directories.

# _tpp_help PROG [CMD]: the --help text, cached for the shell's life
_tpp_help()
{
	local key="$1 ${2:-}" var
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

_tpp_files()
{
	local IFS=$'\n'
	COMPREPLY+=($(compgen -d -S / -- "$1") $(compgen -f -X '!*.tpp' -- "$1"))
}

_tracepp()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]:-}
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$(_tpp_commands "$prog") --help --version" -- "$cur"))
		return
	fi
	case $cur in
	--*=*) return ;;
	-*)
		COMPREPLY=($(compgen -W "$(_tpp_options "$prog" "$cmd")" -- "$cur"))
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
		COMPREPLY=($(compgen -W "$(_tpp_commands "$prog") --help --version" -- "$cur"))
		return
	fi
	# after "--" the words are the traced command's
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case $prev in
	-e | --event)
		# comma-separated: complete the last item
		local head=${cur%,*} item=${cur##*,} events
		[[ $cur == *,* ]] || head=
		events=$("$prog" list 2>/dev/null | sed -n 's/^groups: //p' | tr ' ' '\n'; "$prog" list 2>/dev/null | grep -v '^groups:')
		COMPREPLY=($(compgen -W "$events" ${head:+-P "$head,"} -- "$item"))
		compopt -o nospace 2>/dev/null
		return
		;;
	-o | --output)
		_tpp_files "$cur"
		compopt -o filenames 2>/dev/null
		return
		;;
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_tpp_options "$prog" "$cmd")" -- "$cur"))
		[[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace 2>/dev/null
	fi
}

complete -F _tracepp tracepp
complete -F _tracerec tracerec

#!/usr/bin/env bash
# The two-shard ClickHouse cluster the tests and an operator's laptop use:
# two clickhouse-server processes on loopback, each with its own ports and
# directories under DIR (private: created 0700 here, or an empty 0700 one
# given), the remote_servers cluster "tpp" naming both (config.xml.in).
#   fleet/cluster.sh start DIR   starts both, waits until they answer, and
#                                writes DIR/ports: "TCP1 TCP2 HTTP1 HTTP2",
#                                DIR/curlrc (curl -K: the user and its
#                                password) and DIR/client.xml (the same for
#                                clickhouse-client --config-file)
# The one user, default, has a password made at start (random, in the 0600
# files above only: never in argv): other local users can reach loopback
# ports, and must neither read the tables nor change what a test compares.
#   fleet/cluster.sh stop DIR    stops both (TERM, then KILL after 10 s)
# The servers are this script's children's processes, not a system
# service; stop (or the caller's trap) ends them. Needs Debian's
# clickhouse-server (make deps).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
server=${CLICKHOUSE_SERVER:-/usr/sbin/clickhouse-server}

# n free loopback TCP ports (the kernel's choice; closed again before use,
# so a start that loses a race fails and says so)
free_ports() {
	python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

stop() {
	for s in s1 s2; do
		[ -f "$dir/$s/pid" ] || continue
		pid=$(cat "$dir/$s/pid")
		kill -TERM "$pid" 2>/dev/null || continue
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		rm -f "$dir/$s/pid"
	done
	return 0
}

case "$cmd" in
start)
	[ -x "$server" ] || { echo "$0: $server not found (make deps installs clickhouse-server)" >&2; exit 1; }
	if [ -e "$dir" ]; then
		[ -d "$dir" ] && [ ! -L "$dir" ] && [ "$(stat -c %a:%u "$dir")" = "700:$(id -u)" ] ||
			{ echo "$0: $dir: not a private directory (0700, ours)" >&2; exit 1; }
	else
		mkdir -m 700 "$dir" || exit 1
	fi
	dir=$(cd "$dir" && pwd) || exit 1 # the servers start in their own directories
	read -r tcp1 tcp2 http1 http2 <<<"$(free_ports 4)"
	[ -n "$http2" ] || { echo "$0: no free ports" >&2; exit 1; }
	umask 077
	pw=$(od -An -N24 -tx1 /dev/urandom | tr -d " \n")
	sha=$(printf %s "$pw" | sha256sum | cut -d" " -f1)
	[ ${#pw} = 48 ] && [ ${#sha} = 64 ] || { echo "$0: no password made" >&2; exit 1; }
	mkdir -p "$dir/conf" &&
		sed "s|<password></password>|<password_sha256_hex>$sha</password_sha256_hex>|" "$here/users.xml" \
			>"$dir/conf/users.xml" &&
		printf 'user = "default:%s"\n' "$pw" >"$dir/curlrc" &&
		printf '<config><user>default</user><password>%s</password></config>\n' "$pw" >"$dir/client.xml" ||
		exit 1
	for s in s1 s2; do
		if [ $s = s1 ]; then tcp=$tcp1 http=$http1; else tcp=$tcp2 http=$http2; fi
		mkdir -p "$dir/$s" || exit 1
		sed -e "s|@DIR@|$dir/$s|g; s|@CONF@|$dir/conf|g; s|@HTTP@|$http|; s|@TCP@|$tcp|" \
		    -e "s|@TCP1@|$tcp1|; s|@TCP2@|$tcp2|; s|@PW@|$pw|g" "$here/config.xml.in" >"$dir/$s/config.xml" || exit 1
		# its working directory is its own: the server writes status files there
		(cd "$dir/$s" && exec "$server" --config-file="$dir/$s/config.xml" >"$dir/$s/stdout" 2>&1) &
		echo $! >"$dir/$s/pid"
	done
	echo "$tcp1 $tcp2 $http1 $http2" >"$dir/ports"
	for http in $http1 $http2; do
		ok=
		for _ in $(seq 300); do
			[ "$(curl -s --max-time 1 "http://127.0.0.1:$http/ping")" = "Ok." ] && { ok=1; break; }
			sleep 0.1
		done
		if [ -z "$ok" ]; then
			echo "$0: a server did not answer on port $http in 30 s:" >&2
			tail -n 5 "$dir"/s*/server.err.log "$dir"/s*/stdout >&2 2>/dev/null
			stop
			exit 1
		fi
	done
	;;
stop)
	stop
	;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 2
	;;
esac

# Sourced by the fleet tests (t-fleet.sh, t-duckdb.sh): recordings of
# hosts whose names differ, as a fleet's are. fleet_hosts DIR writes
# DIR/h1.tpp, h2.tpp and h3.tpp, each by tpp-gen in a UTS namespace of its
# own whose hostname is h1, h2, h3 (the header's hostname is the host's),
# and prints their paths; it fails where unshare -u is refused.
fleet_hosts() {
	for h in h1 h2 h3; do
		unshare -u sh -c "hostname $h && \"\$0\" -o \"\$1/$h.tpp\" -n 6000 --seed ${h#h}" "$GEN" "$1" \
			>/dev/null 2>&1 || return 1
		echo "$1/$h.tpp"
	done
}

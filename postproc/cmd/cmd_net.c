/* tracepp net: packets and bytes per network device, each way. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "commands.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_net.h"
#include "an_merge.h"
#include "out_fast.h"
#include "wallclock.h"

static const char usage_text[] =
	"usage: tracepp net [OPTIONS] FILE...\n"
	"Per network device: packets and bytes sent (net_dev_xmit, rc 0) and\n"
	"received (netif_receive_skb); queue latency when net_dev_queue was recorded.\n"
	"Received bytes exclude the link-layer header the driver pulled.\n"
	"  --conns                  per TCP connection instead: addresses, ports, state,\n"
	"                           bytes sent and received by the process, life time\n"
	"                           (needs -e sock:inet_sock_set_state,sock:sock_send_length,\n"
	"                           sock:sock_recv_length when recording)\n"
	WALLCLOCK_USAGE
	"                           (--conns: a wall column, each connection's start)\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=FROM,TO     only this window (absolute ns, or 1.5s,2s from the start)\n"
	ACLI_MULTI_USAGE
	"Merged (without --by-host): one row per device name across the files (a name\n"
	"names a device on each host: the fleet's devices of that name): packets, bytes\n"
	"and errors added, packets/s the totals over the union of the files' wall-clock\n"
	"windows (the time any of them recorded: hosts side by side add up, runs at\n"
	"different times average), queue percentiles those of every file's packets\n"
	"together; --conns keeps each host's connections.\n";

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct acli *c = ctx;
	return an_net_feed(c->user, c->ty, ev);
}

static const struct tbl_col cols[] = {
	{"dev", NULL, TBL_STR},
	{"tx_packets", "tx-pkts", TBL_INT},
	{"tx_bytes", "tx-bytes", TBL_BYTES},
	{"rx_packets", "rx-pkts", TBL_INT},
	{"rx_bytes", "rx-bytes", TBL_BYTES},
	{"tx_errors", "tx-err", TBL_INT},
	{"tx_pps", "tx-pkt/s", TBL_F64},
	{"rx_pps", "rx-pkt/s", TBL_F64},
	{"queue_p50_ns", "queue-p50", TBL_NS},
	{"queue_p99_ns", "queue-p99", TBL_NS},
};

static const struct tbl_col conn_cols[] = {
	{"saddr", NULL, TBL_STR},
	{"sport", NULL, TBL_INT},
	{"daddr", NULL, TBL_STR},
	{"dport", NULL, TBL_INT},
	{"state", NULL, TBL_STR},
	{"tx_bytes", "tx-bytes", TBL_BYTES},
	{"rx_bytes", "rx-bytes", TBL_BYTES},
	{"sends", NULL, TBL_INT},
	{"recvs", NULL, TBL_INT},
	{"errors", NULL, TBL_INT},
	{"start_ns", "start", TBL_NS}, /* from the first event; -1: before the trace */
	{"dur_ns", "duration", TBL_NS}, /* until TCP_CLOSE; -1: not both seen */
	{"wall", NULL, TBL_STR}, /* --clock=wall only: the start, UTC; null before the trace */
};

struct net_opts {
	int conns, wall;
	struct amerge merged; /* several files merged: struct mnet by device name */
};

/* A device name's numbers across files. */
struct mnet {
	uint64_t tx_packets, tx_bytes, tx_errors, rx_packets, rx_bytes;
	struct aspan files; /* wall-clock windows of the files that have it */
	struct an_lat qlat;
};

static void dev_row(struct tbl_cell *v, const char *name, uint64_t txp, uint64_t txb, uint64_t rxp,
		    uint64_t rxb, uint64_t txe, double tx_pps, double rx_pps, struct an_lat *q)
{
	v[0] = (struct tbl_cell){.s = name};
	v[1] = (struct tbl_cell){.i = (int64_t)txp};
	v[2] = (struct tbl_cell){.i = (int64_t)txb};
	v[3] = (struct tbl_cell){.i = (int64_t)rxp};
	v[4] = (struct tbl_cell){.i = (int64_t)rxb};
	v[5] = (struct tbl_cell){.i = (int64_t)txe};
	v[6] = (struct tbl_cell){.f = tx_pps};
	v[7] = (struct tbl_cell){.f = rx_pps};
	v[8] = (struct tbl_cell){.i = (int64_t)an_lat_pct(q, 50)};
	v[9] = (struct tbl_cell){.i = (int64_t)an_lat_pct(q, 99)};
}

/* After the last file: one row per device name (devices, not --conns). */
static int net_done(struct acli *c, void *ctx)
{
	struct net_opts *o = ctx;
	if (o->conns)
		return 0; /* connections: kept by acli, host by host */
	struct table *t = tbl_open(stdout, c->fmt, cols, sizeof(cols) / sizeof(cols[0]));
	if (!t)
		return acli_fail(c, -ENOMEM, NULL);
	int rc = 0;
	for (size_t i = 0; !rc && i < o->merged.n; i++) {
		struct mnet *d = amerge_at(&o->merged, i);
		double span = aspan_union(&d->files) / 1e9;
		struct tbl_cell v[10];
		dev_row(v, o->merged.keys[i], d->tx_packets, d->tx_bytes, d->rx_packets, d->rx_bytes, d->tx_errors,
			span > 0 ? d->tx_packets / span : 0, span > 0 ? d->rx_packets / span : 0, &d->qlat);
		rc = tbl_row(t, v);
	}
	return tbl_close(t) || rc ? 1 : 0;
}

static int print_conns(struct acli *c, const struct an_net *n, int wall)
{
	struct table *t = acli_tbl_open(c, conn_cols, sizeof(conn_cols) / sizeof(conn_cols[0]) - !wall);
	for (size_t i = 0; t && i < n->nc; i++) {
		const struct an_conn *k = &n->c[i];
		char iso[40];
		int known = k->start_ts && k->start_ts >= c->t0;
		if (known)
			wall_iso(iso, sizeof(iso), tpp_clock_wall(tpp_r_clock(c->r), k->start_ts, NULL));
		struct tbl_cell v[] = {
			{.s = k->saddr[0] ? k->saddr : NULL},
			{.i = k->sport},
			{.s = k->daddr[0] ? k->daddr : NULL},
			{.i = k->dport},
			{.s = an_tcp_state(k->state)},
			{.i = (int64_t)k->tx_bytes},
			{.i = (int64_t)k->rx_bytes},
			{.i = (int64_t)k->sends},
			{.i = (int64_t)k->recvs},
			{.i = (int64_t)k->errors},
			{.i = known ? (int64_t)(k->start_ts - c->t0) : -1},
			{.i = k->start_ts && k->close_ts ? (int64_t)(k->close_ts - k->start_ts) : -1},
			{.s = known ? iso : NULL},
		};
		if (acli_tbl_row(c, t, v, 0))
			t = NULL;
	}
	return t && acli_tbl_close(c, t) == 0 ? 0 : 1;
}

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct net_opts *o = ctx;
	(void)c;
	if (opt == 'k')
		return (o->wall = wallclock_parse("net", arg)) < 0 ? 2 : 0;
	o->conns = 1;
	return 0;
}

/* One file: its table. 0 or the exit status. */
static int net_file(struct acli *c, void *ctx)
{
	const struct net_opts *o = ctx;
	int conns = o->conns;
	struct an_net n;
	an_net_init(&n);
	c->user = &n;
	if (conns)
		acli_need(c, c->ty->has[AN_SOCK_STATE] || c->ty->has[AN_SOCK_SEND],
			  "sock:inet_sock_set_state or sock:sock_send_length");
	else
		acli_need(c, c->ty->has[AN_NET_XMIT] || c->ty->has[AN_NET_RECV],
			  "net_dev_xmit or netif_receive_skb");
	struct an_run_stats st;
	int rc;
	if ((rc = acli_run(c, feed, c, &st)))
		goto out;
	if (conns) {
		/* the connection table alone, so that JSON and CSV stay one table */
		if (o->wall)
			wallclock_note("net", c->path, c->r);
		rc = print_conns(c, &n, o->wall);
		acli_report_run(c, &st);
		goto out;
	}
	double span = st.last_ts > st.first_ts ? (st.last_ts - st.first_ts) / 1e9 : 0;
	struct amerge *merged = acli_merged(c) ? &((struct net_opts *)ctx)->merged : NULL;
	struct table *t = merged ? NULL : acli_tbl_open(c, cols, sizeof(cols) / sizeof(cols[0]));
	int failed = !merged && !t;
	for (size_t i = 0; !failed && i < n.n; i++) {
		struct an_netdev *d = &n.d[i];
		double tx_pps = span > 0 ? d->tx_packets / span : 0, rx_pps = span > 0 ? d->rx_packets / span : 0;
		if (merged) {
			int made;
			struct mnet *e = amerge_get(merged, d->name, strnlen(d->name, sizeof(d->name)), &made);
			if ((failed = !e))
				break;
			if (made)
				an_lat_init(&e->qlat);
			e->tx_packets += d->tx_packets;
			e->tx_bytes += d->tx_bytes;
			e->tx_errors += d->tx_errors;
			e->rx_packets += d->rx_packets;
			e->rx_bytes += d->rx_bytes;
			/* rates over wall-clock windows: the hosts' clocks as NTP keeps them */
			const struct tpp_clock *clk = tpp_r_clock(c->r);
			if ((failed = aspan_add(&e->files, tpp_clock_wall(clk, st.first_ts, NULL),
						tpp_clock_wall(clk, st.last_ts > st.first_ts ? st.last_ts : st.first_ts, NULL))))
				break;
			an_lat_merge(&e->qlat, &d->qlat);
			continue;
		}
		struct tbl_cell v[10];
		dev_row(v, d->name, d->tx_packets, d->tx_bytes, d->rx_packets, d->rx_bytes, d->tx_errors, tx_pps,
			rx_pps, &d->qlat);
		if (acli_tbl_row(c, t, v, 0))
			failed = 1;
	}
	if (failed)
		acli_fail(c, -ENOMEM, NULL);
	rc = !failed && (merged || acli_tbl_close(c, t) == 0) ? 0 : 1;
	acli_report_run(c, &st);
out:
	an_net_free(&n);
	c->user = NULL;
	return rc;
}

int cmd_net(int argc, char **argv)
{
	static const struct option lo[] = {{"conns", no_argument, 0, 'C'},
					   {"clock", required_argument, 0, 'k'}, {0, 0, 0, 0}};
	struct net_opts o = {0};
	amerge_init(&o.merged, sizeof(struct mnet));
	const struct acli_spec spec = {.cmd = "net", .usage = usage_text, .opts = lo,
				       .opt = own_opt, .ctx = &o, .no_tasks = 1, .multi_file = 1};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	if (o.wall && !o.conns) {
		rc = acli_usage_error(&c, "--clock=wall needs --conns: only connections have times");
		acli_close(&c);
		return rc;
	}
	rc = acli_each(&c, net_file, net_done, &o);
	for (size_t i = 0; i < o.merged.n; i++)
	{
		an_lat_free(&((struct mnet *)amerge_at(&o.merged, i))->qlat);
		aspan_free(&((struct mnet *)amerge_at(&o.merged, i))->files);
	}
	amerge_free(&o.merged);
	acli_close(&c);
	return rc;
}

/* tracepp net: packets and bytes per network device, each way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "commands.h"

static const char usage_text[] =
	"usage: tracepp net [OPTIONS] FILE\n"
	"Per network device: packets and bytes sent (net_dev_xmit, rc 0) and\n"
	"received (netif_receive_skb); queue latency when net_dev_queue was recorded.\n"
	"Received bytes exclude the link-layer header the driver pulled.\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=FROM,TO     only this window\n";

struct net_run {
	struct an_net n;
	struct an_types *ty;
};

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct net_run *r = ctx;
	return an_net_feed(&r->n, r->ty, ev);
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

int cmd_net(int argc, char **argv)
{
	static const struct option lo[] = {ACLI_LONGOPTS, {0, 0, 0, 0}};
	struct acli c;
	acli_init(&c, "net");
	int opt, rc;
	while ((opt = getopt_long(argc, argv, "ht:c:", lo, NULL)) != -1) {
		if ((rc = acli_opt(&c, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		fputs(usage_text, stderr);
		return 2;
	}
	if ((rc = acli_open(&c, argc, argv)))
		return rc;
	struct net_run r;
	an_net_init(&r.n);
	r.ty = malloc(sizeof(*r.ty));
	if (!r.ty) {
		acli_close(&c);
		return 1;
	}
	an_types_init(r.ty, c.r);
	if (!r.ty->has[AN_NET_XMIT] && !r.ty->has[AN_NET_RECV])
		fprintf(stderr, "tracepp net: warning: %s has no net_dev_xmit or netif_receive_skb events\n",
			c.path);
	struct an_run_stats st;
	rc = an_run(c.r, &c.f, 1, feed, &r, &st);
	if (rc < 0) {
		rc = acli_fail(&c, rc, &st);
		goto out;
	}
	double span = st.last_ts > st.first_ts ? (st.last_ts - st.first_ts) / 1e9 : 0;
	struct table *t = tbl_open(stdout, c.fmt, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; t && i < r.n.n; i++) {
		struct an_netdev *d = &r.n.d[i];
		struct tbl_cell v[] = {
			{.s = d->name},
			{.i = (int64_t)d->tx_packets},
			{.i = (int64_t)d->tx_bytes},
			{.i = (int64_t)d->rx_packets},
			{.i = (int64_t)d->rx_bytes},
			{.i = (int64_t)d->tx_errors},
			{.f = span > 0 ? d->tx_packets / span : 0},
			{.f = span > 0 ? d->rx_packets / span : 0},
			{.i = (int64_t)an_lat_pct(&d->qlat, 50)},
			{.i = (int64_t)an_lat_pct(&d->qlat, 99)},
		};
		tbl_row(t, v);
	}
	rc = t && tbl_close(t) == 0 ? 0 : 1;
	acli_report_run(&c, &st);
out:
	an_net_free(&r.n);
	free(r.ty);
	acli_close(&c);
	return rc;
}

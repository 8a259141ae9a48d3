/* Network packets per device: net_dev_xmit for what was sent (rc 0 only:
 * NETDEV_TX_OK), netif_receive_skb for what the stack received. Queue
 * latency pairs net_dev_queue with net_dev_xmit by skb address. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_net.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_grow.h"

int an_net_init(struct an_net *n)
{
	memset(n, 0, sizeof(*n));
	n->free_q = UINT32_MAX;
	return 0;
}

void an_net_free(struct an_net *n)
{
	for (size_t i = 0; i < n->n; i++)
		an_lat_free(&n->d[i].qlat);
	free(n->d);
	free(n->qts);
	free(n->qdev);
	hmap_free(&n->queued);
	free(n->c);
	hmap_free(&n->by_sk);
	memset(n, 0, sizeof(*n));
}

static struct an_netdev *dev(struct an_net *n, const char *name, uint32_t *slot)
{
	for (size_t i = 0; i < n->n; i++)
		if (!strcmp(n->d[i].name, name)) {
			*slot = (uint32_t)i;
			return &n->d[i];
		}
	if (an_grow(&n->d, &n->cap, n->n + 1, sizeof(*n->d), 8))
		return NULL;
	struct an_netdev *d = &n->d[n->n];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	an_lat_init(&d->qlat);
	*slot = (uint32_t)n->n++;
	return d;
}

int an_net_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev)
{
	const struct an_tinfo *ti = an_ti(ty, ev);
	if (ti->kind >= AN_SOCK_STATE && ti->kind <= AN_SOCK_RECV)
		return an_conn_feed(n, ty, ev);
	if (ti->kind != AN_NET_XMIT && ti->kind != AN_NET_RECV && ti->kind != AN_NET_QUEUE)
		return 0;
	char name[32];
	an_s(ev, ti, R_NAME, name, sizeof(name));
	if (!name[0])
		snprintf(name, sizeof(name), "?");
	uint32_t slot;
	struct an_netdev *d = dev(n, name, &slot);
	if (!d)
		return -ENOMEM;
	uint64_t len = an_u(ev, ti, R_LEN), skb = an_u(ev, ti, R_ADDR);
	switch (ti->kind) {
	case AN_NET_RECV:
		d->rx_packets++;
		d->rx_bytes += len;
		return 0;
	case AN_NET_QUEUE: {
		uint32_t idx;
		if (n->free_q != UINT32_MAX) {
			idx = n->free_q;
			n->free_q = n->qdev[idx];
		} else {
			/* parallel arrays: one capacity */
			size_t c1 = n->capq, c2 = n->capq;
			if (an_grow(&n->qts, &c1, n->nq + 1, sizeof(*n->qts), 256) ||
			    an_grow(&n->qdev, &c2, n->nq + 1, sizeof(*n->qdev), 256))
				return -ENOMEM;
			n->capq = c1;
			idx = (uint32_t)n->nq++;
		}
		n->qts[idx] = ev->ts;
		n->qdev[idx] = slot;
		if (skb != HMAP_EMPTY && hmap_put(&n->queued, skb, idx))
			return -ENOMEM;
		return 0;
	}
	default:
		break;
	}
	if (ti->f[R_RC] >= 0 && (int64_t)an_u(ev, ti, R_RC) != 0) {
		d->tx_errors++;
		return 0;
	}
	d->tx_packets++;
	d->tx_bytes += len;
	uint32_t *ip = skb != HMAP_EMPTY ? hmap_get(&n->queued, skb) : NULL;
	if (ip) {
		uint32_t idx = *ip;
		if (ev->ts >= n->qts[idx])
			an_lat_add(&d->qlat, ev->ts - n->qts[idx]);
		hmap_del(&n->queued, skb);
		n->qdev[idx] = n->free_q;
		n->free_q = idx;
	}
	return 0;
}

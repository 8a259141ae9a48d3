/* an_net — network devices (packets, bytes, queue latency) and TCP
 * connections (sock:* tracepoints). Lifecycle: an_net_init .. an_net_free.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints.
 */
#ifndef TPP_AN_NET_H
#define TPP_AN_NET_H
#include <stdint.h>
#include <stddef.h>
#include "hmap.h"
#include "an_types.h"
#include "an_lat.h"

struct an_netdev {
	char name[32];
	uint64_t tx_packets, tx_bytes, tx_errors, rx_packets, rx_bytes;
	struct an_lat qlat; /* net_dev_queue -> net_dev_xmit, when both recorded */
};
/* A TCP connection seen through sock:inet_sock_set_state (addresses, ports,
 * life time) and sock:sock_send_length / sock_recv_length (bytes the
 * process sent and received through it), keyed by the socket's address
 * while it lives. */
struct an_conn {
	char saddr[46], daddr[46]; /* "" until a state change names them */
	uint16_t sport, dport;
	uint64_t start_ts; /* first event of the socket (0: before the trace) */
	uint64_t estab_ts, close_ts; /* 0: not seen */
	uint64_t tx_bytes, rx_bytes, sends, recvs, errors;
	uint8_t state;     /* last TCP state (TCP_ESTABLISHED = 1, ...) */
};
struct an_net {
	struct an_netdev *d;
	size_t n, cap;
	struct hmap queued; /* skbaddr -> queue ts slot */
	uint64_t *qts;
	uint32_t *qdev;
	size_t nq, capq;
	uint32_t free_q;
	struct an_conn *c; /* every connection, in order of first sight */
	size_t nc, capc;
	struct hmap by_sk; /* live socket address -> index in c */
};
/* Feeds the sock:* events to n's connection table (an_net_feed calls it). */
int an_conn_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev);
/* "tcp state name" of an_conn.state, e.g. "ESTABLISHED", "CLOSE". */
const char *an_tcp_state(unsigned state);
int an_net_init(struct an_net *n);
int an_net_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev);
void an_net_free(struct an_net *n);
#endif

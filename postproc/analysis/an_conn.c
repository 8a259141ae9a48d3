/* Per-connection TCP accounting from the sock:* tracepoints. A socket's
 * address is reused by the kernel for later connections, so the key lives
 * only from the socket's first event to its TCP_CLOSE; a listening socket
 * is not a connection. Bytes are the lengths the kernel reports returned to
 * the process (sock_send_length / sock_recv_length), not wire bytes. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hmap.h"
#include "an_types.h"
#include "an_grow.h"
#include "an_net.h"

enum { TCP_ESTABLISHED = 1, TCP_SYN_SENT = 2, TCP_CLOSE = 7, TCP_LISTEN = 10 };
#define MSG_PEEK_FLAG 2 /* a peek returns bytes without consuming them */

const char *an_tcp_state(unsigned state)
{
	static const char *const names[] = {
		"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
		"CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV"};
	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

static struct an_conn *conn(struct an_net *n, uint64_t sk, uint64_t ts)
{
	uint32_t *i = hmap_get(&n->by_sk, sk);
	if (i)
		return &n->c[*i];
	if (an_grow(&n->c, &n->capc, n->nc + 1, sizeof(*n->c), 64) ||
	    hmap_put(&n->by_sk, sk, (uint32_t)n->nc))
		return NULL;
	struct an_conn *c = &n->c[n->nc++];
	memset(c, 0, sizeof(*c));
	c->start_ts = ts;
	return c;
}

/* The address of a state change: IPv4 from saddr/daddr, IPv6 from the _v6
 * fields; left as it was when the event carries none. */
static void addr(char *out, const struct tpp_event *ev, const struct an_tinfo *ti, int v4, int v6)
{
	int af = (int)an_u(ev, ti, R_FAMILY);
	int i = ti->f[af == AF_INET6 ? v6 : v4];
	size_t want = af == AF_INET6 ? 16 : 4;
	if (i < 0 || !ev->v[i].s.p || ev->v[i].s.len < want)
		return;
	char buf[46];
	if (inet_ntop(af == AF_INET6 ? AF_INET6 : AF_INET, ev->v[i].s.p, buf, sizeof(buf)))
		memcpy(out, buf, sizeof(buf));
}

int an_conn_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev)
{
	const struct an_tinfo *ti = an_ti(ty, ev);
	if (ti->f[R_SK] < 0)
		return 0;
	uint64_t sk = an_u(ev, ti, R_SK);
	if (sk == HMAP_EMPTY)
		return 0;
	struct an_conn *c;
	if (ti->kind == AN_SOCK_STATE) {
		unsigned olds = (unsigned)an_u(ev, ti, R_OLDSTATE), news = (unsigned)an_u(ev, ti, R_NEWSTATE);
		int listener = news == TCP_LISTEN || olds == TCP_LISTEN;
		/* a listener's SYN_RECV child is a new socket: only the
		 * listener's own transitions are skipped */
		if (listener && !(olds == TCP_LISTEN && news != TCP_CLOSE))
			return 0;
		/* a socket first seen opening starts then; any other first
		 * sight is of a connection older than the trace */
		int opening = (olds == TCP_CLOSE && news == TCP_SYN_SENT) || olds == TCP_LISTEN;
		if (!(c = conn(n, sk, opening ? ev->ts : 0)))
			return -ENOMEM;
		uint16_t sp = (uint16_t)an_u(ev, ti, R_SPORT), dp = (uint16_t)an_u(ev, ti, R_DPORT);
		if (sp)
			c->sport = sp;
		if (dp)
			c->dport = dp;
		if (sp && dp) {
			addr(c->saddr, ev, ti, R_SADDR, R_SADDR6);
			addr(c->daddr, ev, ti, R_DADDR, R_DADDR6);
		}
		c->state = (uint8_t)news;
		if (news == TCP_ESTABLISHED && !c->estab_ts)
			c->estab_ts = ev->ts;
		if (news == TCP_CLOSE) {
			c->close_ts = ev->ts;
			hmap_del(&n->by_sk, sk);
		}
		return 0;
	}
	if (!(c = conn(n, sk, 0)))
		return -ENOMEM;
	int64_t ret = (int64_t)an_u(ev, ti, R_RET);
	if (ret < 0) {
		c->errors++;
		return 0;
	}
	if (ti->kind == AN_SOCK_SEND) {
		c->tx_bytes += (uint64_t)ret;
		c->sends++;
	} else if (!(an_u(ev, ti, R_FLAGS) & MSG_PEEK_FLAG)) {
		c->rx_bytes += (uint64_t)ret;
		c->recvs++;
	}
	return 0;
}

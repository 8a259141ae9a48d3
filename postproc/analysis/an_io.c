/* Block IO per device and direction. A request is followed by (dev, sector)
 * from insert or issue to completion; device latency is issue -> complete,
 * queue+device latency insert -> complete. Counts follow /proc/diskstats:
 * one per completed request, flushes and discards apart from reads and
 * writes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_io.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_grow.h"

const char *const an_io_op_name[AN_IO_NOPS] = {"read", "write", "discard", "flush", "other"};

struct an_ioreq {
	uint64_t insert_ts, issue_ts;
	uint32_t dev_slot; /* an_iodev index counted in flight, or UINT32_MAX */
	uint32_t next_free;
};

int an_io_init(struct an_io *io)
{
	memset(io, 0, sizeof(*io));
	io->free_rq = UINT32_MAX;
	return 0;
}

void an_io_free(struct an_io *io)
{
	for (size_t i = 0; i < io->n; i++) {
		an_lat_free(&io->d[i].d2c);
		an_lat_free(&io->d[i].q2c);
	}
	free(io->d);
	free(io->rq);
	hmap_free(&io->req);
	memset(io, 0, sizeof(*io));
}

static int rwbs_op(const char *s)
{
	/* "R", "RA", "WS", "FWS" (flush + write), "F" (flush only), "D", "N" */
	if (strchr(s, 'D'))
		return AN_IO_DISCARD;
	if (strchr(s, 'W'))
		return AN_IO_WRITE;
	if (strchr(s, 'R'))
		return AN_IO_READ;
	if (strchr(s, 'F'))
		return AN_IO_FLUSH;
	return AN_IO_OTHER;
}

static struct an_iodev *dev(struct an_io *io, uint32_t d, int op, uint32_t *slot)
{
	for (size_t i = 0; i < io->n; i++)
		if (io->d[i].dev == d && io->d[i].op == op) {
			*slot = (uint32_t)i;
			return &io->d[i];
		}
	if (an_grow(&io->d, &io->cap, io->n + 1, sizeof(*io->d), 8))
		return NULL;
	struct an_iodev *x = &io->d[io->n];
	memset(x, 0, sizeof(*x));
	x->dev = d;
	x->op = op;
	an_lat_init(&x->d2c);
	an_lat_init(&x->q2c);
	*slot = (uint32_t)io->n++;
	return x;
}

static void qd_step(struct an_iodev *d, uint64_t ts, int delta)
{
	if (d->qd_ts && ts > d->qd_ts)
		d->qd_area += (long double)d->inflight * (ts - d->qd_ts);
	d->qd_ts = ts;
	if (delta < 0 && d->inflight)
		d->inflight--;
	else if (delta > 0 && ++d->inflight > d->max_qd)
		d->max_qd = d->inflight;
}

static uint64_t key(uint64_t devn, uint64_t sector)
{
	/* sectors fit 44 bits for disks below 8 PiB */
	return (devn << 44 ^ sector) & ~(1ULL << 63);
}

static struct an_ioreq *req(struct an_io *io, uint64_t k, int create)
{
	uint32_t *i = hmap_get(&io->req, k);
	if (i)
		return &io->rq[*i];
	if (!create)
		return NULL;
	uint32_t idx;
	if (io->free_rq != UINT32_MAX) {
		idx = io->free_rq;
		io->free_rq = io->rq[idx].next_free;
	} else {
		if (an_grow(&io->rq, &io->caprq, io->nrq + 1, sizeof(*io->rq), 256))
			return NULL;
		idx = (uint32_t)io->nrq++;
	}
	if (hmap_put(&io->req, k, idx))
		return NULL;
	memset(&io->rq[idx], 0, sizeof(io->rq[idx]));
	io->rq[idx].dev_slot = UINT32_MAX;
	return &io->rq[idx];
}

int an_io_feed(struct an_io *io, const struct an_types *ty, const struct tpp_event *ev)
{
	const struct an_tinfo *ti = an_ti(ty, ev);
	if (ti->kind != AN_BLK_INSERT && ti->kind != AN_BLK_ISSUE && ti->kind != AN_BLK_COMPLETE)
		return 0;
	if (!io->first_ts)
		io->first_ts = ev->ts;
	io->last_ts = ev->ts;
	char rwbs[16];
	an_s(ev, ti, R_RWBS, rwbs, sizeof(rwbs));
	uint64_t d = an_u(ev, ti, R_DEV), sector = an_u(ev, ti, R_SECTOR), k = key(d, sector);
	int op = rwbs_op(rwbs);
	uint32_t slot;
	struct an_iodev *x = dev(io, (uint32_t)d, op, &slot);
	if (!x)
		return -ENOMEM;
	if (!x->first_ts)
		x->first_ts = ev->ts;
	x->last_ts = ev->ts;
	struct an_ioreq *r;
	switch (ti->kind) {
	case AN_BLK_INSERT:
		if (!(r = req(io, k, 1)))
			return -ENOMEM;
		r->insert_ts = ev->ts;
		r->issue_ts = 0;
		return 0;
	case AN_BLK_ISSUE:
		if (!(r = req(io, k, 1)))
			return -ENOMEM;
		r->issue_ts = ev->ts;
		/* A requeued request is issued again: count it in flight once. */
		if (r->dev_slot == UINT32_MAX) {
			qd_step(x, ev->ts, +1);
			r->dev_slot = slot;
			if (io->on_qd)
				return io->on_qd(io->cb_ctx, x, ev->ts);
		}
		return 0;
	default:
		break;
	}
	x->count++;
	uint64_t bytes = an_u(ev, ti, R_NSECT) * 512;
	int64_t error = ti->f[R_ERROR] >= 0 ? (int64_t)an_u(ev, ti, R_ERROR) : 0;
	x->bytes += bytes;
	if (error)
		x->errors++;
	uint32_t *ip = hmap_get(&io->req, k);
	if (!ip) {
		io->unmatched++;
		return 0;
	}
	uint32_t idx = *ip;
	r = &io->rq[idx];
	int rc = 0;
	if (r->issue_ts && ev->ts >= r->issue_ts) {
		an_lat_add(&x->d2c, ev->ts - r->issue_ts);
		if (io->on_d2c)
			rc = io->on_d2c(io->cb_ctx, ev->ts, ev->ts - r->issue_ts);
	} else {
		io->unmatched++;
	}
	if (r->insert_ts && ev->ts >= r->insert_ts)
		an_lat_add(&x->q2c, ev->ts - r->insert_ts);
	if (!rc && io->on_req) {
		struct an_ioreq_done done = {sector, bytes, r->insert_ts, r->issue_ts, ev->ts, error};
		rc = io->on_req(io->cb_ctx, x, &done);
	}
	if (r->dev_slot != UINT32_MAX) {
		struct an_iodev *was = &io->d[r->dev_slot];
		qd_step(was, ev->ts, -1);
		if (!rc && io->on_qd)
			rc = io->on_qd(io->cb_ctx, was, ev->ts);
	}
	hmap_del(&io->req, k);
	r->next_free = io->free_rq;
	io->free_rq = idx;
	return rc;
}

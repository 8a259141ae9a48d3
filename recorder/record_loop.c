/* The writer loop: takes the readers' pages, transcodes their events into
 * the file, keeps task names current, drains the function runtime's rings,
 * flushes, and decides when to stop. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <traceevent/kbuffer.h>
#include "record.h"

/* The file is complete up to the last flush if the recorder dies or the disk
 * fills; at high rates chunks fill (and go out) long before this. */
#define FLUSH_NS 1000000000ull

/* Keeps task names current from the events that carry them. */
static int names_from(struct rec *r, const struct tc_type *t, uint64_t ts, int32_t tid, const union tpp_val *v)
{
	int err = 0;
	switch (t->role) {
	case TC_SWITCH:
		if (t->i_pid_a >= 0 && t->i_comm_a >= 0)
			err = tn_named(&r->tn, r->w, ts, -1, (int32_t)v[t->i_pid_a].i,
				       v[t->i_comm_a].s.p, v[t->i_comm_a].s.len);
		if (!err && t->i_pid_b >= 0 && t->i_comm_b >= 0)
			err = tn_named(&r->tn, r->w, ts, -1, (int32_t)v[t->i_pid_b].i,
				       v[t->i_comm_b].s.p, v[t->i_comm_b].s.len);
		break;
	case TC_FORK:
		/* the event cannot tell a thread from a process: /proc can while
		 * the child lives; otherwise tn_named keeps what is known */
		if (t->i_pid_b >= 0 && t->i_comm_b >= 0)
			err = tn_named(&r->tn, r->w, ts, tn_proc_tgid((int32_t)v[t->i_pid_b].i),
				       (int32_t)v[t->i_pid_b].i, v[t->i_comm_b].s.p,
				       v[t->i_comm_b].s.len);
		break;
	case TC_EXEC:
		if (t->i_pid_a >= 0 && t->i_comm_a >= 0) {
			/* the kernel names the task after the file it executed */
			const char *p = v[t->i_comm_a].s.p, *b = p;
			uint32_t len = v[t->i_comm_a].s.len;
			for (uint32_t k = 0; k < len; k++)
				if (p[k] == '/')
					b = p + k + 1;
			uint32_t bl = (uint32_t)(p + len - b);
			err = tn_exec(&r->tn, r->w, ts, (int32_t)v[t->i_pid_a].i, b, bl > 15 ? 15 : bl);
		}
		break;
	case TC_NEWTASK:
		if (t->i_pid_b >= 0 && t->i_comm_b >= 0 && t->i_flags >= 0)
			err = tn_newtask(&r->tn, r->w, ts, tid, (int32_t)v[t->i_pid_b].i, v[t->i_comm_b].s.p,
					 v[t->i_comm_b].s.len, v[t->i_flags].u);
		break;
	case TC_RENAME:
		if (t->i_pid_a >= 0 && t->i_comm_a >= 0)
			err = tn_named(&r->tn, r->w, ts, -1, (int32_t)v[t->i_pid_a].i, v[t->i_comm_a].s.p,
				       v[t->i_comm_a].s.len);
		break;
	default:
		break;
	}
	return err;
}

static void process_page(struct rec *r, const struct rd_item *it)
{
	union tpp_val vals[TPP_MAX_FIELDS];
	unsigned long long ts;
	if (kbuffer_load_subbuffer(r->kb, (void *)it->data) < 0)
		return;
	for (void *data = kbuffer_read_event(r->kb, &ts); data && !r->write_err && !r->capped;
	     data = kbuffer_next_event(r->kb, &ts)) {
		int size = kbuffer_event_size(r->kb);
		int32_t tid;
		const struct tc_type *t = tc_decode(r->tc, data, (uint32_t)size, &tid, vals);
		if (!t || ts < r->cutoff_ns)
			continue;
		if (r->stored)
			r->stored[(uint64_t)it->cpu * r->st_w + t->tpp_id]++;
		int err = names_from(r, t, ts, tid, vals);
		if (!err)
			err = tn_seen(&r->tn, r->w, ts, tid);
		if (t->names_only) {
			if (err < 0)
				rec_writer_failed(r, err);
			continue;
		}
		if (!err)
			err = tpp_w_event(r->w, (uint32_t)it->cpu, t->tpp_id, ts, tid, vals);
		if (err < 0)
			rec_writer_failed(r, err);
		else
			r->events++;
	}
}

static void handle(struct rec *r, struct rd_item *it)
{
	if (it->kind == RD_LOST) {
		r->lost += it->lost;
		if (it->cpu >= 0 && it->cpu < 1024)
			r->cpu_lost[it->cpu] += it->lost;
		int err = tpp_w_lost(r->w, (uint32_t)it->cpu, it->lost, it->from, it->to);
		if (err < 0)
			rec_writer_failed(r, err);
	} else if (!r->write_err && !r->capped) {
		process_page(r, it);
	}
	rd_release(r->rs, it);
}

/* The runtime's per-thread rings hold ~80 ms of a call-heavy loop: while a
 * drain keeps finding much, drain again at once; as it finds less, back off
 * to DRAIN_IDLE_NS so an idle program costs no CPU. */
#define DRAIN_IDLE_NS 20000000u
#define DRAIN_BUSY_EVENTS 4096 /* a few ms of a call-heavy thread */
static uint64_t next_drain_interval(uint64_t cur, uint64_t moved)
{
	if (moved >= DRAIN_BUSY_EVENTS)
		return 0;
	if (moved >= DRAIN_BUSY_EVENTS / 16)
		return 1000000u;
	cur = cur * 2 + 1000000u;
	return cur > DRAIN_IDLE_NS ? DRAIN_IDLE_NS : cur;
}

/* The readers' next page; without readers, the wait is for the command. */
static struct rd_item *next_item(struct rec *r, int wait_ms)
{
	if (r->rs)
		return rd_pop(r->rs, wait_ms);
	struct pollfd p = {.fd = r->child_pidfd, .events = POLLIN};
	poll(&p, r->child_pidfd >= 0, wait_ms);
	return NULL;
}

/* The writer loop: runs until a stop condition, then drains everything the
 * readers still have. */
void rec_loop(struct rec *r)
{
	uint64_t end = r->o.duration > 0 ? r->t_start + (uint64_t)(r->o.duration * 1e9) : 0;
	uint64_t last_drain = 0, last_flush = mono_ns(), drain_every = DRAIN_IDLE_NS;
	int stopping = 0;
	for (;;) {
		int wait_ms = 50;
		if (r->fs) {
			uint64_t due = last_drain + drain_every, t = mono_ns();
			wait_ms = due <= t ? 0 : (int)((due - t) / 1000000u);
			wait_ms = wait_ms > 50 ? 50 : wait_ms;
		}
		struct rd_item *it = next_item(r, wait_ms);
		if (it)
			handle(r, it);
		uint64_t now = mono_ns();
		if (r->fs && now - last_drain >= drain_every) {
			struct tpp_w_stats before, after;
			tpp_w_stats(r->w, &before);
			int err = func_drain(r->fs, r->w, &r->next_stream);
			tpp_w_stats(r->w, &after);
			drain_every = next_drain_interval(drain_every, after.events - before.events);
			if (err < 0 && !r->write_err) {
				if (err == -EFBIG)
					r->capped = 1;
				else
					fprintf(stderr, "tracerec: %s\n", func_error(r->fs)),
						r->write_err = err;
			}
			last_drain = now;
		}
		if (now - last_flush > FLUSH_NS && !r->write_err && !r->capped) {
			rec_sample_memory(r);
			int err = tpp_w_flush(r->w);
			if (err < 0)
				rec_writer_failed(r, err);
			last_flush = now;
		}
		if (stopping) {
			if (!it && (!r->rs || rd_finished(r->rs)))
				break;
			continue;
		}
		rec_reap_child(r, 0);
		if (rec_dump_req && r->o.flight && r->rs) {
			rec_dump_req = 0;
			if (r->o.flight_secs > 0)
				r->cutoff_ns = now - (uint64_t)(r->o.flight_secs * 1e9);
			rd_drain(r->rs);
		}
		int err = r->rs ? rd_error(r->rs) : 0;
		if (err && !r->write_err) {
			fprintf(stderr, "tracerec: reading the kernel buffer: %s\n", strerror(-err));
			r->write_err = err;
		}
		if (rec_stop_req || r->write_err || r->capped || r->child_done || (end && now >= end)) {
			/* stop the kernel first so the final drain has an end */
			if (r->rs) {
				tfs_write(&r->ti, "tracing_on", "0");
				rec_counts_stop(r);
				if (r->o.flight && r->o.flight_secs > 0)
					r->cutoff_ns = now - (uint64_t)(r->o.flight_secs * 1e9);
				rd_stop(r->rs);
			}
			stopping = 1;
		}
	}
}

void rec_discard_pending(struct rec *r)
{
	rd_stop(r->rs);
	struct rd_item *it;
	while ((it = rd_pop(r->rs, 10)) || !rd_finished(r->rs))
		if (it)
			rd_release(r->rs, it);
}

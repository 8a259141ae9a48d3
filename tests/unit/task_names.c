/* task_names — the recorder's task-name records are true at their times
 * although events reach it CPU by CPU, page by page, not in time order:
 * tasks with known name histories (fork name, exec, renames) are observed
 * at random times on two CPUs; the pages are handed over in a random
 * interleaving; the file's records, read back by the spec's rule (the last
 * record at or before an event names it, the first when all are later),
 * must name every observation as the history says, in few records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "task_names.h"
#include "tpp_decode.h"
#include "tpp_test.h"

#define NTASK 40
#define NOBS 400

struct obs {
	uint64_t ts;
	int32_t tid;
	const char *name;
};

static const char *const names[] = {"tracerec", "bash", "prog", "worker-1", "worker-2", "kworker/u4:1"};

/* task i's history: a few distinct names, changing at increasing times */
struct hist {
	int n;
	uint64_t at[4];
	const char *name[4];
};

static const char *truth(const struct hist *h, uint64_t ts)
{
	const char *c = h->name[0];
	for (int k = 1; k < h->n; k++)
		if (h->at[k] <= ts)
			c = h->name[k];
	return c;
}

static int by_ts(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* the spec's rule over the records of the file */
static const char *named(const struct tpp_meta *m, int32_t tid, uint64_t ts)
{
	const struct tpp_task *best = NULL, *first = NULL;
	for (size_t i = 0; i < m->ntasks; i++) {
		const struct tpp_task *t = &m->tasks[i];
		if (t->tid != tid)
			continue;
		if (!first || t->ts < first->ts)
			first = t;
		if (t->ts <= ts && (!best || t->ts >= best->ts))
			best = t;
	}
	best = best ? best : first;
	return best ? best->comm : "";
}

static void one_run(int run)
{
	char path[] = "/tmp/tpp-tn-XXXXXX";
	close(mkstemp(path));
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o)};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open");
	struct tn_table tn;
	CHECK(tn_init(&tn) == 0, "init");
	static struct hist h[NTASK];
	for (int i = 0; i < NTASK; i++) {
		int used[6] = {0};
		h[i].n = 1 + (int)(rnd() % 4);
		uint64_t t = 0;
		for (int k = 0; k < h[i].n; k++) {
			int c;
			do
				c = (int)(rnd() % 6);
			while (used[c]);
			used[c] = 1;
			h[i].name[k] = names[c];
			h[i].at[k] = t;
			t += 1 + rnd() % 3000;
		}
	}
	/* observations per CPU, each CPU's in time order */
	static struct obs cpu[2][NOBS];
	int n[2] = {0, 0};
	for (int j = 0; j < 2 * NOBS; j++) {
		int c = (int)(rnd() % 2);
		if (n[c] == NOBS)
			c = !c;
		int32_t tid = 100 + (int32_t)(rnd() % NTASK);
		uint64_t ts = 1 + rnd() % 10000;
		cpu[c][n[c]++] = (struct obs){ts, tid, truth(&h[tid - 100], ts)};
	}
	qsort(cpu[0], (size_t)n[0], sizeof(struct obs), by_ts);
	qsort(cpu[1], (size_t)n[1], sizeof(struct obs), by_ts);
	/* pages of 1..60 events, the CPUs taken in a random order */
	int at[2] = {0, 0}, err = 0;
	while (at[0] < n[0] || at[1] < n[1]) {
		int c = (int)(rnd() % 2);
		if (at[c] == n[c])
			c = !c;
		int page = 1 + (int)(rnd() % 60);
		for (; page-- && at[c] < n[c]; at[c]++) {
			const struct obs *x = &cpu[c][at[c]];
			err |= tn_named(&tn, w, x->ts, x->tid, x->tid, x->name, (uint32_t)strlen(x->name));
		}
	}
	CHECK(!err, "tn_named: %d", err);
	tn_release(&tn);
	CHECK(tpp_w_close(w) == 0, "close");
	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	const struct tpp_meta *m = tpp_r_meta(r);
	int wrong = 0;
	for (int c = 0; c < 2; c++)
		for (int j = 0; j < n[c]; j++) {
			const struct obs *x = &cpu[c][j];
			const char *got = named(m, x->tid, x->ts);
			if (strcmp(got, x->name) && wrong++ < 3)
				fprintf(stderr, "run %d: tid %d at %llu: file says %s, it was %s\n", run, (int)x->tid,
					(unsigned long long)x->ts, got, x->name);
		}
	CHECK(!wrong, "run %d: %d of %d events misnamed", run, wrong, 2 * NOBS);
	/* a record per name change and per out-of-order page, not per event */
	CHECK(m->ntasks < 2 * NOBS / 3, "run %d: %zu records for %d events", run, m->ntasks, 2 * NOBS);
	tpp_r_close(r);
	unlink(path);
}

int main(void)
{
	for (int run = 0; run < 50; run++)
		one_run(run);
	TEST_DONE();
}

/* Threads started away from their creator's CPU (see spawn_away.h). */
#include "spawn_away.h"

static void *trampoline(void *p)
{
	struct spawn *sp = p;
	if (sp->pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(sp->cpus), &sp->cpus);
	return sp->fn(sp->arg);
}

int spawn_elsewhere(struct spawn *sp, void *(*fn)(void *), void *arg)
{
	sp->fn = fn;
	sp->arg = arg;
	sp->pinned = 0;
	pthread_attr_t at;
	int e = pthread_attr_init(&at);
	if (e)
		return -e;
	if (!sched_getaffinity(0, sizeof(sp->cpus), &sp->cpus)) {
		cpu_set_t other = sp->cpus;
		int me = sched_getcpu();
		if (me >= 0 && me < CPU_SETSIZE)
			CPU_CLR(me, &other);
		if (CPU_COUNT(&other) && !pthread_attr_setaffinity_np(&at, sizeof(other), &other))
			sp->pinned = 1;
	}
	e = pthread_create(&sp->t, &at, trampoline, sp);
	pthread_attr_destroy(&at);
	return -e;
}

void spawn_join(struct spawn *sp)
{
	pthread_join(sp->t, NULL);
}

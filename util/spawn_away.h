/* spawn_away — a helper thread started on another CPU than the caller's.
 *
 * Left to the scheduler, a new thread was often queued on its creator's
 * busy CPU until the next load-balancing tick: 1.5 to 3.5 ms here, more than
 * many whole analyses take. Created with an affinity that leaves out the
 * caller's CPU, it starts at once elsewhere; it then takes back the
 * caller's whole CPU set, so the scheduler stays free to move it.
 *
 * Contract: the caller owns struct spawn; it must stay in place from
 * spawn_elsewhere until spawn_join, which every successful start needs
 * (the thread is joinable, never detached). Errors: negative errno of
 * the thread's creation (no thread then); nothing prints. Private to the
 * project (libtpputil.a), not the API.
 */
#ifndef TPP_SPAWN_AWAY_H
#define TPP_SPAWN_AWAY_H
#include <pthread.h>
#include <sched.h>

struct spawn {
	pthread_t t;
	cpu_set_t cpus; /* the caller's, which the thread takes back */
	int pinned;
	void *(*fn)(void *);
	void *arg;
};
/* Starts fn(arg): 0, or -errno of pthread_attr_init/pthread_create. */
int spawn_elsewhere(struct spawn *sp, void *(*fn)(void *), void *arg);
/* Waits for the thread started by a successful spawn_elsewhere. */
void spawn_join(struct spawn *sp);
#endif

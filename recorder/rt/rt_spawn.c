/* Children started with an environment of the program's own making
 * (execve, posix_spawn with an explicit envp, after clearenv) would start
 * without LD_PRELOAD and $TPP_RT_FD and go untraced. Every exec and spawn
 * entry point gets them back: the values this process started with are
 * added when missing, our library prepended to an LD_PRELOAD of the
 * program's. The exec family calls execve inside libc, out of our reach, so
 * each member is wrapped. Memory comes from the stack (alloca): an exec
 * after vfork must not touch the parent's heap.
 *
 * An exec ends every frame of the process: the new image starts a new
 * tree in the same thread. They are closed (why END) just before it, and
 * resume if it fails.
 *
 * A profiled program (-pg: gmon arms ITIMER_PROF every 10 ms of CPU with a
 * SIGPROF handler) keeps the timer across exec but not the handler: a period
 * ending before the new image's gmon sets its handler again kills it with
 * SIGPROF. The exec alone takes 5-10 ms of CPU here; loading and starting
 * this library adds to it. So the signal is ignored across the exec (an
 * ignored signal stays ignored in the new image): gmon replaces that with
 * its handler, and an image that sets none ignores the timer it inherited
 * instead of dying of it. Restored if the exec fails. */
#include <alloca.h>
#include <pthread.h>
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "rt_int.h"

extern char **environ;

#define ENV_MAX 4096 /* bytes of one of our variables */
#define ENVP_MAX 65536 /* entries: beyond, the environment passes unchanged */
#define ARGV_MAX 4096  /* arguments of execl and kin */
static char pre_env[ENV_MAX], shm_env[ENV_MAX]; /* "NAME=value", empty if unset */
static size_t pre_len, shm_len;
static const char *our_lib; /* the path of this library, as LD_PRELOAD names it */

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);
static int (*real_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			 char *const[], char *const[]);
static int (*real_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			  char *const[], char *const[]);

static pid_t my_pid; /* not a vfork child's: it shares our memory, frames included */

static void fork_child(void)
{
	my_pid = (pid_t)syscall(SYS_getpid);
}

/* Closes (why END) or, after a failed exec, resumes the thread's frames. */
static void exec_frames(unsigned kind)
{
	struct rt_thread *t = &rt_self;
	if (!t->stack || t->busy || !rt_hdr || (pid_t)syscall(SYS_getpid) != my_pid)
		return;
	t->busy = (uintptr_t)__builtin_frame_address(0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t ts = rt_now();
	for (int k = 0; k < t->depth; k++) {
		int i = kind == TPP_RT_UNWIND ? t->depth - 1 - k : k;
		uint64_t why = kind == TPP_RT_UNWIND ? TPP_RT_WHY_END : TPP_RT_WHY_RESUME;
		if (t->stack[i].flags & RT_F_EMITTED)
			rt_emit(t, ts, t->stack[i].addr | why << TPP_RT_WHY_SHIFT, kind);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* Ignores SIGPROF while a profiling timer runs with a handler set (old:
 * the handler, to put back if the exec fails); 0 when nothing was done. */
static int prof_hold(struct sigaction *old)
{
	struct itimerval it;
	if (getitimer(ITIMER_PROF, &it) || !timerisset(&it.it_value) || sigaction(SIGPROF, NULL, old) ||
	    old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN)
		return 0; /* no timer, or a signal the exec leaves as it is */
	struct sigaction ign = {.sa_handler = SIG_IGN};
	return !sigaction(SIGPROF, &ign, NULL);
}

/* The exec's call: frames closed, SIGPROF held; both undone if it fails
 * (errno kept). */
#define EXEC(call)                                            \
	struct sigaction prof_;                               \
	exec_frames(TPP_RT_UNWIND);                           \
	int held_ = prof_hold(&prof_);                        \
	int r = (call);                                       \
	int err_ = errno;                                     \
	if (held_)                                            \
		sigaction(SIGPROF, &prof_, NULL);             \
	exec_frames(TPP_RT_ENTRY);                            \
	errno = err_;                                         \
	return r

static void keep(char *dst, size_t *len, const char *name)
{
	const char *v = getenv(name);
	size_t n = strlen(name), vl = v ? strlen(v) : 0;
	if (!v || n + 1 + vl + 1 > ENV_MAX)
		return;
	memcpy(dst, name, n);
	dst[n] = '=';
	memcpy(dst + n + 1, v, vl + 1);
	*len = n + 1 + vl;
}

__attribute__((constructor(102))) static void spawn_init(void)
{
	real_execve = (__typeof__(real_execve))dlsym(RTLD_NEXT, "execve");
	real_execvpe = (__typeof__(real_execvpe))dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = (__typeof__(real_fexecve))dlsym(RTLD_NEXT, "fexecve");
	real_spawn = (__typeof__(real_spawn))dlsym(RTLD_NEXT, "posix_spawn");
	real_spawnp = (__typeof__(real_spawnp))dlsym(RTLD_NEXT, "posix_spawnp");
	my_pid = (pid_t)syscall(SYS_getpid);
	pthread_atfork(NULL, NULL, fork_child);
	if (!getenv(TPP_RT_ENV_FD))
		return; /* not recording: children are none of our business */
	keep(pre_env, &pre_len, "LD_PRELOAD");
	keep(shm_env, &shm_len, TPP_RT_ENV_FD);
	Dl_info di;
	if (dladdr((void *)spawn_init, &di) && di.dli_fname)
		our_lib = di.dli_fname;
}

static const char *find(char *const envp[], const char *name, size_t n, size_t *at)
{
	for (size_t i = 0; envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=') {
			*at = i;
			return envp[i] + n + 1;
		}
	return NULL;
}

/* Whether an LD_PRELOAD list names our library already. */
static int lists_us(const char *list)
{
	size_t ol = strlen(our_lib);
	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ": ");
		if (l == ol && !memcmp(p, our_lib, ol))
			return 1;
		p += l;
		p += *p != 0;
	}
	return 0;
}

/* envp with our variables (into out, room for n + 3 entries, LD_PRELOAD
 * text in buf); envp itself when it has them or is too big to copy. */
static char *const *fix_env(char *const envp[], char **out, char *buf, size_t n)
{
	size_t at = 0, k = 0;
	const char *pre = find(envp, "LD_PRELOAD", 10, &at);
	int need_pre = pre_len && our_lib && !(pre && lists_us(pre));
	size_t shm_at;
	int need_shm = shm_len && !find(envp, TPP_RT_ENV_FD, strlen(TPP_RT_ENV_FD), &shm_at);
	if (!need_pre && !need_shm)
		return envp;
	for (size_t i = 0; i < n; i++)
		if (!(need_pre && pre && i == at))
			out[k++] = envp[i];
	if (need_pre) {
		if (pre && *pre) {
			size_t ol = strlen(our_lib), pl = strlen(pre);
			memcpy(buf, "LD_PRELOAD=", 11);
			memcpy(buf + 11, our_lib, ol);
			buf[11 + ol] = ':';
			memcpy(buf + 12 + ol, pre, pl + 1);
			out[k++] = buf;
		} else {
			out[k++] = pre_env;
		}
	}
	if (need_shm)
		out[k++] = shm_env;
	out[k] = NULL;
	return out;
}

static size_t count(char *const v[])
{
	size_t n = 0;
	while (v && v[n] && n <= ENVP_MAX)
		n++;
	return n;
}

/* Declares out/buf on the caller's stack and fixes envp into them. */
#define FIX_ENV(envp)                                                                         \
	size_t n_ = count(envp);                                                              \
	char **out_ = (envp) && n_ <= ENVP_MAX && rt_hdr ? alloca((n_ + 3) * sizeof(char *)) : NULL; \
	char *buf_ = out_ ? alloca(ENV_MAX + strlen(our_lib ? our_lib : "") + 16) : NULL;     \
	char *const *fixed_ = out_ ? fix_env(envp, out_, buf_, n_) : (envp)

RT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	FIX_ENV(envp);
	if (!real_execve)
		return errno = ENOSYS, -1;
	EXEC(real_execve(path, argv, fixed_));
}

RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	FIX_ENV(envp);
	if (!real_execvpe)
		return errno = ENOSYS, -1;
	EXEC(real_execvpe(file, argv, fixed_));
}

RT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	FIX_ENV(envp);
	if (!real_fexecve)
		return errno = ENOSYS, -1;
	EXEC(real_fexecve(fd, argv, fixed_));
}

RT_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

RT_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl and kin: the variadic arguments into an array on the stack. */
#define VA_ARGV(first, argv, tail)                                   \
	va_list ap;                                                  \
	const char *first_ = (first);                                \
	__asm__("" : "+r"(first_)); /* libc calls it nonnull; not so */ \
	size_t n = first_ != NULL;                                   \
	va_start(ap, first);                                         \
	while (n && va_arg(ap, char *) && n < ARGV_MAX)              \
		n++;                                                 \
	va_end(ap);                                                  \
	if (n >= ARGV_MAX)                                           \
		return errno = E2BIG, -1;                            \
	char **argv = alloca((n + 1) * sizeof(char *));              \
	argv[0] = (char *)(first);                                   \
	va_start(ap, first);                                         \
	for (size_t i = 1; i <= n; i++)                              \
		argv[i] = va_arg(ap, char *);                        \
	argv[n] = NULL;                                              \
	tail;                                                        \
	va_end(ap)

RT_EXPORT int execl(const char *path, const char *arg, ...)
{
	VA_ARGV(arg, argv, (void)0);
	return execve(path, argv, environ);
}

RT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	VA_ARGV(arg, argv, (void)0);
	return execvpe(file, argv, environ);
}

RT_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **envp;
	VA_ARGV(arg, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

RT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	FIX_ENV(envp);
	if (!real_spawn)
		return ENOSYS;
	return real_spawn(pid, path, fa, attr, argv, fixed_);
}

RT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	FIX_ENV(envp);
	if (!real_spawnp)
		return ENOSYS;
	return real_spawnp(pid, file, fa, attr, argv, fixed_);
}

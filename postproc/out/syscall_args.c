/* The arguments of x86-64 system calls, by number, as the kernel's
 * SYSCALL_DEFINEs name them, each with how it reads: raw_syscalls:sys_enter
 * carries six raw words and no count, and only the definition says how many
 * a call takes and which are descriptors, sizes or addresses.
 *
 * Kinds: d  an int (descriptors, pids, signals: -100 is AT_FDCWD)
 *        D  a long (offsets)
 *        u  an unsigned size or count
 *        o  a mode, in octal as ls and strace print it
 *        x  an address or a flag set, in hex */
#include <stdio.h>
#include <string.h>
#include "fieldfmt.h"

struct sc_args {
	unsigned short nr;
	const char *args; /* "name:kind ..." in order; "" for none */
};

/* Sorted by number (ff_syscall_args bisects). */
static const struct sc_args table[] = {
	{0, "fd:d buf:x count:u"},
	{1, "fd:d buf:x count:u"},
	{2, "filename:x flags:x mode:o"},
	{3, "fd:d"},
	{4, "filename:x statbuf:x"},
	{5, "fd:d statbuf:x"},
	{6, "filename:x statbuf:x"},
	{7, "ufds:x nfds:u timeout_msecs:d"},
	{8, "fd:d offset:D whence:d"},
	{9, "addr:x len:u prot:x flags:x fd:d off:D"},
	{10, "start:x len:u prot:x"},
	{11, "addr:x len:u"},
	{12, "brk:x"},
	{13, "sig:d act:x oact:x sigsetsize:u"},
	{14, "how:d nset:x oset:x sigsetsize:u"},
	{15, ""},
	{16, "fd:d cmd:x arg:x"},
	{17, "fd:d buf:x count:u pos:D"},
	{18, "fd:d buf:x count:u pos:D"},
	{19, "fd:d vec:x vlen:u"},
	{20, "fd:d vec:x vlen:u"},
	{21, "filename:x mode:o"},
	{22, "fildes:x"},
	{23, "n:d inp:x outp:x exp:x tvp:x"},
	{24, ""},
	{25, "addr:x old_len:u new_len:u flags:x new_addr:x"},
	{28, "start:x len_in:u behavior:d"},
	{32, "fildes:d"},
	{33, "oldfd:d newfd:d"},
	{34, ""},
	{35, "rqtp:x rmtp:x"},
	{39, ""},
	{41, "family:d type:x protocol:d"},
	{42, "fd:d uservaddr:x addrlen:u"},
	{43, "fd:d upeer_sockaddr:x upeer_addrlen:x"},
	{44, "fd:d buff:x len:u flags:x addr:x addr_len:u"},
	{45, "fd:d ubuf:x size:u flags:x addr:x addr_len:x"},
	{46, "fd:d msg:x flags:x"},
	{47, "fd:d msg:x flags:x"},
	{48, "fd:d how:d"},
	{49, "fd:d umyaddr:x addrlen:u"},
	{50, "fd:d backlog:d"},
	{51, "fd:d usockaddr:x usockaddr_len:x"},
	{52, "fd:d usockaddr:x usockaddr_len:x"},
	{53, "family:d type:x protocol:d usockvec:x"},
	{54, "fd:d level:d optname:d optval:x optlen:u"},
	{55, "fd:d level:d optname:d optval:x optlen:x"},
	{56, "clone_flags:x newsp:x parent_tidptr:x child_tidptr:x tls:x"},
	{57, ""},
	{58, ""},
	{59, "filename:x argv:x envp:x"},
	{60, "error_code:d"},
	{61, "upid:d stat_addr:x options:x ru:x"},
	{62, "pid:d sig:d"},
	{63, "name:x"},
	{72, "fd:d cmd:d arg:x"},
	{73, "fd:d cmd:d"},
	{74, "fd:d"},
	{75, "fd:d"},
	{76, "path:x length:D"},
	{77, "fd:d length:D"},
	{78, "fd:d dirent:x count:u"},
	{79, "buf:x size:u"},
	{80, "filename:x"},
	{81, "fd:d"},
	{82, "oldname:x newname:x"},
	{83, "pathname:x mode:o"},
	{84, "pathname:x"},
	{85, "pathname:x mode:o"},
	{86, "oldname:x newname:x"},
	{87, "pathname:x"},
	{88, "oldname:x newname:x"},
	{89, "path:x buf:x bufsiz:d"},
	{90, "filename:x mode:o"},
	{91, "fd:d mode:o"},
	{92, "filename:x user:d group:d"},
	{93, "fd:d user:d group:d"},
	{95, "mask:o"},
	{96, "tv:x tz:x"},
	{97, "resource:d rlim:x"},
	{98, "who:d ru:x"},
	{99, "info:x"},
	{101, "request:d pid:d addr:x data:x"},
	{102, ""},
	{104, ""},
	{105, "uid:d"},
	{106, "gid:d"},
	{107, ""},
	{108, ""},
	{109, "pid:d pgid:d"},
	{110, ""},
	{111, ""},
	{112, ""},
	{121, "pid:d"},
	{124, "pid:d"},
	{137, "pathname:x buf:x"},
	{138, "fd:d buf:x"},
	{157, "option:d arg2:x arg3:x arg4:x arg5:x"},
	{158, "option:d arg2:x"},
	{186, ""},
	{188, "pathname:x name:x value:x size:u flags:x"},
	{189, "pathname:x name:x value:x size:u flags:x"},
	{190, "fd:d name:x value:x size:u flags:x"},
	{191, "pathname:x name:x value:x size:u"},
	{192, "pathname:x name:x value:x size:u"},
	{193, "fd:d name:x value:x size:u"},
	{194, "pathname:x list:x size:u"},
	{195, "pathname:x list:x size:u"},
	{196, "fd:d list:x size:u"},
	{200, "pid:d sig:d"},
	{201, "tloc:x"},
	{202, "uaddr:x op:d val:u utime:x uaddr2:x val3:u"},
	{203, "pid:d len:u user_mask_ptr:x"},
	{204, "pid:d len:u user_mask_ptr:x"},
	{213, "size:d"},
	{217, "fd:d dirent:x count:u"},
	{218, "tidptr:x"},
	{228, "which_clock:d tp:x"},
	{229, "which_clock:d tp:x"},
	{230, "which_clock:d flags:x rqtp:x rmtp:x"},
	{231, "error_code:d"},
	{232, "epfd:d events:x maxevents:d timeout:d"},
	{233, "epfd:d op:d fd:d event:x"},
	{234, "tgid:d pid:d sig:d"},
	{257, "dfd:d filename:x flags:x mode:o"},
	{258, "dfd:d pathname:x mode:o"},
	{262, "dfd:d filename:x statbuf:x flag:x"},
	{263, "dfd:d pathname:x flag:x"},
	{264, "olddfd:d oldname:x newdfd:d newname:x"},
	{267, "dfd:d pathname:x buf:x bufsiz:d"},
	{268, "dfd:d filename:x mode:o"},
	{269, "dfd:d filename:x mode:o"},
	{270, "n:d inp:x outp:x exp:x tsp:x sig:x"},
	{271, "ufds:x nfds:u tsp:x sigmask:x sigsetsize:u"},
	{273, "head:x len:u"},
	{281, "epfd:d events:x maxevents:d timeout:d sigmask:x sigsetsize:u"},
	{284, "count:u"},
	{288, "fd:d upeer_sockaddr:x upeer_addrlen:x flags:x"},
	{290, "count:u flags:x"},
	{291, "flags:x"},
	{292, "oldfd:d newfd:d flags:x"},
	{293, "fildes:x flags:x"},
	{295, "fd:d vec:x vlen:u pos_l:x pos_h:x"},
	{296, "fd:d vec:x vlen:u pos_l:x pos_h:x"},
	{302, "pid:d resource:d new_rlim:x old_rlim:x"},
	{316, "olddfd:d oldname:x newdfd:d newname:x flags:x"},
	{318, "buf:x count:u flags:x"},
	{319, "uname:x flags:x"},
	{322, "fd:d filename:x argv:x envp:x flags:x"},
	{332, "dfd:d filename:x flags:x mask:x buffer:x"},
	{334, "rseq:x rseq_len:u flags:x sig:x"},
	{435, "uargs:x size:u"},
	{437, "dfd:d filename:x how:x usize:u"},
	{439, "dfd:d filename:x mode:o flags:x"},
};

/* The argument list of syscall nr, NULL when the table lacks it. */
static const char *args_of(uint64_t nr)
{
	size_t lo = 0, hi = sizeof(table) / sizeof(table[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (table[mid].nr == nr)
			return table[mid].args;
		if (table[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int ff_syscall_nargs(uint64_t nr)
{
	const char *a = args_of(nr);
	if (!a)
		return -1;
	int n = 0;
	for (; *a; a++)
		n += *a == ':';
	return n;
}

void ff_call_fields(struct ff_call *f, const char *arch, const struct tpp_type *t)
{
	f->id = f->args = -1;
	const char *colon = t && t->name ? strchr(t->name, ':') : NULL;
	if (!t || !t->name || ff_kind(arch, t->name, "id") != FF_SYSCALL ||
	    strcmp(colon ? colon + 1 : t->name, "sys_enter"))
		return;
	for (int i = 0; i < t->nfields && i < TPP_MAX_FIELDS; i++) {
		if (!strcmp(t->fields[i].name, "id") && t->fields[i].type <= TPP_F_S64) /* long id: signed */
			f->id = i;
		if (!strcmp(t->fields[i].name, "args") && t->fields[i].type == TPP_F_BYTES)
			f->args = i;
	}
	if (f->id < 0 || f->args < 0)
		f->id = f->args = -1;
}

size_t ff_call_text(const struct ff_call *f, const struct tpp_event *ev, char *buf, size_t len)
{
	if (f->args < 0 || f->args >= (int)ev->nvals || f->id >= (int)ev->nvals)
		return 0;
	return ff_syscall_call(buf, len, ev->v[f->id].u, ev->v[f->args].s.p, ev->v[f->args].s.len);
}

size_t ff_syscall_call(char *buf, size_t len, uint64_t nr, const void *words, size_t nbytes)
{
	if (!words || nbytes != 6 * sizeof(uint64_t))
		return 0;
	uint64_t args[6];
	const unsigned char *p = words;
	for (int k = 0; k < 6; k++) {
		args[k] = 0;
		for (int b = 7; b >= 0; b--) /* the recording host's order: x86-64, little-endian */
			args[k] = args[k] << 8 | p[k * 8 + b];
	}
	char name[24];
	size_t o = ff_text(name, sizeof(name), FF_SYSCALL, nr);
	const char *a = args_of(nr);
	if (!o || len < 64)
		return 0;
	int n = snprintf(buf, len, "%s(", name);
	for (unsigned i = 0; i < 6 && n > 0 && (size_t)n < len; i++) {
		const char *sp = a ? strchr(a, ' ') : NULL, *colon = a ? strchr(a, ':') : NULL;
		if (a && !*a)
			break;
		const char *sep = i ? ", " : "";
		uint64_t v = args[i];
		int w;
		if (!a) /* a call the table lacks: the six words, as trace-cmd prints them */
			w = snprintf(buf + n, len - (size_t)n, "%s0x%llx", sep, (unsigned long long)v);
		else {
			int nl = (int)(colon - a);
			switch (colon[1]) {
			case 'd': w = snprintf(buf + n, len - (size_t)n, "%s%.*s=%d", sep, nl, a, (int)(uint32_t)v); break;
			case 'D': w = snprintf(buf + n, len - (size_t)n, "%s%.*s=%lld", sep, nl, a, (long long)v); break;
			case 'u': w = snprintf(buf + n, len - (size_t)n, "%s%.*s=%llu", sep, nl, a, (unsigned long long)v); break;
			case 'o': w = snprintf(buf + n, len - (size_t)n, "%s%.*s=0%llo", sep, nl, a, (unsigned long long)v); break;
			default: w = snprintf(buf + n, len - (size_t)n, "%s%.*s=0x%llx", sep, nl, a, (unsigned long long)v);
			}
			a = sp ? sp + 1 : colon + 2;
		}
		n += w;
	}
	if (n <= 0 || (size_t)n + 2 > len)
		return 0;
	buf[n++] = ')';
	buf[n] = 0;
	return (size_t)n;
}

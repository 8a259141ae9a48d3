/* The output file: opened with every type, stream and host note declared
 * before the first event, and the first writer failure remembered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "record.h"

static int host_notes(struct rec *r)
{
	struct utsname u;
	char ncpu[16], kb[32], sub[32], pages[16];
	uname(&u);
	snprintf(ncpu, sizeof(ncpu), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	if (r->no_kernel || tfs_read(&r->ti, "buffer_size_kb", kb, sizeof(kb)))
		kb[0] = 0;
	kb[strcspn(kb, "\n")] = 0;
	if (tfs_read(&r->ti, "buffer_subbuf_size_kb", sub, sizeof(sub)))
		snprintf(sub, sizeof(sub), "%ld", sysconf(_SC_PAGESIZE) / 1024);
	sub[strcspn(sub, "\n")] = 0;
	snprintf(pages, sizeof(pages), "%ld", sysconf(_SC_PAGESIZE));
	const char *keys[] = {"hostname", "kernel", "version", "machine", "cpus_online",
			      "page_size", "trace_clock", "buffer_size_kb", "subbuf_size_kb",
			      "mode"};
	const char *vals[] = {u.nodename, u.release, u.version, u.machine, ncpu, pages,
			      "mono", kb, sub, r->o.flight ? "flight-recorder" : "streaming"};
	return tpp_w_note(r->w, "host", sizeof(keys) / sizeof(keys[0]), keys, vals);
}

int rec_open_writer(struct rec *r, int argc, char **argv)
{
	struct tpp_w_opts wo = {
		.sz = sizeof(wo),
		.max_file_bytes = r->o.max_bytes,
		.producer = "tracerec",
		.producer_version = TPP_VERSION,
		.argc = argc,
		.argv = argv,
		.group_read = r->o.group,
		.gid = r->o.gid,
	};
	if (r->o.max_bytes && r->o.max_bytes < (8u << 20)) {
		/* a chunk that does not fit is refused whole: keep them small
		 * enough that the cap cuts only a little off the end */
		uint64_t cb = r->o.max_bytes / 4;
		wo.chunk_bytes = (uint32_t)(cb < 16384 ? 16384 : cb);
	}
	int err = tpp_w_open(&r->w, r->o.out, &wo);
	if (err) {
		fprintf(stderr, "tracerec: cannot create %s: %s\n", r->o.out, tpp_strerror(err));
		r->w = NULL;
		return err;
	}
	for (int i = 0; !err && i < r->tc->ntypes; i++) {
		if (r->tc->types[i]->names_only)
			continue; /* read for task names only */
		struct tpp_type_def d = tc_type_def(r->tc->types[i]);
		err = tpp_w_add_type_fmt(r->w, &d, r->tc->types[i]->ev.print_fmt);
	}
	uint16_t next_type = (uint16_t)(r->tc->ntypes + 1);
	if (!err && r->fs && (err = func_declare_types(r->fs, r->w, &next_type)) < 0) {
		fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
		return err;
	}
	for (int i = 0; !err && i < r->ncpus; i++)
		err = tpp_w_stream(r->w, (uint32_t)r->cpus[i], TPP_S_CPU, r->cpus[i], -1, -1);
	if (!err)
		err = host_notes(r);
	/* Every task alive now matters to -a, -p and -C; a command's tasks are
	 * named as they appear (forked from us, they cannot predate us), and
	 * reading all of /proc on a busy host was most of a short run's cost. */
	if (!err && (!r->o.cmd || r->o.all))
		err = tn_scan_proc(&r->tn, r->w, mono_ns());
	/* The header and what is known now go to disk at once: a recorder
	 * killed in its first second leaves a file that opens, not 0 bytes. */
	if (!err)
		err = tpp_w_flush(r->w);
	if (err < 0)
		fprintf(stderr, "tracerec: writing %s: %s\n", r->o.out, tpp_w_error(r->w));
	return err < 0 ? err : 0;
}

/* Records a writer failure once; -EFBIG is the --max-size cap, not an error. */
void rec_writer_failed(struct rec *r, int err)
{
	if (r->write_err || r->capped)
		return;
	if (err == -EFBIG) {
		r->capped = 1;
		return;
	}
	r->write_err = err;
	const char *m = tpp_w_error(r->w);
	fprintf(stderr, "tracerec: writing %s: %s\n", r->o.out, m && *m ? m : tpp_strerror(err));
}

/* report_dir — where `tracepp report -o DIR` writes. The page, images, data
 * and scripts are made in a fresh private directory (0700, a random name,
 * format/safefile.h) and put in place at the end: a new DIR is that
 * directory renamed; an existing DIR must be a directory of the caller's
 * that no one else can write (its group may be the caller's own), and each
 * file is renamed into it, replacing only regular files of the caller's.
 * Anything else is refused before any work. So another user can neither
 * plant a symlink that root's report writes through nor swap a script
 * gnuplot runs. Errors: -1 with the message in err; nothing prints. */
#ifndef TPP_REPORT_DIR_H
#define TPP_REPORT_DIR_H
#include <stdio.h>

struct report_dir {
	char dir[4096];  /* DIR as given, without trailing slashes */
	char path[4400]; /* the private directory, for the plots' paths */
	const char *name;/* DIR's last component */
	int pfd;         /* where the private directory is: DIR's parent (fresh) or DIR */
	int wfd;         /* the private directory */
	int fresh;       /* DIR did not exist */
	char work[300];
	char err[4600];
};

int report_dir_open(struct report_dir *d, const char *dir);
/* NAME in the private directory, created for writing, 0600; NULL with err. */
FILE *report_dir_file(struct report_dir *d, const char *name);
/* Puts everything in place and releases d: 0, or -1 with err. */
int report_dir_finish(struct report_dir *d);
/* Removes what was made and releases d. */
void report_dir_abort(struct report_dir *d);
#endif

/* export_table — `tracepp export --table=T` (and --schema): recordings as
 * rows for analytics engines, through postproc/out/xtable.h. cmd_export
 * hands it argv when --table or --schema is given. Prints its own errors;
 * returns the exit status (0, 1 failure, 2 usage). */
#ifndef TPP_EXPORT_TABLE_H
#define TPP_EXPORT_TABLE_H

int export_table(int argc, char **argv);
/* -o FILE: a private temporary file beside path (O_EXCL, 0600, *tmp its
 * malloc'd name) to rename over path once complete; the fd or -errno. */
int export_open_out(const char *path, char **tmp);
/* After the last row: o flushed; with a temporary file (*tmp), it synced,
 * closed (*fd -1) and renamed over path (*tmp freed, NULL). 0, or 1 with
 * the error said on stderr. */
struct ofast;
int export_close_out(struct ofast *o, int *fd, char **tmp, const char *path);
/* On a failure: the temporary file (if any) closed, removed and freed. */
void export_drop_out(int fd, char *tmp);

#endif

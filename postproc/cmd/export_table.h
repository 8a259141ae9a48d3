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

#endif

/* The tracerec subcommands, one file each, dispatched by recorder/tracerec.c.
 * Each takes the arguments after its name (argv[0] is the subcommand) and
 * returns the process exit status. */
#ifndef TPP_REC_COMMANDS_H
#define TPP_REC_COMMANDS_H
int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
#endif

/* The tracepp subcommands: one file each (postproc/cmd_NAME.c), dispatched by
 * the table in postproc/tracepp.c. Each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit status. */
#ifndef TPP_COMMANDS_H
#define TPP_COMMANDS_H
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_callgraph(int argc, char **argv);
int cmd_latency(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_export(int argc, char **argv);
#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl: the operator's command line. Each command is one function taking the global
 * options and its own arguments (argv[0] is the command name) and returning the process
 * exit status: 0 success, 1 failure, 2 usage error or bad path. */
#ifndef NNDCTL_H
#define NNDCTL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct nndctl_opts {
    const char *socket_path; /* NULL: nnd_default_socket_path() */
    const char *state_dir; /* NULL: the daemon's, from its Hello; else proto_default_state_dir() */
} nndctl_opts;

/* info [--json] and status [--json]: a short summary, or with --json the data for scripts. */
int nndctl_info(const nndctl_opts *o, int argc, char **argv);
int nndctl_status(const nndctl_opts *o, int argc, char **argv);
int nndctl_conformance(const nndctl_opts *o, int argc, char **argv);

/* A device's capabilities as status gives them ({"<TYPE>": {"exec_time", "power_usage"},
 * ..., "relaxed_scalar", "relaxed_tensor", "if", "while"}): one line when every figure is
 * the same, else one line per entry, each after `indent` spaces. Nothing for NULL. */
void nndctl_print_caps(const cJSON *caps, int indent);
/* A device's held_partitions as status gives them: one line each ("partition: operations
 * #F..#L (N) of compilation H, B held, for APP (client C, pid P, uid U)"), after `indent`
 * spaces. Nothing for NULL or an empty list. */
void nndctl_print_held_partitions(const cJSON *list, int indent);

/* nndctl_admin.c: the bus's state directory: --state-dir, else the one the daemon names in
 * its Hello (*from_daemon set), else the default; whether the bus socket at an ipc:// url
 * can be opened (0), else the errno with err saying why (what: "admin", "event"). */
const char *nndctl_state_dir(const nndctl_opts *o, char *buf, size_t len, bool *from_daemon);
int nndctl_ipc_check(const char *url, const char *what, bool from_daemon, char *err, size_t errlen);
/* Sends one JSON request on the admin bus and waits up to timeout_ms for the reply.
 * Returns the malloc'd reply text (NUL-terminated), or NULL with err set. */
char *nndctl_admin_request(const nndctl_opts *o, const char *request, int timeout_ms, char *err,
                           size_t errlen);
/* The same, saying "daemon unreachable: why" on stderr when there is no reply. */
char *nndctl_admin_or_say(const nndctl_opts *o, const char *request, int timeout_ms);

#endif

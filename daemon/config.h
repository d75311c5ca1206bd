/* config: the daemon's settings: defaults, then the --config file, then the command line.
 *
 * Contract:
 * - Every setting has one key. The command-line options are keys too: --app-queue N sets
 *   app_queue (the option's name with '-' as '_'), so an option given on the command line
 *   wins over the file simply by being set after it. The quotas (quota.h) are
 *   quota.app.{connections,prepared_models,buffers,buffer_bytes,queued_executions} and
 *   quota.connection.{prepared_models,buffers,buffer_bytes,queued_executions}; 0 is
 *   unlimited; a per-connection count above NND_SESSION_MAX_OBJECTS is refused, since
 *   one connection can never hold more objects than that.
 * - The file is plain text: one "key = value" a line, blank lines, and comments from a
 *   '#' at the start of a line or after a blank to the end of the line. Byte sizes take
 *   K, M or G suffixes (binary). A key may appear once.
 * - Errors name what is wrong: srv_config_load() as "FILE:LINE: key: why" (or "FILE:LINE:
 *   unknown key ..."), srv_config_set() as "why" about the value alone, for the caller to
 *   place. Nothing is half-applied from a bad value.
 */
#ifndef NND_CONFIG_H
#define NND_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/base/log.h"
#include "daemon/clients/quota.h"
#include "sched/scheduler.h"

#define NND_CONFIG_MAX_STRINGS 8

typedef struct srv_config {
    const char *socket_path;               /* socket; NULL: the default path */
    const char *state_dir;                 /* state_dir; NULL: the default path */
    const char *build_id;                  /* driver_build_id */
    const char *extensions_dir;            /* extensions_dir */
    const char *allowlist;                 /* extensions_allowlist; NULL: nobody */
    const char *drivers_dir;               /* drivers_dir */
    srv_log_level log_level;               /* log_level */
    uint64_t cache_max_bytes;              /* cache_max_bytes */
    uint64_t cache_save_max_bytes;         /* cache_save_max_bytes */
    qos_sched_config sched;                /* workers, device_workers, preempt, app_queue,
                                              app_memory, device_memory, worker_nice */
    srv_quota_limits quota;                /* quota.* */
    char *strings[NND_CONFIG_MAX_STRINGS]; /* values read from the file, owned */
    size_t n_strings;
} srv_config;

/* The default plugin and driver directories. */
void srv_config_default(srv_config *c, const char *extensions_dir, const char *drivers_dir);
/* Frees the strings the file gave. */
void srv_config_clear(srv_config *c);

/* Sets key from value (borrowed: it must outlive c, as argv does). 0, or -1 with err
 * saying what is wrong with the value, or -2 when the key is unknown. */
int srv_config_set(srv_config *c, const char *key, const char *value, char *err, size_t errlen);
/* Reads a config file into c. 0, or -1 with err as "FILE:LINE: ...". */
int srv_config_load(srv_config *c, const char *path, char *err, size_t errlen);

#endif

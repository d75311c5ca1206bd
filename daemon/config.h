/* SPDX-License-Identifier: Apache-2.0 */
/* config: the daemon's settings: defaults, then the --config file, then the command line.
 *
 * Contract:
 * - Every setting has one key. The command-line options are keys too: --app-queue N sets
 *   app_queue (the option's name with '-' as '_'), so an option given on the command line
 *   wins over the file simply by being set after it. The quotas (quota.h) are
 *   quota.app.{connections,prepared_models,buffers,buffer_bytes,queued_executions} and
 *   quota.connection.{prepared_models,buffers,buffer_bytes,queued_executions}; 0 is
 *   unlimited; a per-connection count above SRV_SESSION_MAX_OBJECTS is refused, since
 *   one connection can never hold more objects than that.
 * - The file is plain text: one "key = value" a line, blank lines, and comments from a
 *   '#' at the start of a line or after a blank to the end of the line. Byte sizes take
 *   K, M or G suffixes (binary). A key may appear once.
 * - srv_config_read() takes every source in order: the defaults, the file (--config FILE,
 *   or SRV_CONFIG_DEFAULT_PATH when that exists: a missing default is no error, a missing
 *   FILE is), every FILE.d/ *.conf in name order (a later file wins over an earlier one;
 *   within one file a key may appear once), then the command line's settings.
 * - Keys marked reloadable (log_level, extensions_allowlist, quota.*) are what a reload
 *   applies to the running daemon (reload.h); srv_config_diff() names each key whose value
 *   differs, with both values as text.
 * - Errors name what is wrong: srv_config_load() as "FILE:LINE: key: why" (or "FILE:LINE:
 *   unknown key ..."), srv_config_set() as "why" about the value alone, for the caller to
 *   place. Nothing is half-applied from a bad value.
 */
#ifndef SRV_CONFIG_H
#define SRV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/base/log.h"
#include "daemon/clients/quota.h"
#include "sched/scheduler.h"

#define SRV_CONFIG_MAX_STRINGS 64
#ifndef SRV_CONFIG_DEFAULT_PATH
#define SRV_CONFIG_DEFAULT_PATH "/etc/nnd/nnd.conf"
#endif

/* The driver hosts' limits the configuration sets (driverhost/drvhost.h has the others). */
typedef struct srv_driver_limits {
    unsigned call_timeout_ms;    /* driver_call_timeout_ms */
    uint64_t memory_limit_bytes; /* driver_memory_limit */
    unsigned max_restarts;       /* driver_max_restarts */
    unsigned restart_window_ms;  /* driver_restart_window_ms */
} srv_driver_limits;

typedef struct srv_config {
    const char *socket_path;               /* socket; NULL: the default path */
    const char *state_dir;                 /* state_dir; NULL: the default path */
    const char *build_id;                  /* driver_build_id */
    const char *extensions_dir;            /* extensions_dir */
    const char *allowlist;                 /* extensions_allowlist; NULL: nobody */
    const char *drivers_dir;               /* drivers_dir */
    unsigned drivers_in_process;           /* drivers_in_process: 1 loads them in the daemon */
    srv_driver_limits drivers;             /* driver_* */
    srv_log_level log_level;               /* log_level */
    uint64_t cache_max_bytes;              /* cache_max_bytes */
    uint64_t cache_save_max_bytes;         /* cache_save_max_bytes */
    qos_sched_config sched;                /* workers, device_workers, preempt, app_queue,
                                              app_memory, device_memory, worker_nice */
    srv_quota_limits quota;                /* quota.* */
    char *strings[SRV_CONFIG_MAX_STRINGS]; /* values read from the file, owned */
    size_t n_strings;
    char files[1024]; /* the files read, ", " between them; "" for none */
} srv_config;

/* Where srv_config_read() takes the settings from. */
typedef struct srv_config_source {
    const char *path;           /* --config FILE; NULL: SRV_CONFIG_DEFAULT_PATH */
    const char *extensions_dir; /* the defaults of the two plugin directories */
    const char *drivers_dir;
    const char *const *options, *const *keys, *const *values; /* the command line's settings:
                                            option name, key, value (borrowed) */
    size_t n_settings;
} srv_config_source;

/* Frees the strings the file gave. */
void srv_config_clear(srv_config *c);
/* Clears to, then moves from into it (from keeps no strings). */
void srv_config_move(srv_config *to, srv_config *from);

/* Every source in order (above). 0, or -1 with err naming the file and line, or the option. */
int srv_config_read(srv_config *c, const srv_config_source *src, char *err, size_t errlen);

/* Calls fn for each key whose value differs between was and now, values as text. */
typedef void (*srv_config_change_fn)(const char *key, const char *was, const char *now,
                                     bool reloadable, void *ctx);
void srv_config_diff(const srv_config *was, const srv_config *now, srv_config_change_fn fn,
                     void *ctx);
/* Copies into c from's values of the reloadable keys (reloadable) or of the others. The
 * strings stay from's: from must outlive c's use of them. */
void srv_config_keep(srv_config *c, const srv_config *from, bool reloadable);
/* The shipped /etc/nnd/nnd.conf: every key commented out with its default. */
void srv_config_print_template(FILE *f);

#endif

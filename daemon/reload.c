/* SPDX-License-Identifier: Apache-2.0 */
/* reload.c: the configuration read afresh. See reload.h. */
#include "daemon/reload.h"

#include <stdio.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/clients/quota.h"
#include "daemon/devices/extensions.h"
#include "daemon/service.h"

static srv_config boot;                /* read at start; its strings serve the whole run */
static srv_config live;                /* in force: boot's values, the reloadable ones last read */
static srv_config held;                /* the last reload's, owning live's reloadable strings */
static const srv_config_source *where; /* the sources to read again */

void srv_reload_init(srv_config *start, const srv_config_source *src) {
    srv_config_move(&boot, start);
    live = boot;
    live.n_strings = 0; /* boot owns them */
    where = src;
}

void srv_reload_free(void) {
    srv_config_clear(&held);
    srv_config_clear(&boot);
}

typedef struct changes {
    unsigned applied, waiting;
} changes;

static void say_change(const char *key, const char *was, const char *now, bool reloadable,
                       void *ctx) {
    changes *c = ctx;
    if (reloadable) {
        srv_log_info("reload: %s: %s -> %s", key, *was ? was : "(none)", *now ? now : "(none)");
        c->applied++;
    } else {
        srv_log_warn("reload: %s changed (%s -> %s): it takes effect at the next restart", key,
                     *was ? was : "(default)", *now ? now : "(default)");
        c->waiting++;
    }
}

int srv_reload(srv_daemon *d, char *err, size_t errlen) {
    srv_service_reloading(d);
    srv_config next;
    char why[512];
    if (srv_config_read(&next, where, why, sizeof why) < 0) {
        srv_config_clear(&next);
        snprintf(err, errlen, "reload refused, the settings in force are kept: %s", why);
        srv_log_error("%s", err);
        srv_service_ready(d);
        return -1;
    }
    srv_log_info("reload: settings from %s", next.files[0] ? next.files : "the command line");
    changes c = {0, 0};
    srv_config_diff(&live, &next, say_change, &c);
    srv_config_keep(&live, &next, true);
    srv_config_move(&held, &next); /* live's reloadable strings are held's now */
    srv_log_set_level(live.log_level);
    srv_quota_set_limits(d->quota, &live.quota);
    d->allowlist_path = live.allowlist;
    /* The plugins and the allowlist afresh, as nndctl reload always did. */
    int rc = srv_extensions_load(d, err, errlen);
    if (rc < 0) srv_log_error("%s", err);
    srv_log_info("reload: done: %u change%s applied, %u waiting for a restart", c.applied,
                 c.applied == 1 ? "" : "s", c.waiting);
    srv_service_ready(d);
    return rc;
}

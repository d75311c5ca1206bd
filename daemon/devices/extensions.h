/* SPDX-License-Identifier: Apache-2.0 */
/* extensions: the daemon's side of vendor extensions. Loads the plugins
 * (engine/plugins/extension.h) and the allowlist at start and on the admin command `reload`, and
 * says which clients may see and use them.
 *
 * Contract:
 * - Plugins come from d->extensions_dir. A missing directory means no plugins (a log
 *   line, not an error); every refused plugin is logged and listed by `reload`.
 * - The allowlist (d->allowlist_path, --extensions-allowlist) holds one entry a line;
 *   blank lines and lines starting with '#' are skipped, surrounding blanks trimmed:
 *     /path/to/program   a client whose executable, read from /proc/<pid>/exe when it
 *                        connected, is this file (the entry goes through realpath() at
 *                        load, so a symlinked path matches its target)
 *     name or number     an app: a client running as this user (passwd name or uid, from
 *                        SO_PEERCRED). docs/design.md: an app is a uid.
 *   Hello's client name is never used: the client chooses it.
 * - No allowlist file (the default): nobody may use extensions. A file that cannot be read,
 *   or that everyone may write, is an error at start and leaves nobody allowed on reload.
 * - A client not allowed sees an empty GetSupportedExtensions, and a model naming any
 *   extension (or using OEM_OPERATION or OEM types while a plugin claims them) is refused
 *   with INVALID_ARGUMENT (daemon/wire/convert.c). Models prepared before a reload keep working.
 * - Loop thread only.
 */
#ifndef SRV_DEVICES_EXTENSIONS_H
#define SRV_DEVICES_EXTENSIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "daemon/base/daemon.h"
#include "daemon/clients/session.h"

/* Loads (or reloads) the plugins and the allowlist. Returns 0, or -1 with err set when the
 * allowlist cannot be read (the plugins are loaded anyway). */
int srv_extensions_load(srv_daemon *d, char *err, size_t errlen);
/* Unloads every plugin and frees the allowlist; after every prepared model is freed. */
void srv_extensions_close(srv_daemon *d);
/* Whether this client may see and use extensions. */
bool srv_extensions_allowed(const srv_daemon *d, const srv_session *s);
/* {"dir", "allowlist", "allowlist_entries", "faults", "loaded": [...], "refused": [...]}
 * for the admin bus. */
cJSON *srv_extensions_json(const srv_daemon *d);

#endif

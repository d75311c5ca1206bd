/* SPDX-License-Identifier: Apache-2.0 */
/* loader: what every plugin loader does, whatever the plugin's ABI (extensions:
 * extension.c; device drivers: engine/backends/drivers/). Contract:
 * - eng_plugin_set_log() names the one log sink for load results and faults (level as
 *   daemon/base/log.h, 0 error .. 3 debug); eng_plugin_logf() writes a line to it, if set.
 * - eng_plugin_guard_once() installs the fault guard's handlers (fault_guard.h), once per
 *   process for every loader; eng_plugin_guarded() runs fn(arg) under the guard: fn's
 *   result, or -1 with why = "<signal> while <doing>" when it faulted.
 * - eng_plugin_scan_dir() calls each() for every "*.so" file of dir (hidden files left
 *   out) in name order; -1 with err naming dir when it cannot be read, else the count.
 * - eng_plugin_open(): a plugin file judged and opened as one file: check (NULL:
 *   eng_plugin_default_check) judges it on an open descriptor, then it is opened by path
 *   (RTLD_NOW | RTLD_LOCAL) and refused if that is no longer the file judged. With a probe,
 *   the file's constructors and probe(dl) run first in a forked child, so a plugin that
 *   crashes while loading is refused without leaving this process's dynamic loader half
 *   way through it (a fault guard around dlopen would jump out with the loader's lock
 *   held); probe returns 0 when the plugin passes. NULL with why on refusal.
 * - eng_plugin_symbol(): the plugin's descriptor, or NULL with why ("exports no ...").
 * - eng_plugin_check_abi(): a descriptor's first two words (abi_version, struct_size, as
 *   every plugin ABI starts) against the ABI's version and size; 0, or -1 with why. Call
 *   it under the guard: the descriptor is the plugin's memory.
 * - eng_plugin_default_check(): the rule without a daemon's: a regular file that not
 *   everyone may edit. */
#ifndef ENG_PLUGINS_LOADER_H
#define ENG_PLUGINS_LOADER_H

#include <stddef.h>
#include <stdint.h>

typedef void (*eng_plugin_log_fn)(int level, const char *msg);
/* 0 to load the file at fd (path), or -1 with why filled. */
typedef int (*eng_plugin_file_check_fn)(int fd, const char *path, char *why, size_t whylen);

void eng_plugin_set_log(eng_plugin_log_fn fn);
void eng_plugin_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void eng_plugin_guard_once(void);
int eng_plugin_guarded(int (*fn)(void *), void *arg, const char *doing, char *why, size_t whylen);

int eng_plugin_scan_dir(const char *dir, const char *what,
                        void (*each)(const char *path, void *ctx), void *ctx, char *err,
                        size_t errlen);
void *eng_plugin_open(const char *path, eng_plugin_file_check_fn check, int (*probe)(void *dl),
                      char *why, size_t whylen);
const void *eng_plugin_symbol(void *dl, const char *symbol, char *why, size_t whylen);
int eng_plugin_check_abi(const void *descriptor, const char *abi, uint32_t version, size_t size,
                         char *why, size_t whylen);
int eng_plugin_default_check(int fd, const char *path, char *why, size_t whylen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* record: with $NND_RECORD=DIR in a client's environment, libnnd writes what the client runs
 * into DIR as conformance case files (the format of the conformance vectors' README.md,
 * tests/vectors/conformance.tar.xz), so that `nndctl conformance DIR` replays them. Internal to
 * libnnd.
 *
 * Contract:
 * - One file per prepared model (a compilation): DIR/nnd-rec-<program>-<pid>-<n>.json, one
 *   case whose model is the wire model as the daemon got it (CONSTANT_REFERENCE constants
 *   read from their pools and written inline, marked wasConstantReference), and one example
 *   per completed execution: the inputs and the outputs the daemon produced, with the
 *   output dimensions it reported. A model the daemon refused is written too, with no
 *   examples and the refusal under "recorded", so a replay shows the refusal.
 * - Who calls what: every prepare of a model (nnd_client_prepare, nnd_client_prepare_cached)
 *   calls cli_record_prepared(); every synchronous execution (nnd_client_execute(_opts),
 *   the burst executions) and the NDK's fenced executions once their fence signalled call
 *   cli_record_executed() before anything touches the outputs; nnd_client_release() calls
 *   cli_record_released() and nnd_client_close() cli_record_closed(), which write the files
 *   of those handles final. Executions started with nnd_client_execute_start() and the
 *   nnd API's own fenced executions are not recorded; a model with extension operands or
 *   operations is not recorded (the format has none).
 * - Files are written whole to a hidden temporary name in DIR and renamed into place: at
 *   the prepare, after the 1st, 2nd, 4th, 8th ... example, at release, at close and when
 *   the process exits or unloads libnnd. A crash thus leaves complete files only (the
 *   examples since the last write are lost).
 * - Bounded: the files together may hold NND_RECORD_MAX_BYTES bytes (default
 *   CLI_RECORD_DEFAULT_MAX_BYTES). The example or model that would pass the bound stops all
 *   recording in the process: what was recorded is written, and one message on stderr
 *   names the variable and the bound. A directory that cannot be written stops recording
 *   the same way, with one message. Recording never changes what a call returns.
 * - Cost when $NND_RECORD is unset: the prepare hooks read a flag set once; the execution
 *   hooks are behind cli_record_live(), one relaxed atomic load, false unless a recorded
 *   model is alive. */
#ifndef CLI_RECORD_H
#define CLI_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/nnd_wire.h"

#define CLI_RECORD_DEFAULT_MAX_BYTES (256ull << 20)

/* How many recorded prepared models are alive; the execution hooks' one check. */
extern atomic_uint cli_record_n_live __attribute__((visibility("hidden")));

static inline bool cli_record_live(void) {
    return atomic_load_explicit(&cli_record_n_live, memory_order_relaxed) != 0;
}

/* A prepare of model (with its pools' fds) ended with status (0: prepared as handle). */
__attribute__((visibility("hidden"))) void cli_record_prepared(nnd_client *c, uint64_t handle,
                                                               const Nnd__Model *model,
                                                               const int *pool_fds, size_t n_fds,
                                                               int status, const char *message);
/* An execution of handle ended with status; reply (may be NULL) is the daemon's. */
__attribute__((visibility("hidden"))) void cli_record_executed(nnd_client *c, uint64_t handle,
                                                               const Nnd__ExecutionRequest *req,
                                                               const int *pool_fds, size_t n_fds,
                                                               int status, const Nnd__Reply *reply);
__attribute__((visibility("hidden"))) void cli_record_released(nnd_client *c, uint64_t handle);
__attribute__((visibility("hidden"))) void cli_record_closed(nnd_client *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* wire_reply: the bodies of the driver host's replies (DH_MSG_REPLY): the host writes them
 * (host_main.c, host_exec.c, host_reply.c), the proxy reads them (proxy*.c).
 *
 * Contract:
 * - A reply is u32 status, the message (dh_put_str), then its call's part:
 *     hello (call 0):         has (DH_HAS_*), n_devices, each nnd_driver_device_info;
 *     supported:              n, then n bytes (1: supported);
 *     prepare, cache_load:    the host's id of the prepared partition, its held bytes;
 *     execute (or start):     time on device, time in driver, each output's rank and dims;
 *     allocate:               the device-memory handle;
 *     cache_save:             the blob's size;
 *     memory read and write:  nothing.
 * - The readers are the proxy's defence against a host it does not trust (a compromised
 *   driver controls that process): they never read past the body nor write past the
 *   caller's arrays, and return 0, or -EPROTO for a body that is short or says what cannot
 *   be (more devices than NND_DRIVER_MAX_DEVICES, a count of operations not the model's, a
 *   rank over NND_DRIVER_MAX_RANK, a zero id or handle). Bytes after the part are ignored.
 * - What a reader accepts, its writer writes back to the same bytes' meaning: decoding
 *   what the writer made of a decoded value gives that value again (tests/fuzz/fuzz_host.c).
 */
#ifndef DH_WIRE_REPLY_H
#define DH_WIRE_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "driverhost/wire.h"
#include "nnd/driver.h"

void dh_reply_head_put(dh_wbuf *w, int status, const char *err);
/* err gets the message, NUL-terminated and cut to cap. */
int dh_reply_head_get(dh_rbuf *r, int *status, char *err, size_t cap);

typedef struct dh_hello {
    uint32_t has, n_devices;
    /* Names and versions NUL-terminated by the reader; `device` is the host's pointer. */
    nnd_driver_device_info devices[NND_DRIVER_MAX_DEVICES];
} dh_hello;
void dh_hello_put(dh_wbuf *w, const dh_hello *hello);
int dh_hello_get(dh_rbuf *r, dh_hello *hello);

void dh_supported_put(dh_wbuf *w, const bool *supported, uint32_t n);
/* supported[0..n_operations) is written only when the reply is whole and has that count. */
int dh_supported_get(dh_rbuf *r, uint32_t n_operations, bool *supported);

void dh_prepared_put(dh_wbuf *w, uint64_t remote, uint64_t held_bytes);
int dh_prepared_get(dh_rbuf *r, uint64_t *remote, uint64_t *held_bytes);

/* Each output's rank (cut to NND_DRIVER_MAX_RANK) and dims. */
void dh_exec_reply_put(dh_wbuf *w, uint64_t time_on_device_ns, uint64_t time_in_driver_ns,
                       const nnd_driver_arg *outputs, uint32_t n_outputs);
/* Sets rank and dims of outputs[0..n_outputs) in order; on -EPROTO those before the bad one
 * are set. */
int dh_exec_reply_get(dh_rbuf *r, uint64_t *time_on_device_ns, uint64_t *time_in_driver_ns,
                      nnd_driver_arg *outputs, uint32_t n_outputs);

void dh_allocated_put(dh_wbuf *w, uint64_t handle);
int dh_allocated_get(dh_rbuf *r, uint64_t *handle);

void dh_saved_put(dh_wbuf *w, uint64_t size);
int dh_saved_get(dh_rbuf *r, uint64_t *size);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* cache: the daemon's compilation caching. Clients' cache files (PrepareModel with cache
 * fds and a token, PrepareModelFromCache) and the daemon's own content cache of prepared
 * models, both built on storage/.
 *
 * Contract:
 * - Every model this module prepares is first serialized into daemon-owned buffers
 *   (storage/serialize.h) and prepared from those, never from client memory, so a
 *   prepared model can be shared across clients and no client can change it afterwards.
 *   Its key is the digest of those bytes (storage/hash.h), which cover the plan, the
 *   constants, the preference and the driver build id.
 * - Content cache: a plain PrepareModel of a model of SRV_CACHE_SIGHTING_BYTES or more is
 *   copied and hashed only from its second sighting on (sighting.h: a signature of its
 *   graph and a sample of its constants): the first is prepared in place, uncopied and
 *   unhashed (counted in first_sightings), so that a model prepared once costs no more
 *   than without the cache. A save to client cache files always copies and hashes, and
 *   records the sighting. hashed_bytes counts the bytes copied from clients and hashed.
 * - Content cache: prepared models by key, shared by every connection that prepares the
 *   same bytes (each app using one pays its bytes once against quota.app.cache_bytes,
 *   cache_users.h), kept after their last user releases them, least recently used evicted
 *   past max_bytes (0 turns the content cache off). An entry counts what it holds in
 *   memory: its model and data bytes and its prepared model (eng_prepared_bytes), so
 *   max_bytes and the quota bound memory, not wire bytes. Each entry is also written to the
 *   state directory (content/<digest>.model and .data, rows in the index) off the loop
 *   thread, so the store outlives restarts; store entries past max_bytes are evicted too.
 * - Driver devices (cache_devices.h): a compilation whose device set includes drivers is
 *   cached only when each of them keeps cache blobs. Its content key is folded with the
 *   set's drivers; its model cache bytes (in memory, in the store, in the client's file)
 *   end with the device section, blobs included, and the index row of a client cache
 *   records the digest of those bytes with the data's. A load verifies that digest before
 *   any driver sees a blob (not while preparing, as for other models), and then gives
 *   each driver step its blob (deserialize()) instead of preparing it; a device missing,
 *   of another version, or refusing its blob fails the load ("not a valid model"). A
 *   driver disabled after a fault is out of every device set, this cache's included: an
 *   entry with a step on one leaves the table when next looked up (its users keep it), so
 *   the model is prepared again for the devices left, whether named by content or by a
 *   client cache's token.
 * - Client cache, save (srv_cache_prepare with a token): prepare, store {uid, token,
 *   digest, build id, sizes, time} in the index (one transaction), then, holding
 *   exclusive flocks on both fds, truncate and write the files. Failing to write costs
 *   the cache, never the prepared model.
 * - Client cache, load (srv_cache_prepare_from_cache): look the token up for this uid;
 *   check both fds are regular files of the recorded sizes; under shared flocks read them
 *   into fresh buffers. When the content cache holds the recorded digest's model, hash the
 *   buffers (while reading) and take that model if the digests match; else decode (as
 *   hostile input) and prepare the buffers while another thread hashes them (this engine
 *   cannot take packed weights back, so a load prepares anyway), and keep the result only
 *   if the digests match (a mismatch is refused as such even when the bytes would not
 *   decode). The bytes prepared are the bytes hashed: the files are not read again. Any
 *   failure is SCHEMA_GENERAL_FAILURE with "cache rejected: ..." in
 *   err and a cache_rejected event naming the reason (the event also tells a foreign uid
 *   from an unknown token; the client is told only "unknown token").
 * - A full or read-only state directory costs the cache, never a prepare: the first
 *   failed write to it (an index row, a store file) turns the disk side off until restart,
 *   with one warning and a cache_disabled event. From then on nothing is written there (no
 *   index rows, store files or client cache saves); the content cache goes on in memory and
 *   client caches saved before still load. A client's own cache file that cannot be
 *   written costs only that save (a warning each time), as in NNAPI.
 * - Events: cache_hit, cache_miss (source "client" or "content"), cache_rejected
 *   (reason), cache_evicted (tier "memory" or "store"), cache_disabled (reason).
 *   srv_cache_status() adds counters to the admin status ("enabled", "disk" and, when
 *   either is off, "disabled_reason"; off_reason says why c is NULL);
 *   srv_cache_list() and srv_cache_purge() serve `nndctl cache`.
 * - Loop thread only. srv_cache_close() after the loop has stopped and every session has
 *   released its references.
 * - Test hook: NND_TEST_CACHE_WRITE_STALL=<bytes> in the environment makes client cache
 *   data writes stop after that many bytes and sleep, so a test can kill the daemon in
 *   the middle of a cache write.
 */
#ifndef SRV_CACHE_CACHE_H
#define SRV_CACHE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "daemon/cache/cache_devices.h"
#include "daemon/cache/cache_encoded.h"
#include "daemon/cache/sighting.h"
#include "daemon/base/daemon.h"
#include "engine/engine.h"
#include "nnd.pb-c.h"
#include "storage/hash.h"
#include "daemon/clients/session.h"

#define SRV_CACHE_DEFAULT_MAX_BYTES      (256ull << 20)
#define SRV_CACHE_TOKEN_LEN              32
#define SRV_CACHE_LOCK_TIMEOUT_MS        200
#define SRV_CACHE_SIGHTING_BYTES         (1u << 20)
#define SRV_CACHE_DEFAULT_SAVE_MAX_BYTES (4ull << 20)

typedef struct srv_cache srv_cache;
typedef struct srv_cache_ref srv_cache_ref; /* one user's reference to a prepared model */

srv_cache *srv_cache_open(srv_daemon *d, const char *build_id, uint64_t max_bytes, char *err,
                          size_t errlen);
void srv_cache_close(srv_cache *c);
/* Client cache files pay only where a load beats a compile. On this daemon a load decodes
 * and prepares again (no engine takes packed weights back) and first reads and hashes
 * every byte, so it never does: for a small model the difference is a fraction of a
 * millisecond, for a large one it is several. A model whose constants in pools
 * (model_bytes.h) exceed save_max_bytes (--cache-save-max-bytes, default 4 MiB; 0: no limit)
 * is therefore not saved: srv_cache_save_pays() says false, counts it (saves_over_limit)
 * and PrepareModel prepares as without a token, answering cache_save_skipped. Clients learn
 * the limit from GetNumberOfCacheFilesNeeded. c may be NULL (false). */
void srv_cache_set_save_max(srv_cache *c, uint64_t bytes);
uint64_t srv_cache_save_max(const srv_cache *c);
bool srv_cache_save_pays(srv_cache *c, const srv_session *s, uint64_t constant_bytes);
/* Whether PrepareModel should go through srv_cache_prepare(), for a description made off
 * the loop, in two steps: srv_cache_sight() (any thread: it reads the model, a sample of its
 * constants included) gives its serialized size and, for a model of
 * SRV_CACHE_SIGHTING_BYTES or more, its signature (sighting.h); srv_cache_wants_sighted()
 * decides from them on the loop: with a client token, or when the content cache is on, the
 * model fits in it and (when it is large) was sighted before, and in both cases only when
 * the app of s may take the copy's bytes (quota.app.cache_bytes, see cache_users.h). Any
 * other model is prepared in place, its constants used where the client put them, uncopied,
 * and a token's client cache is not written (counted as quota_skipped). */
typedef struct srv_cache_sighting {
    uint64_t size;
    bool signed_; /* sig holds the signature */
    uint8_t sig[SRV_SIGHTING_LEN];
} srv_cache_sighting;
void srv_cache_sight(const eng_model_desc *m, srv_cache_sighting *out);
bool srv_cache_wants_sighted(srv_cache *c, const srv_session *s, const srv_cache_sighting *g,
                             bool token);

/* How PrepareModel prepares a model, decided in one place by the cache layer:
 * srv_cache_route() answers for model m (its wire form and its description, the
 * device set applied) asked by session s with the client's cache token (NULL: none):
 * - cached: through the content cache (srv_cache_prepare() or its steps, cache.h): the
 *   model copied and hashed, its constants read from the daemon's copy. Never for a model
 *   using extensions (its engine codes name plugins loaded now, which neither a cache file
 *   nor a reload keeps) nor for one offered to a driver without cache blobs (its prepared
 *   state lives in the driver only, cache_devices.h); else as srv_cache_wants_sighted()
 *   says of the model measured here.
 * - in place otherwise: its constants used where the client put them, uncopied.
 * - token: the token to save client cache files under, or NULL: none asked, or the save
 *   would cost more than a compile (srv_cache_save_pays(); save_skipped set, the answer
 *   says so). c may be NULL (caching off).
 * - size: the model's serialized size (store_ser_size()), measured once for the route and
 *   for the caller's choice of thread (prepare_off_loop.h). */
typedef struct srv_prepare_route {
    bool cached;
    const uint8_t *token;
    bool save_skipped;
    uint64_t size;
} srv_prepare_route;
/* Whether a compilation for m's device set may be cached: no driver in the set, or every
 * driver keeps cache blobs (cache_devices.h). Any other stays uncached. */
bool srv_cache_devices_ok(const eng_model_desc *m);
srv_prepare_route srv_cache_route(srv_cache *c, const srv_session *s, const Nnd__Model *wire,
                                  const eng_model_desc *m, const uint8_t *token);

/* Validates and prepares m through the content cache (m fits, or caching is off for it). With token
 * non-NULL the client's cache files (model_fd, data_fd) are written too. */
schema_status srv_cache_prepare(srv_cache *c, const srv_session *s, const eng_model_desc *m,
                                uint32_t preference, const uint8_t *token, int model_fd,
                                int data_fd, srv_cache_ref **out, char *err, size_t errlen);
/* srv_cache_prepare() in steps, so that the copy and the hash (linear in the model's bytes)
 * can run off the loop: eng_plan() validates m and plans it (engine.h), srv_cache_encode()
 * runs on any thread (it reads only the model and c's build id), then
 * srv_cache_prepare_encoded() on the loop takes x's buffers and the plan whatever happens:
 * a hit frees the plan, a miss finishes it on the daemon's own copy, so a model is
 * validated and planned once. srv_cache_encoded_free() frees an x that was not passed on (x:
 * cache_encoded.h). */
schema_status srv_cache_encode(const srv_cache *c, const eng_model_desc *m, uint32_t preference,
                               srv_cache_encoded *out, char *err, size_t errlen);
void srv_cache_encoded_free(srv_cache_encoded *x);
schema_status srv_cache_prepare_encoded(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                                        eng_prepared *plan, const uint8_t *token, int model_fd,
                                        int data_fd, srv_cache_ref **out, char *err, size_t errlen);
/* srv_cache_prepare_encoded() with a miss's entry made off the loop:
 * srv_cache_encoded_hit() (loop) answers from the entry of x's key when there is one
 * (taking x and plan as srv_cache_prepare_encoded() does, *st its status) and returns
 * true, else false with x and plan untouched; srv_cache_entry_make() (any thread: it
 * decodes the copy and finishes plan on it) makes the entry, taking x's buffers and plan
 * whatever happens; srv_cache_entry_adopt() (loop) lists it and answers, or, when another
 * preparation listed one of that key meanwhile, frees it and answers from that one. */
bool srv_cache_encoded_hit(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                           eng_prepared *plan, const uint8_t *token, int model_fd, int data_fd,
                           srv_cache_ref **out, schema_status *st, char *err, size_t errlen);
schema_status srv_cache_entry_make(srv_cache *c, srv_cache_encoded *x, eng_prepared *plan,
                                   srv_cache_ref **made, char *err, size_t errlen);
schema_status srv_cache_entry_adopt(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                                    srv_cache_ref *made, const uint8_t *token, int model_fd,
                                    int data_fd, srv_cache_ref **out, char *err, size_t errlen);
/* Frees an entry srv_cache_entry_make() made that was never adopted. */
void srv_cache_made_free(srv_cache_ref *made);
schema_status srv_cache_prepare_from_cache(srv_cache *c, const srv_session *s,
                                           const uint8_t token[SRV_CACHE_TOKEN_LEN], int model_fd,
                                           int data_fd, srv_cache_ref **out, char *err,
                                           size_t errlen);

const eng_prepared *srv_cache_ref_prepared(const srv_cache_ref *r);
/* Gives back a reference taken for a session of uid (cache_users.h). */
#define SRV_CACHE_NO_USER UINT32_MAX
void srv_cache_unref(srv_cache_ref *r, uint32_t uid);

/* Adds a "cache" object to an admin status reply. */
void srv_cache_status(srv_cache *c, const char *off_reason, cJSON *reply);
cJSON *srv_cache_list(srv_cache *c);
cJSON *srv_cache_purge(srv_cache *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* wire_budget: what unpacking a protobuf message would cost, judged on its wire bytes
 * before protobuf-c allocates anything.
 *
 * Contract:
 * - proto_wire_budget_check() walks the encoded message once, field by field, following the
 *   descriptors into nested messages, and adds up what protobuf-c's unpack would
 *   allocate: each message's struct, each repeated field's array, each string or bytes
 *   value, each unknown field kept. It refuses, with a message naming the limit, a
 *   message that would allocate more than NND_WIRE_MAX_DECODED bytes, hold more than
 *   NND_WIRE_MAX_MESSAGES nested messages, strings and bytes values (every one is an
 *   allocation and a pass of its own), or nest deeper than NND_WIRE_MAX_DEPTH.
 * - The walk is linear in the bytes it reads and stops at the first limit crossed, so a
 *   hostile message costs at most a pass over its first NND_WIRE_MAX_MESSAGES fields.
 * - Malformed wire data is left for protobuf-c to refuse: the walk only stops early.
 * - No state, no allocation: safe on any thread.
 */
#ifndef NND_WIRE_BUDGET_H
#define NND_WIRE_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define NND_WIRE_MAX_DECODED  (128ull << 20) /* bytes an unpacked message may take */
#define NND_WIRE_MAX_MESSAGES (1u << 18)     /* nested messages, strings and bytes values */
#define NND_WIRE_MAX_DEPTH    32

/* 0 when data (len bytes, a desc message) fits the limits; -1 with err naming the limit. */
int proto_wire_budget_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                            char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* model_bytes: how many bytes of constants a wire model keeps in its pools, the measure
 * client and daemon both apply to CacheFilesReply.save_max_bytes, so that libnnd can tell
 * before fingerprinting a model whether the daemon would save it to cache files.
 *
 * Contract: the sum of the lengths of every CONSTANT_REFERENCE operand of the main graph
 * and of each referenced subgraph, saturating at UINT64_MAX; operands without a location
 * count 0. Reads only the message (no pool is touched); any model, even an invalid one. */
#ifndef PROTO_MODEL_BYTES_H
#define PROTO_MODEL_BYTES_H

#include <stdint.h>

#include "nnd.pb-c.h"

uint64_t proto_wire_constant_bytes(const Nnd__Model *m);

#endif

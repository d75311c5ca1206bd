/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_bisect: `nndctl conformance --bisect --device A --device B PATH...`, where two
 * devices part on a model.
 *
 * Contract: nndctl_bisect() runs each case's first example on device a and on device b
 * through the daemon, its model made to output every intermediate tensor
 * (tool_probe_all, case_probe.h), and prints, per case, the first operation whose outputs
 * differ between the two: "operation K (TYPE) differs: max N steps at element I (A x, B
 * y), M of T elements differ" (absolute differences for floats), every later one too with
 * verbose. That operation then runs alone on both devices, fed a's tensors, and a line says
 * how far apart they are then: a difference that stays there is the operation's own, one
 * that goes away came from upstream. A case whose intermediate tensors all agree says so.
 * Returns 0 when every case agrees, 1 when some case parts, 2 when one cannot be run (an
 * operation a device does not support, a refused preparation or execution, dynamic
 * shapes). */
#ifndef NNDCTL_BISECT_H
#define NNDCTL_BISECT_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/conformance/case_record.h"
#include "tools/nndctl/nndctl.h"

int nndctl_bisect(const nndctl_opts *o, const char *a, const char *b, const tool_case *cases,
                  size_t n, bool verbose);

#endif

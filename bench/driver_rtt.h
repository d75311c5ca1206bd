/* SPDX-License-Identifier: Apache-2.0 */
/* driver_rtt: the row of `make bench` for the cost of a driver in a process of its own
 * (group driver; docs/driver-host.md). One tiny execution (RELU of 256 floats, input and
 * output in a registered memfd, so no tensor is copied) on the test driver nnd-fault
 * (tests/daemon/drv_fault_driver.c) through its driver host, and the same call on the
 * plugin loaded in process. Medians over alternating rounds.
 *   driver_rtt  through the host / in process (reported: in process it is a function call,
 *               so the ratio is the boundary's cost in units of a tiny kernel; the note
 *               gives both times).
 * Returns 0 and fills *out (a: through the host, b: in process), or -1 with a message. */
#ifndef BENCH_DRIVER_RTT_H
#define BENCH_DRIVER_RTT_H

#include "bench/kernels.h"

int bench_driver_rtt_rows(bench_pair *out);

#endif

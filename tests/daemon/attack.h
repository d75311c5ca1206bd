/* SPDX-License-Identifier: Apache-2.0 */
/* attack: what a hostile local user does to the daemon through its public socket, for
 * test_isolation. Each attack runs in its own process (test_isolation re-executes itself
 * as uid 65534 through setpriv) for a number of seconds and prints what it saw:
 *   "refused <STATUS> <message>"  for the first replies of each refusal status,
 *   "attack <name>: <n> requests, <k> refused"  at the end.
 * Exit status 0 when the attack ran (refusals are what it expects), 1 when it could not
 * start (no daemon, no model).
 *
 *   mappings     64 connections x 16 bursts x 64 slots, each slot another 4 KiB of one
 *                memfd, then hammering the bursts (finding 1)
 *   descriptors  ExecuteFenced over and over without Release, on 4 connections, then new
 *                connections (finding 2)
 *   decode       spilled requests at the spill limit full of empty RequestArguments, and
 *                spills past the limit (finding 3)
 *   cache        PrepareModel of 60 MiB constants at 40 offsets of one 65 MiB memfd, all
 *                held, then replaced one by one (finding 4); each model twice, since the
 *                content cache copies a large model from its second sighting on
 *   tokens       PrepareModel with cache files and a new token each time (finding 5)
 *   held         40 PrepareModels of 64 MiB constants at offsets of one memfd (every other
 *                one misaligned, so copied), all held: past quota.app.prepared_bytes they
 *                are refused (issue 39, item 4)
 *   graphs       chains of 12,000 ADDs, each prepared twice (cached from its second
 *                sighting) and released (issue 39, item 3)
 *   resize       RESIZE_BILINEAR of a [1, 32, 1, 64] 8-bit input to 65,536 rows, the input
 *                at the end of its memfd or followed by marker bytes (issue 39, item 1)
 *   softmax      unsigned 8-bit SOFTMAX over 1,024 equal values, on nnd-cpu and
 *                nnd-reference: every output equal, 0 or 1 (its row sum once wrapped
 *                XNNPACK's 32 bits to 0, and XNNPACK's assert aborted the daemon)
 */
#ifndef TST_DAEMON_ATTACK_H
#define TST_DAEMON_ATTACK_H

/* Runs attack `name` against the daemon at socket_path for `seconds`; the exit status. */
int attack_run(const char *name, const char *socket_path, double seconds);

#endif

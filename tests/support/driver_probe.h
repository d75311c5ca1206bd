/* SPDX-License-Identifier: Apache-2.0 */
/* driver_probe: whether a driver plugin has any device on this machine, asked in the test's
 * own process before a daemon is told to load it, so that a test of a hardware driver
 * (nnd-opencl without an OpenCL platform) can skip rather than fail.
 *
 * Contract: tst_driver_probe() dlopens the plugin at path, checks its ABI version, calls
 * open() and close(), and returns how many devices open() reported (0: none here), or -1
 * with a message on stderr when the plugin cannot be loaded or refuses to open. The
 * environment the daemon will inherit (NND_OPENCL_CPU, ...) applies here too. */
#ifndef TST_SUPPORT_DRIVER_PROBE_H
#define TST_SUPPORT_DRIVER_PROBE_H

int tst_driver_probe(const char *path);

#endif

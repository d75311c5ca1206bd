/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_units: the words and units nndctl's summaries print numbers in.
 *
 * Contract: each tool_fmt_* writes a NUL-terminated string into buf (truncated to len) and
 * returns buf, so that calls nest in one printf. Byte counts go in B, KiB, MiB, GiB or TiB
 * with at most one decimal ("0 B", "18.3 KiB", "256 MiB"); times in ms with about three
 * significant digits ("0.032 ms", "1.5 ms", "250 ms"); uptimes in s, min, h and d; floats
 * the daemon holds as float (exec_time) to the digits a float carries ("0.1", not
 * 0.100000001490116). Device types by their NNAPI names. */
#ifndef NNDCTL_UNITS_H
#define NNDCTL_UNITS_H

#include <stddef.h>
#include <stdint.h>

const char *tool_fmt_bytes(char *buf, size_t len, uint64_t bytes);
const char *tool_fmt_ms(char *buf, size_t len, double us);
const char *tool_fmt_uptime(char *buf, size_t len, uint64_t seconds);
/* A float's value at the precision it has, as a double that prints short with %g. */
double tool_float_value(double v);
/* UNKNOWN, OTHER, CPU, GPU or ACCELERATOR (ANEURALNETWORKS_DEVICE_*); "type N" otherwise,
 * written into buf. */
const char *tool_device_type_name(char *buf, size_t len, int type);
/* The NNAPI feature level an Android API level or ANEURALNETWORKS_FEATURE_LEVEL_* value
 * stands for: 27..31 are levels 1..5, 1000006 and on are 6 and on; 0 for anything else. */
int tool_feature_level(int64_t value);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* case_read: the small readers the conformance loader is built from, and the error text
 * every step of loading and judging writes. Internal to tools/conformance.
 *
 * Contract:
 * - case_errf() formats into err; nothing happens when err is NULL or errlen 0.
 * - Everything returned is malloc'd and the caller's to free. On failure nothing is
 *   returned to free.
 * - The JSON accessors read one member of an object; a missing member or one of another
 *   JSON type reads as the default (number), false (flag) or NULL (string).
 */
#ifndef TOOL_CONFORMANCE_CASE_READ_H
#define TOOL_CONFORMANCE_CASE_READ_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void case_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *case_strdup(const char *s);
/* A whole file; NULL with err set when it cannot be read. */
char *case_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* Standard or URL-safe base64, padding optional. Returns 0, or -1 on a bad character. */
int case_base64_decode(const char *s, uint8_t **out, size_t *outlen);
/* A JSON array of non-negative integers into a fresh uint32 array (NULL, 0 when a is NULL
 * or empty). Returns 0, or -1 when a is not such an array. */
int case_json_u32s(const cJSON *a, uint32_t **out, size_t *n);
double case_json_num(const cJSON *o, const char *key, double def);
bool case_json_flag(const cJSON *o, const char *key);
const char *case_json_str(const cJSON *o, const char *key);

#endif

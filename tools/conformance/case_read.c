/* SPDX-License-Identifier: Apache-2.0 */
/* case_read.c: reading vector files: whole files, base64, JSON fields, error text.
 * See case_read.h. */
#include "tools/conformance/case_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void case_errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

char *case_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int b64_value(unsigned char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Standard or URL-safe base64, padding optional. Returns 0, or -1 on a bad character. */
int case_base64_decode(const char *s, uint8_t **out, size_t *outlen) {
    size_t n = strlen(s);
    uint8_t *buf = malloc(n / 4 * 3 + 3);
    if (!buf) return -1;
    size_t len = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '=') break;
        if (ch == '\n' || ch == '\r' || ch == ' ') continue;
        int v = b64_value(ch);
        if (v < 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[len++] = (uint8_t)(acc >> bits);
        }
    }
    *out = buf;
    *outlen = len;
    return 0;
}

char *case_read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        case_errf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb) free(buf);
        buf = nb;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        case_errf(err, errlen, "cannot read");
        return NULL;
    }
    *len = n;
    return buf;
}

/* A JSON array of non-negative integers into a fresh uint32 array. */
int case_json_u32s(const cJSON *a, uint32_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (!a) return 0;
    if (!cJSON_IsArray(a)) return -1;
    size_t k = (size_t)cJSON_GetArraySize(a);
    if (!k) return 0;
    uint32_t *v = malloc(k * sizeof *v);
    if (!v) return -1;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > UINT32_MAX) {
            free(v);
            return -1;
        }
        v[i++] = (uint32_t)e->valuedouble;
    }
    *out = v;
    *n = k;
    return 0;
}

double case_json_num(const cJSON *o, const char *key, double def) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

bool case_json_flag(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

const char *case_json_str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

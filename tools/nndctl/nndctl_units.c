/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_units.c: numbers in words and units. See nndctl_units.h. */
#include "tools/nndctl/nndctl_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tool_fmt_bytes(char *buf, size_t len, uint64_t bytes) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024;
        u++;
    }
    /* One decimal below 100 of a unit, none when it would be .0 or above. */
    double tenths = (double)(long long)(v * 10 + 0.5) / 10;
    if (u == 0 || v >= 100 || tenths == (double)(long long)tenths)
        snprintf(buf, len, "%.0f %s", u ? tenths : v, unit[u]);
    else
        snprintf(buf, len, "%.1f %s", tenths, unit[u]);
    return buf;
}

const char *tool_fmt_ms(char *buf, size_t len, double us) {
    double ms = us / 1000;
    if (ms < 100)
        snprintf(buf, len, "%.3g ms", ms);
    else
        snprintf(buf, len, "%.0f ms", ms);
    return buf;
}

const char *tool_fmt_uptime(char *buf, size_t len, uint64_t s) {
    unsigned long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
    if (d)
        snprintf(buf, len, "%llu d %llu h", d, h);
    else if (h)
        snprintf(buf, len, "%llu h %llu min", h, m);
    else if (m)
        snprintf(buf, len, "%llu min %llu s", m, sec);
    else
        snprintf(buf, len, "%llu s", sec);
    return buf;
}

double tool_float_value(double v) {
    char s[32];
    snprintf(s, sizeof s, "%.7g", v);
    return strtod(s, NULL);
}

const char *tool_device_type_name(char *buf, size_t len, int type) {
    static const char *const names[] = {"UNKNOWN", "OTHER", "CPU", "GPU", "ACCELERATOR"};
    if (type >= 0 && (size_t)type < sizeof names / sizeof names[0])
        snprintf(buf, len, "%s", names[type]);
    else
        snprintf(buf, len, "type %d", type);
    return buf;
}

int tool_feature_level(int64_t value) {
    if (value >= 27 && value <= 31) return (int)(value - 26);
    if (value >= 1000006 && value < 1000100) return (int)(value - 1000000);
    return 0;
}

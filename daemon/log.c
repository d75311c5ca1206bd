/* log.c: timestamped lines on stderr. See log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const names[] = {"error", "warn", "info", "debug"};
static nnd_log_level current = NND_LOG_INFO;

int nnd_log_parse_level(const char *s, nnd_log_level *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (nnd_log_level)i;
            return 0;
        }
    return -1;
}

void nnd_log_set_level(nnd_log_level level) {
    current = level;
}

int nnd_log_enabled(nnd_log_level level) {
    return level <= current;
}

void nnd_log(nnd_log_level level, const char *fmt, ...) {
    if (level > current) return;
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s ", ts.tv_nsec / 1000000,
                          names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
    va_end(ap);
    /* A message longer than the buffer is cut; the line still ends with a newline. */
    size_t end = m < 0 ? n : (n + (size_t)m < sizeof line - 1 ? n + (size_t)m : sizeof line - 2);
    /* Messages may quote client-supplied text: keep one event on one line. */
    for (size_t i = n; i < end; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) line[i] = '?';
    n = end;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

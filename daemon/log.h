/* log: one line per event on stderr, "2025-01-31T12:00:00.123Z info message".
 * Lines above the configured level are dropped. Each line is one write(2), so lines from
 * concurrent threads never interleave.
 *
 * Lines about one client (connected, disconnected, prepared a model, refused, dropped)
 * go through nnd_log_client(), always naming the client by the id that status and events
 * show ("client N"). A busy daemon has thousands of them a second, so below the debug
 * level they are rate-limited: at most NND_LOG_CLIENT_PER_S a second over all clients;
 * the rest are counted, and the count is logged as one line before the next line that
 * is let through (a client line in a later second, or any other line, so also at
 * shutdown). At --log-level debug every one is logged. */
#ifndef NND_LOG_H
#define NND_LOG_H

typedef enum nnd_log_level {
    NND_LOG_ERROR = 0,
    NND_LOG_WARN = 1,
    NND_LOG_INFO = 2,
    NND_LOG_DEBUG = 3,
} nnd_log_level;

#define NND_LOG_CLIENT_PER_S 20

/* Parses "error", "warn", "info" or "debug"; returns 0, or -1 for anything else. */
int nnd_log_parse_level(const char *s, nnd_log_level *out);
void nnd_log_set_level(nnd_log_level level);
/* Whether lines at level are written (to skip building what would be dropped). */
int nnd_log_enabled(nnd_log_level level);
void nnd_log(nnd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line about one client, at level (warn or info), rate-limited as above. */
void nnd_log_client(nnd_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define nnd_log_error(...) nnd_log(NND_LOG_ERROR, __VA_ARGS__)
#define nnd_log_warn(...)  nnd_log(NND_LOG_WARN, __VA_ARGS__)
#define nnd_log_info(...)  nnd_log(NND_LOG_INFO, __VA_ARGS__)
#define nnd_log_debug(...) nnd_log(NND_LOG_DEBUG, __VA_ARGS__)

#endif

/* log: one line per event on stderr, "2025-01-31T12:00:00.123Z info message".
 * Lines above the configured level are dropped. Each line is one write(2), so lines from
 * concurrent threads never interleave. */
#ifndef NND_LOG_H
#define NND_LOG_H

typedef enum nnd_log_level {
    NND_LOG_ERROR = 0,
    NND_LOG_WARN = 1,
    NND_LOG_INFO = 2,
    NND_LOG_DEBUG = 3,
} nnd_log_level;

/* Parses "error", "warn", "info" or "debug"; returns 0, or -1 for anything else. */
int nnd_log_parse_level(const char *s, nnd_log_level *out);
void nnd_log_set_level(nnd_log_level level);
int nnd_log_enabled(nnd_log_level level);
void nnd_log(nnd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define nnd_log_error(...) nnd_log(NND_LOG_ERROR, __VA_ARGS__)
#define nnd_log_warn(...)  nnd_log(NND_LOG_WARN, __VA_ARGS__)
#define nnd_log_info(...)  nnd_log(NND_LOG_INFO, __VA_ARGS__)
#define nnd_log_debug(...) nnd_log(NND_LOG_DEBUG, __VA_ARGS__)

#endif

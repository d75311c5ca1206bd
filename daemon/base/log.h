/* SPDX-License-Identifier: Apache-2.0 */
/* log: one line per event on stderr, "2025-01-31T12:00:00.123Z info message".
 * Lines above the configured level are dropped. Each line is one write(2), so lines from
 * concurrent threads never interleave. The level may change while threads log (a reload).
 *
 * When stderr is the journal (systemd's JOURNAL_STREAM names stderr's device and inode),
 * srv_log_init() switches to the journal's form: each line starts with its syslog
 * priority ("<3>" error, "<4>" warning, "<6>" info, "<7>" debug, sd-daemon(3)) and has
 * no timestamp or level word of its own, since journald records both; so
 * `journalctl -p err -u nnd` shows the errors alone.
 *
 * Lines about one client (connected, disconnected, prepared a model, refused, dropped)
 * go through srv_log_client(), always naming the client by the id that status and events
 * show ("client N"). A busy daemon has thousands of them a second, so below the debug
 * level they are rate-limited: at most SRV_LOG_CLIENT_PER_S a second over all clients;
 * the rest are counted, and the count is logged as one line before the next line that
 * is let through (a client line in a later second, or any other line, so also at
 * shutdown). At --log-level debug every one is logged. */
#ifndef SRV_BASE_LOG_H
#define SRV_BASE_LOG_H

typedef enum srv_log_level {
    SRV_LOG_ERROR = 0,
    SRV_LOG_WARN = 1,
    SRV_LOG_INFO = 2,
    SRV_LOG_DEBUG = 3,
} srv_log_level;

#define SRV_LOG_CLIENT_PER_S 20

/* Picks the line format for stderr: the journal's or the terminal's. Call once at start. */
void srv_log_init(void);
/* "<3>" (the level's priority) when lines go to the journal, else "": for messages written
 * to stderr before logging starts (a bad config file at start). */
const char *srv_log_prefix(srv_log_level level);
/* Parses "error", "warn", "info" or "debug"; returns 0, or -1 for anything else. */
int srv_log_parse_level(const char *s, srv_log_level *out);
void srv_log_set_level(srv_log_level level);
/* "error", "warn", "info" or "debug". */
const char *srv_log_level_name(srv_log_level level);
/* Whether lines at level are written (to skip building what would be dropped). */
int srv_log_enabled(srv_log_level level);
/* The level lines are written at and below (srv_log_set_level()). The srv_log_<level>()
 * macros test it first, so that a line of a level that is off costs one load, not a call
 * nor its arguments. */
extern _Atomic srv_log_level srv_log_threshold;
void srv_log(srv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line about one client, at level (warn or info), rate-limited as above. */
void srv_log_client(srv_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define srv_log_at(level, ...)                                                                     \
    ((level) <= srv_log_threshold ? srv_log((level), __VA_ARGS__) : (void)0)
#define srv_log_error(...) srv_log_at(SRV_LOG_ERROR, __VA_ARGS__)
#define srv_log_warn(...)  srv_log_at(SRV_LOG_WARN, __VA_ARGS__)
#define srv_log_info(...)  srv_log_at(SRV_LOG_INFO, __VA_ARGS__)
#define srv_log_debug(...) srv_log_at(SRV_LOG_DEBUG, __VA_ARGS__)

#endif

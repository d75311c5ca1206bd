/* SPDX-License-Identifier: Apache-2.0 */
/* log.c: timestamped lines on stderr, or prioritized ones for the journal. See log.h. */
#include "daemon/base/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const names[] = {"error", "warn", "info", "debug"};
_Atomic srv_log_level srv_log_threshold = SRV_LOG_INFO;
static bool to_journal; /* set once by srv_log_init(), before any thread logs */

/* syslog priorities (LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG) for the journal. */
static const int priorities[] = {3, 4, 6, 7};

void srv_log_init(void) {
    /* JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; it is inherited, so
     * it holds only when stderr is still that very stream (systemd.exec(5)). */
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    to_journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

const char *srv_log_prefix(srv_log_level level) {
    static const char *const prefixes[] = {"<3>", "<4>", "<6>", "<7>"};
    return to_journal && level >= SRV_LOG_ERROR && level <= SRV_LOG_DEBUG ? prefixes[level] : "";
}

const char *srv_log_level_name(srv_log_level level) {
    return level >= SRV_LOG_ERROR && level <= SRV_LOG_DEBUG ? names[level] : "?";
}

int srv_log_parse_level(const char *s, srv_log_level *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (srv_log_level)i;
            return 0;
        }
    return -1;
}

void srv_log_set_level(srv_log_level level) {
    srv_log_threshold = level;
}

static srv_log_level srv_log_get_level(void) {
    return srv_log_threshold;
}

int srv_log_enabled(srv_log_level level) {
    return level <= srv_log_threshold;
}

static void vlog(srv_log_level level, const char *fmt, va_list ap);

/* The client lines' budget: the second it counts, lines let through, lines held back. */
static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t budget_second = -1;
static unsigned budget_used;
static unsigned long long budget_suppressed;

static int64_t now_second(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

/* Starts a new second once the last one is over; returns how many lines it held back. */
static unsigned long long roll_budget(int64_t sec) {
    unsigned long long held = 0;
    if (sec != budget_second) {
        held = budget_suppressed;
        budget_second = sec;
        budget_used = 0;
        budget_suppressed = 0;
    }
    return held;
}

static void say_suppressed(unsigned long long held) {
    if (held)
        srv_log(SRV_LOG_INFO,
                "%llu client log lines suppressed (more than %d a second; "
                "--log-level debug shows every one)",
                held, SRV_LOG_CLIENT_PER_S);
}

void srv_log(srv_log_level level, const char *fmt, ...) {
    if (level > srv_log_threshold) return;
    /* Any other line says first how many client lines were held back (the second's budget
     * stays spent), so that the count is never lost, also at shutdown. */
    pthread_mutex_lock(&budget_lock);
    unsigned long long held = budget_suppressed;
    budget_suppressed = 0;
    pthread_mutex_unlock(&budget_lock);
    say_suppressed(held);
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void srv_log_client(srv_log_level level, const char *fmt, ...) {
    if (level > srv_log_threshold) return;
    bool pass = true;
    unsigned long long held = 0;
    if (srv_log_get_level() < SRV_LOG_DEBUG) {
        pthread_mutex_lock(&budget_lock);
        held = roll_budget(now_second());
        pass = budget_used < SRV_LOG_CLIENT_PER_S;
        if (pass)
            budget_used++;
        else
            budget_suppressed++;
        pthread_mutex_unlock(&budget_lock);
    }
    say_suppressed(held);
    if (!pass) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

static void vlog(srv_log_level level, const char *fmt, va_list ap) {
    char line[1024];
    size_t n;
    if (to_journal) {
        n = (size_t)snprintf(line, sizeof line, "<%d>", priorities[level]);
    } else {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
        n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s ", ts.tv_nsec / 1000000,
                              names[level]);
    }
    int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
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

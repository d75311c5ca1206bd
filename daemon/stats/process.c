/* SPDX-License-Identifier: Apache-2.0 */
/* process.c: /proc/self for the process_* metrics. See process.h. */
#include "daemon/stats/process.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The boot time in seconds since the epoch (/proc/stat's btime), 0 when unknown. */
static unsigned long long boot_time(void) {
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    unsigned long long b = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %llu", &b) == 1) break;
    if (f) fclose(f);
    return b;
}

static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* not the one opendir holds */
}

void srv_process_json(cJSON *status) {
    cJSON *p = cJSON_AddObjectToObject(status, "process");
    if (!p) return;
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "re");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    /* Fields after the command name, which may hold spaces: from the last ')'. Field 3 is
     * the state; utime and stime are 14 and 15, starttime 22, vsize 23, rss 24. */
    char *s = strrchr(buf, ')');
    unsigned long long utime, stime, start, vsize;
    long long rss;
    if (s && sscanf(s + 2,
                    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
                    "%*d %*d %llu %llu %lld",
                    &utime, &stime, &start, &vsize, &rss) == 5) {
        double hz = (double)sysconf(_SC_CLK_TCK);
        cJSON_AddNumberToObject(p, "cpu_seconds", (double)(utime + stime) / hz);
        cJSON_AddNumberToObject(p, "resident_bytes", (double)rss * (double)sysconf(_SC_PAGESIZE));
        cJSON_AddNumberToObject(p, "virtual_bytes", (double)vsize);
        unsigned long long b = boot_time();
        if (b) cJSON_AddNumberToObject(p, "start_time_seconds", (double)b + (double)start / hz);
    }
    int fds = open_fds();
    if (fds >= 0) cJSON_AddNumberToObject(p, "open_fds", fds);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        cJSON_AddNumberToObject(p, "max_fds",
                                rl.rlim_cur == RLIM_INFINITY ? -1.0 : (double)rl.rlim_cur);
}

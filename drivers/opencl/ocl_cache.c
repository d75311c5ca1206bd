/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_cache.c: the on-disk program cache (ocl_cache.h). */
#include "ocl_cache.h"

#include <blake2.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BINARY (256u << 20)

void ocl_cache_key(const char *const *parts, size_t n_parts, char key[OCL_CACHE_KEY_HEX]) {
    blake2b_state s;
    uint8_t h[32];
    blake2b_init(&s, sizeof h);
    for (size_t i = 0; i < n_parts; i++) {
        const char *v = parts[i] ? parts[i] : "";
        uint64_t len = strlen(v);
        blake2b_update(&s, (const uint8_t *)&len, sizeof len); /* lengths keep the parts apart */
        blake2b_update(&s, (const uint8_t *)v, len);
    }
    blake2b_final(&s, h, sizeof h);
    for (size_t i = 0; i < sizeof h; i++)
        snprintf(key + 2 * i, 3, "%02x", h[i]);
}

/* Makes each missing component of path (0700); 0 when path is a directory we own that
 * nobody else may write. */
static int safe_dir(const char *path) {
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *q = tmp + 1; *q; q++)
        if (*q == '/') {
            *q = 0;
            if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
            *q = '/';
        }
    if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
    struct stat st;
    if (lstat(tmp, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & (S_IWGRP | S_IWOTH)))
        return -1;
    return 0;
}

/* The cache directory into dir; -1 when there is none to use. */
static int cache_dir(char *dir, size_t cap) {
    const char *v = getenv("NND_OPENCL_CACHE_DIR");
    int n;
    if (v && !strcmp(v, "off")) return -1;
    if (v && *v)
        n = snprintf(dir, cap, "%s", v);
    else if ((v = getenv("NND_STATE_DIR")) && *v)
        n = snprintf(dir, cap, "%s/opencl", v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v)
        n = snprintf(dir, cap, "%s/nnd/opencl", v);
    else if ((v = getenv("HOME")) && *v)
        n = snprintf(dir, cap, "%s/.cache/nnd/opencl", v);
    else
        n = snprintf(dir, cap, "/var/cache/nnd/opencl");
    if (n < 0 || (size_t)n >= cap || dir[0] != '/') return -1;
    return safe_dir(dir);
}

void *ocl_cache_load(const char *key, size_t *size) {
    char dir[PATH_MAX - 80], path[PATH_MAX];
    if (cache_dir(dir, sizeof dir)) return NULL;
    snprintf(path, sizeof path, "%s/%s.bin", dir, key);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    void *buf = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size > 0 &&
        (uint64_t)st.st_size <= MAX_BINARY && (buf = malloc((size_t)st.st_size))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, (char *)buf + got, (size_t)st.st_size - got);
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size) free(buf), buf = NULL;
        *size = got;
    }
    close(fd);
    return buf;
}

void ocl_cache_store(const char *key, const void *data, size_t size) {
    char dir[PATH_MAX - 80], path[PATH_MAX], tmp[PATH_MAX];
    if (cache_dir(dir, sizeof dir)) return;
    snprintf(path, sizeof path, "%s/%s.bin", dir, key);
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, key);
    int fd = mkstemp(tmp);
    if (fd < 0) return;
    size_t put = 0;
    while (put < size) {
        ssize_t w = write(fd, (const char *)data + put, size - put);
        if (w <= 0) break;
        put += (size_t)w;
    }
    if (close(fd) || put != size || rename(tmp, path)) unlink(tmp);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cachefile.c: cache file locks, writes, and the content store folder. See cachefile.h. */
#include "storage/cachefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int store_cachefile_size(int fd, uint64_t *size) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode)) return -EINVAL;
    *size = (uint64_t)st.st_size;
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int store_cachefile_lock(const int *fds, size_t n, bool exclusive, int timeout_ms) {
    int op = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
    for (size_t i = 0; i < n; i++) {
        int waited = 0, rc;
        while ((rc = flock(fds[i], op)) < 0 && (errno == EWOULDBLOCK || errno == EINTR) &&
               waited < timeout_ms) {
            sleep_ms(1);
            waited++;
        }
        if (rc < 0) {
            int e = errno;
            store_cachefile_unlock(fds, i);
            return -e;
        }
    }
    return 0;
}

void store_cachefile_unlock(const int *fds, size_t n) {
    for (size_t i = 0; i < n; i++)
        flock(fds[i], LOCK_UN);
}

static int write_full(int fd, const uint8_t *p, size_t len, size_t off) {
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -errno;
        if (w == 0) return -EIO;
        p += w, len -= (size_t)w, off += (size_t)w;
    }
    return 0;
}

int store_cachefile_write(int fd, const uint8_t *p, size_t len, size_t stall_at, char *err,
                          size_t errlen) {
    if (ftruncate(fd, 0) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot truncate a cache file: %s", strerror(e));
        return -e;
    }
    size_t first = stall_at && stall_at < len ? stall_at : len;
    int rc = write_full(fd, p, first, 0);
    if (rc == 0 && first < len) {
        /* Test hook: a crash in the middle of a cache write is simulated by a kill here. */
        for (int i = 0; i < 600; i++)
            sleep_ms(100);
        rc = write_full(fd, p + first, len - first, first);
    }
    if (rc < 0) snprintf(err, errlen, "cannot write a cache file: %s", strerror(-rc));
    return rc;
}

/* ---- the content store ----------------------------------------------------------------- */

static int store_path(char *out, size_t len, const char *dir, const uint8_t hash[STORE_HASH_LEN],
                      const char *suffix) {
    char hex[2 * STORE_HASH_LEN + 1];
    store_hex(hash, STORE_HASH_LEN, hex);
    return snprintf(out, len, "%s/%s%s", dir, hex, suffix) < (int)len ? 0 : -ENAMETOOLONG;
}

static int write_file(const char *dir, const uint8_t hash[STORE_HASH_LEN], const char *suffix,
                      const uint8_t *p, size_t len) {
    char final[4096], tmp[4200];
    if (store_path(final, sizeof final, dir, hash, suffix) < 0) return -ENAMETOOLONG;
    snprintf(tmp, sizeof tmp, "%s.tmp", final);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -errno;
    int rc = write_full(fd, p, len, 0);
    if (close(fd) < 0 && rc == 0) rc = -errno;
    if (rc == 0 && rename(tmp, final) < 0) rc = -errno;
    if (rc < 0) unlink(tmp);
    return rc;
}

int store_write(const char *dir, const uint8_t hash[STORE_HASH_LEN], const uint8_t *model,
                size_t model_len, const uint8_t *data, size_t data_len, char *err, size_t errlen) {
    int rc = write_file(dir, hash, ".data", data, data_len);
    if (rc == 0) rc = write_file(dir, hash, ".model", model, model_len);
    if (rc < 0) {
        store_remove(dir, hash);
        snprintf(err, errlen, "cannot write to the content store %s: %s", dir, strerror(-rc));
    }
    return rc;
}

void store_remove(const char *dir, const uint8_t hash[STORE_HASH_LEN]) {
    char path[4096];
    if (store_path(path, sizeof path, dir, hash, ".model") == 0) unlink(path);
    if (store_path(path, sizeof path, dir, hash, ".data") == 0) unlink(path);
}

static int unhex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int store_sweep(const char *dir, bool (*keep)(const uint8_t hash[STORE_HASH_LEN], void *ctx),
                void *ctx) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *name = e->d_name;
        size_t n = strlen(name);
        bool ours = n > 2 * STORE_HASH_LEN && (!strcmp(name + 2 * STORE_HASH_LEN, ".model") ||
                                               !strcmp(name + 2 * STORE_HASH_LEN, ".data"));
        bool tmp = n > 4 && !strcmp(name + n - 4, ".tmp");
        uint8_t hash[STORE_HASH_LEN];
        for (size_t i = 0; ours && i < STORE_HASH_LEN; i++) {
            int hi = unhex(name[2 * i]), lo = unhex(name[2 * i + 1]);
            if (hi < 0 || lo < 0)
                ours = false;
            else
                hash[i] = (uint8_t)(hi << 4 | lo);
        }
        if (tmp || (ours && !keep(hash, ctx))) {
            if (unlinkat(dirfd(d), name, 0) == 0) removed++;
        }
    }
    closedir(d);
    return removed;
}

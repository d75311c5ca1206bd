/* SPDX-License-Identifier: Apache-2.0 */
/* replay_main: runs a fuzz target's LLVMFuzzerTestOneInput() over files and directories
 * (every regular file, sorted by name, README excepted), without libFuzzer. Used by the
 * fuzz_regress_* tests. Exit 0 when every input ran (a crash ends the process). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz_target.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = b;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (!n) break;
        len += n;
    }
    fclose(f);
    /* An exact-size copy, so that a read past the end is caught by a sanitizer. */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact && len) memcpy(exact, buf, len);
    free(buf);
    if (!exact) return -1;
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    size_t runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) < 0) return 1;
            runs++;
            continue;
        }
        struct dirent **list;
        int n = scandir(argv[i], &list, NULL, NULL);
        if (n < 0) {
            perror(argv[i]);
            return 1;
        }
        char **names = calloc((size_t)n + 1, sizeof *names);
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (list[j]->d_name[0] != '.' && strcmp(list[j]->d_name, "README") != 0)
                names[k++] = strdup(list[j]->d_name);
            free(list[j]);
        }
        free(list);
        qsort(names, (size_t)k, sizeof *names, by_name);
        for (int j = 0; j < k; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[j]);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                printf("replay %s\n", path);
                fflush(stdout);
                if (run_file(path) < 0) return 1;
                runs++;
            }
            free(names[j]);
        }
        free(names);
    }
    printf("replayed %zu inputs\n", runs);
    return 0;
}

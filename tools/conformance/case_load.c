/* SPDX-License-Identifier: Apache-2.0 */
/* case_load.c: cases from vector files and folders. See case_load.h. */
#include "tools/conformance/case_load.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/conformance/case_model.h"
#include "tools/conformance/case_pool.h"
#include "tools/conformance/case_read.h"
#include "tools/conformance/case_tensor.h"

/* The newer folders' case fields; absent ones keep their defaults. */
static int read_version_fields(const cJSON *j, tool_case *c, char *why, size_t whylen) {
    c->expect_failure = case_json_flag(j, "expect_failure");
    c->infinite_loop_timeout = case_json_flag(j, "infinite_loop_timeout");
    const char *folder = case_json_str(j, "folder");
    if (folder && strlen(folder) >= sizeof c->folder) {
        snprintf(why, whylen, "folder \"%.40s\" is too long", folder);
        return -1;
    }
    snprintf(c->folder, sizeof c->folder, "%s", folder ? folder : "");
    const char *v = case_json_str(j, "min_supported_version");
    if (!v) return 0;
    if (tool_case_version_parse(v, &c->min_version)) return 0;
    snprintf(why, whylen, "unknown min_supported_version \"%.40s\"", v);
    return -1;
}

static int build_case(const cJSON *j, const char *file, tool_case *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    const char *name = case_json_str(j, "name");
    if (!name) {
        case_errf(err, errlen, "case without a name");
        return -1;
    }
    char why[200] = "out of memory";
    if (!(c->name = case_strdup(name)) || !(c->file = case_strdup(file))) goto fail;
    c->dynamic_output_shape = case_json_flag(j, "dynamic_output_shape");
    if (read_version_fields(j, c, why, sizeof why) < 0) goto fail;
    if (case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "ignored_outputs"), &c->ignored_outputs,
                       &c->n_ignored) < 0) {
        snprintf(why, sizeof why, "bad ignored_outputs");
        goto fail;
    }
    if (!(c->model =
              case_model_from_json(cJSON_GetObjectItemCaseSensitive(j, "model"), why, sizeof why)))
        goto fail;
    c->relaxed = c->model->relax_computation_float32_to_float16;
    if (case_pool_marks_from_json(cJSON_GetObjectItemCaseSensitive(j, "model"), c, why,
                                  sizeof why) < 0)
        goto fail;
    const cJSON *exs = cJSON_GetObjectItemCaseSensitive(j, "examples");
    size_t k = cJSON_IsArray(exs) ? (size_t)cJSON_GetArraySize(exs) : 0;
    if (k && !(c->examples = calloc(k, sizeof *c->examples))) goto fail;
    const cJSON *e;
    cJSON_ArrayForEach(e, exs) {
        tool_case_example *ex = &c->examples[c->n_examples++];
        ex->multinomial_tolerance = case_json_num(e, "multinomial_tolerance", 0);
        char twhy[160] = "out of memory";
        if (case_tensors_from_json(cJSON_GetObjectItemCaseSensitive(e, "inputs"), c->model->main,
                                   true, &ex->inputs, &ex->n_inputs, twhy, sizeof twhy) < 0 ||
            case_tensors_from_json(cJSON_GetObjectItemCaseSensitive(e, "outputs"), c->model->main,
                                   false, &ex->outputs, &ex->n_outputs, twhy, sizeof twhy) < 0) {
            snprintf(why, sizeof why, "example %zu: %s", c->n_examples - 1, twhy);
            goto fail;
        }
    }
    return 0;
fail:
    case_errf(err, errlen, "%s", why);
    tool_case_clear(c);
    return -1;
}

typedef struct loader {
    tool_case **cases;
    size_t *n_cases;
    tool_case_skip_fn on_skip; /* NULL: strict */
    void *ctx;
    char *err;
    size_t errlen;
} loader;

/* A case or file that cannot be read: reported and passed over, or (strict) the error. */
static int skip(loader *l, const char *file, const char *case_name, const char *reason) {
    if (l->on_skip) {
        l->on_skip(l->ctx, file, case_name, reason);
        return 0;
    }
    if (case_name)
        case_errf(l->err, l->errlen, "%s: case %s: %s", file, case_name, reason);
    else
        case_errf(l->err, l->errlen, "%s: %s", file, reason);
    return -1;
}

static int load_file(loader *l, const char *path) {
    size_t len;
    char why[512] = "out of memory";
    char *text = case_read_file(path, &len, why, sizeof why);
    if (!text) return skip(l, path, NULL, why);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "cases");
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(root);
        return skip(l, path, NULL, root ? "no \"cases\" array" : "not valid JSON");
    }
    size_t k = (size_t)cJSON_GetArraySize(arr);
    tool_case *grown = realloc(*l->cases, (*l->n_cases + k + 1) * sizeof **l->cases);
    if (!grown) {
        case_errf(l->err, l->errlen, "out of memory");
        cJSON_Delete(root);
        return -1;
    }
    *l->cases = grown;
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (build_case(e, path, &grown[*l->n_cases], why, sizeof why) == 0) {
            (*l->n_cases)++;
        } else {
            const char *name = case_json_str(e, "name");
            if ((rc = skip(l, path, name ? name : "(unnamed)", why)) < 0) break;
        }
    }
    cJSON_Delete(root);
    return rc;
}

typedef struct path_list {
    char **v;
    size_t n, cap;
} path_list;

static int cmp_path(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Collects every *.json below dir; hidden entries are skipped. */
static int walk(const char *dir, path_list *pl, char *err, size_t errlen) {
    DIR *d = opendir(dir);
    if (!d) {
        case_errf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = malloc(n);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, n, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = walk(p, pl, err, errlen);
            free(p);
        } else if (ends_with(p, ".json")) {
            if (pl->n == pl->cap) {
                size_t cap = pl->cap ? pl->cap * 2 : 64;
                char **v = realloc(pl->v, cap * sizeof *v);
                if (!v) {
                    free(p);
                    rc = -1;
                    break;
                }
                pl->v = v;
                pl->cap = cap;
            }
            pl->v[pl->n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
    return rc;
}

int tool_cases_load(const char *path, tool_case **cases, size_t *n_cases, tool_case_skip_fn on_skip,
                    void *ctx, char *err, size_t errlen) {
    loader l = {cases, n_cases, on_skip, ctx, err, errlen};
    struct stat st;
    if (stat(path, &st) < 0) {
        case_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return load_file(&l, path);
    path_list pl = {0};
    case_errf(err, errlen, "out of memory");
    int rc = walk(path, &pl, err, errlen);
    if (rc == 0 && pl.n == 0) {
        case_errf(err, errlen, "%s: no .json files", path);
        rc = -1;
    }
    if (pl.n) qsort(pl.v, pl.n, sizeof *pl.v, cmp_path);
    for (size_t i = 0; i < pl.n; i++) {
        if (rc == 0) rc = load_file(&l, pl.v[i]);
        free(pl.v[i]);
    }
    free(pl.v);
    return rc;
}

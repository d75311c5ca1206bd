/* SPDX-License-Identifier: Apache-2.0 */
/* record.c: recording a client's models and executions as conformance case files. See
 * record.h. Everything here happens under one lock: recording is a diagnostic mode, and a
 * single order of events keeps each file's examples whole. */
#include "client/record.h"

#include "client/client_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema/hal_names.h"
#include "schema/codes.h"
#include "client/record_json.h"

#define HEAD_BYTES 1024 /* what a file holds besides its model and examples, at most */

atomic_uint cli_record_n_live;

/* An input or output of a recorded model's main graph. */
typedef struct rec_io {
    int32_t type;
    uint32_t rank;
    uint32_t *dims;
} rec_io;

/* One prepared model's file. */
typedef struct rec_case {
    struct rec_case *next;
    nnd_client *client;
    uint64_t handle;
    char name[96];
    cJSON *head; /* the case's fields but its model and examples */
    char *model; /* the "model" object, printed */
    char **examples;
    size_t n_examples, cap_examples, n_written;
    uint32_t n_in, n_out;
    rec_io *in, *out;
    bool *ignored; /* outputs that held NaN in some example */
} rec_case;

static struct {
    pthread_once_t once;
    bool on; /* $NND_RECORD names a directory */
    char dir[PATH_MAX - 128];
    char program[32];
    unsigned long long cap;
    pthread_mutex_t lock; /* guards everything below */
    bool started;         /* the directory is made and the first message said */
    bool stopped;
    unsigned long long committed; /* bytes the files will hold, written or not */
    unsigned seq;
    rec_case *cases; /* live: prepared and not yet released */
    bool told_model, told_example;
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    char line[PATH_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "libnnd: NND_RECORD: %s\n", line);
}

/* NND_RECORD_MAX_BYTES: a byte count, with an optional K, M or G (binary) suffix. */
static unsigned long long parse_cap(const char *v) {
    if (!v || !*v) return CLI_RECORD_DEFAULT_MAX_BYTES;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k'   ? 10
                : *end == 'M' || *end == 'm' ? 20
                : *end == 'G' || *end == 'g' ? 30
                                             : 0;
    if (shift) end++;
    if (errno || end == v || *end || v[0] == '-' || n > (~0ull >> shift)) {
        say("NND_RECORD_MAX_BYTES=%s is not a byte count; the bound is %llu bytes", v,
            (unsigned long long)CLI_RECORD_DEFAULT_MAX_BYTES);
        return CLI_RECORD_DEFAULT_MAX_BYTES;
    }
    return n << shift;
}

static void init(void) {
    const char *dir = getenv("NND_RECORD");
    if (!dir || !*dir) return;
    if (strlen(dir) >= sizeof g.dir) {
        say("the directory name is too long; nothing is recorded");
        return;
    }
    snprintf(g.dir, sizeof g.dir, "%s", dir);
    g.cap = parse_cap(getenv("NND_RECORD_MAX_BYTES"));
    char comm[32] = "";
    FILE *f = fopen("/proc/self/comm", "re");
    if (f) {
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
    }
    size_t n = 0;
    for (const char *p = comm; *p && *p != '\n' && n + 1 < sizeof g.program; p++)
        g.program[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                 (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'
                             ? *p
                             : '_';
    if (!n) g.program[n++] = 'p';
    g.program[n] = 0;
    g.on = true;
}

static void free_case(rec_case *rc) {
    cJSON_Delete(rc->head);
    free(rc->model);
    for (size_t i = 0; i < rc->n_examples; i++)
        free(rc->examples[i]);
    free(rc->examples);
    for (uint32_t i = 0; i < rc->n_in; i++)
        free(rc->in[i].dims);
    for (uint32_t i = 0; i < rc->n_out; i++)
        free(rc->out[i].dims);
    free(rc->in);
    free(rc->out);
    free(rc->ignored);
    free(rc);
}

/* ---- files ------------------------------------------------------------------------------ */

static bool put(FILE *f, const char *s, size_t n) {
    return fwrite(s, 1, n, f) == n;
}

/* The whole file, to a hidden name and then into place. Returns 0 or an errno. */
static int write_case(rec_case *rc) {
    char path[PATH_MAX], tmp[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.json", g.dir, rc->name);
    snprintf(tmp, sizeof tmp, "%s/.%s.json.tmp", g.dir, rc->name);
    cJSON *ignored = cJSON_AddArrayToObject(rc->head, "ignored_outputs");
    for (uint32_t k = 0; ignored && k < rc->n_out; k++)
        if (rc->ignored[k]) cJSON_AddItemToArray(ignored, cJSON_CreateNumber(k));
    char *head = cJSON_PrintUnformatted(rc->head);
    cJSON_DeleteItemFromObjectCaseSensitive(rc->head, "ignored_outputs");
    if (!head) return ENOMEM;
    /* 0600: a recording holds the program's weights and inputs. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        free(head);
        return e;
    }
    const char *spec = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rc->head, "spec"));
    const char *hal = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rc->head, "hal"));
    bool ok = fprintf(f, "{\"spec\":\"%s\",\"hal\":\"%s\",\"cases\":[", spec, hal) > 0 &&
              put(f, head, strlen(head) - 1) && /* the head without its closing brace */
              put(f, ",\"model\":", 9) && put(f, rc->model, strlen(rc->model)) &&
              put(f, ",\"examples\":[", 13);
    for (size_t i = 0; ok && i < rc->n_examples; i++)
        ok = (!i || put(f, ",", 1)) && put(f, rc->examples[i], strlen(rc->examples[i]));
    ok = ok && put(f, "]}]}\n", 5);
    int e = ok ? 0 : errno ? errno : EIO;
    if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
    free(head);
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e)
        unlink(tmp);
    else
        rc->n_written = rc->n_examples;
    return e;
}

/* Recording ends for the process: the live files are written as they are and dropped. */
static void stop_locked(void) {
    g.stopped = true;
    while (g.cases) {
        rec_case *rc = g.cases;
        g.cases = rc->next;
        if (rc->n_written != rc->n_examples) write_case(rc);
        free_case(rc);
    }
    atomic_store(&cli_record_n_live, 0);
}

static void stop_at_bound(void) {
    say("stopped recording into %s: the recording reached its bound, NND_RECORD_MAX_BYTES = "
        "%llu bytes. The files written so far are complete; set NND_RECORD_MAX_BYTES higher "
        "to record more.",
        g.dir, g.cap);
    stop_locked();
}

/* Takes n more bytes of the bound, or stops recording when they do not fit. */
static bool commit(size_t n) {
    if (g.committed + n > g.cap) {
        stop_at_bound();
        return false;
    }
    g.committed += n;
    return true;
}

static void write_or_stop(rec_case *rc) {
    int e = write_case(rc);
    if (!e) return;
    say("cannot write %s/%s.json: %s; recording is off (the calls go on unrecorded)", g.dir,
        rc->name, strerror(e));
    stop_locked();
}

/* ---- models ----------------------------------------------------------------------------- */

static bool is_tensor(int32_t type) {
    return type != SCHEMA_FLOAT32 && type != SCHEMA_INT32 && type != SCHEMA_UINT32 &&
           type != SCHEMA_BOOL && type != SCHEMA_FLOAT16;
}

/* A tensor whose shape the model leaves open: its outputs are dynamic. */
static bool unknown_shape(const Nnd__Operand *o) {
    if (!is_tensor(o->type)) return false;
    if (!o->n_dimensions) return true;
    for (size_t i = 0; i < o->n_dimensions; i++)
        if (!o->dimensions[i]) return true;
    return false;
}

static int io_from(const Nnd__Subgraph *g, const uint32_t *idx, size_t n, rec_io **out) {
    *out = calloc(n + 1, sizeof **out);
    if (!*out) return -1;
    for (size_t i = 0; i < n; i++) {
        if (idx[i] >= g->n_operands) return -1;
        const Nnd__Operand *o = g->operands[idx[i]];
        rec_io *io = &(*out)[i];
        io->type = o->type;
        io->rank = (uint32_t)o->n_dimensions;
        if (!(io->dims = malloc((o->n_dimensions + 1) * sizeof *io->dims))) return -1;
        memcpy(io->dims, o->dimensions, o->n_dimensions * sizeof *io->dims);
    }
    return 0;
}

static rec_case *new_case(const Nnd__Model *m, cJSON *model, int status, const char *message) {
    rec_case *rc = calloc(1, sizeof *rc);
    if (!rc) return NULL;
    const Nnd__Subgraph *main = m->main;
    rc->n_in = (uint32_t)main->n_input_indexes;
    rc->n_out = (uint32_t)main->n_output_indexes;
    bool dynamic = false;
    for (size_t i = 0; i < main->n_output_indexes; i++)
        if (main->output_indexes[i] < main->n_operands)
            dynamic |= unknown_shape(main->operands[main->output_indexes[i]]);
    snprintf(rc->name, sizeof rc->name, "nnd-rec-%s-%ld-%u", g.program, (long)getpid(), ++g.seq);
    const char *version = rec_min_version(m);
    cJSON *h = rc->head = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "name", rc->name);
    cJSON_AddStringToObject(h, "spec", "recorded");
    cJSON_AddStringToObject(h, "hal", version);
    cJSON_AddStringToObject(h, "folder", "recorded");
    cJSON_AddStringToObject(h, "min_supported_version", version);
    cJSON_AddBoolToObject(h, "expect_failure", false);
    cJSON_AddBoolToObject(h, "infinite_loop_timeout", false);
    cJSON_AddBoolToObject(h, "dynamic_output_shape", dynamic);
    cJSON *r = cJSON_AddObjectToObject(h, "recorded");
    cJSON_AddStringToObject(r, "program", g.program);
    cJSON_AddNumberToObject(r, "pid", (double)getpid());
    cJSON_AddStringToObject(r, "prepare", status ? nnd_status_name(status) : "NONE");
    if (status && message) {
        char cut[300]; /* the head stays within HEAD_BYTES */
        snprintf(cut, sizeof cut, "%s", message);
        cJSON_AddStringToObject(r, "message", cut);
    }
    rc->model = cJSON_PrintUnformatted(model);
    rc->ignored = calloc(rc->n_out + 1, sizeof *rc->ignored);
    if (!rc->model || !rc->ignored || !rc->head ||
        io_from(main, main->input_indexes, rc->n_in, &rc->in) < 0 ||
        io_from(main, main->output_indexes, rc->n_out, &rc->out) < 0) {
        free_case(rc);
        return NULL;
    }
    return rc;
}

void cli_record_prepared(nnd_client *c, uint64_t handle, const Nnd__Model *model,
                         const int *pool_fds, size_t n_fds, int status, const char *message) {
    pthread_once(&g.once, init);
    if (!g.on || !model || !model->main || status < 0) return; /* < 0: no daemon answer */
    pthread_mutex_lock(&g.lock);
    if (g.stopped) goto out;
    if (!g.started) {
        g.started = true;
        if (mkdir(g.dir, 0700) != 0 && errno != EEXIST) {
            say("cannot write %s: %s; recording is off (the calls go on unrecorded)", g.dir,
                strerror(errno));
            stop_locked();
            goto out;
        }
        say("recording this program's models and executions into %s (at most %llu bytes, "
            "NND_RECORD_MAX_BYTES)",
            g.dir, g.cap);
    }
    char why[200];
    cJSON *json = rec_model_json(model, pool_fds, n_fds, why, sizeof why);
    rec_case *rc = json ? new_case(model, json, status, message) : NULL;
    cJSON_Delete(json);
    if (!rc) {
        if (!g.told_model)
            say("a model is not recorded (and further ones are not reported): %s",
                json ? "out of memory" : why);
        g.told_model = true;
        goto out;
    }
    if (!commit(strlen(rc->model) + HEAD_BYTES)) {
        free_case(rc);
        goto out;
    }
    write_or_stop(rc);
    if (g.stopped || status || !handle) {
        free_case(rc); /* a refused model's file is final at once */
        goto out;
    }
    rc->client = c;
    rc->handle = handle;
    rc->next = g.cases;
    g.cases = rc;
    atomic_fetch_add(&cli_record_n_live, 1);
out:
    pthread_mutex_unlock(&g.lock);
}

/* ---- executions ------------------------------------------------------------------------- */

static rec_case **find(nnd_client *c, uint64_t handle) {
    for (rec_case **p = &g.cases; *p; p = &(*p)->next)
        if ((*p)->client == c && (*p)->handle == handle) return p;
    return NULL;
}

static size_t elements(const uint32_t *dims, size_t rank, bool *known) {
    size_t n = 1;
    *known = true;
    for (size_t i = 0; i < rank; i++) {
        if (!dims[i]) *known = false;
        n *= dims[i];
    }
    return n;
}

/* One argument's tensor, read from its pool; NULL with why when it cannot be. */
static cJSON *argument_json(nnd_client *c, const Nnd__ExecutionRequest *req, const int *fds,
                            size_t n_fds, const Nnd__RequestArgument *a, uint32_t index,
                            const rec_io *io, const uint32_t *dims, size_t rank, bool is_input,
                            bool *has_nan, const char **why) {
    if (a->has_no_value) {
        if (is_input) return rec_tensor_json(index, io->type, io->dims, io->rank, NULL, 0, has_nan);
        *why = "an output without a buffer";
        return NULL;
    }
    bool known;
    size_t count = elements(dims, rank, &known), es = schema_hal_element_size(io->type);
    const Nnd__DataLocation *loc = a->location;
    if ((!rank && is_tensor(io->type)) || !es || (is_input && (!known || !count))) {
        *why = "a tensor of unknown or empty shape";
        return NULL;
    }
    if (!loc || loc->pool_index >= req->n_pools || (uint64_t)count * es > loc->length) {
        *why = "an argument outside its memory";
        return NULL;
    }
    const Nnd__MemoryPool *p = req->pools[loc->pool_index];
    bool has_fd = p->kind == NND__POOL_KIND__POOL_MEMFD ||
                  p->kind == NND__POOL_KIND__POOL_MMAP_FD || p->kind == NND__POOL_KIND__POOL_DMABUF;
    int fd = has_fd && p->fd_index < n_fds ? fds[p->fd_index] : -1;
    uint64_t base = p->offset;
    if (p->kind == NND__POOL_KIND__POOL_REGISTERED) { /* through the client's own duplicate */
        uint64_t start = 0;
        fd = cli_registered_fd(c, p->token, &start);
        base = start + p->offset;
    }
    void *data = count ? malloc(count * es) : NULL;
    if (fd < 0 || (count && !data) ||
        (count && rec_read(fd, base + loc->offset, count * es, data) < 0)) {
        free(data);
        *why = "an argument in memory the client cannot read (a driver buffer)";
        return NULL;
    }
    cJSON *t = rec_tensor_json(index, io->type, dims, rank, data, count, has_nan);
    free(data);
    if (!t) *why = "out of memory";
    return t;
}

static char *example_text(nnd_client *c, rec_case *rc, const Nnd__ExecutionRequest *req,
                          const int *fds, size_t n_fds, const Nnd__Reply *reply, const char **why) {
    if (req->n_inputs != rc->n_in || req->n_outputs != rc->n_out) {
        *why = "a request that does not match its model";
        return NULL;
    }
    const Nnd__ExecuteReply *x = reply ? reply->executed : NULL;
    bool shapes = x && x->n_output_shapes == rc->n_out;
    cJSON *ex = cJSON_CreateObject();
    cJSON *ins = cJSON_AddArrayToObject(ex, "inputs"),
          *outs = cJSON_AddArrayToObject(ex, "outputs");
    bool ok = ins && outs, nan = false;
    bool *out_nan = calloc(rc->n_out + 1, sizeof *out_nan);
    *why = "out of memory";
    for (uint32_t i = 0; ok && out_nan && i < rc->n_in; i++) {
        const Nnd__RequestArgument *a = req->inputs[i];
        const uint32_t *dims = a->n_dimensions ? a->dimensions : rc->in[i].dims;
        size_t rank = a->n_dimensions ? a->n_dimensions : rc->in[i].rank;
        cJSON *t = argument_json(c, req, fds, n_fds, a, i, &rc->in[i], dims, rank, true, &nan, why);
        ok = t && cJSON_AddItemToArray(ins, t);
        if (nan) *why = "an input holds NaN, which the format cannot write", ok = false;
    }
    for (uint32_t k = 0; ok && out_nan && k < rc->n_out; k++) {
        const Nnd__RequestArgument *a = req->outputs[k];
        const uint32_t *dims = shapes            ? x->output_shapes[k]->dimensions
                               : a->n_dimensions ? a->dimensions
                                                 : rc->out[k].dims;
        size_t rank = shapes            ? x->output_shapes[k]->n_dimensions
                      : a->n_dimensions ? a->n_dimensions
                                        : rc->out[k].rank;
        cJSON *t = argument_json(c, req, fds, n_fds, a, k, &rc->out[k], dims, rank, false,
                                 &out_nan[k], why);
        ok = t && cJSON_AddItemToArray(outs, t);
    }
    char *text = ok && out_nan ? cJSON_PrintUnformatted(ex) : NULL;
    if (text)
        for (uint32_t k = 0; k < rc->n_out; k++)
            rc->ignored[k] |= out_nan[k];
    free(out_nan);
    cJSON_Delete(ex);
    return text;
}

void cli_record_executed(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                         const int *pool_fds, size_t n_fds, int status, const Nnd__Reply *reply) {
    if (status != NND__ERROR_STATUS__NONE || !req) return; /* failures have no results */
    pthread_mutex_lock(&g.lock);
    rec_case **p = g.stopped ? NULL : find(c, handle);
    rec_case *rc = p ? *p : NULL;
    const char *why = NULL;
    char *text = rc ? example_text(c, rc, req, pool_fds, n_fds, reply, &why) : NULL;
    if (rc && !text && !g.told_example) {
        say("an execution is not recorded (and further ones are not reported): %s", why);
        g.told_example = true;
    }
    if (!text || !commit(strlen(text) + 1)) goto out;
    if (rc->n_examples == rc->cap_examples) {
        size_t cap = rc->cap_examples ? rc->cap_examples * 2 : 8;
        char **grown = realloc(rc->examples, cap * sizeof *grown);
        if (!grown) goto out;
        rc->examples = grown;
        rc->cap_examples = cap;
    }
    rc->examples[rc->n_examples++] = text;
    text = NULL;
    /* Written after the 1st, 2nd, 4th, ... example: a crash loses at most half of them, and
     * the bytes written stay within twice the file's size. */
    if (!(rc->n_examples & (rc->n_examples - 1))) write_or_stop(rc);
out:
    free(text);
    pthread_mutex_unlock(&g.lock);
}

/* ---- the end of a model, a client, the process ------------------------------------------ */

static void finish(rec_case **p) {
    rec_case *rc = *p;
    *p = rc->next;
    atomic_fetch_sub(&cli_record_n_live, 1);
    if (rc->n_written != rc->n_examples) write_or_stop(rc);
    free_case(rc);
}

void cli_record_released(nnd_client *c, uint64_t handle) {
    pthread_mutex_lock(&g.lock);
    rec_case **p = find(c, handle);
    if (p) finish(p);
    pthread_mutex_unlock(&g.lock);
}

void cli_record_closed(nnd_client *c) {
    pthread_mutex_lock(&g.lock);
    for (rec_case **p = &g.cases; *p;)
        if ((*p)->client == c) {
            finish(p);
            if (g.stopped) break; /* a failed write dropped every case */
        } else
            p = &(*p)->next;
    pthread_mutex_unlock(&g.lock);
}

/* At exit or unload: what is recorded is written. A thread still inside a hook keeps the
 * lock; then its files stay as last written. */
__attribute__((destructor)) static void record_at_exit(void) {
    if (!cli_record_live() || pthread_mutex_trylock(&g.lock) != 0) return;
    while (g.cases)
        finish(&g.cases);
    pthread_mutex_unlock(&g.lock);
}

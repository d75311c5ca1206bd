/* SPDX-License-Identifier: Apache-2.0 */
/* test_extensions: vendor extensions through a real daemon (harness.h) whose extensions
 * directory holds the Fibonacci plugin, the misbehaving test plugin (ext_test_plugin.c),
 * one with a foreign ABI version and a copy of Fibonacci under another file name.
 * Daemon A allows this program by its executable path; daemon B allows someone else,
 * until its allowlist is rewritten with our uid and reloaded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extensions/fibonacci/fibonacci.h"
#include "tests/support/harness.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"

#define T_INT32           1
#define T_TENSOR_FLOAT32  3
#define T_TENSOR_OEM_BYTE 10001
#define OP_OEM_OPERATION  10000
#define EXT_TEST          "com.example.test"

#define LT_TEMP   NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE
#define LT_INPUT  NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT
#define LT_OUTPUT NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT
#define LT_CONST  NND__OPERAND_LIFE_TIME__CONSTANT_COPY

static char ext_dir[256], allow_a[PATH_MAX], allow_b[PATH_MAX], log_a[PATH_MAX];
static tst_daemon da, db;

/* ---- a one-operation model builder ----------------------------------------------------- */

typedef struct mb {
    Nnd__Model model;
    Nnd__Subgraph sg;
    Nnd__Operand o[4];
    Nnd__Operand *op_ptrs[4];
    Nnd__DataLocation loc[4];
    uint32_t dims[4][1];
    Nnd__Operation op;
    Nnd__Operation *opp[1];
    uint32_t op_in[4], op_out[1], ins[4], outs[4];
    Nnd__ExtensionNameAndPrefix map[2];
    Nnd__ExtensionNameAndPrefix *mapp[2];
    TestVendorQuant64AsymmParams q;
    uint8_t values[64];
    size_t vlen;
} mb;

static void mb_init(mb *m) {
    memset(m, 0, sizeof *m);
    nnd__model__init(&m->model);
    nnd__subgraph__init(&m->sg);
    nnd__operation__init(&m->op);
    m->model.main = &m->sg;
}

/* rank 0: a scalar; rank 1: [d0] (0 = unknown). */
static uint32_t mb_operand(mb *m, int32_t type, uint32_t rank, uint32_t d0, int lifetime) {
    uint32_t i = (uint32_t)m->sg.n_operands++;
    Nnd__Operand *o = &m->o[i];
    nnd__operand__init(o);
    o->type = type;
    o->n_dimensions = rank;
    m->dims[i][0] = d0;
    o->dimensions = m->dims[i];
    o->lifetime = lifetime;
    m->op_ptrs[i] = o;
    m->sg.operands = m->op_ptrs;
    if (lifetime == LT_INPUT) m->ins[m->sg.n_input_indexes++] = i;
    if (lifetime == LT_OUTPUT) m->outs[m->sg.n_output_indexes++] = i;
    m->sg.input_indexes = m->ins;
    m->sg.output_indexes = m->outs;
    return i;
}

static void mb_const(mb *m, uint32_t i, const void *v, size_t len) {
    nnd__data_location__init(&m->loc[i]);
    m->loc[i].offset = m->vlen;
    m->loc[i].length = len;
    memcpy(m->values + m->vlen, v, len);
    m->vlen += (len + 7) & ~(size_t)7;
    m->o[i].location = &m->loc[i];
    m->model.operand_values.data = m->values;
    m->model.operand_values.len = m->vlen;
}

static void mb_op(mb *m, int32_t type, uint32_t n_in, const uint32_t *in, uint32_t out) {
    m->op.type = type;
    memcpy(m->op_in, in, sizeof(uint32_t) * n_in);
    m->op.n_inputs = n_in;
    m->op.inputs = m->op_in;
    m->op_out[0] = out;
    m->op.n_outputs = 1;
    m->op.outputs = m->op_out;
    m->opp[0] = &m->op;
    m->sg.n_operations = 1;
    m->sg.operations = m->opp;
}

static void mb_map(mb *m, const char *name, uint32_t prefix) {
    size_t i = m->model.n_extension_name_to_prefix++;
    nnd__extension_name_and_prefix__init(&m->map[i]);
    m->map[i].name = (char *)name;
    m->map[i].prefix = prefix;
    m->mapp[i] = &m->map[i];
    m->model.extension_name_to_prefix = m->mapp;
}

static int32_t code(uint32_t prefix, uint32_t c) {
    return (int32_t)(prefix << 16 | c);
}

/* n -> FIBONACCI -> output of unknown length: n is TEST_VENDOR_INT64 or TENSOR_FLOAT32 [1],
 * the output TENSOR_FLOAT32 or TEST_VENDOR_TENSOR_QUANT64_ASYMM (scale 0.5, zero point 10). */
static void fib_model(mb *m, bool int64_n, bool quant_out, uint32_t prefix) {
    mb_init(m);
    uint32_t n = int64_n ? mb_operand(m, code(prefix, TEST_VENDOR_INT64), 0, 0, LT_INPUT)
                         : mb_operand(m, T_TENSOR_FLOAT32, 1, 1, LT_INPUT);
    uint32_t out =
        quant_out ? mb_operand(m, code(prefix, TEST_VENDOR_TENSOR_QUANT64_ASYMM), 1, 0, LT_OUTPUT)
                  : mb_operand(m, T_TENSOR_FLOAT32, 1, 0, LT_OUTPUT);
    if (quant_out) {
        m->q.scale = 0.5;
        m->q.zeroPoint = 10;
        m->o[out].extra_params_case = NND__OPERAND__EXTRA_PARAMS_EXTENSION;
        m->o[out].extension.data = (uint8_t *)&m->q;
        m->o[out].extension.len = sizeof m->q;
    }
    mb_op(m, code(prefix, TEST_VENDOR_FIBONACCI), 1, &n, out);
    mb_map(m, TEST_VENDOR_FIBONACCI_EXTENSION_NAME, prefix);
}

/* ---- calls ----------------------------------------------------------------------------- */

static nnd_client *connect_to(const tst_daemon *d) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "test_extensions", err, sizeof err);
    if (!c) print_message("connect: %s\n", err);
    assert_non_null(c);
    return c;
}

static const Nnd__Extension *find_ext(const Nnd__SupportedExtensionsReply *r, const char *name) {
    for (size_t i = 0; i < r->n_extensions; i++)
        if (!strcmp(r->extensions[i]->name, name)) return r->extensions[i];
    return NULL;
}

/* Prepares m; returns the status, with the handle in *h and the message in err. */
static int prepare(nnd_client *c, const mb *m, uint64_t *h, char *err, size_t errlen) {
    *h = 0;
    err[0] = '\0';
    return nnd_client_prepare(c, &m->model, NULL, 0, 0, 0, 0, h, err, errlen);
}

/* Executes with one input of in_len bytes; the output lands in out (out_len bytes) and its
 * first dimension in *dim. Returns the status; err gets the message. */
static int execute(nnd_client *c, uint64_t h, const void *in, size_t in_len, void *out,
                   size_t out_len, uint32_t *dim, char *err, size_t errlen) {
    size_t size = 4096;
    void *map;
    int fd = nnd_memfd_create("test-ext", size, &map);
    assert_true(fd >= 0);
    assert_true(in_len <= 256 && out_len <= size - 256);
    memcpy(map, in, in_len);
    Nnd__DataLocation loc[2];
    Nnd__RequestArgument args[2], *inp[1] = {&args[0]}, *outp[1] = {&args[1]};
    for (int i = 0; i < 2; i++) {
        nnd__data_location__init(&loc[i]);
        nnd__request_argument__init(&args[i]);
        args[i].location = &loc[i];
    }
    loc[0].length = in_len;
    loc[1].offset = 256;
    loc[1].length = out_len;
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *pools[1] = {&pool};
    pool.kind = NND__POOL_KIND__POOL_MEMFD;
    pool.size = size;
    Nnd__ExecutionRequest req = NND__EXECUTION_REQUEST__INIT;
    req.n_inputs = 1;
    req.inputs = inp;
    req.n_outputs = 1;
    req.outputs = outp;
    req.n_pools = 1;
    req.pools = pools;
    Nnd__Reply *reply = NULL;
    err[0] = '\0';
    int st = nnd_client_execute(c, h, &req, &fd, 1, false, 0, &reply, err, errlen);
    if (st == 0) {
        assert_int_equal(reply->executed->n_output_shapes, 1);
        assert_int_equal(reply->executed->output_shapes[0]->n_dimensions, 1);
        *dim = reply->executed->output_shapes[0]->dimensions[0];
        memcpy(out, (uint8_t *)map + 256, out_len);
    } else if (reply && reply->message) {
        snprintf(err, errlen, "%s", reply->message);
    }
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    munmap(map, size);
    close(fd);
    return st;
}

static double fib(int i) { /* F(1) = F(2) = 1 */
    double a = 1, b = 1;
    while (--i > 0) {
        double n = a + b;
        a = b;
        b = n;
    }
    return a;
}

/* Runs FIBONACCI for n in both input kinds and checks the n numbers. */
static void check_fib(nnd_client *c, bool int64_n, bool quant_out, int n) {
    mb m;
    fib_model(&m, int64_n, quant_out, int64_n ? 7 : 0x1234);
    char err[512];
    uint64_t h;
    int st = prepare(c, &m, &h, err, sizeof err);
    if (st) print_message("prepare: %s\n", err);
    assert_int_equal(st, 0);
    uint8_t in[8], out[8 * 40];
    int64_t n64 = n;
    float nf = (float)n;
    memcpy(in, int64_n ? (void *)&n64 : (void *)&nf, int64_n ? 8 : 4);
    uint32_t dim = 0;
    st = execute(c, h, in, int64_n ? 8 : 4, out, (size_t)n * (quant_out ? 8 : 4), &dim, err,
                 sizeof err);
    if (st) print_message("execute: %s\n", err);
    assert_int_equal(st, 0);
    assert_int_equal(dim, n);
    for (int i = 0; i < n; i++) {
        if (quant_out) {
            uint64_t v;
            memcpy(&v, out + 8 * i, 8);
            assert_true(v == (uint64_t)(fib(i + 1) / 0.5 + 10));
        } else {
            float v;
            memcpy(&v, out + 4 * i, 4);
            assert_true(v == (float)fib(i + 1));
        }
    }
    assert_int_equal(nnd_client_release(c, h), 0);
}

/* ---- setup ----------------------------------------------------------------------------- */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600); /* the daemon ignores an allowlist anyone may write */
}

static void copy_file(const char *from, const char *to) {
    assert_int_equal(tst_copy_file(from, to), 0);
}

static int setup(void **state) {
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(ext_dir, sizeof ext_dir, "%s/nnd-ext-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(ext_dir)) return -1;
    char p[PATH_MAX + 64], self[PATH_MAX];
    /* Plugins: the real ones by symlink, and a copy of Fibonacci under another name. */
    snprintf(p, sizeof p, "%s/libnnd_fibonacci.so", ext_dir);
    if (symlink(FIBONACCI_SO, p) < 0) return -1;
    snprintf(p, sizeof p, "%s/libnnd_test_ext.so", ext_dir);
    if (symlink(TEST_EXT_SO, p) < 0) return -1;
    snprintf(p, sizeof p, "%s/libnnd_test_badabi.so", ext_dir);
    if (symlink(TEST_BADABI_SO, p) < 0) return -1;
    snprintf(p, sizeof p, "%s/libnnd_zz_fibonacci_copy.so", ext_dir);
    copy_file(FIBONACCI_SO, p);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = '\0';
    snprintf(allow_a, sizeof allow_a, "%s.allow-a", ext_dir);
    snprintf(allow_b, sizeof allow_b, "%s.allow-b", ext_dir);
    snprintf(log_a, sizeof log_a, "%s.log-a", ext_dir);
    char text[PATH_MAX + 64];
    snprintf(text, sizeof text, "# test allowlist\n  %s  \n\n/usr/bin/nonexistent-program\n", self);
    write_file(allow_a, text);
    write_file(allow_b, "/usr/bin/nonexistent-program\n");
    /* Daemon A logs into a file, so the load refusals can be checked. */
    const char *args_a[] = {"--extensions-dir", ext_dir, "--extensions-allowlist", allow_a, NULL};
    const char *args_b[] = {"--extensions-dir", ext_dir, "--extensions-allowlist", allow_b, NULL};
    int saved = dup(2), logfd = open(log_a, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || logfd < 0) return -1;
    dup2(logfd, 2);
    int rc = tst_daemon_start(&da, args_a);
    dup2(saved, 2);
    close(saved);
    close(logfd);
    if (rc < 0) return -1;
    return tst_daemon_start(&db, args_b);
}

static void rm(const char *fmt, const char *dir) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, fmt, dir);
    unlink(p);
}

static int teardown(void **state) {
    (void)state;
    /* Still running only when a test failed before the last. */
    if (da.pid > 0) tst_daemon_stop(&da);
    if (db.pid > 0) tst_daemon_stop(&db);
    rm("%s/libnnd_fibonacci.so", ext_dir);
    rm("%s/libnnd_test_ext.so", ext_dir);
    rm("%s/libnnd_test_badabi.so", ext_dir);
    rm("%s/libnnd_zz_fibonacci_copy.so", ext_dir);
    rmdir(ext_dir);
    unlink(allow_a);
    unlink(allow_b);
    unlink(log_a);
    return 0;
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_supported_extensions(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    char err[256];
    Nnd__SupportedExtensionsReply *r = NULL;
    assert_int_equal(nnd_client_get_supported_extensions(c, &r, err, sizeof err), 0);
    const Nnd__Extension *f = find_ext(r, TEST_VENDOR_FIBONACCI_EXTENSION_NAME);
    assert_non_null(f);
    assert_non_null(find_ext(r, EXT_TEST));
    assert_int_equal(r->n_extensions, 2); /* the copy and the foreign ABI were refused */
    assert_int_equal(f->n_operand_types, 2);
    for (size_t i = 0; i < 2; i++) {
        const Nnd__ExtensionOperandTypeInformation *t = f->operand_types[i];
        assert_int_equal(t->byte_size, 8);
        assert_int_equal(t->is_tensor, t->type == TEST_VENDOR_TENSOR_QUANT64_ASYMM);
    }
    nnd__supported_extensions_reply__free_unpacked(r, NULL);
    nnd_client_close(c);
}

static void test_fibonacci_both_output_types(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    for (int n = 5; n <= 30; n += 25)
        for (int in = 0; in < 2; in++)
            for (int quant = 0; quant < 2; quant++)
                check_fib(c, in, quant, n);
    nnd_client_close(c);
}

/* A model using extensions whose request spills (over 48 KiB on the wire: bytes in its
 * operand values that no operand uses): its reader notes the extensions off the loop, and
 * the daemon prepares it where extension models go, computing the same. */
static void test_fibonacci_spilled_request(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    mb m;
    fib_model(&m, false, false, 0x1234);
    static uint8_t padding[64 << 10];
    m.model.operand_values.data = padding;
    m.model.operand_values.len = sizeof padding;
    char err[512];
    uint64_t h;
    int st = prepare(c, &m, &h, err, sizeof err);
    if (st) print_message("prepare: %s\n", err);
    assert_int_equal(st, 0);
    float nf = 12, out[12];
    uint32_t dim = 0;
    assert_int_equal(execute(c, h, &nf, sizeof nf, out, sizeof out, &dim, err, sizeof err), 0);
    assert_int_equal(dim, 12);
    assert_true(out[11] == (float)fib(12));
    assert_int_equal(nnd_client_release(c, h), 0);
    nnd_client_close(c);
}

static void test_fibonacci_bad_values(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    mb m;
    fib_model(&m, true, false, 3);
    char err[512];
    uint64_t h;
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), 0);
    int64_t n = -1;
    float out[4];
    uint32_t dim;
    /* A bad input value fails the execution, as the NNAPI's OP_FAILED. */
    assert_int_equal(execute(c, h, &n, 8, out, sizeof out, &dim, err, sizeof err),
                     NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "outside 1.."));
    /* Quantized output without its 16 bytes of parameters: the plugin's validate says no. */
    fib_model(&m, true, true, 3);
    m.o[1].extension.len = 8;
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "extension data"));
    nnd_client_close(c);
}

static void test_not_allowed_then_reload(void **state) {
    (void)state;
    nnd_client *c = connect_to(&db);
    char err[512];
    Nnd__SupportedExtensionsReply *r = NULL;
    assert_int_equal(nnd_client_get_supported_extensions(c, &r, err, sizeof err), 0);
    assert_int_equal(r->n_extensions, 0);
    nnd__supported_extensions_reply__free_unpacked(r, NULL);
    mb m;
    fib_model(&m, true, false, 1);
    uint64_t h;
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "allowlist"));
    bool sup[1];
    assert_int_equal(nnd_client_supported_operations(c, &m.model, NULL, 0, sup, 1, err, sizeof err),
                     NND__ERROR_STATUS__INVALID_ARGUMENT);
    /* OEM_OPERATION is claimed by the test plugin: off limits too. */
    mb o;
    mb_init(&o);
    uint32_t x = mb_operand(&o, T_TENSOR_OEM_BYTE, 1, 4, LT_INPUT);
    mb_op(&o, OP_OEM_OPERATION, 1, &x, mb_operand(&o, T_TENSOR_OEM_BYTE, 1, 4, LT_OUTPUT));
    assert_int_equal(prepare(c, &o, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "allowlist"));

    /* An app is a uid: allow ours by number and reload; the same connection may now. */
    char text[64], cmd[2048];
    snprintf(text, sizeof text, "%u\n", (unsigned)getuid());
    write_file(allow_b, text);
    snprintf(cmd, sizeof cmd, "%s --socket %s --state-dir %s reload >/dev/null", NNDCTL_PATH,
             db.socket_path, db.state_dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(nnd_client_get_supported_extensions(c, &r, err, sizeof err), 0);
    assert_non_null(find_ext(r, TEST_VENDOR_FIBONACCI_EXTENSION_NAME));
    nnd__supported_extensions_reply__free_unpacked(r, NULL);
    check_fib(c, true, false, 5);
    nnd_client_close(c);
}

static void test_prefix_map_refused(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    char err[512];
    uint64_t h;
    mb m;
    /* Two prefixes for one name. */
    fib_model(&m, true, false, 1);
    mb_map(&m, TEST_VENDOR_FIBONACCI_EXTENSION_NAME, 2);
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "both prefixes 1 and 2"));
    /* One prefix for two names. */
    fib_model(&m, true, false, 1);
    mb_map(&m, EXT_TEST, 1);
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "maps prefix 1 to both"));
    /* An unknown name. */
    fib_model(&m, true, false, 1);
    m.map[0].name = "com.example.nowhere";
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "com.example.nowhere"));
    /* A code whose prefix the map does not name. */
    fib_model(&m, true, false, 1);
    m.map[0].prefix = 9;
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "does not name"));
    /* An operation the extension does not define: unsupported, not a crash. */
    fib_model(&m, true, false, 1);
    m.op.type = code(1, 5);
    bool sup[1] = {true};
    assert_int_equal(nnd_client_supported_operations(c, &m.model, NULL, 0, sup, 1, err, sizeof err),
                     0);
    assert_false(sup[0]);
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    nnd_client_close(c);
}

/* x: TENSOR_FLOAT32 [1] input, k: INT32 constant -> TEST_CHECKED. */
static void checked_model(mb *m, int32_t k) {
    mb_init(m);
    uint32_t in[1] = {mb_operand(m, T_INT32, 0, 0, LT_CONST)};
    mb_const(m, in[0], &k, sizeof k);
    uint32_t unused = mb_operand(m, T_TENSOR_FLOAT32, 1, 1, LT_INPUT);
    (void)unused;
    mb_op(m, code(4, 0), 1, in, mb_operand(m, T_TENSOR_FLOAT32, 1, 1, LT_OUTPUT));
    mb_map(m, EXT_TEST, 4);
}

static void test_plugin_validation_message(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    char err[512];
    uint64_t h;
    mb m;
    checked_model(&m, -3);
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "TEST_CHECKED refuses k = -3: k must not be negative"));
    bool sup[1];
    assert_int_equal(nnd_client_supported_operations(c, &m.model, NULL, 0, sup, 1, err, sizeof err),
                     NND__ERROR_STATUS__INVALID_ARGUMENT);
    checked_model(&m, 3);
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), 0);
    nnd_client_close(c);
}

static void test_oem_claimed(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    mb m;
    mb_init(&m);
    uint32_t x = mb_operand(&m, T_TENSOR_OEM_BYTE, 1, 4, LT_INPUT);
    mb_op(&m, OP_OEM_OPERATION, 1, &x, mb_operand(&m, T_TENSOR_OEM_BYTE, 1, 4, LT_OUTPUT));
    char err[512];
    uint64_t h;
    int st = prepare(c, &m, &h, err, sizeof err);
    if (st) print_message("prepare: %s\n", err);
    assert_int_equal(st, 0);
    uint8_t in[4] = {1, 2, 3, 4}, out[4] = {0};
    uint32_t dim;
    assert_int_equal(execute(c, h, in, 4, out, 4, &dim, err, sizeof err), 0);
    assert_memory_equal(in, out, 4);
    nnd_client_close(c);
}

/* Sends an admin command with nndctl and returns its stdout (malloc'd). */
static char *nndctl(const tst_daemon *d, const char *command) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --socket %s --state-dir %s %s", NNDCTL_PATH, d->socket_path,
             d->state_dir, command);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(1, cap);
    size_t k;
    while ((k = fread(out + n, 1, cap - 1 - n, p)) > 0)
        n += k;
    pclose(p);
    return out;
}

static void test_plugin_crash_reported(void **state) {
    (void)state;
    nnd_client *c = connect_to(&da);
    mb m;
    mb_init(&m);
    uint32_t x = mb_operand(&m, T_TENSOR_FLOAT32, 1, 2, LT_INPUT);
    mb_op(&m, code(2, 1), 1, &x, mb_operand(&m, T_TENSOR_FLOAT32, 1, 2, LT_OUTPUT));
    mb_map(&m, EXT_TEST, 2);
    char err[512];
    uint64_t h;
    assert_int_equal(prepare(c, &m, &h, err, sizeof err), 0);
    float in[2] = {1, 2}, out[2];
    uint32_t dim;
    assert_int_equal(execute(c, h, in, sizeof in, out, sizeof out, &dim, err, sizeof err),
                     NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "SIGSEGV"));
    /* The daemon lives on; the plugin is disabled and no longer offered. */
    assert_int_equal(execute(c, h, in, sizeof in, out, sizeof out, &dim, err, sizeof err),
                     NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "disabled"));
    Nnd__SupportedExtensionsReply *r = NULL;
    assert_int_equal(nnd_client_get_supported_extensions(c, &r, err, sizeof err), 0);
    assert_null(find_ext(r, EXT_TEST));
    assert_non_null(find_ext(r, TEST_VENDOR_FIBONACCI_EXTENSION_NAME));
    nnd__supported_extensions_reply__free_unpacked(r, NULL);
    check_fib(c, true, true, 5);
    char *status = nndctl(&da, "status --json");
    assert_non_null(strstr(status, "\"faulted\":true"));
    free(status);
    /* reload brings it back; the old prepared model keeps the faulted instance. */
    char *out_text = nndctl(&da, "reload");
    assert_non_null(strstr(out_text, "loaded   " EXT_TEST));
    assert_null(strstr(out_text, "faulted"));
    free(out_text);
    assert_int_equal(nnd_client_get_supported_extensions(c, &r, err, sizeof err), 0);
    assert_non_null(find_ext(r, EXT_TEST));
    nnd__supported_extensions_reply__free_unpacked(r, NULL);
    nnd_client_close(c);
}

static void test_load_refusals_logged(void **state) {
    (void)state;
    char *out = nndctl(&da, "reload");
    assert_non_null(strstr(out, "duplicate extension name com.example.fibonacci"));
    assert_non_null(strstr(out, "libnnd_test_badabi.so: built for extension ABI 42"));
    free(out);
    FILE *f = fopen(log_a, "r");
    assert_non_null(f);
    char line[2048];
    bool dup = false, abi = false;
    while (fgets(line, sizeof line, f)) {
        dup |= strstr(line, "refused: duplicate extension name") != NULL;
        abi |= strstr(line, "refused: built for extension ABI") != NULL;
    }
    fclose(f);
    assert_true(dup);
    assert_true(abi);
}

/* The NNAPI NDK side of libnnd against daemon A: extension support, codes, data. */
static void test_ndk_fibonacci(void **state) {
    (void)state;
    setenv("NND_SOCKET", da.socket_path, 1);
    ANeuralNetworksDevice *dev = NULL;
    assert_int_equal(ANeuralNetworks_getDevice(0, &dev), ANEURALNETWORKS_NO_ERROR);
    bool supported = false;
    assert_int_equal(ANeuralNetworksDevice_getExtensionSupport(
                         dev, TEST_VENDOR_FIBONACCI_EXTENSION_NAME, &supported),
                     ANEURALNETWORKS_NO_ERROR);
    assert_true(supported);
    assert_int_equal(ANeuralNetworksDevice_getExtensionSupport(dev, "com.example.none", &supported),
                     ANEURALNETWORKS_NO_ERROR);
    assert_false(supported);
    ANeuralNetworksModel *model = NULL;
    assert_int_equal(ANeuralNetworksModel_create(&model), ANEURALNETWORKS_NO_ERROR);
    int32_t t_int64, t_quant;
    ANeuralNetworksOperationType op;
    assert_int_equal(ANeuralNetworksModel_getExtensionOperandType(
                         model, TEST_VENDOR_FIBONACCI_EXTENSION_NAME, TEST_VENDOR_INT64, &t_int64),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(
        ANeuralNetworksModel_getExtensionOperandType(model, TEST_VENDOR_FIBONACCI_EXTENSION_NAME,
                                                     TEST_VENDOR_TENSOR_QUANT64_ASYMM, &t_quant),
        ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_getExtensionOperationType(
                         model, TEST_VENDOR_FIBONACCI_EXTENSION_NAME, TEST_VENDOR_FIBONACCI, &op),
                     ANEURALNETWORKS_NO_ERROR);
    assert_true((uint32_t)t_int64 >> 16 != 0);
    uint32_t n_out = 10;
    ANeuralNetworksOperandType in_type = {.type = t_int64};
    ANeuralNetworksOperandType out_type = {
        .type = t_quant, .dimensionCount = 1, .dimensions = &n_out};
    assert_int_equal(ANeuralNetworksModel_addOperand(model, &in_type), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_addOperand(model, &out_type), ANEURALNETWORKS_NO_ERROR);
    TestVendorQuant64AsymmParams q = {.scale = 0.5, .zeroPoint = 10};
    assert_int_equal(ANeuralNetworksModel_setOperandExtensionData(model, 1, &q, sizeof q),
                     ANEURALNETWORKS_NO_ERROR);
    uint32_t in_idx = 0, out_idx = 1;
    assert_int_equal(ANeuralNetworksModel_addOperation(model, op, 1, &in_idx, 1, &out_idx),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &in_idx, 1, &out_idx),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_finish(model), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksCompilation *comp = NULL;
    const ANeuralNetworksDevice *devs[] = {dev};
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(model, devs, 1, &comp),
                     ANEURALNETWORKS_NO_ERROR);
    /* Feature level 8: attributes of an offered extension, each once; nnd reads none. */
    const char *ext = TEST_VENDOR_FIBONACCI_EXTENSION_NAME;
    uint32_t hint = 7;
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(comp, ext, 1, &hint, 4),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(comp, ext, 2, NULL, 0),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(comp, ext, 1, &hint, 4),
                     ANEURALNETWORKS_BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_finish(comp), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksExecution *ex = NULL;
    assert_int_equal(ANeuralNetworksExecution_create(comp, &ex), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(ex, ext, 1, &hint, 4),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(ex, ext, 1, &hint, 4),
                     ANEURALNETWORKS_BAD_DATA);
    int64_t n = 10;
    uint64_t out[10] = {0};
    assert_int_equal(ANeuralNetworksExecution_setInput(ex, 0, NULL, &n, sizeof n),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksExecution_setOutput(ex, 0, NULL, out, sizeof out),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksExecution_compute(ex), ANEURALNETWORKS_NO_ERROR);
    for (int i = 0; i < 10; i++)
        assert_true(out[i] == (uint64_t)(fib(i + 1) / 0.5 + 10));
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(ex, ext, 3, &hint, 4),
                     ANEURALNETWORKS_BAD_STATE);
    ANeuralNetworksExecution_free(ex);
    ANeuralNetworksCompilation_free(comp);
    ANeuralNetworksModel_free(model);
}

/* Last: both daemons shut down cleanly; one that died of a plugin's fault would not exit 0.
 * A test, because cmocka does not fail the run when a group teardown fails. */
static void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&da), 0);
    assert_int_equal(tst_daemon_stop(&db), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported_extensions),
        cmocka_unit_test(test_fibonacci_both_output_types),
        cmocka_unit_test(test_fibonacci_spilled_request),
        cmocka_unit_test(test_fibonacci_bad_values),
        cmocka_unit_test(test_not_allowed_then_reload),
        cmocka_unit_test(test_prefix_map_refused),
        cmocka_unit_test(test_plugin_validation_message),
        cmocka_unit_test(test_oem_claimed),
        cmocka_unit_test(test_plugin_crash_reported),
        cmocka_unit_test(test_load_refusals_logged),
        cmocka_unit_test(test_ndk_fibonacci),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_memory (integration): the NNAPI NDK API of libnnd against a real daemon:
 * memories from an fd and from a descriptor (daemon buffers, the memfd fallback, copies,
 * roles and shapes), with their documented misuse and result codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"

/* ---- memory ---------------------------------------------------------------------------- */

static int memfd_with(size_t size) {
    int fd = memfd_create("test-ndk", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    return fd;
}

static void test_memory_from_fd(void **state) {
    (void)state;
    ANeuralNetworksMemory *mem = NULL;
    size_t size = 4096;
    int fd = memfd_with(size);
    int rw = PROT_READ | PROT_WRITE;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, fd, 0, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(0, rw, fd, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, -1, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size + 1, rw, fd, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, 0x100, fd, 0, &mem), BAD_DATA);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(64, PROT_READ, p[0], 0, &mem),
                     ANEURALNETWORKS_UNMAPPABLE);
    close(p[0]);
    close(p[1]);
    assert_null(mem);

    /* The model's constant b lives in the memory, a and the output too. */
    uint8_t *map = mmap(NULL, size, rw, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    float *b = (float *)map, *a = (float *)(map + 1024), *out = (float *)(map + 2048);
    fill(b, N, 10.f);
    fill(a, N, 20.f);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, fd, 0, &mem), OK);
    close(fd); /* the memory holds a duplicate */
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    for (int i = 0; i < 2; i++)
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(NULL, 1, mem, 0, 16), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, NULL, 0, 16), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, 12), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, size - 8, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 9, mem, 0, 16), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, 16), OK);
    int32_t act = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t in[] = {0, 1, 2}, outs[] = {3}, ins[] = {0};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, NULL, 1024, 16), NUL);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, size - 8, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 1024, 8),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 1024, 16), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 1, NULL, mem, 2048, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 2048, 16), OK);
    ANeuralNetworksMemory_free(mem); /* the model and the execution keep it alive */
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    ANeuralNetworksExecution_free(e);

    /* A read-only memory cannot take an output. */
    fd = memfd_with(size);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, PROT_READ, fd, 0, &mem), OK);
    close(fd);
    float x[N] = {0};
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, x, sizeof x), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 16), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_UNMAPPABLE);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksMemory_free(mem);
    ANeuralNetworksMemory_free(NULL);
    munmap(map, size);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_memory_from_desc(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksMemoryDesc *desc;
    ANeuralNetworksMemory *mem;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(NULL), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), BAD_DATA); /* no role yet */
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, NULL, 0, 1.f), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 1, 1.f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 0.f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 0.5f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 0.5f), OK);
    const uint32_t wrong[] = {N + 1};
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, wrong), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, dims_n), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 1, 0.5f), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem), OK);
    ANeuralNetworksMemoryDesc_free(desc);
    ANeuralNetworksMemoryDesc_free(NULL);

    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 2.f);
    ANeuralNetworksExecution *e;
    /* Uninitialized: not yet usable as an input; and only whole. */
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 16), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 1, NULL, mem, 0, 0), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OP_FAILED);
    ANeuralNetworksExecution_free(e);
    /* Written as an output, then read as an input. */
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == a[i] + 2 * b[i]);
    ANeuralNetworksExecution_free(e);
    /* Copied out into an fd memory; sizes must agree. Constants cannot come from it. */
    int fd = memfd_with(16);
    ANeuralNetworksMemory *plain, *small;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &plain),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(8, PROT_READ | PROT_WRITE, fd, 0, &small),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_copy(NULL, plain), NUL);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, small), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, plain), OK);
    float got[N];
    assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == a[i] + b[i]);
    ANeuralNetworksModel *m2;
    assert_int_equal(ANeuralNetworksModel_create(&m2), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_addOperand(m2, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m2, 0, mem, 0, 16), BAD_DATA);
    ANeuralNetworksModel_free(m2);
    ANeuralNetworksMemory_free(small);
    ANeuralNetworksMemory_free(plain);
    ANeuralNetworksMemory_free(mem);
    close(fd);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* A descriptor memory of unknown shape needs a daemon buffer (the library cannot size
 * shared memory for it): it takes its shape from the output written into it. */
static void test_memory_flexible(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, true);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksMemoryDesc *desc;
    ANeuralNetworksMemory *mem, *mem2, *plain;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), OK);
    int rc = ANeuralNetworksMemory_createFromDesc(desc, &mem);
    if (rc == ANEURALNETWORKS_OP_FAILED) { /* a daemon without memory domains */
        ANeuralNetworksMemoryDesc_free(desc);
        ANeuralNetworksCompilation_free(c);
        ANeuralNetworksModel_free(m);
        skip();
    }
    assert_int_equal(rc, OK);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem2), OK);
    ANeuralNetworksMemoryDesc_free(desc);
    float a[N], b[N], got[N];
    fill(a, N, 1.f);
    fill(b, N, 3.f);
    int fd = memfd_with(16);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &plain),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, plain), BAD_DATA); /* never written */
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    /* daemon buffer -> daemon buffer -> fd memory, then into an execution again */
    assert_int_equal(ANeuralNetworksMemory_copy(mem, mem2), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(mem2, plain), OK);
    assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == a[i] + b[i]);
    float out[N];
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem2, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == a[i] + 2 * b[i]);
    ANeuralNetworksExecution_free(e);
    /* fd memory -> daemon buffer */
    fill(got, N, 7.f);
    assert_int_equal(pwrite(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    assert_int_equal(ANeuralNetworksMemory_copy(plain, mem), OK);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == got[i] + b[i]);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksMemory_free(plain);
    ANeuralNetworksMemory_free(mem2);
    ANeuralNetworksMemory_free(mem);
    close(fd);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* Rank 10, as AOSP's DeviceMemoryTest on the mirror_pad_two models: MIRROR_PAD (REFLECT)
 * of a [2,1,...,1,3] tensor to [2,1,...,1,5], input and output in descriptor memories
 * (daemon buffers), copied in and out; the connection stays good throughout. */
static void test_memory_rank_10(void **state) {
    (void)state;
    enum { R = 10 };
    uint32_t in_dims[R], out_dims[R], pad_dims[2] = {R, 2};
    for (int d = 0; d < R; d++)
        in_dims[d] = out_dims[d] = 1;
    in_dims[0] = out_dims[0] = 2;
    in_dims[R - 1] = 3;
    out_dims[R - 1] = 5;
    int32_t pads[2 * R] = {0}, mode = 0;
    pads[2 * R - 2] = pads[2 * R - 1] = 1;
    ANeuralNetworksOperandType tin = {ANEURALNETWORKS_TENSOR_FLOAT32, R, in_dims, 0.f, 0},
                               tout = {ANEURALNETWORKS_TENSOR_FLOAT32, R, out_dims, 0.f, 0},
                               tpad = {ANEURALNETWORKS_TENSOR_INT32, 2, pad_dims, 0.f, 0};
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &tin), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &tpad), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &tout), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, pads, sizeof pads), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &mode, sizeof mode), OK);
    const uint32_t op_in[] = {0, 1, 2}, ins[] = {0}, outs[] = {3};
    assert_int_equal(
        ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_MIRROR_PAD, 3, op_in, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c = compile(m, true);
    ANeuralNetworksMemory *min, *mout, *plain;
    for (int io = 0; io < 2; io++) {
        ANeuralNetworksMemoryDesc *desc;
        assert_int_equal(ANeuralNetworksMemoryDesc_create(&desc), OK);
        if (io)
            assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.f), OK);
        else
            assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 1.f), OK);
        assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), OK);
        assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, io ? &mout : &min), OK);
        ANeuralNetworksMemoryDesc_free(desc);
    }
    int fd = memfd_with(10 * sizeof(float));
    assert_int_equal(ANeuralNetworksMemory_createFromFd(40, PROT_READ | PROT_WRITE, fd, 0, &plain),
                     OK);
    ANeuralNetworksMemory *plain_in;
    float x[6];
    fill(x, 6, 0.f);
    assert_int_equal(pwrite(fd, x, sizeof x, 0), (ssize_t)sizeof x);
    assert_int_equal(
        ANeuralNetworksMemory_createFromFd(sizeof x, PROT_READ | PROT_WRITE, fd, 0, &plain_in), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(plain_in, min), OK); /* copied in */
    for (int run = 0; run < 2; run++) {
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
        assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, min, 0, 0), OK);
        assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mout, 0, 0), OK);
        assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
        ANeuralNetworksExecution_free(e);
        assert_int_equal(ANeuralNetworksMemory_copy(mout, plain), OK); /* copied out */
        float got[10];
        assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
        static const int from[5] = {1, 0, 1, 2, 1}; /* REFLECT: x1 x0 x1 x2 x1 */
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 5; k++)
                assert_true(got[5 * r + k] == (float)(3 * r + from[k]));
        assert_int_equal(pwrite(fd, x, sizeof x, 0), (ssize_t)sizeof x); /* the input again */
    }
    ANeuralNetworksMemory_free(plain_in);
    ANeuralNetworksMemory_free(plain);
    ANeuralNetworksMemory_free(mout);
    ANeuralNetworksMemory_free(min);
    close(fd);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* A constant of 2 MiB set from memory (over the content cache's first-sighting size, so
 * the daemon reads it in place from the client's memory), shrunk to one page after the
 * compilation: no execution computes from the zero pages standing where it was, the
 * first or any later one. */
static void test_constant_memory_shrunk(void **state) {
    (void)state;
    enum { ELEMS = 512 * 1024 };
    size_t size = ELEMS * sizeof(float);
    int fd = memfd_with(size);
    float *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(b != MAP_FAILED);
    fill(b, ELEMS, 10.f);
    munmap(b, size);
    ANeuralNetworksMemory *mem = NULL;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, PROT_READ, fd, 0, &mem), OK);
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    const uint32_t dims[] = {ELEMS};
    ANeuralNetworksOperandType t = tensor(dims);
    for (int i = 0; i < 2; i++)
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, size), OK);
    int32_t act = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t in[] = {0, 1, 2}, outs[] = {3}, ins[] = {0};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c = compile(m, false);
    float *a = calloc(ELEMS, sizeof(float)), *out = calloc(ELEMS, sizeof(float));
    assert_true(a && out);
    for (int k = 0; k < 6; k++) {
        if (k == 1) assert_int_equal(ftruncate(fd, 4096), 0);
        memset(out, 0, size);
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
        assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, size), OK);
        assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, size), OK);
        int rc = ANeuralNetworksExecution_compute(e);
        ANeuralNetworksExecution_free(e);
        if (k == 0) { /* before the shrink: 0 + b */
            assert_int_equal(rc, OK);
            assert_true(out[0] == 10.f && out[ELEMS - 1] == 10.f + (ELEMS - 1));
        } else {
            assert_int_equal(rc, ANEURALNETWORKS_OP_FAILED);
        }
    }
    free(a);
    free(out);
    ANeuralNetworksMemory_free(mem);
    close(fd);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_from_fd),         cmocka_unit_test(test_memory_from_desc),
        cmocka_unit_test(test_memory_flexible),        cmocka_unit_test(test_memory_rank_10),
        cmocka_unit_test(test_constant_memory_shrunk), cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* record_client: an NNAPI program for test_record, run with $NND_RECORD in its environment.
 * It compiles two models and runs them through every kind of NDK computation:
 * - "conv": CONV_2D (float, filter in a memory pool of the program's own, bias inline)
 *   into ADD with RELU; computed synchronously, through a burst and fenced;
 * - "qadd": ADD of two QUANT8_ASYMM tensors with different scales, computed twice.
 * Every call must succeed: the program prints the first that does not and exits 1.
 * Inputs are fixed (record_client.h), so the test knows what the recording must hold.
 * Usage: record_client (the daemon's socket in $NND_SOCKET). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nnd/NeuralNetworks.h"
#include "nnd/nnd.h"
#include "tests/client/record_client.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != ANEURALNETWORKS_NO_ERROR) {                                                     \
            fprintf(stderr, "record_client: %s failed: %d\n", #call, rc_);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static ANeuralNetworksOperandType tensor(int32_t type, uint32_t rank, const uint32_t *dims,
                                         float scale, int32_t zero_point) {
    return (ANeuralNetworksOperandType){.type = type,
                                        .dimensionCount = rank,
                                        .dimensions = dims,
                                        .scale = scale,
                                        .zeroPoint = zero_point};
}

static const ANeuralNetworksOperandType k_int32 = {.type = ANEURALNETWORKS_INT32};

static void add_int32(ANeuralNetworksModel *m, uint32_t index, int32_t v) {
    CHECK(ANeuralNetworksModel_addOperand(m, &k_int32));
    CHECK(ANeuralNetworksModel_setOperandValue(m, index, &v, sizeof v));
}

/* conv: in [1,4,4,2] -> CONV_2D (filter [4,3,3,2] from memory, bias [4], SAME, stride 1)
 * -> ADD with addend [1,4,4,4], RELU -> out [1,4,4,4]. */
static ANeuralNetworksModel *conv_model(ANeuralNetworksMemory **filter_mem) {
    static const uint32_t in_d[] = {1, 4, 4, 2}, f_d[] = {4, 3, 3, 2}, b_d[] = {4},
                          o_d[] = {1, 4, 4, 4};
    ANeuralNetworksModel *m;
    CHECK(ANeuralNetworksModel_create(&m));
    ANeuralNetworksOperandType in = tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 4, in_d, 0, 0);
    ANeuralNetworksOperandType f = tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 4, f_d, 0, 0);
    ANeuralNetworksOperandType b = tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 1, b_d, 0, 0);
    ANeuralNetworksOperandType o = tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 4, o_d, 0, 0);
    CHECK(ANeuralNetworksModel_addOperand(m, &in)); /* 0 */
    CHECK(ANeuralNetworksModel_addOperand(m, &f));  /* 1 */
    CHECK(ANeuralNetworksModel_addOperand(m, &b));  /* 2 */
    add_int32(m, 3, ANEURALNETWORKS_PADDING_SAME);
    add_int32(m, 4, 1);
    add_int32(m, 5, 1);
    add_int32(m, 6, ANEURALNETWORKS_FUSED_NONE);
    CHECK(ANeuralNetworksModel_addOperand(m, &o)); /* 7: conv out */
    CHECK(ANeuralNetworksModel_addOperand(m, &o)); /* 8: addend */
    add_int32(m, 9, ANEURALNETWORKS_FUSED_RELU);
    CHECK(ANeuralNetworksModel_addOperand(m, &o)); /* 10: out */

    size_t filter_bytes = RC_FILTER_ELEMS * sizeof(float);
    void *map;
    int fd = nnd_memfd_create("record-client-filter", filter_bytes, &map);
    if (fd < 0) exit(1);
    float *filter = map;
    for (size_t i = 0; i < RC_FILTER_ELEMS; i++)
        filter[i] = rc_filter(i);
    CHECK(ANeuralNetworksMemory_createFromFd(filter_bytes, PROT_READ, fd, 0, filter_mem));
    munmap(map, filter_bytes);
    close(fd);
    CHECK(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, *filter_mem, 0, filter_bytes));
    static const float bias[4] = {0.5f, -0.25f, 1.0f, 0.0f};
    CHECK(ANeuralNetworksModel_setOperandValue(m, 2, bias, sizeof bias));
    uint32_t conv_in[] = {0, 1, 2, 3, 4, 5, 6}, conv_out[] = {7};
    uint32_t add_in[] = {7, 8, 9}, add_out[] = {10};
    CHECK(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_CONV_2D, 7, conv_in, 1, conv_out));
    CHECK(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, add_in, 1, add_out));
    uint32_t ins[] = {0, 8}, outs[] = {10};
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, outs));
    CHECK(ANeuralNetworksModel_finish(m));
    return m;
}

/* qadd: a [2,3] (scale 0.5, zero point 10) + b [2,3] (0.25, 0) -> out [2,3] (1.0, 5). */
static ANeuralNetworksModel *qadd_model(void) {
    static const uint32_t d[] = {2, 3};
    ANeuralNetworksModel *m;
    CHECK(ANeuralNetworksModel_create(&m));
    ANeuralNetworksOperandType a = tensor(ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, d, 0.5f, 10);
    ANeuralNetworksOperandType b = tensor(ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, d, 0.25f, 0);
    ANeuralNetworksOperandType o = tensor(ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, d, 1.0f, 5);
    CHECK(ANeuralNetworksModel_addOperand(m, &a));
    CHECK(ANeuralNetworksModel_addOperand(m, &b));
    add_int32(m, 2, ANEURALNETWORKS_FUSED_NONE);
    CHECK(ANeuralNetworksModel_addOperand(m, &o));
    uint32_t in[] = {0, 1, 2}, out[] = {3}, ins[] = {0, 1}, outs[] = {3};
    CHECK(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out));
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, outs));
    CHECK(ANeuralNetworksModel_finish(m));
    return m;
}

enum how { SYNC, BURST, FENCED };

static void run_conv(ANeuralNetworksCompilation *c, ANeuralNetworksBurst *burst, int run,
                     enum how how) {
    float in[RC_CONV_IN], addend[RC_CONV_OUT], out[RC_CONV_OUT];
    for (size_t i = 0; i < RC_CONV_IN; i++)
        in[i] = rc_conv_input(run, i);
    for (size_t i = 0; i < RC_CONV_OUT; i++)
        addend[i] = rc_conv_addend(run, i);
    ANeuralNetworksExecution *e;
    CHECK(ANeuralNetworksExecution_create(c, &e));
    CHECK(ANeuralNetworksExecution_setInput(e, 0, NULL, in, sizeof in));
    CHECK(ANeuralNetworksExecution_setInput(e, 1, NULL, addend, sizeof addend));
    CHECK(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out));
    if (how == SYNC) CHECK(ANeuralNetworksExecution_compute(e));
    if (how == BURST) CHECK(ANeuralNetworksExecution_burstCompute(e, burst));
    if (how == FENCED) {
        ANeuralNetworksEvent *ev;
        CHECK(ANeuralNetworksExecution_startComputeWithDependencies(e, NULL, 0, 0, &ev));
        CHECK(ANeuralNetworksEvent_wait(ev));
        ANeuralNetworksEvent_free(ev);
    }
    ANeuralNetworksExecution_free(e);
}

static void run_qadd(ANeuralNetworksCompilation *c, int run) {
    uint8_t a[RC_QADD_N], b[RC_QADD_N], out[RC_QADD_N];
    for (size_t i = 0; i < RC_QADD_N; i++) {
        a[i] = rc_qadd_a(run, i);
        b[i] = rc_qadd_b(run, i);
    }
    ANeuralNetworksExecution *e;
    CHECK(ANeuralNetworksExecution_create(c, &e));
    CHECK(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a));
    CHECK(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b));
    CHECK(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out));
    CHECK(ANeuralNetworksExecution_compute(e));
    ANeuralNetworksExecution_free(e);
    for (size_t i = 0; i < RC_QADD_N; i++)
        if (out[i] != rc_qadd_expected(run, i)) {
            fprintf(stderr, "record_client: qadd run %d element %zu: %u, expected %u\n", run, i,
                    out[i], rc_qadd_expected(run, i));
            exit(1);
        }
}

int main(void) {
    ANeuralNetworksMemory *filter_mem;
    ANeuralNetworksModel *conv = conv_model(&filter_mem), *qadd = qadd_model();
    ANeuralNetworksCompilation *cc, *qc;
    CHECK(ANeuralNetworksCompilation_create(conv, &cc));
    CHECK(ANeuralNetworksCompilation_finish(cc));
    CHECK(ANeuralNetworksCompilation_create(qadd, &qc));
    CHECK(ANeuralNetworksCompilation_finish(qc));
    ANeuralNetworksBurst *burst;
    CHECK(ANeuralNetworksBurst_create(cc, &burst));
    static const enum how hows[RC_CONV_RUNS] = {SYNC, BURST, FENCED, SYNC};
    for (int r = 0; r < RC_CONV_RUNS; r++)
        run_conv(cc, burst, r, hows[r]);
    for (int r = 0; r < RC_QADD_RUNS; r++)
        run_qadd(qc, r);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksCompilation_free(cc);
    ANeuralNetworksCompilation_free(qc);
    ANeuralNetworksModel_free(conv);
    ANeuralNetworksModel_free(qadd);
    ANeuralNetworksMemory_free(filter_mem);
    printf("record_client: done\n");
    return 0;
}

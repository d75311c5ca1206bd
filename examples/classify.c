/* SPDX-License-Identifier: Apache-2.0 */
/* classify: a tiny image classifier through the NNAPI NDK API of libnnd.
 *
 *   input [1,4,4,1] -> CONV_2D 3x3, 2 filters, SAME -> RELU -> FULLY_CONNECTED to 3 classes
 *   -> SOFTMAX -> probabilities [1,3]
 *
 * The program builds the model, compiles it, runs it on one image, computes the same
 * network in plain C and exits non-zero unless both agree. It finds the daemon through
 * $NND_SOCKET (else the default socket path). Build it with
 *   cc classify.c $(pkg-config --cflags --libs nnd)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <android/NeuralNetworks.h>

#define H        4
#define W        4
#define FILTERS  2
#define CLASSES  3
#define FEATURES (H * W * FILTERS)

/* Every NNAPI call returns ANEURALNETWORKS_NO_ERROR (0) or an error code. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != ANEURALNETWORKS_NO_ERROR) {                                                     \
            fprintf(stderr, "classify: %s failed with %d\n", #call, rc_);                          \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

static float image[H * W];
static float conv_w[FILTERS * 3 * 3]; /* [FILTERS, 3, 3, 1] */
static float conv_b[FILTERS];
static float fc_w[CLASSES * FEATURES]; /* [CLASSES, FEATURES]: 384 bytes, over the 128-byte
                                          limit, so libnnd moves it into shared memory */
static float fc_b[CLASSES];

/* The same network in plain C, for checking. */
static void reference(float *probs) {
    float feat[H][W][FILTERS];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int f = 0; f < FILTERS; f++) {
                float s = conv_b[f];
                for (int dy = -1; dy <= 1; dy++) /* SAME padding: one zero row/column around */
                    for (int dx = -1; dx <= 1; dx++)
                        if (y + dy >= 0 && y + dy < H && x + dx >= 0 && x + dx < W)
                            s += image[(y + dy) * W + x + dx] *
                                 conv_w[f * 9 + (dy + 1) * 3 + dx + 1];
                feat[y][x][f] = s > 0 ? s : 0; /* RELU */
            }
    const float *flat = &feat[0][0][0];
    float logits[CLASSES], max = -INFINITY, sum = 0;
    for (int c = 0; c < CLASSES; c++) {
        logits[c] = fc_b[c];
        for (int i = 0; i < FEATURES; i++)
            logits[c] += fc_w[c * FEATURES + i] * flat[i];
        if (logits[c] > max) max = logits[c];
    }
    for (int c = 0; c < CLASSES; c++)
        sum += probs[c] = expf(logits[c] - max);
    for (int c = 0; c < CLASSES; c++)
        probs[c] /= sum;
}

/* Adds an operand and returns its index (operands are numbered in the order added). */
static uint32_t operand(ANeuralNetworksModel *m, int32_t type, uint32_t rank,
                        const uint32_t *dims) {
    static uint32_t next = 0;
    ANeuralNetworksOperandType t = {.type = type, .dimensionCount = rank, .dimensions = dims};
    CHECK(ANeuralNetworksModel_addOperand(m, &t));
    return next++;
}

static uint32_t int_scalar(ANeuralNetworksModel *m, int32_t value) {
    uint32_t i = operand(m, ANEURALNETWORKS_INT32, 0, NULL);
    CHECK(ANeuralNetworksModel_setOperandValue(m, (int32_t)i, &value, sizeof value));
    return i;
}

int main(void) {
    /* Some made-up weights and an image. */
    for (int i = 0; i < H * W; i++)
        image[i] = (float)((i * 7) % 5) / 4.0f;
    for (int i = 0; i < FILTERS * 9; i++)
        conv_w[i] = (float)((i * 3) % 7 - 3) / 5.0f;
    for (int i = 0; i < FILTERS; i++)
        conv_b[i] = 0.1f * (float)(i + 1);
    for (int i = 0; i < CLASSES * FEATURES; i++)
        fc_w[i] = (float)((i * 5) % 11 - 5) / 20.0f;
    for (int i = 0; i < CLASSES; i++)
        fc_b[i] = -0.2f * (float)i;

    /* 1. The model: operands first, then the operations that connect them. */
    ANeuralNetworksModel *model;
    CHECK(ANeuralNetworksModel_create(&model));
    const uint32_t in_dims[] = {1, H, W, 1}, cw_dims[] = {FILTERS, 3, 3, 1}, cb_dims[] = {FILTERS},
                   feat_dims[] = {1, H, W, FILTERS}, fw_dims[] = {CLASSES, FEATURES},
                   fb_dims[] = {CLASSES}, out_dims[] = {1, CLASSES};
    uint32_t input = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 4, in_dims);
    uint32_t cw = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 4, cw_dims);
    uint32_t cb = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 1, cb_dims);
    uint32_t same = int_scalar(model, ANEURALNETWORKS_PADDING_SAME);
    uint32_t one = int_scalar(model, 1);
    uint32_t none = int_scalar(model, ANEURALNETWORKS_FUSED_NONE);
    uint32_t conv = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 4, feat_dims);
    uint32_t relu = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 4, feat_dims);
    uint32_t fw = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 2, fw_dims);
    uint32_t fb = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 1, fb_dims);
    uint32_t logits = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 2, out_dims);
    uint32_t beta = operand(model, ANEURALNETWORKS_FLOAT32, 0, NULL);
    uint32_t probs = operand(model, ANEURALNETWORKS_TENSOR_FLOAT32, 2, out_dims);
    const float one_f = 1.0f;
    CHECK(ANeuralNetworksModel_setOperandValue(model, (int32_t)cw, conv_w, sizeof conv_w));
    CHECK(ANeuralNetworksModel_setOperandValue(model, (int32_t)cb, conv_b, sizeof conv_b));
    CHECK(ANeuralNetworksModel_setOperandValue(model, (int32_t)fw, fc_w, sizeof fc_w));
    CHECK(ANeuralNetworksModel_setOperandValue(model, (int32_t)fb, fc_b, sizeof fc_b));
    CHECK(ANeuralNetworksModel_setOperandValue(model, (int32_t)beta, &one_f, sizeof one_f));

    /* CONV_2D with implicit padding: input, filter, bias, padding, stride w, stride h, act. */
    const uint32_t conv_in[] = {input, cw, cb, same, one, one, none}, conv_out[] = {conv};
    CHECK(
        ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_CONV_2D, 7, conv_in, 1, conv_out));
    const uint32_t relu_in[] = {conv}, relu_out[] = {relu};
    CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_RELU, 1, relu_in, 1, relu_out));
    /* FULLY_CONNECTED flattens [1,4,4,2] to [1,32]: input, weights, bias, activation. */
    const uint32_t fc_in[] = {relu, fw, fb, none}, fc_out[] = {logits};
    CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_FULLY_CONNECTED, 4, fc_in, 1,
                                            fc_out));
    const uint32_t sm_in[] = {logits, beta}, sm_out[] = {probs};
    CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_SOFTMAX, 2, sm_in, 1, sm_out));
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &input, 1, &probs));
    CHECK(ANeuralNetworksModel_finish(model)); /* no more changes; the daemon checks it */

    /* 2. Compile it: the daemon validates and prepares the model once. */
    ANeuralNetworksCompilation *compilation;
    CHECK(ANeuralNetworksCompilation_create(model, &compilation));
    CHECK(ANeuralNetworksCompilation_setPreference(compilation,
                                                   ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER));
    CHECK(ANeuralNetworksCompilation_finish(compilation));

    /* 3. Run it: one execution per inference, with plain buffers. */
    float result[CLASSES];
    ANeuralNetworksExecution *execution;
    CHECK(ANeuralNetworksExecution_create(compilation, &execution));
    CHECK(ANeuralNetworksExecution_setInput(execution, 0, NULL, image, sizeof image));
    CHECK(ANeuralNetworksExecution_setOutput(execution, 0, NULL, result, sizeof result));
    CHECK(ANeuralNetworksExecution_compute(execution));
    ANeuralNetworksExecution_free(execution);

    /* 4. Check against the plain C network. */
    float expect[CLASSES];
    reference(expect);
    int bad = 0;
    for (int c = 0; c < CLASSES; c++) {
        printf("class %d: %.6f (expected %.6f)\n", c, result[c], expect[c]);
        if (fabsf(result[c] - expect[c]) > 1e-5f + 1e-4f * fabsf(expect[c])) bad = 1;
    }

    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    puts(bad ? "classify: MISMATCH" : "classify: ok");
    return bad;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* case_judge.c: outputs against the vectors' pass criteria. See case_judge.h. */
#include "tools/conformance/case_judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/conformance/case_read.h"
#include "tools/conformance/case_tensor.h"
#include "schema/codes.h"

static void dims_str(char *buf, size_t len, const uint32_t *d, uint32_t rank) {
    size_t off = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < rank && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, i ? ", %u" : "%u", d[i]);
    if (off < len) snprintf(buf + off, len - off, "]");
}

static const tool_case_example *example_of(const tool_case *c, const tool_case_tensor *t) {
    for (size_t i = 0; i < c->n_examples; i++) {
        const tool_case_example *ex = &c->examples[i];
        if (t >= ex->outputs && t < ex->outputs + ex->n_outputs) return ex;
    }
    return NULL;
}

static bool has_operation(const tool_case *c, int32_t code) {
    const Nnd__Subgraph *g = c->model->main;
    for (size_t i = 0; i < g->n_operations; i++)
        if (g->operations[i]->type == code) return true;
    return false;
}

/* RANDOM_MULTINOMIAL: each class's share of the samples must be within tol of its
 * probability, the softmax of the logits in the example's input 0. */
static bool judge_multinomial(const tool_case_example *ex, const tool_case_tensor *e,
                              const void *actual, char *why, size_t whylen) {
    const tool_case_tensor *in = NULL;
    for (size_t i = 0; i < ex->n_inputs; i++)
        if (ex->inputs[i].index == 0) in = &ex->inputs[i];
    if (!in || in->rank != 2 || e->rank != 2 || in->dims[0] != e->dims[0] || !in->count) {
        case_errf(why, whylen, "multinomial example without [batches, classes] logits");
        return false;
    }
    size_t batches = in->dims[0], classes = in->dims[1], samples = e->dims[1];
    double *prob = malloc(classes * sizeof *prob);
    size_t *hits = malloc(classes * sizeof *hits);
    bool ok = prob && hits;
    if (!ok) case_errf(why, whylen, "out of memory");
    for (size_t b = 0; ok && b < batches; b++) {
        double max = -INFINITY, sum = 0;
        for (size_t k = 0; k < classes; k++) {
            prob[k] = case_element_value(in->type, in->data, b * classes + k);
            if (prob[k] > max) max = prob[k];
            hits[k] = 0;
        }
        for (size_t k = 0; k < classes; k++)
            sum += prob[k] = exp(prob[k] - max);
        for (size_t s = 0; ok && s < samples; s++) {
            double v = case_element_value(e->type, actual, b * samples + s);
            if (v < 0 || v >= (double)classes) {
                case_errf(why, whylen, "element %zu: class %g out of range [0, %zu)",
                          b * samples + s, v, classes);
                ok = false;
            } else {
                hits[(size_t)v]++;
            }
        }
        for (size_t k = 0; ok && k < classes; k++) {
            double share = samples ? (double)hits[k] / (double)samples : 0;
            if (fabs(share - prob[k] / sum) > ex->multinomial_tolerance) {
                case_errf(why, whylen,
                          "batch %zu class %zu: share %.4f, expected probability %.4f (tolerance "
                          "%g)",
                          b, k, share, prob[k] / sum, ex->multinomial_tolerance);
                ok = false;
            }
        }
    }
    free(prob);
    free(hits);
    return ok;
}

bool tool_case_judge(const tool_case *c, const tool_case_tensor *e, const void *actual,
                     size_t actual_bytes, const uint32_t *actual_dims, uint32_t actual_rank,
                     char *why, size_t whylen) {
    if (actual_rank != e->rank ||
        (e->rank && memcmp(actual_dims, e->dims, e->rank * sizeof *e->dims))) {
        char want[96], got[96];
        dims_str(want, sizeof want, e->dims, e->rank);
        dims_str(got, sizeof got, actual_dims, actual_rank);
        case_errf(why, whylen, "output %u: dimensions %s, expected %s", e->index, got, want);
        return false;
    }
    const tool_case_example *ex = example_of(c, e);
    bool multinomial = ex && ex->multinomial_tolerance > 0 &&
                       has_operation(c, SCHEMA_OP_RANDOM_MULTINOMIAL) && e->count;
    if (multinomial && actual_bytes < e->bytes) {
        case_errf(why, whylen, "output %u: %zu bytes, expected %zu", e->index, actual_bytes,
                  e->bytes);
        return false;
    }
    if (multinomial) {
        char reason[200];
        if (judge_multinomial(ex, e, actual, reason, sizeof reason)) return true;
        case_errf(why, whylen, "output %u: %s", e->index, reason);
        return false;
    }
    for (size_t i = 0; i < c->n_ignored; i++)
        if (c->ignored_outputs[i] == e->index) return true;
    if (actual_bytes < e->bytes) {
        case_errf(why, whylen, "output %u: %zu bytes, expected %zu", e->index, actual_bytes,
                  e->bytes);
        return false;
    }
    double atol = 0, rtol = 0;
    bool is_float = false;
    switch (e->type) {
    case SCHEMA_FLOAT32:
    case SCHEMA_TENSOR_FLOAT32:
        is_float = true;
        atol = c->relaxed ? 0.0048828125 : 1e-5;
        rtol = c->relaxed ? 0.0048828125 : 5.96e-7;
        break;
    case SCHEMA_FLOAT16:
    case SCHEMA_TENSOR_FLOAT16:
        is_float = true;
        atol = rtol = 0.0048828125;
        break;
    case SCHEMA_TENSOR_QUANT8_ASYMM:
    case SCHEMA_TENSOR_QUANT8_SYMM:
    case SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED:
    case SCHEMA_TENSOR_QUANT16_SYMM:
    case SCHEMA_TENSOR_QUANT16_ASYMM: atol = c->quant_steps_set ? c->quant_steps : 1; break;
    default: break; /* INT32, BOOL8: exact */
    }
    for (size_t i = 0; i < e->count; i++) {
        double want = case_element_value(e->type, e->data, i),
               got = case_element_value(e->type, actual, i);
        bool ok;
        if (is_float && isnan(want))
            ok = isnan(got);
        else if (is_float && isinf(want))
            ok = want == got;
        else
            ok = fabs(want - got) <= atol + rtol * fabs(want); /* false for NaN got */
        if (!ok) {
            case_errf(why, whylen, "output %u element %zu: expected %.9g, got %.9g", e->index, i,
                      want, got);
            return false;
        }
    }
    return true;
}

bool tool_case_refusal_passes(const tool_case *c, bool missed_deadline, char *why, size_t whylen) {
    if (!c->expect_failure) {
        case_errf(why, whylen, "refused a valid model");
        return false;
    }
    if (c->infinite_loop_timeout && !missed_deadline) {
        case_errf(why, whylen, "an endless loop must end with MISSED_DEADLINE, not another error");
        return false;
    }
    return true;
}

bool tool_case_judge_endless(bool missed_deadline, uint64_t elapsed_ns, uint64_t timeout_ns,
                             char *why, size_t whylen) {
    unsigned long long ms = elapsed_ns / 1000000, limit = timeout_ns / 1000000;
    if (!missed_deadline)
        case_errf(why, whylen, "an endless loop must end with MISSED_DEADLINE, not another status");
    else if (elapsed_ns < timeout_ns)
        case_errf(why, whylen, "stopped after %llu ms, before its loop timeout of %llu ms", ms,
                  limit);
    else if (elapsed_ns - timeout_ns > TOOL_CASE_LOOP_SLACK_NS)
        case_errf(why, whylen, "stopped after %llu ms, long past its loop timeout of %llu ms", ms,
                  limit);
    return missed_deadline && elapsed_ns >= timeout_ns &&
           elapsed_ns - timeout_ns <= TOOL_CASE_LOOP_SLACK_NS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* case_record: a conformance case as the loader (case_load.h) makes it and every part of
 * the conformance library reads it: its model, examples and flags.
 *
 * Contract: a case owns everything it points to, each part malloc'd on its own (the
 * model: nnd__model__free_unpacked() frees it); tool_case_clear() frees one case's parts
 * and tool_cases_free() an array of cases and the array. The fields' meaning, as the
 * vectors give them: case_load.h.
 */
#ifndef TOOL_CONFORMANCE_CASE_RECORD_H
#define TOOL_CONFORMANCE_CASE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd.pb-c.h"

typedef struct tool_case_tensor {
    uint32_t index; /* position in inputIndexes / outputIndexes */
    int32_t type;   /* operand type code, copied from the model operand */
    uint32_t rank;
    uint32_t dims[16];
    void *data; /* count elements in the operand's byte format; NULL when count is 0 */
    size_t bytes;
    size_t count;
    float scale;
    int32_t zero_point;
} tool_case_tensor;

typedef struct tool_case_example {
    size_t n_inputs;
    tool_case_tensor *inputs;
    size_t n_outputs;
    tool_case_tensor *outputs;
    double multinomial_tolerance; /* 0 unless RANDOM_MULTINOMIAL */
} tool_case_example;

/* The oldest interface version that defines a case (its min_supported_version). */
typedef enum tool_case_version {
    TOOL_CASE_VERSION_UNKNOWN,
    TOOL_CASE_VERSION_V1_0,
    TOOL_CASE_VERSION_V1_1,
    TOOL_CASE_VERSION_V1_2,
    TOOL_CASE_VERSION_V1_3,
    TOOL_CASE_VERSION_AIDL_V1,
    TOOL_CASE_VERSION_AIDL_V2,
    TOOL_CASE_VERSION_AIDL_V3,
} tool_case_version;

/* "V1_3", "AIDL_V2", ... as the vectors spell them ("?" for no version). */
const char *tool_case_version_name(tool_case_version v);
/* The version a vector spells v (TOOL_CASE_VERSION_UNKNOWN for "UNKNOWN"); false for a
 * spelling nobody defined. */
bool tool_case_version_parse(const char *v, tool_case_version *out);

/* An operand of a case's model: graph 0 is the main graph, r + 1 referenced subgraph r. */
typedef struct tool_case_ref {
    uint32_t graph, operand;
} tool_case_ref;

typedef struct tool_case {
    char *name;
    char *file;
    char folder[16]; /* the upstream folder ("V1_3", "AIDL_V2", ...); "" when not given */
    tool_case_version min_version;
    bool expect_failure;        /* the model is invalid: the driver must refuse it */
    bool infinite_loop_timeout; /* a WHILE that never ends: the loop timeout must stop it */
    Nnd__Model *model;
    bool relaxed;
    bool dynamic_output_shape;
    size_t n_ignored;
    uint32_t *ignored_outputs;
    size_t n_examples;
    tool_case_example *examples;
    /* Constants the upstream test placed in memory ("wasConstantReference"), kept inline
     * in model; tool_case_pooled_model() (case_pool.h) moves them to a pool. */
    size_t n_pooled;
    tool_case_ref *pooled;
    /* Set by a runner, not the file: with quant_steps_set, quantized outputs may differ by
     * quant_steps steps instead of the vectors' one (nnd-conformance-local --exact, --steps). */
    bool quant_steps_set;
    double quant_steps;
} tool_case;

void tool_case_clear(tool_case *c);
void tool_cases_free(tool_case *cases, size_t n_cases);

#endif

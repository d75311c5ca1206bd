/* SPDX-License-Identifier: Apache-2.0 */
/* case_record.c: freeing cases, and the version names. See case_record.h. */
#include "tools/conformance/case_record.h"

#include <stdlib.h>
#include <string.h>

static void free_example(tool_case_example *ex) {
    for (size_t i = 0; i < ex->n_inputs; i++)
        free(ex->inputs[i].data);
    for (size_t i = 0; i < ex->n_outputs; i++)
        free(ex->outputs[i].data);
    free(ex->inputs);
    free(ex->outputs);
}

void tool_case_clear(tool_case *c) {
    free(c->name);
    free(c->file);
    if (c->model) nnd__model__free_unpacked(c->model, NULL);
    free(c->ignored_outputs);
    for (size_t i = 0; i < c->n_examples; i++)
        free_example(&c->examples[i]);
    free(c->examples);
    free(c->pooled);
}

void tool_cases_free(tool_case *cases, size_t n_cases) {
    for (size_t i = 0; i < n_cases; i++)
        tool_case_clear(&cases[i]);
    free(cases);
}

static const char *const version_names[] = {
    [TOOL_CASE_VERSION_UNKNOWN] = "UNKNOWN", [TOOL_CASE_VERSION_V1_0] = "V1_0",
    [TOOL_CASE_VERSION_V1_1] = "V1_1",       [TOOL_CASE_VERSION_V1_2] = "V1_2",
    [TOOL_CASE_VERSION_V1_3] = "V1_3",       [TOOL_CASE_VERSION_AIDL_V1] = "AIDL_V1",
    [TOOL_CASE_VERSION_AIDL_V2] = "AIDL_V2", [TOOL_CASE_VERSION_AIDL_V3] = "AIDL_V3",
};

const char *tool_case_version_name(tool_case_version v) {
    return (unsigned)v < sizeof version_names / sizeof *version_names ? version_names[v] : "?";
}

bool tool_case_version_parse(const char *v, tool_case_version *out) {
    for (size_t k = 0; k < sizeof version_names / sizeof *version_names; k++)
        if (!strcmp(v, version_names[k])) {
            *out = (tool_case_version)k;
            return true;
        }
    return false;
}

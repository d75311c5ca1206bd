/* SPDX-License-Identifier: Apache-2.0 */
/* local.c: see local.h. */
#include "bench/local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/wire/convert.h"
#include "engine/engine.h"
#include "tests/support/timing.h"

struct bench_local {
    eng_prepared *p;
    eng_exec *e;
    eng_io in, out;
};

bench_local *bench_local_open(const Nnd__Model *m, const void *input, size_t in_bytes, void *output,
                              size_t out_bytes) {
    char err[SCHEMA_ERR_LEN] = "out of memory";
    bench_local *l = calloc(1, sizeof *l);
    eng_model_desc desc;
    schema_status s =
        l ? srv_model_from_proto(m, NULL, 0, &desc, err, sizeof err) : SCHEMA_GENERAL_FAILURE;
    if (s == SCHEMA_OK) {
        s = eng_prepare(&desc, &l->p, err, sizeof err);
        srv_model_desc_clear(&desc);
    }
    if (s == SCHEMA_OK && !(l->e = eng_exec_create(l->p))) s = SCHEMA_GENERAL_FAILURE;
    if (s != SCHEMA_OK) {
        fprintf(stderr, "bench: in-process side: %s\n", err);
        bench_local_close(l);
        return NULL;
    }
    l->in = (eng_io){.data = (void *)input, .length = in_bytes};
    l->out = (eng_io){.data = output, .length = out_bytes};
    return l;
}

double bench_local_run(bench_local *l) {
    char err[SCHEMA_ERR_LEN];
    uint64_t t0 = bench_now_ns();
    schema_status s = eng_exec_run(l->e, &l->in, &l->out, NULL, NULL, err, sizeof err);
    double t = (double)(bench_now_ns() - t0);
    if (s != SCHEMA_OK) {
        fprintf(stderr, "bench: in-process execute: %s\n", err);
        return -1;
    }
    return t;
}

void bench_local_close(bench_local *l) {
    if (!l) return;
    eng_exec_free(l->e);
    eng_prepared_free(l->p);
    free(l);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_nnapi: a bench_net (mobilenet.h) built through the NNAPI names of libnnd
 * (ANeuralNetworksModel_*), compiled, and executed through the daemon that $NND_SOCKET
 * names, as an application would. Input and output live in one memfd shared with the
 * daemon (setInputFromMemory / setOutputFromMemory: nothing is copied per execution).
 *
 * Contract: bench_nnapi_open() returns 0 with the model compiled and the input in place,
 * or -1 with a message on stderr. bench_nnapi_run() is one execution (create, bind,
 * compute, free) and returns its duration in nanoseconds, or -1.
 * bench_nnapi_model() is the finished ANeuralNetworksModel alone (NULL, with a message,
 * on failure); bench_nnapi_compile_ns() compiles it once (create, preference
 * SUSTAINED_SPEED, caching in cache_dir under token when cache_dir is not NULL, finish,
 * free) and returns how long that took in nanoseconds, or -1. */
#ifndef TST_SUPPORT_MOBILENET_NNAPI_H
#define TST_SUPPORT_MOBILENET_NNAPI_H

#include "tests/support/mobilenet.h"

typedef struct bench_nnapi {
    struct ANeuralNetworksModel *model;
    struct ANeuralNetworksCompilation *compilation;
    struct ANeuralNetworksMemory *memory;
    int fd;
    uint8_t *map;
    size_t in_bytes, out_at, out_bytes;
} bench_nnapi;

struct ANeuralNetworksModel *bench_nnapi_model(const bench_net *net);
double bench_nnapi_compile_ns(struct ANeuralNetworksModel *m, const char *cache_dir,
                              const uint8_t *token);
int bench_nnapi_open(bench_nnapi *r, const bench_net *net, const void *input);
/* The same, compiled at an ANEURALNETWORKS_PRIORITY_* (bench_nnapi_open: the default). */
int bench_nnapi_open_at(bench_nnapi *r, const bench_net *net, const void *input, int priority);
double bench_nnapi_run(void *r);
/* One execution of c whose input is memory's first in_bytes and whose output goes at
 * out_at: its nanoseconds, or -1 with `what` named on stderr. */
double bench_nnapi_execute(struct ANeuralNetworksCompilation *c,
                           struct ANeuralNetworksMemory *memory, size_t in_bytes, size_t out_at,
                           size_t out_bytes, const char *what);
/* The last execution's output. */
const void *bench_nnapi_output(const bench_nnapi *r);
void bench_nnapi_close(bench_nnapi *r);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_nnapi: a tests/drivers om_model through the NNAPI names of libnnd, compiled for one
 * named device (ANeuralNetworksCompilation_createForDevices) of the daemon $NND_SOCKET
 * names, as an application would; the daemon side of the opencl rows. The model's first
 * input and first output live in one memfd shared with the daemon (from memory: nothing
 * copied per execution); the input holds the model's input_data[0].
 *
 * Contract: bench_om_nnapi_model() returns the finished ANeuralNetworksModel (NULL with a
 * message on stderr). bench_om_nnapi_compile() compiles it for device at priority (an
 * ANEURALNETWORKS_PRIORITY_*), with caching in cache_dir under token when cache_dir is not
 * NULL, and returns 0 (the compilation in *out) or -1 with a message. bench_om_nnapi_open()
 * does both (the compilation timed alone, into compile_ns) and maps the memory;
 * bench_om_nnapi_run() is one execution (create, bind, compute, free) and returns its duration in
 * nanoseconds, or -1. */
#ifndef BENCH_OPENCL_NNAPI_H
#define BENCH_OPENCL_NNAPI_H

#include "tests/drivers/opencl_models.h"

struct ANeuralNetworksModel;
struct ANeuralNetworksCompilation;

typedef struct bench_om_nnapi {
    struct ANeuralNetworksModel *model;
    struct ANeuralNetworksCompilation *compilation;
    struct ANeuralNetworksMemory *memory;
    int fd;
    uint8_t *map;
    size_t in_bytes, out_at, out_bytes, size;
    double compile_ns; /* how long bench_om_nnapi_open's compilation took */
} bench_om_nnapi;

struct ANeuralNetworksModel *bench_om_nnapi_model(const om_model *m);
int bench_om_nnapi_compile(struct ANeuralNetworksModel *model, const char *device, int priority,
                           const char *cache_dir, const uint8_t *token,
                           struct ANeuralNetworksCompilation **out);
int bench_om_nnapi_open(bench_om_nnapi *r, const om_model *m, const char *device, int priority,
                        const char *cache_dir, const uint8_t *token);
double bench_om_nnapi_run(void *r);
const float *bench_om_nnapi_output(const bench_om_nnapi *r);
void bench_om_nnapi_close(bench_om_nnapi *r);

#endif

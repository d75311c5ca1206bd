/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_nnapi.c: an om_model through NNAPI on one named device. See opencl_nnapi.h. */
#include "bench/opencl_nnapi.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nnd/NeuralNetworks.h"
#include "nnd/nnd.h"
#include "schema/codes.h"
#include "tests/support/mobilenet_nnapi.h"
#include "tests/support/timing.h"

ANeuralNetworksModel *bench_om_nnapi_model(const om_model *m) {
    ANeuralNetworksModel *model = NULL;
    int rc = ANeuralNetworksModel_create(&model);
    for (uint32_t i = 0; !rc && i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        ANeuralNetworksOperandType t = {o->type, o->rank, o->rank ? o->dims : NULL, o->scale,
                                        o->zero_point};
        rc = ANeuralNetworksModel_addOperand(model, &t);
        if (!rc && o->lifetime == SCHEMA_CONSTANT_COPY)
            rc = ANeuralNetworksModel_setOperandValue(model, (int32_t)i, m->values + o->offset,
                                                      o->length);
        if (!rc && o->lifetime == SCHEMA_NO_VALUE)
            rc = ANeuralNetworksModel_setOperandValue(model, (int32_t)i, NULL, 0);
    }
    for (uint32_t k = 0; !rc && k < m->n_ops; k++)
        rc = ANeuralNetworksModel_addOperation(model, m->ops[k].type, m->ops[k].n_inputs,
                                               m->op_in[k], 1, &m->op_out[k]);
    if (!rc)
        rc = ANeuralNetworksModel_identifyInputsAndOutputs(model, m->n_inputs, m->inputs,
                                                           m->n_outputs, m->outputs);
    if (!rc) rc = ANeuralNetworksModel_finish(model);
    if (rc) {
        fprintf(stderr, "bench: building an NNAPI model: result code %d\n", rc);
        ANeuralNetworksModel_free(model);
        return NULL;
    }
    return model;
}

static const ANeuralNetworksDevice *find_device(const char *name) {
    uint32_t n = 0;
    if (ANeuralNetworks_getDeviceCount(&n) != ANEURALNETWORKS_NO_ERROR) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksDevice *d = NULL;
        const char *dn = NULL;
        if (ANeuralNetworks_getDevice(i, &d) == ANEURALNETWORKS_NO_ERROR &&
            ANeuralNetworksDevice_getName(d, &dn) == ANEURALNETWORKS_NO_ERROR && !strcmp(dn, name))
            return d;
    }
    return NULL;
}

int bench_om_nnapi_compile(ANeuralNetworksModel *model, const char *device, int priority,
                           const char *cache_dir, const uint8_t *token,
                           ANeuralNetworksCompilation **out) {
    const ANeuralNetworksDevice *d = find_device(device);
    if (!d) {
        fprintf(stderr, "bench: the daemon has no device %s\n", device);
        return -1;
    }
    ANeuralNetworksCompilation *c = NULL;
    int rc = ANeuralNetworksCompilation_createForDevices(model, &d, 1, &c);
    if (!rc)
        rc = ANeuralNetworksCompilation_setPreference(c, ANEURALNETWORKS_PREFER_SUSTAINED_SPEED);
    if (!rc) rc = ANeuralNetworksCompilation_setPriority(c, priority);
    if (!rc && cache_dir) rc = ANeuralNetworksCompilation_setCaching(c, cache_dir, token);
    if (!rc) rc = ANeuralNetworksCompilation_finish(c);
    if (rc) {
        fprintf(stderr, "bench: compiling for %s: result code %d\n", device, rc);
        ANeuralNetworksCompilation_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int bench_om_nnapi_open(bench_om_nnapi *r, const om_model *m, const char *device, int priority,
                        const char *cache_dir, const uint8_t *token) {
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->in_bytes = om_elems(m, m->inputs[0]) * sizeof(float);
    r->out_bytes = om_elems(m, m->outputs[0]) * sizeof(float);
    r->out_at = (r->in_bytes + 4095) & ~(size_t)4095;
    r->size = r->out_at + ((r->out_bytes + 4095) & ~(size_t)4095);
    void *map = NULL;
    if (!(r->model = bench_om_nnapi_model(m))) return -1;
    if ((r->fd = nnd_memfd_create("bench-opencl", r->size, &map)) < 0) return -1;
    r->map = map;
    memcpy(r->map, m->input_data[0], r->in_bytes);
    if (ANeuralNetworksMemory_createFromFd(r->size, PROT_READ | PROT_WRITE, r->fd, 0, &r->memory) !=
        ANEURALNETWORKS_NO_ERROR) {
        fprintf(stderr, "bench: no NNAPI memory from the memfd\n");
        return -1;
    }
    uint64_t t0 = bench_now_ns();
    int rc = bench_om_nnapi_compile(r->model, device, priority, cache_dir, token, &r->compilation);
    r->compile_ns = (double)(bench_now_ns() - t0);
    return rc;
}

double bench_om_nnapi_run(void *ctx) {
    bench_om_nnapi *r = ctx;
    return bench_nnapi_execute(r->compilation, r->memory, r->in_bytes, r->out_at, r->out_bytes,
                               "an execution");
}

const float *bench_om_nnapi_output(const bench_om_nnapi *r) {
    return (const float *)(r->map + r->out_at);
}

void bench_om_nnapi_close(bench_om_nnapi *r) {
    ANeuralNetworksCompilation_free(r->compilation);
    ANeuralNetworksModel_free(r->model);
    ANeuralNetworksMemory_free(r->memory);
    if (r->map) munmap(r->map, r->size);
    if (r->fd >= 0) close(r->fd);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

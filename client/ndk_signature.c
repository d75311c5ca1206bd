/* ndk_signature.c: operation signatures at addOperation, by the engine's rules. See
 * ndk_signature.h. */
#include "ndk_signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libnnd's copy of the engine has its nnd_status_name renamed (client/CMakeLists.txt), as
 * libnnd's API has one of its own. */
#define nnd_status_name nnd_engine_status_name
#include "engine.h"
#undef nnd_status_name

/* The engine's view of an operand as the model declares it: no value, no pool. */
static void describe(const ndk_operand *o, nnd_operand_desc *d) {
    memset(d, 0, sizeof *d);
    d->type = o->type;
    d->rank = o->rank <= NND_MAX_RANK ? o->rank : NND_MAX_RANK; /* finish refuses more */
    if (d->rank) memcpy(d->dims, o->dims, sizeof *d->dims * d->rank);
    d->scale = o->scale;
    d->zero_point = o->zero_point;
    /* A value set already makes no difference here: the signature is about types. */
    d->lifetime = o->lifetime == NDK_CONSTANT_REFERENCE ? NDK_CONSTANT_COPY : (uint32_t)o->lifetime;
    if (o->has_channel_quant)
        d->channel_quant = (nnd_channel_quant){
            .scales = o->scales, .n_scales = o->n_scales, .channel_dim = o->channel_dim};
    d->extension_data = o->ext_data;
    d->extension_len = (uint32_t)o->ext_len;
}

int ndk_signature_check(const ANeuralNetworksModel *m, int32_t type, uint32_t n_in,
                        const uint32_t *in, uint32_t n_out, const uint32_t *out, char *err,
                        size_t errlen) {
    if ((uint32_t)type >> 16 || type == NDK_OEM_OPERATION) return ANEURALNETWORKS_NO_ERROR;
    /* The operation's own operands, numbered inputs first, then outputs. */
    uint32_t n = n_in + n_out;
    nnd_operand_desc *d = malloc(sizeof *d * (n ? n : 1));
    uint32_t *idx = malloc(sizeof *idx * (n ? n : 1));
    if (!d || !idx) {
        free(d);
        free(idx);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    for (uint32_t j = 0; j < n; j++) {
        describe(&m->operands[j < n_in ? in[j] : out[j - n_in]], &d[j]);
        idx[j] = j;
    }
    nnd_operation_desc op = {
        .type = type, .n_inputs = n_in, .inputs = idx, .n_outputs = n_out, .outputs = idx + n_in};
    char msg[NND_ERR_LEN];
    nnd_status s = nnd_validate_operation(d, n, &op, m->relaxed, msg, sizeof msg);
    free(d);
    free(idx);
    if (s != NND_INVALID_ARGUMENT) return ANEURALNETWORKS_NO_ERROR;
    if (err && errlen) snprintf(err, errlen, "%s", msg);
    return ANEURALNETWORKS_BAD_DATA;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* partition.c: which device runs each step of a plan, and the driver partitions that makes
 * (AOSP's ExecutionPlan: the device with the best figure for the operation's type, runs of
 * one device's operations as one submodel). See partition.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/partition.h"
#include "engine/core/partition_blobs.h"
#include "engine/core/partition_sub.h"

/* Base types only: what nnd/driver.h describes (no extension types, no subgraphs). */
static bool driver_type(int32_t type) {
    return type >= 0 && type < NND_DRIVER_OPERAND_TYPES;
}

bool eng_partition_offerable(const eng_prepared *p, const eng_step *st) {
    if (!eng_step_offerable(st) || (st->def->code >> 16) != 0) return false;
    for (uint32_t j = 0; j < st->n_in + st->n_out; j++) {
        const eng_tensor *t = &p->tensors[j < st->n_in ? st->in[j] : st->out[j - st->n_in]];
        if (t->lifetime == SCHEMA_NO_VALUE) continue;
        if (!t->known || !driver_type(t->type)) return false;
    }
    return true;
}

void eng_partition_supported(const eng_prepared *p, eng_driver_dev *dev, bool *by_step) {
    memset(by_step, 0, sizeof(bool) * p->n_steps);
    eng_submodel sub;
    if (eng_drv_disabled(dev) || !eng_submodel_make(p, 0, p->n_steps, &sub)) return;
    char err[SCHEMA_ERR_LEN] = "";
    int rc = eng_drv_supported(dev, &sub.m, by_step, err, sizeof err);
    free((void *)sub.m.inputs);
    eng_submodel_free(&sub);
    if (rc != NND_DRIVER_OK) {
        if (rc > 0)
            eng_driver_logf(1, "driver %s: supported_operations failed: %s", dev->info.name, err);
        memset(by_step, 0, sizeof(bool) * p->n_steps);
        return;
    }
    for (uint32_t k = 0; k < p->n_steps; k++)
        by_step[k] = by_step[k] && eng_partition_offerable(p, &p->steps[k]);
}

/* The type an operation is ranked by: its first input's (its first output's without one). */
static int32_t key_type(const eng_prepared *p, const eng_step *st) {
    if (st->n_in) return p->tensors[st->in[0]].type;
    return st->n_out ? p->tensors[st->out[0]].type : SCHEMA_FLOAT32;
}

static float cpu_figure(const eng_model_desc *m, int32_t type, bool low_power) {
    if (m->cpu_caps) return eng_drv_figure(m->cpu_caps, type, m->relaxed, low_power);
    return m->reference_only ? 1.0f : 0.1f;
}

/* owner[k]: the driver (index into m->drivers) step k goes to, or -1 for the CPU. */
static schema_status assign(const eng_prepared *p, const eng_model_desc *m, int *owner, char *err,
                            size_t errlen) {
    bool *sup = malloc(sizeof(bool) * ((size_t)p->n_steps * m->n_drivers + 1));
    if (!sup)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory partitioning");
    for (uint32_t d = 0; d < m->n_drivers; d++)
        eng_partition_supported(p, m->drivers[d]->driver, sup + (size_t)d * p->n_steps);
    bool low_power = m->preference == NND_DRIVER_PREFER_LOW_POWER;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        int32_t type = key_type(p, &p->steps[k]);
        bool cpu_out = m->drivers_only || m->cpu_last;
        float best = cpu_out ? INFINITY : cpu_figure(m, type, low_power);
        owner[k] = -1;
        for (uint32_t d = 0; d < m->n_drivers; d++) {
            if (!sup[(size_t)d * p->n_steps + k]) continue;
            const eng_driver_dev *dev = m->drivers[d]->driver;
            float f = eng_drv_figure(&dev->info.caps, type, m->relaxed, low_power);
            /* Strictly better only: ties stay with the CPU, then the driver listed first;
             * with the CPU out of the ranking, any driver that supports it beats none. */
            if (f < best || (owner[k] < 0 && cpu_out)) best = f, owner[k] = (int)d;
        }
    }
    free(sup);
    return SCHEMA_OK;
}

/* Prepares steps [first, first + n) on dev; UNSUPPORTED or a fault leave them to the CPU. */
static schema_status make_partition(eng_prepared *p, const eng_model_desc *m, eng_driver_dev *dev,
                                    uint32_t first, uint32_t n, char *err, size_t errlen) {
    eng_partition *part;
    char msg[SCHEMA_ERR_LEN] = "";
    int rc = eng_partition_prepare(p, m, dev, first, n, NULL, 0, &part, msg, sizeof msg);
    if (rc == NND_DRIVER_OK) {
        eng_partition_install(p, part);
        return SCHEMA_OK;
    }
    if (rc == NND_DRIVER_UNSUPPORTED || rc < 0) {
        if (rc < 0 && msg[0]) eng_driver_logf(1, "partition left to the CPU: %s", msg);
        return SCHEMA_OK;
    }
    schema_status s = eng_drv_status(rc);
    return schema_failf(err, errlen, s == SCHEMA_OK ? SCHEMA_GENERAL_FAILURE : s,
                        "device %s could not prepare %s #%u and the %u operations after it: %s",
                        dev->info.name, p->steps[first].def->name, p->steps[first].index, n - 1,
                        msg[0] ? msg : "the driver failed");
}

/* Partitions from cache blobs: each names its first operation, its steps and its blobs. */
static schema_status from_blobs(eng_prepared *p, const eng_model_desc *m, char *err,
                                size_t errlen) {
    for (uint32_t i = 0; i < m->n_blobs; i++) {
        const eng_step_blob *b = &m->blobs[i];
        uint32_t first = 0;
        while (first < p->n_steps && p->steps[first].index != b->operation)
            first++;
        const eng_backend *be = b->driver < m->n_drivers ? m->drivers[b->driver] : NULL;
        nnd_driver_blob blobs[64];
        uint32_t n_steps = 0, n_blobs = 0;
        bool ok = be && be->driver && first < p->n_steps &&
                  eng_partition_blob_parse(b->data, b->len, &n_steps, blobs, &n_blobs, 64) &&
                  n_steps && n_steps <= p->n_steps - first;
        for (uint32_t k = first; ok && k < first + n_steps; k++)
            ok = !p->steps[k].backend && eng_partition_offerable(p, &p->steps[k]);
        if (!ok)
            return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                "cache blob %u names no driver partition (operation %u, device "
                                "%u)",
                                i, b->operation, b->driver);
        eng_partition *part;
        char msg[SCHEMA_ERR_LEN] = "";
        int rc = eng_partition_prepare(p, m, be->driver, first, n_steps, blobs, n_blobs, &part, msg,
                                       sizeof msg);
        if (rc != NND_DRIVER_OK) {
            if (m->drivers_only || (rc != NND_DRIVER_UNSUPPORTED && rc >= 0))
                return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                    "device %s could not rebuild a cached partition: %s",
                                    be->driver->info.name, msg[0] ? msg : "the driver failed");
            continue;
        }
        eng_partition_install(p, part);
    }
    return SCHEMA_OK;
}

schema_status eng_partition_model(eng_prepared *p, const eng_model_desc *m, char *err,
                                  size_t errlen) {
    if (!m->n_drivers || !p->n_steps) return SCHEMA_OK;
    p->driver_owned = calloc(p->n_operands + 1, sizeof(bool));
    if (!p->driver_owned)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory partitioning");
    if (m->from_blobs) return from_blobs(p, m, err, errlen);
    int *owner = malloc(sizeof(int) * p->n_steps);
    if (!owner) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    schema_status s = assign(p, m, owner, err, errlen);
    for (uint32_t k = 0; !s && k < p->n_steps;) {
        uint32_t n = 1;
        while (k + n < p->n_steps && owner[k + n] == owner[k])
            n++;
        if (owner[k] >= 0)
            s = make_partition(p, m, m->drivers[owner[k]]->driver, k, n, err, errlen);
        k += n;
    }
    free(owner);
    return s;
}

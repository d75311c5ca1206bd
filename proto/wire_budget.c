/* SPDX-License-Identifier: Apache-2.0 */
/* wire_budget.c: the pre-unpack walk. See wire_budget.h. */
#include "proto/wire_budget.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct walk {
    uint64_t decoded;  /* bytes unpack would allocate so far */
    uint64_t messages; /* nested messages, strings and bytes values so far */
    char *err;
    size_t errlen;
} walk;

enum { WT_VARINT = 0, WT_64BIT = 1, WT_LENGTH = 2, WT_32BIT = 5 };

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static int over(walk *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (w->err && w->errlen) vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int charge(walk *w, uint64_t bytes, uint64_t messages) {
    w->decoded += bytes;
    w->messages += messages;
    if (w->decoded > NND_WIRE_MAX_DECODED)
        return over(w, "message would take more than %llu bytes unpacked (frame limit)",
                    (unsigned long long)NND_WIRE_MAX_DECODED);
    if (w->messages > NND_WIRE_MAX_MESSAGES)
        return over(w,
                    "message holds more than %u nested messages, strings and bytes values "
                    "(frame limit)",
                    NND_WIRE_MAX_MESSAGES);
    return 0;
}

/* The bytes one element of a field takes in its unpacked struct or array. */
static size_t element_size(const ProtobufCFieldDescriptor *f) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return 8;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    default: return 4; /* 32-bit scalars, enums, protobuf_c_boolean */
    }
}

/* Elements in a packed repeated field's payload. */
static uint64_t packed_count(const ProtobufCFieldDescriptor *f, const uint8_t *p, uint64_t len) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT: return len / 4;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return len / 8;
    default: {
        uint64_t n = 0;
        for (uint64_t i = 0; i < len; i++)
            n += !(p[i] & 0x80);
        return n;
    }
    }
}

static int walk_message(walk *w, const ProtobufCMessageDescriptor *desc, const uint8_t *p,
                        const uint8_t *end, unsigned depth) {
    if (depth > NND_WIRE_MAX_DEPTH)
        return over(w, "message nests deeper than %d levels (frame limit)", NND_WIRE_MAX_DEPTH);
    if (charge(w, desc->sizeof_message, 1)) return -1;
    while (p < end) {
        uint64_t tag, v;
        if (!read_varint(&p, end, &tag)) return 0;
        unsigned wt = (unsigned)(tag & 7);
        const ProtobufCFieldDescriptor *f =
            tag >> 3 <= UINT32_MAX
                ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3))
                : NULL;
        const uint8_t *value = p;
        uint64_t len = 0;
        switch (wt) {
        case WT_VARINT:
            if (!read_varint(&p, end, &v)) return 0;
            len = (uint64_t)(p - value);
            break;
        case WT_64BIT: len = 8; break;
        case WT_32BIT: len = 4; break;
        case WT_LENGTH:
            if (!read_varint(&p, end, &len)) return 0;
            value = p;
            break;
        default: return 0; /* groups and worse: protobuf-c refuses them */
        }
        if (len > (uint64_t)(end - value)) return 0;
        p = value + len;
        if (!f) { /* kept as an unknown field: a record and a copy of the bytes */
            if (charge(w, sizeof(ProtobufCMessageUnknownField) + len, 1)) return -1;
            continue;
        }
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        if (repeated && wt == WT_LENGTH && f->type != PROTOBUF_C_TYPE_MESSAGE &&
            f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES) {
            if (charge(w, packed_count(f, value, len) * element_size(f), 0)) return -1;
            continue;
        }
        if (repeated && charge(w, element_size(f), 0)) return -1;
        switch (f->type) {
        case PROTOBUF_C_TYPE_MESSAGE:
            if (wt == WT_LENGTH &&
                walk_message(w, f->descriptor, value, value + len, depth + 1) < 0)
                return -1;
            break;
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_BYTES:
            if (charge(w, len + 1, 1)) return -1;
            break;
        default: break;
        }
    }
    return 0;
}

int proto_wire_budget_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                            char *err, size_t errlen) {
    walk w = {.err = err, .errlen = errlen};
    return walk_message(&w, desc, data, data + len, 0);
}

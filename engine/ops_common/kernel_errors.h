/* SPDX-License-Identifier: Apache-2.0 */
/* kernel_errors: how a kernel's check(), shape() or run() reports what was wrong.
 *
 * Contract: the message goes to c->err (at most c->errlen bytes, always terminated when
 * errlen > 0), prefixed "OPNAME #index: " so that it names the operation and where it
 * sits in the model; fmt is printf-style. eng_fail() returns SCHEMA_INVALID_ARGUMENT (the
 * model or request is wrong), eng_unsupported() SCHEMA_UNSUPPORTED (valid, but this engine
 * has no kernel for it). Neither allocates.
 */
#ifndef ENG_OPS_COMMON_KERNEL_ERRORS_H
#define ENG_OPS_COMMON_KERNEL_ERRORS_H

#include "engine/op.h"

schema_status eng_fail(eng_op_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
schema_status eng_unsupported(eng_op_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_common: what the fuzz targets (tests/fuzz/fuzz_*.c) share: a reader over the fuzz
 * input, the section container the seed generator writes, and one execution of a prepared
 * model with inputs taken from the fuzz input.
 *
 * Input container: a sequence of sections, each a little-endian u32 length then that many
 * bytes; a length past the end takes what is left. A target reads its sections in a fixed
 * order and treats what follows as the "stream" (fz_* readers give zeros past the end).
 *
 * Execution stream (fz_exec_prepared), per model input in order:
 *   u8 mode: bit 0 omits the input (has_no_value); bit 1 gives dimensions: u8 rank, then
 *   rank u32 dimensions; otherwise the model's dimensions, each unknown one 1 + u8 % 8
 *   (an unknown rank becomes 1 + (mode >> 2) % 4); then the input's bytes.
 * Outputs are zero-filled buffers sized from the prepared model (256 bytes where unknown);
 * on OUTPUT_INSUFFICIENT_SIZE they are resized from the reported shapes and run again.
 * Models whose estimated work or memory is over a limit are prepared but not executed, so
 * that a run stays within libFuzzer's time and memory limits. */
#ifndef TST_FUZZ_FUZZ_COMMON_H
#define TST_FUZZ_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define FZ_MAX_IO_BYTES (4u << 20)  /* all inputs or all outputs of one execution */
#define FZ_MAX_ARENA    (64u << 20) /* temporaries of a prepared model */
#define FZ_MAX_FLOPS    2e7         /* estimated work of one execution */
#define FZ_MAX_POOL     (1u << 20)  /* one memory pool */
/* WHILE loops: a fuzzed loop that never ends stops after this long. */
#define FZ_LOOP_TIMEOUT_NS 10000000ull

typedef struct fz_in {
    const uint8_t *p;
    size_t len;
} fz_in;

fz_in fz_section(fz_in *in);
uint8_t fz_u8(fz_in *in);
uint32_t fz_u32(fz_in *in);
/* Copies n bytes, zeros past the end of the input. */
void fz_bytes(fz_in *in, void *dst, size_t n);

/* Runs p once (twice after OUTPUT_INSUFFICIENT_SIZE) with inputs from the stream. */
void fz_exec_prepared(const eng_prepared *p, fz_in *stream);
/* Runs p with caller-bound inputs and outputs. */
void fz_exec_bound(const eng_prepared *p, const eng_io *inputs, const eng_io *outputs);
/* Whether p is cheap enough to execute (estimated work and temporaries). */
int fz_exec_affordable(const eng_prepared *p);

/* A growable byte buffer, for the seed generator. */
typedef struct fz_buf {
    uint8_t *p;
    size_t len, cap;
} fz_buf;
void fz_put(fz_buf *b, const void *v, size_t n);
void fz_put_u8(fz_buf *b, uint8_t v);
void fz_put_u32(fz_buf *b, uint32_t v);
void fz_put_section(fz_buf *b, const void *v, size_t n);

#endif

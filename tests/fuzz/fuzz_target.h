/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_target: the libFuzzer entry point every fuzz_*.c defines, and small helpers. Built
 * with -fsanitize=fuzzer it is driven by libFuzzer; without, replay_main.c feeds it the
 * regression inputs (regress/<target>/) so that `make test` replays them with any
 * compiler. */
#ifndef TST_FUZZ_FUZZ_TARGET_H
#define TST_FUZZ_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* NND_REFERENCE_KERNELS for the models prepared next (engine/backend.h); and a limit on
 * what one execution may allocate (engine/core/execute.c) that libFuzzer's memory limits leave
 * room for. */
static inline void fz_set_reference_kernels(int on) {
    setenv("NND_EXEC_ALLOC_LIMIT_MB", "256", 0);
    if (on)
        setenv("NND_REFERENCE_KERNELS", "1", 1);
    else
        unsetenv("NND_REFERENCE_KERNELS");
}

#endif

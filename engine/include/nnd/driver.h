/* nnd/driver.h: the device driver plugin ABI. This header (with nnd/extension.h, for the
 * operand view) is all a driver needs; drivers/example/ is the template.
 *
 * A driver is a shared object in the daemon's drivers directory (--drivers-dir) that
 * exports one object, `nnd_driver_info` (NND_DRIVER_SYMBOL), of type nnd_driver. Export it
 * with NND_DRIVER_EXPORT. Each loaded driver is one device of the daemon, listed by
 * GetDevices (NNAPI's ANeuralNetworks_getDevice) under its name.
 *
 * Contract:
 * - Versioning: abi_version must equal NND_DRIVER_ABI_VERSION and struct_size must be
 *   sizeof(nnd_driver) of this header; anything else is refused at load with a log line.
 * - Identity: name is the device name, 1 to 31 characters of [a-z0-9-], unique among the
 *   daemon's devices (the built-in "nnd-cpu" and "nnd-reference" included). type is an
 *   NNAPI device type (NND_DRIVER_TYPE_*). exec_time is the relative cost of one operation
 *   on this device, a finite number > 0: nnd-cpu is 0.1, nnd-reference 1.0. A compilation
 *   offers each operation to its devices from the lowest exec_time up, so a driver only
 *   gets operations if it ranks before nnd-cpu, or when the client named it without nnd-cpu.
 * - Steps: the daemon partitions each model; a step is one operation of it, with every
 *   operand's type and shape known (nnd_ext_operand, base types only: extension == NULL).
 *   Operation codes are NNAPI's OperationCode. Control flow (IF, WHILE) and the subgraphs
 *   it runs are never offered to drivers, nor are steps whose shapes are only known at
 *   execution.
 * - supports(): whether the driver can run this step. data is set for constants only.
 *   Cheap, no side effects; it answers GetSupportedOperations too.
 * - prepare(): builds the step's state, once per compiled model, or returns NULL to decline
 *   (the step then goes to the next device). data is set for constants only, and is only
 *   valid during the call: copy (or pack) the weights into the driver's own memory. The
 *   state lives until release().
 * - execute(): computes the step's outputs from its inputs. Every data pointer is set:
 *   inputs are read-only, each output holds exactly the bytes its shape needs. Temporaries
 *   between steps live in the daemon's memory, whichever device produced them. Return 0,
 *   or NND_EXT_FAILED with a message in err: that fails this one execution only.
 *   execute() may run concurrently on several threads, on the same state too.
 * - release(): frees a state, when its compiled model goes.
 * - Callbacks must not keep the operand pointers they get, nor call exit(), abort() or
 *   change signal dispositions. A SIGSEGV, SIGBUS, SIGFPE or SIGILL inside a callback (or
 *   in the driver's constructor or descriptor at load) fails that call and disables the
 *   driver until the daemon restarts: damage control, not a sandbox. A disabled driver is
 *   never called again, release() included: the states it made are left where they are.
 * - Deadlines, priorities, preemption and cancellation act between steps: a long
 *   execute() delays them by its own length.
 */
#ifndef NND_DRIVER_ABI_H
#define NND_DRIVER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/extension.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NND_DRIVER_ABI_VERSION      1
#define NND_DRIVER_SYMBOL           "nnd_driver_info"
#define NND_DRIVER_MAX_NAME         31
#define NND_DRIVER_TYPE_OTHER       1
#define NND_DRIVER_TYPE_CPU         2
#define NND_DRIVER_TYPE_GPU         3
#define NND_DRIVER_TYPE_ACCELERATOR 4

/* One step of a compiled model, as a driver sees it. */
typedef struct nnd_driver_step {
    int32_t operation; /* NNAPI OperationCode */
    uint32_t index;    /* the operation's index in the model, for messages */
    uint32_t n_inputs, n_outputs;
    const nnd_ext_operand *inputs;
    const nnd_ext_operand *outputs; /* execute(): data is where the results go */
    bool relaxed;                   /* FLOAT32 may be computed with FLOAT16 range and precision */
    char *err;                      /* a failure's message goes here (snprintf), errlen bytes */
    size_t errlen;
} nnd_driver_step;

typedef struct nnd_driver {
    uint32_t abi_version; /* NND_DRIVER_ABI_VERSION */
    uint32_t struct_size; /* sizeof(nnd_driver) */
    const char *name;     /* the device name */
    const char *version;  /* free text for GetDevices and logs; may be NULL */
    int32_t type;         /* NND_DRIVER_TYPE_* */
    float exec_time;      /* relative cost of one operation; lower wins */
    bool (*supports)(const nnd_driver_step *s);
    void *(*prepare)(const nnd_driver_step *s);
    int (*execute)(void *state, nnd_driver_step *s);
    void (*release)(void *state);
} nnd_driver;

#define NND_DRIVER_EXPORT                                                                          \
    __attribute__((visibility("default"))) extern const nnd_driver nnd_driver_info;                \
    __attribute__((visibility("default"))) const nnd_driver nnd_driver_info

#ifdef __cplusplus
}
#endif

#endif

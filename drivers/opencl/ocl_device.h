/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_device: the OpenCL devices nnd-opencl drives and the one program each runs.
 *
 * Contract:
 * - ocl_devices_open() finds the GPUs and accelerators of every platform the ICD loader
 *   lists, and CPU devices too when NND_OPENCL_CPU=1, up to max; each gets a context and
 *   an in-order queue (three, LOW, MEDIUM and HIGH, with cl_khr_priority_hints). A test
 *   hook, NND_OPENCL_TEST_DRIVER_VERSION, stands for the OpenCL driver's version string
 *   (as another driver release would report).
 * - ocl_device_program() builds the kernels (kernels.cl) once per device, on first use,
 *   from the on-disk cache when a binary for this source, options, platform, device and
 *   driver is there (ocl_cache.h); later calls return the same program. Extra build
 *   options come from NND_OPENCL_BUILD_OPTIONS. NULL with a message when it fails (that
 *   compilation fails; the next one tries to build again). A test hook,
 *   NND_OPENCL_TEST_FAIL_BUILDS=N, makes the process's first N builds from source fail
 *   (an option no compiler knows is added). Each program build, cache load or failure is
 *   one line on stderr (the daemon's log, through the driver host).
 * - ocl_device_key() is the program's cache key for the current options (ocl_cache.h).
 *   ocl_device_binary() returns the device's program binary (malloc'd; NULL when none is
 *   built). ocl_device_adopt_binary() makes a binary the device's program when it has none
 *   yet (no compilation: the binary is only linked); 0, or -1 with a message.
 * - ocl_device_close() frees one device, its scheduler stopped and its buffers freed first
 *   (ocl_exec.h, ocl_memory.h). */
#ifndef OCL_DEVICE_H
#define OCL_DEVICE_H

#include <CL/cl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct ocl_sched;
struct ocl_memory;

typedef struct ocl_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;
    cl_command_queue queue;   /* MEDIUM, or the only one */
    cl_command_queue prio[3]; /* LOW, MEDIUM, HIGH with cl_khr_priority_hints, else NULL */
    bool is_cpu, has_fp16, has_cmdbuf, has_priority;
    char platform_name[96], device_name[96], driver_version[64];
    pthread_mutex_t build_lock;
    cl_program program;
    char build_err[256];
    double build_ms; /* the program's build (or cache load) time */
    bool from_cache; /* the program came from the on-disk cache */
    struct ocl_sched *sched;
    struct ocl_memory *memory; /* device buffers by handle (ocl_memory.h), or NULL */
} ocl_device;

int ocl_devices_open(ocl_device **devs, uint32_t max, uint32_t *n, char *err, size_t errlen);
cl_program ocl_device_program(ocl_device *d, char *err, size_t errlen);
void ocl_device_key(ocl_device *d, char key[65]);
unsigned char *ocl_device_binary(ocl_device *d, size_t *size);
int ocl_device_adopt_binary(ocl_device *d, const unsigned char *bin, size_t size, char *err,
                            size_t errlen);
void ocl_device_close(ocl_device *d);
/* The kernel source (generated from kernels.cl). */
extern const char ocl_kernels_source[];

#endif

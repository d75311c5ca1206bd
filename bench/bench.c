/* SPDX-License-Identifier: Apache-2.0 */
/* bench: `make bench`. Every row is a ratio of two timings taken in this one run (medians
 * over repeated trials), printed against its target. The last line counts the rows within
 * target. Rows:
 *   rtt_same, rtt_cross  execute round trip of a tiny ADD model through a real daemon,
 *        over a raw SOCK_SEQPACKET 64-byte ping-pong between two processes in the same
 *        placement: client and daemon pinned to one CPU / to two (targets <= 1.3, <= 1.3)
 *   rtt_floor_same  the system calls an Execute makes on each side (epoll_wait, recvmsg
 *        with room for descriptors, sendmsg) echoing with no work, over the same ping-pong on
 *        one CPU (noted: what no encoding or scheduling change can go below)
 *   rtt_burst_same, rtt_burst_cross  the same execution in a burst (its memfd a slot after
 *        the first trial, so that it goes through the burst's shared-memory channel), over
 *        the same ping-pong (targets <= 1.5, <= 0.5); see rtt.h. A row that cannot be
 *        measured (one CPU only) is printed as such, not counted.
 *   inproc, inproc_loaded, conv_vs_xnnpack, fc_vs_xnnpack: see kernels.h (targets <= 1.1,
 *        <= 1.3, >= 0.9, >= 0.9)
 *   cache_load, cache_vs_cold, content_vs_cold: see cache.h (target <= 1.3; reported)
 *   memfd_64m: see memory.h (target <= 1.1)
 *   mnet_f32_xnn, mnet_q8_xnn, mnet_f16_f32, mnet_s8_q8, mnet_s8_xnn: see mobilenet_rows.h
 *        (targets <= 1.1, <= 1.1, <= 1.15, <= 1.0, >= 0.9)
 *   deadline_met, goodput, high_p99: see qos.h (targets >= 0.999, >= 0.9, <= 1.5)
 *   high_p90_thread, threads_vs_procs: see threads.h (targets <= 1.5, >= 0.95)
 *   prep_cold_xnn, prep_hit_xnn: see prepare_rows.h (target <= 1.5; reported)
 *   contention_high_p99: see contention.h (target <= 0.5)
 *   transformer_xnn: see transformer.h (target <= 1.2)
 *   conformer_like, attention_fc: see conformer.h (targets <= 1.2, <= 1.5)
 *   partition_cpu: see partition.h (reported)
 *   mnet_f32_opencl, mnet_opencl_cpu, fc_opencl, opencl_cache, opencl_high_p99: see
 *        opencl_rows.h (targets <= 1.1, noted, >= 0.9, <= 0.2, <= 1.5); n/a, with the
 *        reason, without an OpenCL device
 * `nnd-bench NAME...` measures and prints only the named rows and groups (rtt: the four
 * rtt rows, rtt_burst: the two burst ones; kernels; cache; memory; qos; mobilenet;
 * threads; prepare; contention; transformer; partition; driver; opencl).
 * Every process of a run (this one, its XNNPACK threads, the daemon it starts) is pinned
 * to the same CPUs: $NND_BENCH_CPUS (a list as taskset -c takes it, e.g. "0-1"), else
 * those this process was started on; the notes name them. The rtt rows pin further, each
 * process to one of them (rtt.h), and their note names the CPUs. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/cache.h"
#include "bench/contention.h"
#include "tests/support/harness.h"
#include "bench/kernels.h"
#include "bench/memory.h"
#include "bench/mobilenet_rows.h"
#include "nnd/nnd_wire.h"
#include "bench/partition.h"
#include "bench/prepare_rows.h"
#include "bench/qos.h"
#include "bench/rtt.h"
#include "bench/threads.h"
#include "tests/support/timing.h"
#include "bench/conformer.h"
#include "bench/driver_rtt.h"
#include "bench/transformer.h"
#include "bench/opencl_rows.h"
#include "tests/support/wire.h"

/* Pins this process, and so the daemon and threads it starts, to $NND_BENCH_CPUS or to
 * the CPUs it has; names them in out. */
static int pin_cpus(char *out, size_t len) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const char *list = getenv("NND_BENCH_CPUS");
    if (list && *list) {
        for (const char *p = list; *p;) {
            char *end;
            long lo = strtol(p, &end, 10), hi = lo;
            if (end == p || lo < 0 || lo >= CPU_SETSIZE) break;
            if (*end == '-') hi = strtol(end + 1, &end, 10);
            for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
                CPU_SET((int)c, &set);
            p = *end == ',' ? end + 1 : end;
            if (*end && *end != ',') break;
        }
        if (CPU_COUNT(&set) == 0 || sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "bench: cannot pin to NND_BENCH_CPUS=%s\n", list);
            return -1;
        }
    } else if (sched_getaffinity(0, sizeof set, &set) != 0 ||
               sched_setaffinity(0, sizeof set, &set) != 0) {
        return -1;
    }
    size_t at = 0;
    out[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && at + 8 < len; c++)
        if (CPU_ISSET(c, &set)) at += (size_t)snprintf(out + at, len - at, at ? ",%d" : "%d", c);
    return 0;
}

typedef struct row {
    const char *group, *name, *what;
    double value, target; /* target < 0: no target, printed for the record, not counted */
    bool lower_is_better; /* a NaN value: not measurable here, printed as such, not counted */
} row;

/* Rows or groups named on the command line; none named: every row. */
static int n_named;
static char **named;

static bool is_named(const char *s) {
    for (int i = 0; i < n_named; i++)
        if (!strcmp(named[i], s)) return true;
    return false;
}

/* A round trip over the raw ping-pong of its placement; NaN when it was not measured. */
static double ratio(const bench_rtt_place *p, double ns) {
    return p->measured ? ns / p->raw_ns : NAN;
}

/* A row is wanted by its group's name, its own, or a name it starts with before a '_'
 * (rtt_burst: rtt_burst_same and rtt_burst_cross). */
static bool want(const char *group, const char *row) {
    if (n_named == 0 || is_named(group) || is_named(row)) return true;
    for (int i = 0; i < n_named; i++) {
        size_t n = strlen(named[i]);
        if (!strncmp(row, named[i], n) && row[n] == '_') return true;
    }
    return false;
}

static void usage(FILE *f) {
    fputs("usage: nnd-bench [ROW|GROUP]...\n"
          "       nnd-bench -V|--version | -h|--help\n"
          "\n"
          "Measures nnd against baselines taken in the same run and prints each row as a\n"
          "ratio beside its target; the last line counts the rows within target. With no\n"
          "argument every row runs; otherwise the named rows and groups only.\n"
          "\n"
          "groups: rtt (rtt_same rtt_floor_same rtt_cross rtt_burst_same rtt_burst_cross),\n"
          "  rtt_burst, kernels (inproc inproc_loaded conv_vs_xnnpack fc_vs_xnnpack),\n"
          "  cache (cache_load cache_vs_cold content_vs_cold), memory (memfd_64m),\n"
          "  qos (deadline_met goodput high_p99), mobilenet (mnet_f32_xnn mnet_q8_xnn\n"
          "  mnet_f16_f32 mnet_s8_q8 mnet_s8_xnn), threads (high_p90_thread\n"
          "  threads_vs_procs), prepare (prep_cold_xnn prep_hit_xnn), contention\n"
          "  (contention_high_p99), transformer (transformer_xnn), partition (partition_cpu),\n"
          "  driver (driver_rtt), opencl (mnet_f32_opencl mnet_opencl_cpu fc_opencl\n"
          "  opencl_cache opencl_high_p99)\n"
          "\n"
          "environment: NND_BENCH_CPUS  the CPUs every process of the run is pinned to\n"
          "  (as taskset -c takes them, e.g. 0-1); default: those nnd-bench started on\n",
          f);
}

/* The notes under the table for the opencl rows. */
static void opencl_note(const bench_opencl *o, bool mnet, bool fc, bool cache, bool qos) {
    if (o->skip[0]) {
        printf("# opencl: not measured: %s\n", o->skip);
        return;
    }
    printf("# opencl: %s; the driver %s command buffers\n", o->device,
           o->cmdbuf ? "records" : "does not record");
    if (mnet) {
        printf("# mnet_f32_opencl: %s; daemon %.2f ms against the plain program %s %.2f ms",
               o->mnet.shape, o->mnet_same.a_ns / 1e6,
               o->cmdbuf ? "with a command buffer" : "with plain enqueues",
               o->mnet_same.b_ns / 1e6);
        if (o->mnet_other.b_ns > 0)
            printf("; daemon %.2f ms against it %s %.2f ms", o->mnet_other.a_ns / 1e6,
                   o->cmdbuf ? "with plain enqueues" : "with a command buffer",
                   o->mnet_other.b_ns / 1e6);
        printf("; outputs differ by %.2g at most\n", o->mnet_diff);
        printf("# mnet_opencl_cpu: nnd-opencl %.2f ms, nnd-cpu %.2f ms\n", o->mnet_cpu.a_ns / 1e6,
               o->mnet_cpu.b_ns / 1e6);
    }
    if (fc && o->fc_skip[0]) printf("# fc_opencl: not measured: %s\n", o->fc_skip);
    if (fc && !o->fc_skip[0])
        printf("# fc_opencl: %s; daemon %.2f GFLOP/s (%.1f ms), CLBlast %.2f GFLOP/s (%.1f ms), "
               "both with the input written and the output read; outputs differ by %.2g\n",
               o->fc.shape, o->fc.flops / o->fc.a_ns, o->fc.a_ns / 1e6, o->fc.flops / o->fc.b_ns,
               o->fc.b_ns / 1e6, o->fc_diff);
    if (cache)
        printf("# opencl_cache: MobileNet compile + first run, empty PoCL cache each time: cold "
               "%.0f ms; from the cache %.0f ms (median of %.0f, %.0f, %.0f)\n",
               o->cache_cold_ns / 1e6, o->cache_hit_ns / 1e6, o->cache_hit_runs[0] / 1e6,
               o->cache_hit_runs[1] / 1e6, o->cache_hit_runs[2] / 1e6);
    if (qos)
        printf(
            "# opencl_high_p99: %d HIGH executions alone: p99 %.1f ms, p90 %.1f ms, median %.1f "
            "ms; with 3 LOW clients flooding: p99 %.1f ms, p90 %.1f ms, median %.1f ms (%llu LOW "
            "done); ratios of %d runs: %.3f %.3f %.3f\n",
            BENCH_OCL_QOS_SAMPLES, o->qos.alone_p99_ns / 1e6, o->qos.alone_p90_ns / 1e6,
            o->qos.alone_median_ns / 1e6, o->qos.flood_p99_ns / 1e6, o->qos.flood_p90_ns / 1e6,
            o->qos.flood_median_ns / 1e6, (unsigned long long)o->qos.low_done,
            BENCH_OCL_QOS_REPEATS, o->qos.ratio_runs[0], o->qos.ratio_runs[1],
            o->qos.ratio_runs[2]);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
            printf("nnd-bench %s\n", BENCH_VERSION);
            return 0;
        }
    }
    static const char *const names[] = {"rtt",
                                        "rtt_burst",
                                        "rtt_same",
                                        "rtt_floor_same",
                                        "rtt_cross",
                                        "rtt_burst_same",
                                        "rtt_burst_cross",
                                        "inproc",
                                        "inproc_loaded",
                                        "conv_vs_xnnpack",
                                        "fc_vs_xnnpack",
                                        "kernels",
                                        "cache_load",
                                        "cache_vs_cold",
                                        "content_vs_cold",
                                        "cache",
                                        "memory",
                                        "memfd_64m",
                                        "qos",
                                        "deadline_met",
                                        "goodput",
                                        "high_p99",
                                        "mobilenet",
                                        "mnet_f32_xnn",
                                        "mnet_q8_xnn",
                                        "mnet_f16_f32",
                                        "mnet_s8_q8",
                                        "mnet_s8_xnn",
                                        "threads",
                                        "high_p90_thread",
                                        "threads_vs_procs",
                                        "prepare",
                                        "prep_cold_xnn",
                                        "prep_hit_xnn",
                                        "contention",
                                        "contention_high_p99",
                                        "transformer",
                                        "transformer_xnn",
                                        "conformer_like",
                                        "attention_fc",
                                        "partition",
                                        "partition_cpu",
                                        "driver",
                                        "driver_rtt",
                                        "opencl",
                                        "mnet_f32_opencl",
                                        "mnet_opencl_cpu",
                                        "fc_opencl",
                                        "opencl_cache",
                                        "opencl_high_p99"};
    n_named = argc - 1;
    named = argv + 1;
    for (int i = 0; i < n_named; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            known |= !strcmp(named[i], names[k]);
        if (!known) {
            fprintf(stderr, "nnd-bench: unknown %s %s\n\n",
                    named[i][0] == '-' ? "option" : "row or group", named[i]);
            usage(stderr);
            return 2;
        }
    }
    bool rtt_exec =
        want("rtt", "rtt_same") || want("rtt", "rtt_cross") || want("rtt", "rtt_floor_same");
    bool rtt_burst = want("rtt", "rtt_burst_same") || want("rtt", "rtt_burst_cross");
    bool rtt = rtt_exec || rtt_burst;
    bool kern = want("kernels", "inproc") || want("kernels", "conv_vs_xnnpack") ||
                want("kernels", "fc_vs_xnnpack");
    bool loaded = want("kernels", "inproc_loaded");
    bool caching = want("cache", "cache_load") || want("cache", "cache_vs_cold") ||
                   want("cache", "content_vs_cold");
    bool memory = want("memory", "memfd_64m");
    bool qosing = want("qos", "deadline_met") || want("qos", "goodput") || want("qos", "high_p99");
    bool mnet = want("mobilenet", "mnet_f32_xnn") || want("mobilenet", "mnet_q8_xnn") ||
                want("mobilenet", "mnet_f16_f32") || want("mobilenet", "mnet_s8_q8") ||
                want("mobilenet", "mnet_s8_xnn");
    bool prep = want("prepare", "prep_cold_xnn") || want("prepare", "prep_hit_xnn");
    bool contend = want("contention", "contention_high_p99");
    bool transformer = want("transformer", "transformer_xnn");
    bool conformer = want("transformer", "conformer_like"),
         attention = want("transformer", "attention_fc");
    char cpus[256];
    if (pin_cpus(cpus, sizeof cpus) != 0) return 2;
    bench_rtt rt = {0};
    int failed = rtt && bench_rtt_rows(&rt, rtt_exec, rtt_burst);
    /* First, while no kernel thread pool of this process competes for the cores. */
    bench_cache cache = {0};
    failed |= caching && bench_cache_rows(&cache);
    bench_qos qos = {0};
    failed |= qosing && bench_qos_rows(&qos);
    bool prio = want("threads", "high_p90_thread"), rates = want("threads", "threads_vs_procs");
    bench_threads thr = {0};
    failed |= (prio || rates) && bench_threads_rows(&thr, prio, rates);
    bench_prepare pr = {0};
    failed |= prep && bench_prepare_rows(&pr);
    bool part = want("partition", "partition_cpu");
    bench_pair partition = {0};
    failed |= part && bench_partition_rows(&partition);
    bench_contention ct = {0};
    failed |= contend && bench_contention_rows(&ct);
    bool drv = want("driver", "driver_rtt");
    bench_pair drv_rtt = {0};
    failed |= drv && bench_driver_rtt_rows(&drv_rtt);
    bool ocl_mnet = want("opencl", "mnet_f32_opencl") || want("opencl", "mnet_opencl_cpu"),
         ocl_fc = want("opencl", "fc_opencl"), ocl_cache = want("opencl", "opencl_cache"),
         ocl_qos = want("opencl", "opencl_high_p99");
    bool ocl = ocl_mnet || ocl_fc || ocl_cache || ocl_qos;
    bench_opencl oc = {0};
#ifdef BENCH_HAVE_OPENCL
    failed |= ocl && bench_opencl_rows(&oc, ocl_mnet, ocl_fc, ocl_cache, ocl_qos);
#else
    snprintf(oc.skip, sizeof oc.skip, "nnd-opencl was not built (no OpenCL headers or loader)");
#endif
    double nan = NAN, ocl_ok = oc.skip[0] ? NAN : 1;
    tst_daemon d;
    if (tst_daemon_start(&d, NULL) != 0) {
        fprintf(stderr, "bench: cannot start the daemon\n");
        return 1;
    }
    bench_pair inproc = {0}, conv = {0}, fc = {0}, inproc_loaded = {0};
    failed |= kern && (bench_inproc(&d, &inproc) || bench_conv_vs_xnnpack(&d, &conv) ||
                       bench_fc_vs_xnnpack(&d, &fc));
    int hogs = 0;
    failed |= loaded && bench_inproc_loaded(&d, &inproc_loaded, &hogs);
    bench_memfd mem = {0};
    failed |= memory && bench_memfd_rows(&d, &mem);
    bench_mobilenet mn = {0};
    failed |= mnet && bench_mobilenet_rows(&d, &mn);
    bench_transformer tf = {0};
    failed |= transformer && bench_transformer_rows(&d, &tf);
    bench_conformer cf = {0};
    failed |= (conformer || attention) && bench_conformer_rows(&d, conformer, attention, &cf);
    tst_daemon_stop(&d);
    if (failed) return 1;

    row rows[] = {
        {"rtt", "rtt_same", "tiny execute round trip / raw ping-pong, both on one CPU",
         ratio(&rt.same, rt.same.exec_ns), 1.3, true},
        {"rtt", "rtt_cross", "tiny execute round trip / raw ping-pong, on two CPUs",
         ratio(&rt.cross, rt.cross.exec_ns), 1.3, true},
        {"rtt", "rtt_floor_same",
         "the event loop's system calls alone, echoing (no work) / raw ping-pong, one CPU",
         ratio(&rt.same, rt.same.floor_ns), -1, true},
        {"rtt", "rtt_burst_same", "the same in a burst (channel) / raw ping-pong, on one CPU",
         ratio(&rt.same, rt.same.burst_ns), 1.5, true},
        {"rtt", "rtt_burst_cross", "the same in a burst (channel) / raw ping-pong, on two CPUs",
         ratio(&rt.cross, rt.cross.burst_ns), 0.5, true},
        {"kernels", "inproc", "MobileNet-like execute through the daemon / in process",
         inproc.a_ns / inproc.b_ns, 1.1, true},
        {"kernels", "inproc_loaded",
         "the same with 2 busy processes per CPU running: through the daemon / in process",
         inproc_loaded.a_ns / inproc_loaded.b_ns, 1.3, true},
        {"kernels", "conv_vs_xnnpack", "CONV_2D GFLOP/s through the daemon / XNNPACK direct",
         conv.b_ns / conv.a_ns, 0.9, false},
        {"kernels", "fc_vs_xnnpack", "FULLY_CONNECTED GFLOP/s through the daemon / XNNPACK direct",
         fc.b_ns / fc.a_ns, 0.9, false},
        {"cache", "cache_load",
         "10 MiB PrepareModelFromCache / read + BLAKE2b of the files in process",
         cache.load_ns / cache.floor_ns, 1.3, true},
        {"cache", "cache_vs_cold", "10 MiB PrepareModelFromCache / cold PrepareModel",
         cache.load_ns / cache.cold_ns, -1, true},
        {"cache", "content_vs_cold", "10 MiB PrepareModel answered by the content cache / cold",
         cache.content_ns / cache.cold_ns, -1, true},
        {"memory", "memfd_64m", "execute, 64 MiB memfd input / 4 KiB input, compute subtracted",
         (mem.big_ns - mem.big_local_ns) / (mem.small_ns - mem.small_local_ns), 1.1, true},
        {"qos", "deadline_met",
         "2x capacity offered, with deadlines: admitted that met them / admitted", qos.met_share,
         0.999, false},
        {"qos", "goodput",
         "2x capacity offered: executions that met their deadline per s / capacity", qos.goodput,
         0.9, false},
        {"qos", "high_p99", "HIGH p99 latency under a LOW flood of its app / HIGH p99 when idle",
         qos.high_flood_p99 / qos.high_idle_p99, 1.5, true},
        {"mobilenet", "mnet_f32_xnn",
         "MobileNet FLOAT32 through the daemon / XNNPACK subgraph runtime in process",
         mn.f32_xnn.a_ns / mn.f32_xnn.b_ns, 1.1, true},
        {"mobilenet", "mnet_q8_xnn",
         "MobileNet QUANT8 through the daemon / XNNPACK subgraph runtime in process",
         mn.q8_xnn.a_ns / mn.q8_xnn.b_ns, 1.1, true},
        {"mobilenet", "mnet_f16_f32", "MobileNet FLOAT16 / FLOAT32, both through the daemon",
         mn.f16_f32.a_ns / mn.f16_f32.b_ns, 1.15, true},
        {"mobilenet", "mnet_s8_q8",
         "MobileNet INT8 (per-channel weights) / QUANT8, both through the daemon",
         mn.s8_q8.a_ns / mn.s8_q8.b_ns, 1.0, true},
        {"mobilenet", "mnet_s8_xnn",
         "MobileNet INT8 on XNNPACK's qs8/qc8 operators in process / through the daemon",
         mn.s8_xnn.b_ns / mn.s8_xnn.a_ns, 0.9, false},
        {"threads", "high_p90_thread",
         "HIGH p90 under a LOW flood of another thread, one connection / HIGH p90 when idle",
         thr.high_ratio, 1.5, true},
        {"threads", "threads_vs_procs",
         "executions per second, 8 threads of one client / 8 processes", thr.rate_ratio, 0.95,
         false},
        {"prepare", "prep_cold_xnn",
         "cold MobileNet FLOAT32 compile through the daemon / XNNPACK creating it in process",
         pr.cold_xnn.a_ns / pr.cold_xnn.b_ns, 1.5, true},
        {"prepare", "prep_hit_xnn",
         "MobileNet FLOAT32 compile with its cache directory / XNNPACK creating it in process",
         pr.hit_xnn.a_ns / pr.hit_xnn.b_ns, -1, true},
        {"contention", "contention_high_p99",
         "MobileNet p99 of the HIGH one of 4 processes (3 LOW) through the daemon / of one of 4 "
         "on XNNPACK in process",
         ct.nnd.p99_ns / ct.inproc.p99_ns, 0.5, true},
        {"transformer", "transformer_xnn",
         "feed-forward block (BATCH_MATMUL, TANH) through the daemon / XNNPACK in process",
         tf.xnn.a_ns / tf.xnn.b_ns, 1.2, true},
        {"transformer", "conformer_like",
         "conformer-style block (norms, attention, depthwise conv) through the daemon / XNNPACK "
         "in process",
         cf.block.pair.a_ns / cf.block.pair.b_ns, 1.2, true},
        {"transformer", "attention_fc",
         "two FULLY_CONNECTED [64, 256] x [256, 256] through the daemon / XNNPACK in process",
         cf.attention.pair.a_ns / cf.attention.pair.b_ns, 1.5, true},
        {"partition", "partition_cpu",
         "a model half on nnd-example, half on nnd-cpu / the same model on nnd-cpu alone",
         partition.a_ns / partition.b_ns, -1, true},
        {"driver", "driver_rtt",
         "tiny execute on a driver through its driver host / the same driver in process",
         drv_rtt.a_ns / drv_rtt.b_ns, -1, true},
        {"opencl", "mnet_f32_opencl",
         "MobileNet FLOAT32 through the daemon on nnd-opencl / the same kernels from a plain "
         "OpenCL program",
         ocl_ok * oc.mnet.a_ns / oc.mnet.b_ns, 1.1, true},
        {"opencl", "mnet_opencl_cpu", "MobileNet FLOAT32 through the daemon, nnd-opencl / nnd-cpu",
         ocl_ok * oc.mnet_cpu.a_ns / oc.mnet_cpu.b_ns, -1, true},
        {"opencl", "fc_opencl",
         "FULLY_CONNECTED GFLOP/s through the daemon on nnd-opencl / CLBlast SGEMM direct",
         oc.fc_skip[0] ? nan : ocl_ok * oc.fc.b_ns / oc.fc.a_ns, 0.9, false},
        {"opencl", "opencl_cache",
         "MobileNet compile and first run on nnd-opencl from the cache / cold",
         ocl_ok * oc.cache_hit_ns / oc.cache_cold_ns, 0.2, true},
        {"opencl", "opencl_high_p99",
         "HIGH p99 on nnd-opencl with 3 LOW clients flooding it / HIGH p99 alone",
         ocl_ok * oc.qos.ratio, 1.5, true},
    };
    size_t n = sizeof rows / sizeof rows[0], within = 0, counted = 0;
    printf("%-16s %8s %8s  %-7s %s\n", "row", "ratio", "target", "status", "what");
    for (size_t i = 0; i < n; i++) {
        row *r = &rows[i];
        if (!want(r->group, r->name)) continue;
        if (isnan(r->value)) {
            printf("%-16s %8s %9s  %-7s %s\n", r->name, "-", "-", "n/a", r->what);
            continue;
        }
        if (r->target < 0) {
            printf("%-16s %8.3f %9s  %-7s %s\n", r->name, r->value, "-", "noted", r->what);
            continue;
        }
        counted++;
        bool ok = r->lower_is_better ? r->value <= r->target : r->value >= r->target;
        within += ok;
        printf("%-16s %8.3f %s%7.2f  %-7s %s\n", r->name, r->value,
               r->lower_is_better ? "<=" : ">=", r->target, ok ? "ok" : "OUTSIDE", r->what);
    }
    const bench_rtt_place *places[2] = {&rt.same, &rt.cross};
    for (int i = 0; rtt && i < 2; i++) {
        const bench_rtt_place *p = places[i];
        if (!p->measured) {
            printf("# rtt %s: not measurable (one CPU only)\n", i ? "on two CPUs" : "on one CPU");
            continue;
        }
        printf(
            "# rtt %s: client on CPU %d, daemon on CPU %d; medians of %d trials: raw ping-pong "
            "%.1f us, its system calls alone %.1f us, execute %.1f us, in a burst %.1f us; 0 for "
            "a row not run\n",
            i ? "on two CPUs" : "on one CPU", p->client_cpu, p->daemon_cpu, BENCH_RTT_TRIALS,
            p->raw_ns / 1e3, rtt_exec ? p->floor_ns / 1e3 : 0, rtt_exec ? p->exec_ns / 1e3 : 0,
            rtt_burst ? p->burst_ns / 1e3 : 0);
    }
    if (drv)
        printf("# driver_rtt: %s: through the driver host %.1f us, in process %.2f us\n",
               drv_rtt.shape, drv_rtt.a_ns / 1e3, drv_rtt.b_ns / 1e3);
    if (loaded)
        printf("# inproc_loaded: %d busy processes at nice 0 on the same CPUs: daemon %.2f ms, in "
               "process %.2f ms\n",
               hogs, inproc_loaded.a_ns / 1e6, inproc_loaded.b_ns / 1e6);
    if (kern) {
        printf("# inproc: %s: daemon %.2f ms, in process %.2f ms\n", inproc.shape,
               inproc.a_ns / 1e6, inproc.b_ns / 1e6);
        const bench_pair *ops[2] = {&conv, &fc};
        for (int i = 0; i < 2; i++)
            printf("# %s: daemon %.1f GFLOP/s (%.3f ms), XNNPACK direct %.1f GFLOP/s (%.3f ms)\n",
                   ops[i]->shape, ops[i]->flops / ops[i]->a_ns, ops[i]->a_ns / 1e6,
                   ops[i]->flops / ops[i]->b_ns, ops[i]->b_ns / 1e6);
    }
    if (caching) {
        printf(
            "# cache: %.1f MB of cache files; from cache %.2f ms, floor (read + hash, 2 threads) "
            "%.2f ms, one-thread read + blake2b %.2f ms, cold prepare %.2f ms, first compile "
            "with save %.2f ms, nnd_client_prepare_cached from the cache %.2f ms, content-cache "
            "hit %.2f ms\n",
            cache.bytes / 1e6, cache.load_ns / 1e6, cache.floor_ns / 1e6,
            cache.plain_floor_ns / 1e6, cache.cold_ns / 1e6, cache.save_ns / 1e6,
            cache.client_ns / 1e6, cache.content_ns / 1e6);
    }
    if (memory) {
        printf(
            "# memfd_64m: execute 64 MiB %.1f us, 4 KiB %.1f us; in process %.1f us and %.1f us\n",
            mem.big_ns / 1e3, mem.small_ns / 1e3, mem.big_local_ns / 1e3, mem.small_local_ns / 1e3);
    }
    if (qosing) {
        printf(
            "# qos: capacity %.0f/s (%.2f ms each); offered %.0f/s for 3 s with deadlines %.1f ms "
            "out: %llu sent, %llu admitted, %llu met, %llu late, %llu not NONE (the daemon "
            "counted %llu met, %llu stopped at a checkpoint, %llu refused when dispatched)\n",
            qos.capacity, qos.service_ns / 1e6, qos.offered, 10 * qos.service_ns / 1e6,
            (unsigned long long)qos.sent, (unsigned long long)qos.admitted,
            (unsigned long long)qos.met, (unsigned long long)qos.late,
            (unsigned long long)qos.failed, (unsigned long long)qos.daemon_met,
            (unsigned long long)qos.daemon_aborted, (unsigned long long)qos.daemon_refused_late);
        printf(
            "# qos: HIGH (%.2f ms run) p99 idle %.2f ms (in driver %.2f), under a LOW flood of its "
            "app (%.1f ms runs) %.2f ms (in driver %.2f); %llu preemptions\n",
            qos.high_service_ns / 1e6, qos.high_idle_p99 / 1e6, qos.high_idle_driver_p99 / 1e6,
            qos.low_service_ns / 1e6, qos.high_flood_p99 / 1e6, qos.high_flood_driver_p99 / 1e6,
            (unsigned long long)qos.preempted);
        printf("# qos: medians of %d runs, each on a fresh daemon:", BENCH_QOS_REPEATS);
        for (int r = 0; r < BENCH_QOS_REPEATS; r++)
            printf(" [met %.4f, goodput %.3f, high %.3f]", qos.met_share_runs[r],
                   qos.goodput_runs[r], qos.high_ratio_runs[r]);
        printf("\n");
    }
    if (mnet) {
        printf("# mobilenet: %s; daemon FLOAT32 %.2f ms, XNNPACK subgraph %.2f ms (outputs differ "
               "by %.2g at most); daemon QUANT8 %.2f ms, XNNPACK %.2f ms (%.2g); daemon FLOAT16 "
               "%.2f ms, FLOAT32 %.2f ms (%.2g)\n",
               mn.f32_xnn.shape, mn.f32_xnn.a_ns / 1e6, mn.f32_xnn.b_ns / 1e6, mn.f32_diff,
               mn.q8_xnn.a_ns / 1e6, mn.q8_xnn.b_ns / 1e6, mn.q8_diff, mn.f16_f32.a_ns / 1e6,
               mn.f16_f32.b_ns / 1e6, mn.f16_diff);
        printf("# mobilenet: daemon INT8 %.2f ms, QUANT8 %.2f ms; INT8 on XNNPACK (up to the "
               "logits) %.2f ms, daemon %.2f ms (probabilities differ by %.2g)\n",
               mn.s8_q8.a_ns / 1e6, mn.s8_q8.b_ns / 1e6, mn.s8_xnn.b_ns / 1e6, mn.s8_xnn.a_ns / 1e6,
               mn.s8_diff);
    }
    if (transformer)
        printf("# transformer: %s; daemon %.2f ms (%.1f GFLOP/s), XNNPACK in process %.2f ms "
               "(%.1f GFLOP/s); outputs differ by %.2g at most\n",
               tf.xnn.shape, tf.xnn.a_ns / 1e6, tf.xnn.flops / tf.xnn.a_ns, tf.xnn.b_ns / 1e6,
               tf.xnn.flops / tf.xnn.b_ns, tf.diff);
    if (conformer) bench_conformer_note("conformer_like", &cf.block, cf.block_diff);
    if (attention) bench_conformer_note("attention_fc", &cf.attention, cf.attention_diff);
    printf("# pinned to CPUs %s (bench, its XNNPACK threads and the daemon)\n", cpus);
    if (prio)
        printf("# threads: HIGH p90 idle %.2f ms (median %.2f), under a LOW flood of another "
               "thread %.2f ms (median %.2f), %llu LOW completed; ratios of %d runs: %.3f %.3f "
               "%.3f\n",
               thr.idle_p90_ns / 1e6, thr.idle_median_ns / 1e6, thr.flood_p90_ns / 1e6,
               thr.flood_median_ns / 1e6, (unsigned long long)thr.low_done, BENCH_THREADS_REPEATS,
               thr.high_runs[0], thr.high_runs[1], thr.high_runs[2]);
    if (rates)
        printf("# threads: on CPU %d, 8 threads %.0f/s, 8 processes %.0f/s; ratios of %d runs: "
               "%.3f %.3f %.3f\n",
               thr.cpu, thr.rate_threads, thr.rate_procs, BENCH_THREADS_REPEATS, thr.rate_runs[0],
               thr.rate_runs[1], thr.rate_runs[2]);
    if (prep) {
        char files[64] = "no cache files saved: over the daemon's save limit";
        if (pr.files_saved) snprintf(files, sizeof files, "%.1f MB of files", pr.file_bytes / 1e6);
        printf("# prepare: %s; cold compile %.2f ms, XNNPACK creation %.2f ms; with its cache "
               "directory (%s) %.2f ms against XNNPACK %.2f ms: %s its bound, a cold compile "
               "on that daemon, %.2f ms (%+.1f%%)\n",
               pr.cold_xnn.shape, pr.cold_xnn.a_ns / 1e6, pr.cold_xnn.b_ns / 1e6, files,
               pr.hit_xnn.a_ns / 1e6, pr.hit_xnn.b_ns / 1e6,
               pr.hit_xnn.a_ns <= pr.hit_cold_ns * (1 + BENCH_PREP_HIT_NOISE) ? "within"
                                                                              : "OUTSIDE",
               pr.hit_cold_ns / 1e6, 100 * (pr.hit_xnn.a_ns / pr.hit_cold_ns - 1));
    }
    if (contend)
        printf("# contention: %d processes for %.0f s each side; through the daemon HIGH p99 %.1f "
               "ms, median %.1f ms (%llu runs), the 3 LOW %llu runs; in process p99 %.1f ms, "
               "median %.1f ms (%llu runs), the 3 others %llu runs\n",
               BENCH_CONTENTION_PROCS, BENCH_CONTENTION_SECONDS, ct.nnd.p99_ns / 1e6,
               ct.nnd.median_ns / 1e6, (unsigned long long)ct.nnd.samples,
               (unsigned long long)ct.nnd.others_done, ct.inproc.p99_ns / 1e6,
               ct.inproc.median_ns / 1e6, (unsigned long long)ct.inproc.samples,
               (unsigned long long)ct.inproc.others_done);
    if (ocl) opencl_note(&oc, ocl_mnet, ocl_fc, ocl_cache, ocl_qos);
    printf("bench: %zu within target, %zu outside\n", within, counted - within);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_opencl_daemon (integration): nnd-opencl (drivers/opencl) behind real daemons that load
 * build/drivers-opencl, on PoCL's CPU device (NND_OPENCL_CPU=1, inherited by the daemon and
 * its driver host), through the NNAPI names of libnnd. Skipped (77) without an OpenCL
 * device. Each client runs in a process of its own (one libnnd connection per daemon).
 * - MobileNet v1 FLOAT32 compiled for nnd-opencl is one partition there (the daemon's
 *   status: one prepare, one partition) and its probabilities are within 1e-4 of the same
 *   network compiled for nnd-reference. Compiled with caching, it saves its blob. The
 *   driver's program binary is kept in the daemon's state directory (opencl/).
 * - A second daemon with the driver's program cache off loads that compilation from its
 *   blob: the driver says it took the program from a cache blob and built none from source,
 *   and the results are right. One whose driver builds with other options refuses the blob
 *   (the driver's own check: the daemon's device version matches) and prepares afresh.
 * - A third daemon whose driver reports another driver version
 *   (NND_OPENCL_TEST_DRIVER_VERSION) and whose first program build fails through a bad
 *   build option (NND_OPENCL_TEST_FAIL_BUILDS=1): the first compilation fails with
 *   OP_FAILED and the build failure in the log; the cached compilation is refused, prepared
 *   afresh (a build from source) and right; a client killed while its executions run on
 *   the device leaves the daemon serving and the device usable (the next compilation on
 *   it is right).
 * Usage: test_opencl_daemon PLUGIN (libnnd_opencl.so; its folder is the drivers dir). */
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nnd/NeuralNetworks.h"
#include "schema/codes.h"
#include "tests/support/driver_probe.h"
#include "tests/support/harness.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"

#define TOLERANCE 1e-4

static char g_drivers[512], g_cache[300], g_state[320], g_log[300];
static bench_net g_net;
static void *g_input;
static float *g_reference; /* shared with the children: nnd-reference's probabilities */
static const uint8_t g_token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {'o', 'c', 'l'};

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const ANeuralNetworksDevice *device_named(const char *want) {
    uint32_t n = 0;
    ANeuralNetworks_getDeviceCount(&n);
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksDevice *d;
        const char *name;
        if (!ANeuralNetworks_getDevice(i, &d) && !ANeuralNetworksDevice_getName(d, &name) &&
            !strcmp(name, want))
            return d;
    }
    return NULL;
}

/* The network compiled for one device (caching in g_cache when cached); the finish status,
 * the compilation in *out when it is 0. */
static int compile(ANeuralNetworksModel *m, const char *device, bool cached,
                   ANeuralNetworksCompilation **out) {
    const ANeuralNetworksDevice *d = device_named(device);
    *out = NULL;
    if (!d) return -1;
    ANeuralNetworksCompilation *c;
    int rc = ANeuralNetworksCompilation_createForDevices(m, &d, 1, &c);
    if (rc) return rc;
    if (cached && (rc = ANeuralNetworksCompilation_setCaching(c, g_cache, g_token))) return rc;
    if ((rc = ANeuralNetworksCompilation_finish(c))) {
        ANeuralNetworksCompilation_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int run(ANeuralNetworksCompilation *c, float *out) {
    ANeuralNetworksExecution *e;
    int rc = ANeuralNetworksExecution_create(c, &e);
    if (rc) return rc;
    if (!(rc = ANeuralNetworksExecution_setInput(e, 0, NULL, g_input,
                                                 g_net.in_elems * g_net.elem_size)) &&
        !(rc = ANeuralNetworksExecution_setOutput(e, 0, NULL, out,
                                                  g_net.out_elems * g_net.elem_size)))
        rc = ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    return rc;
}

/* Compiles for nnd-opencl, runs once and compares with g_reference; 0 when right. */
static int opencl_right(ANeuralNetworksModel *m, bool cached, const char *what) {
    float *got = calloc(g_net.out_elems, sizeof *got);
    ANeuralNetworksCompilation *c;
    double t0 = now_s();
    int rc = compile(m, "nnd-opencl", cached, &c);
    double t1 = now_s();
    CHECK(got && !rc, "%s: compilation for nnd-opencl: %d", what, rc);
    CHECK(!(rc = run(c, got)), "%s: compute on nnd-opencl: %d", what, rc);
    double worst = 0;
    for (size_t i = 0; i < g_net.out_elems; i++)
        worst = fmax(worst, fabs((double)got[i] - g_reference[i]));
    printf("%s: compiled in %.2f s, executed in %.2f s; differs from nnd-reference by %.3g at "
           "most\n",
           what, t1 - t0, now_s() - t1, worst);
    CHECK(worst <= TOLERANCE, "%s: differs from nnd-reference by %g", what, worst);
    ANeuralNetworksCompilation_free(c);
    free(got);
    return 0;
}

/* A device's counter in the daemon's status; -1 when missing. */
static double device_figure(const tst_daemon *d, const char *device, const char *field) {
    (void)d; /* its state directory is g_state */
    cJSON *status = tst_admin(g_state, "status");
    double v = tst_status_device_figure(status, device, field);
    cJSON_Delete(status);
    return v;
}

/* Phase 1: MobileNet as one partition on nnd-opencl, against nnd-reference; saved. */
static int one_partition(const tst_daemon *d) {
    ANeuralNetworksModel *m = bench_nnapi_model(&g_net);
    ANeuralNetworksCompilation *c;
    CHECK(m, "model");
    double t0 = now_s();
    CHECK(!compile(m, "nnd-reference", false, &c), "compilation for nnd-reference");
    CHECK(!run(c, g_reference), "compute on nnd-reference");
    printf("nnd-reference: compiled and executed in %.2f s\n", now_s() - t0);
    ANeuralNetworksCompilation_free(c);
    double prepares = device_figure(d, "nnd-opencl", "prepares");
    double parts = device_figure(d, "nnd-opencl", "partitions");
    if (opencl_right(m, true, "MobileNet v1 FLOAT32 on nnd-opencl")) return 1;
    double dp = device_figure(d, "nnd-opencl", "prepares") - prepares;
    double dq = device_figure(d, "nnd-opencl", "partitions") - parts;
    printf("nnd-opencl: %g prepare, %g partition\n", dp, dq);
    CHECK(prepares >= 0 && dp == 1 && dq == 1, "%g prepares, %g partitions on nnd-opencl", dp, dq);
    ANeuralNetworksModel_free(m);
    return 0;
}

/* Phase 2: the cached compilation from its blob. */
static int from_blob(void) {
    ANeuralNetworksModel *m = bench_nnapi_model(&g_net);
    CHECK(m, "model");
    if (opencl_right(m, true, "from the cache blob")) return 1;
    ANeuralNetworksModel_free(m);
    return 0;
}

/* Phase 3: a failed build, then the cached compilation refused and prepared afresh. */
static int refused_and_afresh(void) {
    ANeuralNetworksModel *m = bench_nnapi_model(&g_net);
    ANeuralNetworksCompilation *c;
    CHECK(m, "model");
    /* The daemon's message reaches the client: libnnd prints it with NND_DEBUG=1. */
    char path[340];
    snprintf(path, sizeof path, "%s.client", g_log);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0 && dup2(fd, 2) == 2, "redirect");
    setenv("NND_DEBUG", "1", 1);
    int rc = compile(m, "nnd-opencl", false, &c);
    unsetenv("NND_DEBUG");
    dup2(saved, 2);
    close(saved), close(fd);
    size_t len = 0;
    char *said = (char *)tst_read_file(path, &len);
    unlink(path);
    printf("compilation with the injected build failure: %d, %s", rc, said ? said : "(nothing)\n");
    CHECK(rc == ANEURALNETWORKS_OP_FAILED, "the injected build failure gave %d", rc);
    CHECK(said && strstr(said, "OpenCL program build failed") &&
              strstr(said, "-cl-nnd-test-invalid-option"),
          "the client was not told why");
    free(said);
    if (opencl_right(m, true, "cached by another driver version, prepared afresh")) return 1;
    ANeuralNetworksModel_free(m);
    return 0;
}

/* The victim of phase 3: executes on nnd-opencl until killed; says when it starts. */
static void victim(int ready) {
    ANeuralNetworksModel *m = bench_nnapi_model(&g_net);
    ANeuralNetworksCompilation *c;
    float *out = calloc(g_net.out_elems, sizeof *out);
    if (!m || !out || compile(m, "nnd-opencl", false, &c)) _exit(3);
    if (write(ready, "x", 1) != 1) _exit(3);
    for (;;)
        if (run(c, out)) _exit(4);
}

static int after_kill(void) {
    ANeuralNetworksModel *m = bench_nnapi_model(&g_net);
    CHECK(m, "model");
    if (opencl_right(m, false, "the next compilation after the kill")) return 1;
    ANeuralNetworksModel_free(m);
    return 0;
}

/* Runs fn in a child connected to d; its exit status. */
static int in_child(const tst_daemon *d, int (*fn)(const tst_daemon *)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("NND_SOCKET", d->socket_path, 1);
        int rc = fn(d);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int phase1(const tst_daemon *d) {
    return one_partition(d);
}
static int phase2(const tst_daemon *d) {
    (void)d;
    return from_blob();
}
static int phase3(const tst_daemon *d) {
    (void)d;
    return refused_and_afresh();
}
static int phase4(const tst_daemon *d) {
    (void)d;
    return after_kill();
}

/* How many lines of the daemon's log contain needle. */
static int log_lines(const char *needle) {
    size_t len = 0;
    char *text = (char *)tst_read_file(g_log, &len);
    int n = 0;
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        if (strstr(line, needle)) n++;
        line = end ? end + 1 : NULL;
    }
    free(text);
    return n;
}

/* A daemon on the opencl drivers dir with these test hooks, its log fresh. */
static int start(tst_daemon *d, const char *program_cache, const char *version,
                 const char *fail_builds) {
    unlink(g_log);
    if (program_cache)
        setenv("NND_OPENCL_CACHE_DIR", program_cache, 1);
    else
        unsetenv("NND_OPENCL_CACHE_DIR"); /* the daemon's state directory keeps it */
    if (version) setenv("NND_OPENCL_TEST_DRIVER_VERSION", version, 1);
    if (fail_builds) setenv("NND_OPENCL_TEST_FAIL_BUILDS", fail_builds, 1);
    /* MobileNet's weights and the program binary are over the default save limit. */
    /* One state directory for the three: the daemon's cache index knows the compilation
     * the first one saved. */
    const char *args[] = {"--drivers-dir",          g_drivers,   "--state-dir", g_state,
                          "--cache-save-max-bytes", "268435456", NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = g_log};
    int rc = tst_daemon_start_opts(d, &o);
    unsetenv("NND_OPENCL_TEST_DRIVER_VERSION");
    unsetenv("NND_OPENCL_TEST_FAIL_BUILDS");
    return rc;
}

static void show_log(void) {
    size_t len = 0;
    char *text = (char *)tst_read_file(g_log, &len);
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        if (strstr(line, "nnd-opencl") || strstr(line, "cache")) printf("  log: %s\n", line);
        line = end ? end + 1 : NULL;
    }
    free(text);
}

static int kill_mid_execution(tst_daemon *d) {
    int p[2];
    CHECK(!pipe(p), "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        setenv("NND_SOCKET", d->socket_path, 1);
        victim(p[1]);
    }
    close(p[1]);
    char x;
    CHECK(pid > 0 && read(p[0], &x, 1) == 1, "the victim did not start executing");
    close(p[0]);
    usleep(300 * 1000); /* its executions are on the device */
    double execs = device_figure(d, "nnd-opencl", "executions");
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    printf("client killed after %g executions on nnd-opencl had started\n", execs);
    CHECK(WIFSIGNALED(st), "the victim ended by itself (%d)", st);
    CHECK(execs >= 1, "no execution had started on nnd-opencl");
    CHECK(in_child(d, phase4) == 0, "after the kill");
    CHECK(device_figure(d, "nnd-opencl", "disabled") != 1, "status");
    return 0;
}

static int phases(void) {
    tst_daemon d;
    double t0 = now_s();
    CHECK(!start(&d, NULL, NULL, NULL), "daemon 1");
    int rc = in_child(&d, phase1);
    show_log();
    CHECK(!tst_daemon_stop(&d) && rc == 0, "one partition (%d)", rc);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %s/opencl/*.bin >/dev/null 2>&1", g_state);
    CHECK(system(cmd) == 0, "no program binary in the daemon's state directory");
    printf("# one partition: %.1f s\n", now_s() - t0);

    t0 = now_s();
    CHECK(!start(&d, "off", NULL, NULL), "daemon 2");
    rc = in_child(&d, phase2);
    show_log();
    CHECK(!tst_daemon_stop(&d) && rc == 0, "from the blob (%d)", rc);
    CHECK(log_lines("program from a cache blob") == 1, "the program did not come from the blob");
    CHECK(log_lines("built from source") == 0, "a program was built from source");
    printf("# from the blob: %.1f s\n", now_s() - t0);

    /* Other build options: the daemon's version check passes, the driver refuses the blob
     * (its key differs) and the daemon prepares afresh. */
    t0 = now_s();
    setenv("NND_OPENCL_BUILD_OPTIONS", "-DNND_TEST_OTHER_BUILD=1", 1);
    rc = start(&d, "off", NULL, NULL);
    unsetenv("NND_OPENCL_BUILD_OPTIONS");
    CHECK(!rc, "daemon 2b");
    rc = in_child(&d, phase2);
    show_log();
    CHECK(!tst_daemon_stop(&d) && rc == 0, "blob refused by the driver (%d)", rc);
    CHECK(log_lines("cache blob made for this device with other kernels or build options") == 1,
          "the driver's refusal is not in the log");
    CHECK(log_lines("program from a cache blob") == 0, "a blob of other options was taken");
    CHECK(log_lines("built from source") == 1, "not prepared afresh");
    printf("# blob refused by the driver: %.1f s\n", now_s() - t0);

    t0 = now_s();
    CHECK(!start(&d, "off", "another-release", "1"), "daemon 3");
    rc = in_child(&d, phase3);
    show_log();
    CHECK(rc == 0, "refused and prepared afresh (%d)", rc);
    CHECK(log_lines("OpenCL program build failed") >= 1, "no build failure in the log");
    CHECK(log_lines("program from a cache blob") == 0, "a blob of another version was taken");
    CHECK(log_lines("built from source") == 1, "not prepared afresh");
    printf("# failed build, refused blob: %.1f s\n", now_s() - t0);
    t0 = now_s();
    rc = kill_mid_execution(&d);
    CHECK(!tst_daemon_stop(&d) && rc == 0, "kill mid-execution (%d)", rc);
    printf("# killed client: %.1f s\n", now_s() - t0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_opencl_daemon PLUGIN\n");
        return 2;
    }
    setenv("NND_OPENCL_CPU", "1", 1);
    int found = tst_driver_probe(argv[1]);
    if (found <= 0) {
        printf("%s: %s\n", argv[1], found ? "cannot be probed" : "no OpenCL device: skipped");
        return found ? 1 : 77;
    }
    snprintf(g_drivers, sizeof g_drivers, "%s", argv[1]);
    dirname(g_drivers);
    int pid = (int)getpid();
    snprintf(g_cache, sizeof g_cache, "/tmp/test-opencl-daemon-%d", pid);
    snprintf(g_log, sizeof g_log, "/tmp/test-opencl-daemon-%d.log", pid);
    snprintf(g_state, sizeof g_state, "%s/state", g_cache);
    g_reference = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g_reference == MAP_FAILED || mkdir(g_cache, 0700)) return 2;
    if (bench_net_init(&g_net, SCHEMA_TENSOR_FLOAT32) || !(g_input = bench_net_input(&g_net)))
        return 2;
    int rc = phases();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache);
    if (system(cmd)) rc = 1;
    unlink(g_log);
    bench_net_free(&g_net);
    free(g_input);
    printf("test_opencl_daemon: %s\n", rc ? "FAILED" : "passed");
    return rc ? 1 : 0;
}

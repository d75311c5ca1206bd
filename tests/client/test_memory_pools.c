/* SPDX-License-Identifier: Apache-2.0 */
/* test_memory_pools: pools by kind through a real daemon and libnnd: weights mapped from a
 * read-only file, arguments at odd offsets in one shared memfd, short and read-only pools,
 * dma-buf where the machine has it (memory_common.h: the daemon and the requests). */
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/client/memory_common.h"

static void test_weights_from_readonly_file(void **state) {
    (void)state;
    char path[] = "/tmp/nnd-weights-XXXXXX";
    int wfd = mkstemp(path);
    assert_true(wfd >= 0);
    /* 100 bytes of header, then the weights: the pool starts off any page boundary. */
    char header[100];
    memset(header, 0x7f, sizeof header);
    float w[N];
    for (int i = 0; i < N; i++)
        w[i] = 0.5f * (float)i;
    assert_int_equal(write(wfd, header, sizeof header), (ssize_t)sizeof header);
    assert_int_equal(write(wfd, w, sizeof w), (ssize_t)sizeof w);
    close(wfd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(ro >= 0);
    unlink(path);

    nnd_client *c = connect_client("weights");
    wire_add_model m;
    wire_add_model_init_n(&m, N, 0);
    m.pool.kind = NND__POOL_KIND__POOL_MMAP_FD;
    m.pool.offset = sizeof header;
    m.pool.size = sizeof w;
    uint64_t h = prepare(c, &m, &ro, 1);

    int io = float_memfd(2 * N, 1.0f, 1.0f); /* input [1..N], output after it */
    req q;
    req_init(&q);
    uint32_t pool = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, 0, 2 * N * 4, 0);
    req_arg(&q, false, pool, 0, N * 4, NULL, 0);
    req_arg(&q, true, pool, N * 4, N * 4, NULL, 0);
    execute_expect(c, h, &q, &io, 1, 0, NULL);
    expect_floats(io, N * 4, N, 1.0f, 1.5f); /* (1 + i) + 0.5 i */

    /* The weights file is too short for the pool. */
    char err[512];
    uint64_t h2 = 0;
    m.pool.size = sizeof w + 4;
    int st = nnd_client_prepare(c, &m.model, &ro, 1, 0, 0, 0, &h2, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end", "short weights");
    /* A pipe cannot be mapped: GENERAL_FAILURE at prepare. */
    int pfd[2];
    assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
    m.pool.size = sizeof w;
    st = nnd_client_prepare(c, &m.model, &pfd[0], 1, 0, 0, 0, &h2, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__GENERAL_FAILURE, "cannot be mapped", "pipe");
    close(pfd[0]);
    close(pfd[1]);

    /* The read-only weights fd as an execution's output pool is refused. */
    int two[2] = {io, ro};
    req_init(&q);
    uint32_t in = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    uint32_t out = req_pool(&q, NND__POOL_KIND__POOL_MMAP_FD, 1, sizeof header, N * 4, 0);
    req_arg(&q, false, in, 0, N * 4, NULL, 0);
    req_arg(&q, true, out, 0, N * 4, NULL, 0);
    execute_expect(c, h, &q, two, 2, NND__ERROR_STATUS__INVALID_ARGUMENT, "read-only");
    /* As an input it is fine. */
    q.locs[1].pool_index = in;
    q.locs[0].pool_index = out;
    int io2 = nnd_memfd_create("out", N * 4, NULL);
    two[0] = io2;
    execute_expect(c, h, &q, two, 2, 0, NULL);
    expect_floats(io2, 0, N, 0.0f, 1.0f); /* w + w */
    close(io2);

    /* A memfd sealed against writes is input-only too. */
    int sealed = memfd_create("sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(sealed >= 0);
    assert_int_equal(ftruncate(sealed, N * 4), 0);
    assert_int_equal(fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW), 0);
    two[0] = io;
    two[1] = sealed;
    q.locs[0].pool_index = in;
    q.locs[1].pool_index = out;
    q.pools[out].kind = NND__POOL_KIND__POOL_MEMFD;
    q.pools[out].offset = 0;
    execute_expect(c, h, &q, two, 2, NND__ERROR_STATUS__INVALID_ARGUMENT, "read-only");
    close(sealed);
    close(io);
    close(ro);
    nnd_client_close(c);
}

static void test_offsets_in_one_memfd(void **state) {
    (void)state;
    nnd_client *c = connect_client("offsets");
    wire_add_model m;
    wire_add_model_init_n(&m, N, -1);
    uint64_t h = prepare(c, &m, NULL, 0);
    /* One 64 KiB memfd; the pool starts 4096 + 256 bytes in; a at 64, b at 8196, out at
     * 16396 inside the pool: no argument on a page boundary. */
    float *map;
    int fd = nnd_memfd_create("shared", 65536, (void **)&map);
    assert_true(fd >= 0);
    const uint64_t base = 4096 + 256, a_off = 64, b_off = 8196, o_off = 16396;
    for (int i = 0; i < N; i++) {
        map[(base + a_off) / 4 + i] = (float)i;
        map[(base + b_off) / 4 + i] = 100.0f;
    }
    req q;
    req_init(&q);
    uint32_t pool = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, base, 32768, 0);
    req_arg(&q, false, pool, a_off, N * 4, NULL, 0);
    req_arg(&q, false, pool, b_off, N * 4, NULL, 0);
    req_arg(&q, true, pool, o_off, N * 4, NULL, 0);
    execute_expect(c, h, &q, &fd, 1, 0, NULL);
    expect_floats(fd, base + o_off, N, 100.0f, 1.0f);
    /* Nothing outside the output was written. */
    assert_true(map[(base + o_off) / 4 - 1] == 0.0f && map[(base + o_off) / 4 + N] == 0.0f);

    /* The same pool, now longer than its memfd: refused before anything runs. */
    q.pools[pool].size = 65536;
    execute_expect(c, h, &q, &fd, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    /* A location running past its pool. */
    q.pools[pool].size = 32768;
    q.locs[2].offset = 32768 - 8;
    execute_expect(c, h, &q, &fd, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    munmap(map, 65536);
    close(fd);
    nnd_client_close(c);
}

static void test_dmabuf(void **state) {
    (void)state;
    nnd_client *c = connect_client("dmabuf");
    char err[512];
    Nnd__Capabilities *caps = NULL;
    assert_int_equal(nnd_client_get_capabilities(c, &caps, err, sizeof err), 0);
    int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
    assert_int_equal(caps->dma_buf_supported, heap >= 0);
    nnd__capabilities__free_unpacked(caps, NULL);
    wire_add_model m;
    wire_add_model_init_n(&m, N, -1);
    uint64_t h = prepare(c, &m, NULL, 0);
    req q;
    req_init(&q);
    uint32_t pool = req_pool(&q, NND__POOL_KIND__POOL_DMABUF, 0, 0, 3 * N * 4, 0);
    req_arg(&q, false, pool, 0, N * 4, NULL, 0);
    req_arg(&q, false, pool, N * 4, N * 4, NULL, 0);
    req_arg(&q, true, pool, 2 * N * 4, N * 4, NULL, 0);
    if (heap < 0) {
        /* No dma-buf heap here: refused cleanly. */
        int fd = float_memfd(3 * N, 0, 1);
        execute_expect(c, h, &q, &fd, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "dma-buf");
        close(fd);
        nnd_client_close(c);
        return;
    }
    struct dma_heap_allocation_data alloc = {.len = 4096 * 4, .fd_flags = O_RDWR | O_CLOEXEC};
    assert_int_equal(ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc), 0);
    close(heap);
    int buf = (int)alloc.fd;
    float *p = mmap(NULL, 3 * N * 4, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
    assert_true(p != MAP_FAILED);
    for (int i = 0; i < N; i++)
        p[i] = (float)i, p[N + i] = 2.0f;
    execute_expect(c, h, &q, &buf, 1, 0, NULL);
    for (int i = 0; i < N; i++)
        assert_true(p[2 * N + i] == (float)i + 2.0f);
    /* A memfd is not a dma-buf. */
    int fd = float_memfd(3 * N, 0, 1);
    execute_expect(c, h, &q, &fd, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "not a dma-buf");
    close(fd);
    munmap(p, 3 * N * 4);
    close(buf);
    nnd_client_close(c);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_from_readonly_file),
        cmocka_unit_test(test_offsets_in_one_memfd),
        cmocka_unit_test(test_dmabuf),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, memory_group_setup, tst_group_teardown);
}

/* The least a ring loop can do for random cached reads, as the yardstick for
 * `uringkit bench --engines uring`'s own cost per I/O: liburing, the same
 * setup flags as bench's uring engine (SINGLE_ISSUER, DEFER_TASKRUN,
 * TASKRUN_FLAG, a registered ring fd), DEPTH reads in flight, one
 * io_uring_submit_and_wait(DEPTH) per turn, every completion reaped and its
 * slot refilled at a new random block.  No clock read per I/O, no histogram,
 * no verification: only a check that each read was whole.
 *
 *   bare_read_loop FILE [DEPTH=32] [SECONDS=2] [BS=4096]
 *
 * Prints one line: "ios_per_s N ios N seconds S".  Exit status 1 on any
 * error (named on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* xorshift64*: cheap, and the same distribution as any uniform draw. */
static uint64_t next_random(uint64_t* s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bare_read_loop FILE [DEPTH] [SECONDS] [BS]\n");
        return 2;
    }
    const unsigned depth = argc > 2 ? (unsigned)atoi(argv[2]) : 32;
    const double seconds = argc > 3 ? atof(argv[3]) : 2.0;
    const unsigned bs = argc > 4 ? (unsigned)atoi(argv[4]) : 4096;
    if (depth == 0 || depth > 4096 || seconds <= 0 || bs == 0) {
        fprintf(stderr, "bare_read_loop: bad DEPTH, SECONDS or BS\n");
        return 2;
    }
    const int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "bare_read_loop: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    const uint64_t blocks = (uint64_t)st.st_size / bs;
    if (blocks == 0) {
        fprintf(stderr, "bare_read_loop: %s: smaller than one block\n", argv[1]);
        return 1;
    }

    struct io_uring ring;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    int ret = io_uring_queue_init_params(depth, &ring, &p);
    if (ret < 0) {
        fprintf(stderr, "bare_read_loop: io_uring_queue_init_params: %s\n", strerror(-ret));
        return 1;
    }
    ret = io_uring_register_ring_fd(&ring);
    if (ret < 0) {
        fprintf(stderr, "bare_read_loop: io_uring_register_ring_fd: %s\n", strerror(-ret));
        return 1;
    }
    unsigned char* buffers = NULL;
    if (posix_memalign((void**)&buffers, 4096, (size_t)depth * bs) != 0) return 1;
    memset(buffers, 0, (size_t)depth * bs);

    uint64_t seed = 0x9e3779b97f4a7c15ull;
    uint64_t ios = 0;
    const uint64_t start = now_ns();
    const uint64_t deadline = start + (uint64_t)(seconds * 1e9);
    unsigned inflight = 0;
    int issuing = 1;
    /* Every slot starts free; after that a completion's user_data is its slot. */
    unsigned free_slots[4096];
    unsigned nfree = depth;
    for (unsigned i = 0; i < depth; ++i) free_slots[i] = i;
    for (;;) {
        while (issuing && nfree > 0) {
            const unsigned s = free_slots[--nfree];
            struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
            const uint64_t off = (next_random(&seed) % blocks) * bs;
            io_uring_prep_read(sqe, fd, buffers + (size_t)s * bs, bs, off);
            io_uring_sqe_set_data64(sqe, s);
            ++inflight;
        }
        if (inflight == 0) break;
        ret = io_uring_submit_and_wait(&ring, inflight < depth ? inflight : depth);
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
            fprintf(stderr, "bare_read_loop: io_uring_submit_and_wait: %s\n", strerror(-ret));
            return 1;
        }
        struct io_uring_cqe* cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            if (cqe->res != (int)bs) {
                fprintf(stderr, "bare_read_loop: read returned %d\n", cqe->res);
                return 1;
            }
            free_slots[nfree++] = (unsigned)cqe->user_data;
            ++seen;
        }
        io_uring_cq_advance(&ring, seen);
        inflight -= seen;
        ios += seen;
        /* One clock read per turn, as bench's deadline check. */
        if (issuing && now_ns() >= deadline) issuing = 0;
    }
    const double elapsed = (double)(now_ns() - start) / 1e9;
    printf("ios_per_s %.0f ios %llu seconds %.3f\n", (double)ios / elapsed, (unsigned long long)ios,
           elapsed);
    io_uring_queue_exit(&ring);
    free(buffers);
    return 0;
}

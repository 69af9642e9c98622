/* uring_tail.c - why outld appends its op log, and drains a pass of one file, with plain syscalls
 * even when it has an io_uring ring: the same operations timed both ways, interleaved, in one
 * directory. An fdatasync or an unlinkat on io_uring always runs on a kernel io-wq worker thread, so
 * each adds two wake-ups (to the worker, back to the caller): with nothing to overlap that is only
 * cost, and with every core busy the worker waits for one. Printed: append+fdatasync of one op line
 * (quiet, then with every core busy), and unlinkat of 1, 2, 4, 6 and 16 files already on disk
 * (outld unlinks a pass of one file with plain syscalls: ringFromFiles).
 * Usage: uring_tail DIR [ROUNDS]. Needs liburing. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static long pct(long *v, int n, int p) {
    qsort(v, n, sizeof *v, by_value);
    int i = n * p / 100;
    return v[i < n ? i : n - 1] / 1000;
}

static void wait_all(struct io_uring *ring, int n) {
    for (int i = 0; i < n; i++) {
        struct io_uring_cqe *cqe = NULL;
        if (io_uring_wait_cqe(ring, &cqe) != 0 || cqe->res < 0) {
            fprintf(stderr, "uring_tail: io_uring op failed: %d\n", cqe ? cqe->res : -1);
            exit(1);
        }
        io_uring_cqe_seen(ring, cqe);
    }
}

/* One op line appended and made durable, `rounds` times each way, alternating which goes first. */
static void appends(const char *label, struct io_uring *ring, int fd, int rounds) {
    char line[300];
    memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    long *plain = calloc(rounds, sizeof *plain), *uring = calloc(rounds, sizeof *uring);
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 2; k++) {
            int on_ring = (k == 0) == (i % 2 == 0);
            long t0 = now_ns();
            if (!on_ring) {
                if (write(fd, line, sizeof line) != (ssize_t)sizeof line || fdatasync(fd) != 0) { perror("append"); exit(1); }
                plain[i] = now_ns() - t0;
            } else {
                struct io_uring_sqe *w = io_uring_get_sqe(ring);
                io_uring_prep_write(w, fd, line, sizeof line, (__u64)-1);
                w->flags |= IOSQE_IO_LINK;
                io_uring_prep_fsync(io_uring_get_sqe(ring), fd, IORING_FSYNC_DATASYNC);
                io_uring_submit_and_wait(ring, 2);
                wait_all(ring, 2);
                uring[i] = now_ns() - t0;
            }
        }
        usleep(5000);
    }
    long p50 = pct(plain, rounds, 50), p99 = pct(plain, rounds, 99);
    long r50 = pct(uring, rounds, 50), r99 = pct(uring, rounds, 99);
    printf("append+fdatasync, %-16s plain p50 %5ld us p99 %5ld us | io_uring p50 %5ld us p99 %5ld us (p99 %.1fx)\n",
           label, p50, p99, r50, r99, p99 ? (double)r99 / p99 : 0);
    free(plain);
    free(uring);
}

/* `k` files written and synced, then unlinked together: plain one after another, or all on the ring. */
static void unlinks(int dfd, struct io_uring *ring, int k, int rounds) {
    long *plain = calloc(rounds, sizeof *plain), *uring = calloc(rounds, sizeof *uring);
    char names[16][32];
    for (int i = 0; i < rounds; i++) {
        for (int on_ring = 0; on_ring < 2; on_ring++) {
            for (int j = 0; j < k; j++) {
                snprintf(names[j], sizeof names[j], "u-%d-%d-%d", i, on_ring, j);
                int f = openat(dfd, names[j], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                if (f < 0 || write(f, "{\"text\":\"x\"}", 12) != 12) { perror("create"); exit(1); }
                close(f);
            }
            syncfs(dfd);
            long t0 = now_ns();
            if (!on_ring) {
                for (int j = 0; j < k; j++) unlinkat(dfd, names[j], 0);
                plain[i] = now_ns() - t0;
            } else {
                for (int j = 0; j < k; j++) io_uring_prep_unlinkat(io_uring_get_sqe(ring), dfd, names[j], 0);
                io_uring_submit_and_wait(ring, k);
                wait_all(ring, k);
                uring[i] = now_ns() - t0;
            }
        }
    }
    long p50 = pct(plain, rounds, 50), r50 = pct(uring, rounds, 50);
    printf("unlinkat of %2d file%s on disk      plain p50 %5ld us           | io_uring p50 %5ld us            (%.2fx)\n",
           k, k == 1 ? " " : "s", p50, r50, p50 ? (double)r50 / p50 : 0);
    free(plain);
    free(uring);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: uring_tail DIR [ROUNDS]\n"); return 64; }
    int rounds = argc > 2 ? atoi(argv[2]) : 300;
    char path[4096];
    snprintf(path, sizeof path, "%s/uring-tail-ops.log", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct io_uring ring;
    if (fd < 0 || dfd < 0) { perror(argv[1]); return 1; }
    if (io_uring_queue_init(64, &ring, 0) != 0) { printf("uring_tail: no io_uring here, nothing to compare\n"); return 0; }
    appends("quiet:", &ring, fd, rounds);
    /* Every core busy, as on a shared machine or a desktop compiling something. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t spin[64];
    int spinning = 0;
    pid_t self = getpid();
    for (; spinning < cores && spinning < 64; spinning++) {
        if ((spin[spinning] = fork()) == 0) {
            // A spinner never outlives this program, whatever ends it (an exit(1) above, ^C).
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != self) _exit(0);
            alarm(120);
            for (;;) {}
        }
    }
    appends("all cores busy:", &ring, fd, rounds);
    for (int i = 0; i < spinning; i++) { kill(spin[i], SIGKILL); waitpid(spin[i], NULL, 0); }
    int counts[] = {1, 2, 4, 6, 16};
    for (int i = 0; i < 5; i++) unlinks(dfd, &ring, counts[i], rounds / 10 > 20 ? rounds / 10 : 20);
    unlink(path);
    return 0;
}

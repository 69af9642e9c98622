/* floor.c - the durable-write floor: the same syscalls outl uses, in C, timed per iteration.
 * "append": write one op-sized line to an O_APPEND log and fdatasync it (the drain's commit).
 * "publish": temp file, write, fsync, rename, fsync dir (the writer's step: a small file, a new name).
 * "page" (with BYTES and TEMPDIR): a page of BYTES written as the projection writes it: temp file in
 * TEMPDIR, write, fsync, rename over the page's existing file in DIR, fsync DIR.
 * "delivered" (with DELIVERY, a file): the same page write, each right after DELIVERY is rewritten
 * and renamed over itself as Syncthing delivers a grown op log (untimed), as in bench/merge.sh.
 * Prints p50 and p99 in microseconds for each, to sit beside outld's figures in one run (and, with
 * FLOOR_SAMPLES set, every sample).
 * Usage: floor DIR [N [BYTES TEMPDIR [DELIVERY]]] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, long long *t, int n) {
    /* FLOOR_SAMPLES=1: every sample too, for a caller that pools several runs (bench/drain.sh
     * interleaves runs of 20 with outld's captures, so both meet the same moments of a shared disk). */
    if (getenv("FLOOR_SAMPLES"))
        for (int i = 0; i < n; i++) printf("sample %s %lld\n", name, t[i]);
    qsort(t, n, sizeof *t, cmp);
    printf("floor %-8s p50 %6lld us  p99 %6lld us  (n=%d)\n", name, t[n / 2], t[(n * 99) / 100], n);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    int n = argc > 2 ? atoi(argv[2]) : 200;
    long long *t = calloc(n, sizeof *t);
    char path[4096], tmp[4096];
    const char line[] = "{\"k\":\"block\",\"id\":\"0190c6a2-7b3e-7f00-8000-000000000000\",\"text\":\"buy oat milk\"}\n";

    snprintf(path, sizeof path, "%s/floor-ops.jsonl", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) { perror("open"); return 1; }
    for (int i = 0; i < n; i++) {
        long long s = now_us();
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1) || fdatasync(fd) != 0) { perror("append"); return 1; }
        t[i] = now_us() - s;
    }
    close(fd);
    report("append", t, n);

    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < n; i++) {
        long long s = now_us();
        snprintf(tmp, sizeof tmp, "%s/floor.%d.tmp", dir, i);
        snprintf(path, sizeof path, "%s/floor.%d.json", dir, i);
        int f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (f < 0 || write(f, line, sizeof line - 1) < 0 || fsync(f) != 0 || close(f) != 0 ||
            rename(tmp, path) != 0 || fsync(dfd) != 0) { perror("publish"); return 1; }
        t[i] = now_us() - s;
        unlink(path);
    }
    report("publish", t, n);
    if (argc > 4) {
        size_t bytes = (size_t)atol(argv[3]);
        const char *tempdir = argv[4];
        char *page = malloc(bytes ? bytes : 1);
        for (size_t k = 0; k < bytes; k++) page[k] = k % 64 == 63 ? '\n' : 'a' + k % 26;
        snprintf(path, sizeof path, "%s/floor-page.md", dir);
        snprintf(tmp, sizeof tmp, "%s/floor-page.md.tmp", tempdir);
        int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f < 0 || write(f, page, bytes) != (ssize_t)bytes || close(f) != 0) { perror("page"); return 1; }
        for (int i = 0; i < n; i++) {
            long long s = now_us();
            f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (f < 0 || write(f, page, bytes) != (ssize_t)bytes || fsync(f) != 0 || close(f) != 0 ||
                rename(tmp, path) != 0 || fsync(dfd) != 0) { perror("page"); return 1; }
            t[i] = now_us() - s;
        }
        report("page", t, n);
        if (argc > 5) {
            /* The same page write, each right after a delivery as bench/merge.sh makes one: the op
             * log at DELIVERY rewritten whole (temp, write, fsync, rename over it, as Syncthing
             * does). The replaced file's blocks are freed and, with ext4's discard, trimmed at the
             * next journal commit, which the page's own fsync then waits on: that cost is the
             * delivery's, and this floor pays it too. */
            const char *delivery = argv[5];
            char dtmp[4096];
            snprintf(dtmp, sizeof dtmp, "%s.floor-delivery.tmp", delivery);
            int d = open(delivery, O_RDONLY | O_CLOEXEC);
            off_t dbytes = d < 0 ? -1 : lseek(d, 0, SEEK_END);
            char *log = dbytes > 0 ? malloc((size_t)dbytes) : NULL;
            if (!log || pread(d, log, (size_t)dbytes, 0) != dbytes) { perror("delivery"); return 1; }
            close(d);
            for (int i = 0; i < n; i++) {
                d = open(dtmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (d < 0 || write(d, log, (size_t)dbytes) != dbytes || fsync(d) != 0 || close(d) != 0 ||
                    rename(dtmp, delivery) != 0) { perror("delivery"); return 1; }
                long long s = now_us();
                f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (f < 0 || write(f, page, bytes) != (ssize_t)bytes || fsync(f) != 0 || close(f) != 0 ||
                    rename(tmp, path) != 0 || fsync(dfd) != 0) { perror("page"); return 1; }
                t[i] = now_us() - s;
            }
            free(log);
            report("delivered", t, n);
        }
        unlink(path);
    }
    return 0;
}

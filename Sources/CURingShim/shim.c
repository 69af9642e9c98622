// CURingShim: liburing's inline functions and macros as plain functions over an opaque ring
// (the swift-nio CNIOLinux habit). See the header for why Swift does not include liburing itself.
#define _GNU_SOURCE
#include "CURingShim.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>

struct CURingShim_Ring {
    struct io_uring ring;
};

static int supports_outl_ops(struct io_uring *ring) {
    struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
    if (!probe) return 0;  // liburing 2.3 gives no reason; treat an unprobeable kernel as too old
    int ok = io_uring_opcode_supported(probe, IORING_OP_READ)
          && io_uring_opcode_supported(probe, IORING_OP_UNLINKAT);
    io_uring_free_probe(probe);
    return ok;
}

int CURingShim_create(unsigned entries, CURingShim_Ring **out) {
    CURingShim_Ring *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    int e = io_uring_queue_init(entries, &r->ring, 0);
    if (e < 0) { free(r); return e; }
    if (!supports_outl_ops(&r->ring)) {
        io_uring_queue_exit(&r->ring);
        free(r);
        return -EINVAL;
    }
    *out = r;
    return 0;
}

void CURingShim_destroy(CURingShim_Ring *r) {
    io_uring_queue_exit(&r->ring);
    free(r);
}

int CURingShim_queueRead(CURingShim_Ring *r, int fd, void *buf, unsigned len, uint64_t offset,
                         uint64_t userData) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_read(sqe, fd, buf, len, offset);
    io_uring_sqe_set_data64(sqe, userData);
    return 0;
}

int CURingShim_queueUnlinkAt(CURingShim_Ring *r, int dirfd, const char *name, uint64_t userData) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_unlinkat(sqe, dirfd, name, 0);
    io_uring_sqe_set_data64(sqe, userData);
    return 0;
}

int CURingShim_submitAndWait(CURingShim_Ring *r, unsigned waitNr) {
    return io_uring_submit_and_wait(&r->ring, waitNr);
}

unsigned CURingShim_reap(CURingShim_Ring *r, uint64_t *userData, int32_t *results, unsigned max) {
    unsigned head, n = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&r->ring, head, cqe) {
        if (n == max) break;
        userData[n] = cqe->user_data;
        results[n] = cqe->res;
        n++;
    }
    io_uring_cq_advance(&r->ring, n);
    return n;
}

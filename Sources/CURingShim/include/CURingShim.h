// CURingShim: outld's io_uring calls, in C behind an opaque handle.
// Workaround: Swift cannot import <liburing.h> next to Glibc (its textual include of
// <sys/select.h> clashes with SwiftGlibc's fd_set: "'__fds_bits' ... is not present in definition
// of 'fd_set' in module 'CLiburing'"), so no public header here includes liburing; the few
// inline functions and macros we need (io_uring_prep_*, io_uring_for_each_cqe)
// are wrapped one for one, with no policy: BatchIO decides what to submit and how to fall back.
#pragma once
#include <stdint.h>

typedef struct CURingShim_Ring CURingShim_Ring;

/// io_uring_queue_init(entries) and a check that the kernel has both opcodes outld uses (READ,
/// UNLINKAT). 0 and *out set, or -errno:
/// EPERM (seccomp, kernel.io_uring_disabled), ENOSYS (no io_uring), EINVAL (a missing opcode).
int CURingShim_create(unsigned entries, CURingShim_Ring **out);
/// io_uring_queue_exit: cancels and waits for requests in flight, then frees the ring.
void CURingShim_destroy(CURingShim_Ring *ring);

/// Each queue function takes one SQE: 0, or -EBUSY when the submission queue is full.
int CURingShim_queueRead(CURingShim_Ring *ring, int fd, void *buf, unsigned len, uint64_t offset,
                         uint64_t userData);
/// IORING_OP_UNLINKAT(dirfd, name, 0): no walk of the full path; `name` must stay valid until the
/// op completes.
int CURingShim_queueUnlinkAt(CURingShim_Ring *ring, int dirfd, const char *name, uint64_t userData);

/// io_uring_submit_and_wait: submits what is queued and waits for `waitNr` completions.
/// The number submitted, or -errno (EINTR: nothing new was submitted; the caller decides).
int CURingShim_submitAndWait(CURingShim_Ring *ring, unsigned waitNr);

/// Copies up to `max` ready completions (user_data, res) out of the CQ ring and marks them seen
/// (io_uring_for_each_cqe + io_uring_cq_advance). Returns how many it copied.
unsigned CURingShim_reap(CURingShim_Ring *ring, uint64_t *userData, int32_t *results, unsigned max);

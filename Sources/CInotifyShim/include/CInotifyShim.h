// CInotifyShim: inotify and signalfd for outld, as plain C functions Swift can call.
// Every function returns a value >= 0 on success or -errno (never touches a global errno contract).
#pragma once
#include <stdint.h>
#include <stddef.h>

// ---- inotify ----------------------------------------------------------------------------------

/// inotify_init1(IN_CLOEXEC | IN_NONBLOCK): the fd or -errno.
int CInotifyShim_init(void);
/// inotify_add_watch: the watch descriptor or -errno.
int CInotifyShim_addWatch(int fd, const char *path, uint32_t mask);
/// inotify_rm_watch: 0 or -errno.
int CInotifyShim_removeWatch(int fd, int wd);

/// The event masks outld uses, as constants (the kernel header spells some as expressions).
uint32_t CInotifyShim_mask_movedTo(void);
uint32_t CInotifyShim_mask_movedFrom(void);
uint32_t CInotifyShim_mask_closeWrite(void);
uint32_t CInotifyShim_mask_delete(void);
uint32_t CInotifyShim_mask_deleteSelf(void);
uint32_t CInotifyShim_mask_moveSelf(void);
uint32_t CInotifyShim_mask_onlyDir(void);
uint32_t CInotifyShim_mask_dontFollow(void);
uint32_t CInotifyShim_mask_isDir(void);
uint32_t CInotifyShim_mask_ignored(void);
uint32_t CInotifyShim_mask_queueOverflow(void);
uint32_t CInotifyShim_mask_unmount(void);

/// One event decoded from a read buffer. `name` points into the buffer (or at "" when the
/// event has no name) and is valid only as long as the buffer is.
typedef struct {
    int32_t wd;
    uint32_t mask;
    uint32_t cookie;
    const char *name;
} CInotifyShim_Event;

/// Decodes the event at `offset` in `buf` (the bytes one read(2) returned). Returns the offset
/// of the next event, or -1 when no complete event starts at `offset`.
long CInotifyShim_nextEvent(const void *buf, size_t len, size_t offset, CInotifyShim_Event *out);

/// A read buffer size that always holds at least one event with the longest name.
size_t CInotifyShim_minimumBufferSize(void);

// ---- signalfd ---------------------------------------------------------------------------------

/// Blocks `signals` in the calling thread's mask (threads created later inherit it) and opens a
/// signalfd for them with SFD_CLOEXEC | SFD_NONBLOCK: the fd or -errno.
int CInotifyShim_signalfdOpen(const int *signals, int count);
/// Unblocks `signals` in the calling thread (for tests that must leave the thread as they found it).
int CInotifyShim_unblockSignals(const int *signals, int count);
/// Reads one signalfd_siginfo: 1 with *signo and *pid set, 0 when none is pending, or -errno.
/// EINTR cannot happen: the fd is non-blocking.
int CInotifyShim_signalfdRead(int fd, int32_t *signo, int32_t *pid);

// CInotifyShim: the C side of outld's event sources. Kept to what Swift cannot do well by itself:
// struct inotify_event has a flexible array member, and sigset_t needs C macros.
#define _GNU_SOURCE  // the full signalfd declarations live behind it
#include "CInotifyShim.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>


int CInotifyShim_init(void) {
    int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

int CInotifyShim_addWatch(int fd, const char *path, uint32_t mask) {
    int wd = inotify_add_watch(fd, path, mask);
    return wd < 0 ? -errno : wd;
}

int CInotifyShim_removeWatch(int fd, int wd) {
    return inotify_rm_watch(fd, wd) < 0 ? -errno : 0;
}

uint32_t CInotifyShim_mask_movedTo(void) { return IN_MOVED_TO; }
uint32_t CInotifyShim_mask_movedFrom(void) { return IN_MOVED_FROM; }
uint32_t CInotifyShim_mask_closeWrite(void) { return IN_CLOSE_WRITE; }
uint32_t CInotifyShim_mask_delete(void) { return IN_DELETE; }
uint32_t CInotifyShim_mask_deleteSelf(void) { return IN_DELETE_SELF; }
uint32_t CInotifyShim_mask_moveSelf(void) { return IN_MOVE_SELF; }
uint32_t CInotifyShim_mask_onlyDir(void) { return IN_ONLYDIR; }
uint32_t CInotifyShim_mask_dontFollow(void) { return IN_DONT_FOLLOW; }
uint32_t CInotifyShim_mask_isDir(void) { return IN_ISDIR; }
uint32_t CInotifyShim_mask_ignored(void) { return IN_IGNORED; }
uint32_t CInotifyShim_mask_queueOverflow(void) { return IN_Q_OVERFLOW; }
uint32_t CInotifyShim_mask_unmount(void) { return IN_UNMOUNT; }

long CInotifyShim_nextEvent(const void *buf, size_t len, size_t offset, CInotifyShim_Event *out) {
    const size_t header = sizeof(struct inotify_event);
    if (offset > len || len - offset < header) return -1;
    // The kernel aligns events for us, but copy the header out anyway: the Swift buffer's
    // base is only byte-aligned as far as the type system knows.
    struct inotify_event ev;
    memcpy(&ev, (const char *)buf + offset, header);
    if (len - offset - header < ev.len) return -1;
    out->wd = ev.wd;
    out->mask = ev.mask;
    out->cookie = ev.cookie;
    // `name` is NUL-padded to `len` bytes; len == 0 means the event is about the watched item.
    out->name = ev.len > 0 ? (const char *)buf + offset + header : "";
    return (long)(offset + header + ev.len);
}

size_t CInotifyShim_minimumBufferSize(void) {
    return sizeof(struct inotify_event) + NAME_MAX + 1;
}

static int fill_set(sigset_t *set, const int *signals, int count) {
    sigemptyset(set);
    for (int i = 0; i < count; i++)
        if (sigaddset(set, signals[i]) < 0) return -errno;
    return 0;
}

int CInotifyShim_signalfdOpen(const int *signals, int count) {
    sigset_t set;
    int r = fill_set(&set, signals, count);
    if (r < 0) return r;
    // pthread_sigmask returns the error number instead of setting errno.
    r = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (r != 0) return -r;
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

int CInotifyShim_unblockSignals(const int *signals, int count) {
    sigset_t set;
    int r = fill_set(&set, signals, count);
    if (r < 0) return r;
    r = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return r != 0 ? -r : 0;
}

int CInotifyShim_signalfdRead(int fd, int32_t *signo, int32_t *pid) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
    if ((size_t)n != sizeof info) return -EIO;  // the kernel hands out whole records only
    *signo = (int32_t)info.ssi_signo;
    *pid = (int32_t)info.ssi_pid;
    return 1;
}


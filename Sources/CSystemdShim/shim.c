// CSystemdShim: libsystemd by dlopen on first need. The pointers are checked against libsystemd's
// own declarations (typeof), so a changed signature fails the build, not a call.
#define _GNU_SOURCE
#include "CSystemdShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

static __typeof__(sd_notify) *notify_fn;
static __typeof__(sd_watchdog_enabled) *watchdog_fn;
static __typeof__(sd_journal_sendv) *sendv_fn;
static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // The soname Debian's libsystemd0 ships (the ABI the headers above describe). Never closed:
    // it is needed for the rest of the process once a first call needed it.
    void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "%s", e ? e : "libsystemd.so.0: cannot be loaded");
        return;
    }
    notify_fn = (__typeof__(notify_fn))dlsym(h, "sd_notify");
    watchdog_fn = (__typeof__(watchdog_fn))dlsym(h, "sd_watchdog_enabled");
    sendv_fn = (__typeof__(sendv_fn))dlsym(h, "sd_journal_sendv");
    if (notify_fn == NULL || watchdog_fn == NULL || sendv_fn == NULL) {
        snprintf(load_error, sizeof load_error, "libsystemd.so.0 lacks sd_notify, sd_watchdog_enabled or sd_journal_sendv");
        notify_fn = NULL;
        watchdog_fn = NULL;
        sendv_fn = NULL;
    }
}

int CSystemdShim_load(void) {
    pthread_once(&load_once, load);
    return notify_fn != NULL;
}

const char *CSystemdShim_loadError(void) { return load_error; }

int CSystemdShim_notify(const char *state) {
    // What sd_notify answers without a socket to send to, answered without loading it.
    const char *socket = getenv("NOTIFY_SOCKET");
    if (socket == NULL || socket[0] == '\0') return 0;
    if (!CSystemdShim_load()) return -ENOSYS;
    return notify_fn(0, state);
}

int CSystemdShim_watchdogEnabled(uint64_t *usec) {
    const char *watchdog = getenv("WATCHDOG_USEC");
    if (watchdog == NULL || watchdog[0] == '\0') return 0;
    if (!CSystemdShim_load()) return -ENOSYS;
    return watchdog_fn(0, usec);
}

int CSystemdShim_journalSendv(const struct iovec *iov, int n) {
    if (!CSystemdShim_load()) return -ENOSYS;
    return sendv_fn(iov, n);
}

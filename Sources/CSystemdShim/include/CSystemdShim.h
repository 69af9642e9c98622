// CSystemdShim: the three libsystemd calls outld makes (sd_notify, sd_watchdog_enabled,
// sd_journal_sendv), with libsystemd loaded on first need instead of at every start: a run that
// neither talks to systemd nor logs to the journal (`outld --once --log stderr`) never maps it and
// the six libraries it pulls in, which was most of such a run's start-up.
#pragma once
#include <stdint.h>
#include <sys/uio.h>

/// sd_notify(0, state): > 0 delivered, 0 when $NOTIFY_SOCKET is unset or empty (libsystemd is then not
/// loaded), < 0 (-errno, or -ENOSYS when libsystemd cannot be loaded) on failure.
int CSystemdShim_notify(const char *state);

/// sd_watchdog_enabled(0, usec): > 0 with *usec set when a watchdog is set for this process, 0 when
/// $WATCHDOG_USEC is unset or empty (libsystemd is then not loaded), < 0 as above.
int CSystemdShim_watchdogEnabled(uint64_t *usec);

/// sd_journal_sendv: 0 sent, < 0 as above.
int CSystemdShim_journalSendv(const struct iovec *iov, int n);

/// Loads libsystemd now if it is not yet: 1 loaded, 0 not loadable (CSystemdShim_loadError says why).
int CSystemdShim_load(void);

/// Why libsystemd could not be loaded (dlerror's text), or "" when it was loaded or not yet tried.
const char *CSystemdShim_loadError(void);

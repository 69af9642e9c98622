// The parts of libsystemd that outld uses: sd_notify, the watchdog query, and the journal's
// non-variadic sd_journal_sendv (Swift cannot call the variadic sd_journal_send).
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

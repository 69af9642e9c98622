// liburing's header, for the C shim CURingShim only: this module finds liburing with pkg-config and
// links it. Swift does not import it (next to Glibc its <sys/select.h> clashes with SwiftGlibc's
// fd_set, see CURingShim.h), so liburing's inline functions are reached through CURingShim.
#include <liburing.h>

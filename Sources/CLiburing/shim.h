// liburing's header; its static inline functions are callable from Swift as they are.
#include <liburing.h>

#define _GNU_SOURCE
#include "CInotifyShim.h"
int CInotifyShim_placeholder(void) { return 0; }

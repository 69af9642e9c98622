#define _GNU_SOURCE
#include "CURingShim.h"
int CURingShim_placeholder(void) { return 0; }

// CURingShim: placeholder until the daemon issue lands.
#pragma once
int CURingShim_placeholder(void);

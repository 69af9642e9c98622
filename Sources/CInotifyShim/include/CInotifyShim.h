// CInotifyShim: placeholder until the daemon issue lands.
#pragma once
int CInotifyShim_placeholder(void);

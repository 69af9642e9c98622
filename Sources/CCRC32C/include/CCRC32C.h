// CCRC32C: the SSE4.2 `crc32` instruction for the op log's line checksum, behind a runtime CPU check,
// and a cache prefetch hint for the boot.
// Invariant: CCRC32C_update gives exactly the table-driven CRC32C (Swift's CRC32C.checksum) result.
#pragma once
#include <stdint.h>
#include <stddef.h>

/// 1 when this CPU has SSE4.2 (checked once with cpuid), else 0: the caller keeps a portable path.
int CCRC32C_hardware(void);
/// Continues a CRC32C over `n` bytes; `crc` is the running, already-inverted state (~0 to start).
/// Only call when CCRC32C_hardware() is 1.
uint32_t CCRC32C_update(uint32_t crc, const void *p, size_t n);
/// Hints the CPU to start loading the cache line at `p` (no fault, no effect on results): the boot
/// asks for the next op's id-index slot while it applies the current op.
static inline void CCRC32C_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

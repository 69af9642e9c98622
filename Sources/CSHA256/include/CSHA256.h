// CSHA256: SHA-256 (FIPS 180-4) for attachments: the writer hashes what it delivers, the drain what
// it copies into assets/, and both must agree with sha256sum(1). Portable C, no allocation.
#pragma once
#include <stdint.h>
#include <stddef.h>

typedef struct {
    uint32_t h[8];
    uint64_t length;      // bytes hashed so far
    uint8_t block[64];    // a partial block waiting for more bytes
    size_t used;          // bytes of `block` in use
} CSHA256_state;

void CSHA256_init(CSHA256_state *s);
void CSHA256_update(CSHA256_state *s, const void *data, size_t n);
/// Writes the 32-byte digest; the state is spent afterwards.
void CSHA256_final(CSHA256_state *s, uint8_t digest[32]);

// CCRC32C: hardware CRC32C, one crc32 stream (~8 GB/s; an op line is ~300 bytes, so interleaving
// streams would not pay). Never called on CPUs without SSE4.2 or off x86-64: Swift keeps a table path.
#include "CCRC32C.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

int CCRC32C_hardware(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t CCRC32C_update(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    if (n >= 4) { uint32_t v; memcpy(&v, p, 4); c32 = _mm_crc32_u32(c32, v); p += 4; n -= 4; }
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}
#else
int CCRC32C_hardware(void) { return 0; }
uint32_t CCRC32C_update(uint32_t crc, const void *p, size_t n) { (void)p; (void)n; return crc; }
#endif

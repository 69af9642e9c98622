// Random: getrandom(2) for the ids this project mints (ULIDs, UUIDv7) and for the per-process key
// of in-memory hash tables (KeyedMix), short reads continued and EINTR retried by the seam's one
// loop. Not routed through the interposer: ids are not file operations, and a fault here could only abort.
#if canImport(Glibc)
import Glibc
#endif

/// getrandom(2) is not in the Glibc module map (sys/random.h); bind the C symbol directly:
/// ssize_t getrandom(void *buf, size_t buflen, unsigned int flags).
@_silgen_name("getrandom") private func c_getrandom(_ buf: UnsafeMutableRawPointer, _ len: Int, _ flags: UInt32) -> Int

extension Sys {
    /// Two random 64-bit words from the kernel's CSPRNG; blocks only before the pool is seeded.
    public static func random128() -> (UInt64, UInt64) {
        var r = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &r) { buf in
            var done = 0
            while done < buf.count {
                let got = retryingInterrupts { () -> Result<Int, Errno> in
                    let n = c_getrandom(buf.baseAddress! + done, buf.count - done, 0)
                    return n < 0 ? .failure(Errno.current) : .success(n)
                }
                switch got {
                case .success(let n) where n > 0: done += n
                case .success: fatalError("getrandom returned no bytes")
                case .failure(let e): fatalError("getrandom failed: \(e)")
                }
            }
        }
        return r
    }
}

/// The mix of a 128-bit id for in-memory hash tables (BlockID's, ULID's), keyed by two words drawn
/// once per process: ids come from files other people wrote (a peer's op log, a synced inbox), and
/// ids crafted to collide under a fixed mix (all with one hi ^ lo, say) would turn every lookup into
/// a walk of them all. A 64x64->128 multiply of the keyed halves, folded and finished, spreads any
/// such set; the key never leaves the process, so no table hash is kept on disk or compared between
/// processes.
public enum KeyedMix {
    public static let key: (UInt64, UInt64) = Sys.random128()

    @inlinable @inline(__always)
    public static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 { mix(a, b, key: key) }

    /// The mix under a given key (tests try many).
    @inlinable @inline(__always)
    public static func mix(_ a: UInt64, _ b: UInt64, key: (UInt64, UInt64)) -> UInt64 {
        let p = (a ^ key.0).multipliedFullWidth(by: b ^ key.1)
        // Finished with a xorshift-multiply: the fold alone left, for about one key in a hundred,
        // ids in pairs differing only in their halves' top bits on a third fewer slots (a pair's
        // low words differ in bit 63 alone, so the slot bits came from the high words).
        var h = p.high ^ p.low
        h ^= h >> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        return h ^ (h >> 32)
    }
}

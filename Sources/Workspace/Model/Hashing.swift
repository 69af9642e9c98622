// Hashing: the workspace's hashes in one place — FNV-1a over bytes (names in the op log's table, the
// state directory's name, op-history states, derived ids) and the one mix of a BlockID for hash
// tables. What FNV-1a names is kept on disk (state dirs, ids): its output must never change; the
// table mix is keyed per process and never kept.
import SystemCalls

/// 64-bit FNV-1a. `seed` and `prime` default to the standard offset basis and prime; derived ids
/// run a second lane with other constants, so both are parameters.
struct FNV1a {
    static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01B3

    private(set) var value: UInt64
    private let prime: UInt64

    init(seed: UInt64 = FNV1a.offsetBasis, prime: UInt64 = FNV1a.prime) {
        value = seed
        self.prime = prime
    }

    @inline(__always) mutating func add(_ byte: UInt8) { value = (value ^ UInt64(byte)) &* prime }

    /// Mixes a whole 64-bit word in one step (not byte by byte).
    @inline(__always) mutating func add(word: UInt64) { value = (value ^ word) &* prime }

    @inline(__always) mutating func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for b in bytes { add(b) }
    }

    @inline(__always) static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var h = FNV1a()
        h.add(bytes)
        return h.value
    }
}

extension BlockID {
    /// The one 64-bit mix of an id for hash tables (Swift's Hasher and BlockTable's slots), keyed per
    /// process (KeyedMix): a peer's ids crafted to collide spread like any others. Never kept on disk.
    @inline(__always) var tableHash: UInt64 { KeyedMix.mix(hi, lo) }
}

// ULID: the capture id. 48-bit Unix ms time + 80 random bits, spelled in 26 upper-case Crockford
// base32 characters, so names sort in capture order. The generator never goes backwards in a process.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public struct ULID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 128 bits, big-endian halves: `high` holds the 48-bit time and 16 random bits.
    public let high: UInt64
    public let low: UInt64

    public static let maxTimestampMs: UInt64 = (1 << 48) - 1
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// Crockford value of each ASCII byte, 0xFF where the byte is not in the upper-case alphabet.
    static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    public init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

    /// A table hash without a Hasher (as BlockID's): the drain asks one per capture. Keyed per
    /// process (KeyedMix), so a synced inbox's names cannot be crafted to collide.
    @inline(__always)
    public func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: KeyedMix.mix(high, low))
    }

    public init(timestampMs: UInt64, randomHigh: UInt16, randomLow: UInt64) {
        precondition(timestampMs <= ULID.maxTimestampMs, "ULID time out of range")
        high = timestampMs << 16 | UInt64(randomHigh)
        low = randomLow
    }

    /// Exactly the canonical spelling: 26 characters of the upper-case alphabet, first one 0-7
    /// (anything larger would overflow 128 bits).
    public init?(string: String) {
        var s = string
        guard let id = s.withUTF8({ ULID(ascii: $0) }) else { return nil }
        self = id
    }

    /// The same from the spelling's bytes (an inbox listing has them; no String is made).
    public init?(ascii u: UnsafeBufferPointer<UInt8>) {
        guard u.count == 26, u[0] >= UInt8(ascii: "0"), u[0] <= UInt8(ascii: "7") else { return nil }
        // Each half read on its own (as `spell` writes them): the first 13 characters are the top
        // 63 bits, the 14th holds `high`'s last bit and `low`'s first four, the last 12 the rest of
        // `low`. A byte outside the alphabet is 0xFF, which sets bits no value (0-31) has.
        var hi: UInt64 = 0, lo: UInt64 = 0, seen: UInt8 = 0
        ULID.values.withUnsafeBufferPointer { values in
            let p = u.baseAddress!
            for i in 0..<13 { let v = values[Int(p[i])]; seen |= v; hi = hi << 5 | UInt64(v & 31) }
            let v = values[Int(p[13])]
            seen |= v
            hi = hi << 1 | UInt64(v & 31) >> 4
            lo = UInt64(v & 15)
            for i in 14..<26 { let v = values[Int(p[i])]; seen |= v; lo = lo << 5 | UInt64(v & 31) }
        }
        guard seen & 0xE0 == 0 else { return nil }
        high = hi; low = lo
    }

    public var timestampMs: UInt64 { high >> 16 }

    public var string: String {
        String(unsafeUninitializedCapacity: 26) { spell(into: $0) }
    }

    /// Writes the 26-byte spelling at the start of `out` (at least 26 bytes); returns 26. Each
    /// half is spelled on its own, five bits at a time from its low end (no 128-bit shift per
    /// character): `low` gives the last 12 characters and four bits of the 13th, `high` the rest.
    @discardableResult
    public func spell(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(out.count >= 26, "ULID.spell: room for 26 bytes")
        let o = out.baseAddress!
        let alphabet = ULID.crockford.utf8Start
        var lo = low, hi = high, i = 25
        while i > 13 { o[i] = alphabet[Int(lo & 31)]; lo >>= 5; i -= 1 }
        o[13] = alphabet[Int(lo | (hi & 1) << 4)]  // lo's last four bits, hi's first
        hi >>= 1
        i = 12
        while i > 0 { o[i] = alphabet[Int(hi & 31)]; hi >>= 5; i -= 1 }
        o[0] = alphabet[Int(hi)]  // the top three bits
        return 26
    }

    /// Crockford's base32 alphabet, as a literal (nothing made or checked at run time).
    static var crockford: StaticString { "0123456789ABCDEFGHJKMNPQRSTVWXYZ" }

    public var description: String { string }

    public static func < (a: ULID, b: ULID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

/// Makes ULIDs that strictly increase within one generator: in the same millisecond (or when
/// the clock steps back) the previous id's random part is incremented instead of drawn afresh.
public struct ULIDGenerator: Sendable {
    private var last: ULID?

    public init() {}

    /// The wall clock in ms, never before the epoch (a ULID's time cannot be).
    public static func nowMs() -> UInt64 { UInt64(max(0, wallClockMilliseconds())) }

    public mutating func next() -> ULID { next(nowMs: ULIDGenerator.nowMs()) }

    public mutating func next(nowMs: UInt64) -> ULID {
        let now = min(nowMs, ULID.maxTimestampMs)
        if let prev = last, now <= prev.timestampMs {
            let id = ULIDGenerator.increment(prev)
            last = id
            return id
        }
        var r = (UInt64(0), UInt64(0))
        ULIDGenerator.fillRandom(&r)
        let id = ULID(timestampMs: now, randomHigh: UInt16(truncatingIfNeeded: r.0), randomLow: r.1)
        last = id
        return id
    }

    /// +1 on the 80 random bits; if they overflow (after 2^80 ids in one ms) the time moves on 1 ms.
    static func increment(_ id: ULID) -> ULID {
        let (lo, carry) = id.low.addingReportingOverflow(1)
        var hi = id.high
        if carry { hi &+= 1 }  // the carry out of the 16 random bits lands in the time: +1 ms
        return ULID(high: hi, low: lo)
    }

    /// getrandom(2) through the seam, which retries short reads and EINTR.
    static func fillRandom(_ r: inout (UInt64, UInt64)) {
        r = Sys.random128()
    }
}

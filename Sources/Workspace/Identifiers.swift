// Identifiers: block, page and actor ids as 128-bit values spelled as lower-case UUIDs.
// Ids this module mints are UUIDv7 (time + getrandom); journal page ids are derived from the day so
// every device names the same day's page the same way.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls


public struct BlockID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var hi: UInt64
    public var lo: UInt64
    public init(hi: UInt64, lo: UInt64) { self.hi = hi; self.lo = lo }

    public static func < (a: BlockID, b: BlockID) -> Bool { a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo }

    /// One combine instead of two: ids are random or time-prefixed, so folding keeps them spread.
    @inline(__always)
    public func hash(into h: inout Hasher) { h.combine(hi ^ (lo &* 0x9E37_79B9_7F4A_7C15)) }

    /// Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (either case).
    public init?(_ s: String) {
        var s = s
        guard let v = s.withUTF8({ BlockID.parse($0) }) else { return nil }
        self = v
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt64? {
        switch c {
        case 48...57: return UInt64(c - 48)
        case 97...102: return UInt64(c - 87)
        case 65...70: return UInt64(c - 55)
        default: return nil
        }
    }

    /// Hex digit values, 0x10 for any other byte: a branch-free check of a whole id.
    static let hexTable: [UInt8] = (0..<256).map { c in hexValue(UInt8(c)).map { UInt8($0) } ?? 0x10 }

    /// Parses the 36-byte UUID spelling from raw bytes (the op log's hot path: three ids per line).
    @inline(__always)
    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> BlockID? {
        guard b.count == 36, let p = b.baseAddress, p[8] == 45, p[13] == 45, p[18] == 45, p[23] == 45 else { return nil }
        return hexTable.withUnsafeBufferPointer { t -> BlockID? in
            var bad: UInt8 = 0
            @inline(__always) func run(_ from: Int, _ n: Int, _ acc: inout UInt64) {
                for k in from..<(from + n) {
                    let v = t[Int(p[k])]
                    bad |= v
                    acc = acc << 4 | UInt64(v)
                }
            }
            var hi: UInt64 = 0, lo: UInt64 = 0
            run(0, 8, &hi); run(9, 4, &hi); run(14, 4, &hi)
            run(19, 4, &lo); run(24, 12, &lo)
            return bad & 0x10 == 0 ? BlockID(hi: hi, lo: lo) : nil
        }
    }

    public var description: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 45, count: 36)
        var j = 0
        for i in 0..<32 {
            if j == 8 || j == 13 || j == 18 || j == 23 { j += 1 }
            let word = i < 16 ? hi : lo
            let shift = UInt64((15 - (i % 16)) * 4)
            out[j] = hex[Int((word >> shift) & 0xF)]
            j += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A fresh UUIDv7: 48 bits of Unix ms, then getrandom(2) bits, so ids sort roughly by time.
    public static func random() -> BlockID {
        let r = Sys.random128()
        let ms = UInt64(HLC.wallMillis())
        let hi = (ms << 16) | 0x7000 | (r.0 & 0x0FFF)
        let lo = (r.1 & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return BlockID(hi: hi, lo: lo)
    }

    /// The page id of a journal day: the same on every device (a UUIDv8 whose bits spell the date).
    public static func journalPage(_ day: JournalDay) -> BlockID {
        let ymd = UInt64(day.year * 10000 + day.month * 100 + day.day)
        return BlockID(hi: 0x6A6F_7572_6E61_8000, lo: 0x8000_0000_0000_0000 | ymd)
    }

    /// A UUIDv8 from FNV-1a hashes of a file's bytes, its page and an ordinal: the same hand-edited
    /// file always yields the same ids for its new blocks.
    static func derived(from bytes: [UInt8], page: BlockID, ordinal: UInt64) -> BlockID {
        var h1: UInt64 = 0xCBF2_9CE4_8422_2325 ^ page.hi, h2: UInt64 = 0x6C62_272E_07BB_0142 ^ page.lo
        for c in bytes {
            h1 = (h1 ^ UInt64(c)) &* 0x0000_0100_0000_01B3
            h2 = (h2 ^ UInt64(c)) &* 0x0000_0100_0000_01B5
        }
        h1 = (h1 ^ ordinal) &* 0x0000_0100_0000_01B3
        h2 = (h2 ^ (ordinal &* 0x9E37_79B9_7F4A_7C15)) &* 0x0000_0100_0000_01B5
        return BlockID(hi: (h1 & ~0xF000) | 0x8000, lo: (h2 & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
    }

    /// The page id of a named page: a UUIDv8 from two FNV-1a hashes of the lower-cased name.
    public static func namedPage(_ name: String) -> BlockID {
        var h1: UInt64 = 0xCBF2_9CE4_8422_2325, h2: UInt64 = 0x6C62_272E_07BB_0142
        for c in name.lowercased().utf8 {
            h1 = (h1 ^ UInt64(c)) &* 0x0000_0100_0000_01B3
            h2 = (h2 ^ UInt64(c)) &* 0x0000_0100_0000_01B3
        }
        return BlockID(hi: (h1 & ~0xF000) | 0x8000, lo: (h2 & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
    }
}

// Identifiers: block, page and actor ids as 128-bit values spelled as lower-case UUIDs.
// Ids this module mints are UUIDv7 (time + getrandom). A page's id is never minted: it is derived from
// what the page names (a journal's day, a named page's canonical name, `canonicalPage`), so every
// device names one page one way and the model refuses a page created under any other id. What a
// derivation returns is in users' op logs: it must never change for a name it was ever given.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls


public struct BlockID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var hi: UInt64
    public var lo: UInt64
    public init(hi: UInt64, lo: UInt64) { self.hi = hi; self.lo = lo }

    public static func < (a: BlockID, b: BlockID) -> Bool { a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo }

    /// One combine instead of two: the id's table hash (Hashing.swift), shared with BlockTable.
    @inline(__always)
    public func hash(into h: inout Hasher) { h.combine(tableHash) }

    /// What Set and Dictionary ask for: the table hash folded, without a Hasher. SipHash over an
    /// already mixed word added nothing but its cost (a seeded Hasher per lookup was 3% of a burst's
    /// drain); the fold brings the multiply's high bits down to the low ones a table masks.
    @inline(__always)
    public func _rawHashValue(seed: Int) -> Int {
        let h = tableHash
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

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
        let raw = UnsafeRawPointer(p)
        let zeros: UInt64 = 0x3030_3030_0000_0000  // four '0' digits after a 4-digit group
        let a = hexWord(UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)))
        @inline(__always) func four(_ at: Int) -> UInt64 {
            hexWord(UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))) | zeros)
        }
        let b1 = four(9), b2 = four(14), c1 = four(19), c3 = four(32)
        let c2 = hexWord(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
        // Each word's bad flag is bit 63 (set when any of its bytes is not a hex digit).
        guard (a | b1 | b2 | c1 | c2 | c3) >> 63 == 0 else { return nil }
        let hi = a << 32 | (b1 >> 16) << 16 | b2 >> 16
        let lo = (c1 >> 16) << 48 | c2 << 16 | c3 >> 16
        return BlockID(hi: hi, lo: lo)
    }

    /// Eight ASCII hex digits (first digit in the lowest byte) to their value, all at once; bit 63 is
    /// set when any byte is not a hex digit. Four digits then four '0's give their value shifted by 16.
    @inline(__always)
    static func hexWord(_ w: UInt64) -> UInt64 {
        let highs: UInt64 = 0x8080_8080_8080_8080, ones: UInt64 = 0x0101_0101_0101_0101
        // Per byte c < 0x80, c + k never carries into the next byte; its top bit says c >= 0x80 - k.
        let digit = (w &+ ones &* 0x50) & ~(w &+ ones &* 0x46)          // '0'...'9'
        let lower = w | ones &* 0x20
        let letter = (lower &+ ones &* 0x1F) & ~(lower &+ ones &* 0x19)  // 'a'...'f', 'A'...'F'
        let ok = w & highs == 0 && (digit | letter) & highs == highs
        var v = (w & (ones &* 0x0F)) &+ ((w >> 6) & ones) &* 9
        v = v.byteSwapped
        v = (v | (v >> 4)) & 0x00FF_00FF_00FF_00FF
        v = (v | (v >> 8)) & 0x0000_FFFF_0000_FFFF
        v = (v | (v >> 16)) & 0xFFFF_FFFF
        return ok ? v : 1 << 63
    }

    /// The id's one spelling: 8-4-4-4-12 lower-case hex. A capture's block id is its ULID's 128 bits
    /// spelled so (SPEC section 4).
    public var description: String {
        String(unsafeUninitializedCapacity: 36) { spell(into: $0) }
    }

    static let lowerHex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `description`'s bytes to `out` without building a String (the op log's and the
    /// projection's hot path).
    public func spell(into out: inout [UInt8]) {
        // Spelled on the stack, then appended with one copy: one append per byte costs a
        // uniqueness and capacity check each, three ids per op line.
        var buf: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buf) { d in
            let b = d.bindMemory(to: UInt8.self)
            _ = spell(into: UnsafeMutableBufferPointer(rebasing: b[..<36]))
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[..<36]))
        }
    }

    /// Writes the 36 bytes of `description` at the start of `d` (at least 36 long); returns 36.
    @inline(__always)
    public func spell(into d: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(d.count >= 36)
        let raw = UnsafeMutableRawPointer(d.baseAddress!)
        @inline(__always) func put(_ w: UInt64, at offset: Int, bytes: Int) {
            var w = w.littleEndian
            withUnsafeBytes(of: &w) { raw.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: bytes) }
        }
        let a = BlockID.hexDigits(UInt32(truncatingIfNeeded: hi >> 32))
        let b = BlockID.hexDigits(UInt32(truncatingIfNeeded: hi))
        let c = BlockID.hexDigits(UInt32(truncatingIfNeeded: lo >> 32))
        let e = BlockID.hexDigits(UInt32(truncatingIfNeeded: lo))
        put(a, at: 0, bytes: 8)
        d[8] = 45
        put(b, at: 9, bytes: 4)
        d[13] = 45
        put(b >> 32, at: 14, bytes: 4)
        d[18] = 45
        put(c, at: 19, bytes: 4)
        d[23] = 45
        put(c >> 32, at: 24, bytes: 4)
        put(e, at: 28, bytes: 8)
        return 36
    }

    /// The eight lower-case hex digits of `x`, the first in the lowest byte: each nibble spread to a
    /// byte, then '0' added, and 39 more ('a' - '0' - 10) where the nibble is over 9.
    @inline(__always)
    static func hexDigits(_ x: UInt32) -> UInt64 {
        var v = UInt64(x)
        v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
        v = (v | v << 8) & 0x00FF_00FF_00FF_00FF
        v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F
        v = v.byteSwapped
        let over = ((v &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return v &+ 0x3030_3030_3030_3030 &+ over &* 39
    }

    /// A fresh UUIDv7: 48 bits of Unix ms, then getrandom(2) bits, so ids sort roughly by time.
    public static func random() -> BlockID {
        let r = Sys.random128()
        let ms = UInt64(wallClockMilliseconds())
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
        derived(DerivedIDs(bytes, page: page), ordinal: ordinal)
    }

    /// The id of the block that keeps a text made at once with `block`'s (stamped `stamp`): the same on
    /// every device that finds it, so they make one block.
    static func concurrentEdit(of block: BlockID, stamp: HLC) -> BlockID {
        derived(from: Array("concurrent edit \(stamp.wall) \(stamp.counter) \(stamp.actor)".utf8), page: block, ordinal: 0)
    }

    /// The two hashes of a file's bytes and page, taken once: a file of many new blocks is hashed
    /// once, not once per block (`derived(from:page:ordinal:)` gives the same ids).
    struct DerivedIDs {
        var h1: FNV1a, h2: FNV1a
        init(_ bytes: [UInt8], page: BlockID) {
            h1 = FNV1a(seed: FNV1a.offsetBasis ^ page.hi)
            h2 = FNV1a(seed: 0x6C62_272E_07BB_0142 ^ page.lo, prime: 0x0000_0100_0000_01B5)
            h1.add(bytes)
            h2.add(bytes)
        }
    }

    static func derived(_ file: DerivedIDs, ordinal: UInt64) -> BlockID {
        var h1 = file.h1, h2 = file.h2
        h1.add(word: ordinal)
        h2.add(word: ordinal &* 0x9E37_79B9_7F4A_7C15)
        return BlockID(hi: (h1.value & ~0xF000) | 0x8000, lo: (h2.value & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
    }

    /// The page id of a named page: a UUIDv8 from two FNV-1a hashes of its canonical name
    /// (`PageNames.key`: NFC, then lower-cased), so "Café", "CAFÉ" and "Cafe\u{301}" are one page.
    public static func namedPage(_ name: String) -> BlockID {
        let key = PageNames.key(name).utf8
        var h1 = FNV1a(), h2 = FNV1a(seed: 0x6C62_272E_07BB_0142)
        h1.add(key)
        h2.add(key)
        return BlockID(hi: (h1.value & ~0xF000) | 0x8000, lo: (h2.value & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
    }

    /// The one id a page of this kind and name may have: a journal's is its day's (the name is the
    /// day, either spelling `JournalDay(parsing:)` reads), a named page's is its name's. Nil when the
    /// name names no page (a journal name that is no date, an empty name). Model refuses a createPage
    /// under any other id.
    public static func canonicalPage(kind: PageKind, name: String) -> BlockID? {
        switch kind {
        case .journal: return JournalDay(parsing: name).map(journalPage)
        case .named: return name.isEmpty ? nil : namedPage(name)
        }
    }
}

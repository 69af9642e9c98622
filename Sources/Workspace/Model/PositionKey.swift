// PositionKey: sibling order as base-36 fraction strings, so a block can always go between two others.
// Invariant: between(a, b) returns k with a < k < b (byte order) whenever a < b; keys never end in '0'.
public enum PositionKey {
    static let digits: [UInt8] = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)

    static func value(_ c: UInt8) -> Int {
        switch c {
        case 48...57: return Int(c) - 48
        case 97...122: return Int(c) - 87
        default: return 0
        }
    }

    /// Writes `v` as `width` base-36 digits (the low ones, zero-padded) at `out[at...]`.
    @inline(__always)
    static func fixed(_ v: UInt64, width: Int, into out: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        var v = v
        var i = at + width - 1
        while i >= at {
            let d = UInt8(truncatingIfNeeded: v % 36)
            out[i] = d < 10 ? 48 + d : 87 + d
            v /= 36; i -= 1
        }
    }

    /// `a > b` as Strings compare them: by bytes when both are ASCII (every key this device makes),
    /// else as Strings.
    static func greater(_ a: UnsafeBufferPointer<UInt8>, than b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard isASCII(a), isASCII(b) else { return String(decoding: a, as: UTF8.self) > String(decoding: b, as: UTF8.self) }
        let n = Swift.min(a.count, b.count)
        guard n > 0 else { return a.count > b.count }
        // Eight bytes at a time, most significant first (big-endian words order as their bytes do);
        // the last word overlaps the one before, whose bytes are already known equal.
        let x = UnsafeRawPointer(a.baseAddress!), y = UnsafeRawPointer(b.baseAddress!)
        if n >= 8 {
            var i = 0
            while true {
                let at = Swift.min(i, n - 8)
                let u = x.loadUnaligned(fromByteOffset: at, as: UInt64.self).bigEndian
                let v = y.loadUnaligned(fromByteOffset: at, as: UInt64.self).bigEndian
                if u != v { return u > v }
                if at == n - 8 { break }
                i += 8
            }
        } else {
            for i in 0..<n where a[i] != b[i] { return a[i] > b[i] }
        }
        return a.count > b.count
    }

    /// No byte from 0x80 up, read a word at a time (a key this device makes is 14 bytes: two words).
    @inline(__always)
    static func isASCII(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = b.baseAddress else { return true }
        let raw = UnsafeRawPointer(p)
        var i = 0, high: UInt64 = 0
        while i + 8 <= b.count { high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self); i += 8 }
        if i < b.count, b.count >= 8 {
            high |= raw.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self)
        } else {
            while i < b.count { high |= UInt64(b[i]); i += 1 }
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// A key strictly between `a` and `b` (nil means the open end).
    public static func between(_ a: String?, _ b: String?) -> String {
        let ab = Array((a ?? "").utf8)
        var bb: [UInt8]? = b.map { Array($0.utf8) }
        if let x = bb, !(ab.lexicographicallyPrecedes(x)) { bb = nil }  // a bad pair: go after a
        var out: [UInt8] = []
        var i = 0
        while i < 4096 {
            let da = i < ab.count ? value(ab[i]) : 0
            let db: Int
            if let x = bb { db = i < x.count ? value(x[i]) : 0 } else { db = 36 }
            if da == db { out.append(digits[da]); i += 1; continue }
            if db - da > 1 { out.append(digits[(da + db) / 2]); return String(decoding: out, as: UTF8.self) }
            // db == da + 1: keep da and look for room above the rest of a.
            out.append(digits[da])
            bb = nil
            i += 1
        }
        return String(decoding: out, as: UTF8.self) + "i"
    }
}

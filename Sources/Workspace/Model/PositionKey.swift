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

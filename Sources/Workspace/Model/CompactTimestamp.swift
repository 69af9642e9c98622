// CompactTimestamp: a property value in the exact shape of an RFC 3339 time as captures write it
// (`2026-12-01T23:58:07.120-05:00`: milliseconds optional, `Z` or a numeric offset) is kept in
// the arena as two varints, ~11 bytes for 29 (every capture carries one). Invariant: `unpack` gives
// back exactly the bytes `pack` took, since every character is either fixed by the shape or a digit
// kept in place; any other value (another width, `z`, a comma, a non-digit) is not packed.

enum CompactTimestamp {
    /// The longest value unpacked: `YYYY-MM-DDTHH:MM:SS.sss+HH:MM`.
    static let maxBytes = 29

    @inline(__always) private static func digit(_ c: UInt8) -> UInt64? {
        c >= 48 && c <= 57 ? UInt64(c - 48) : nil
    }

    /// The two digits at v[i], v[i + 1] as a number.
    @inline(__always) private static func two(_ v: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt64? {
        guard let x = digit(v[i]), let y = digit(v[i + 1]) else { return nil }
        return x * 10 + y
    }

    /// (date and time as one 14-digit number, zone and milliseconds), or nil for any other value.
    /// The second is zone * 1001 + milliseconds + 1 (0: none); zone 0 is `Z`, 1xxxx `+HH:MM`, 2xxxx `-HH:MM`.
    static func pack(_ v: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        let n = v.count
        guard n == 20 || n == 24 || n == 25 || n == 29 else { return nil }
        guard v[4] == 45, v[7] == 45, v[10] == 84, v[13] == 58, v[16] == 58 else { return nil }  // - - T : :
        // YYYY MM DD HH MM SS, two digits at a time.
        var a: UInt64 = 0
        var k = 0
        while k <= 17 {
            guard let d = two(v, k) else { return nil }
            a = a * 100 + d
            k += k == 0 ? 2 : 3
        }
        var i = 19
        var ms: UInt64 = 0
        if v[19] == 46 {  // .
            guard n == 24 || n == 29, let x = digit(v[20]), let y = digit(v[21]), let z = digit(v[22]) else { return nil }
            ms = x * 100 + y * 10 + z + 1
            i = 23
        }
        var zone: UInt64
        switch n - i {
        case 1:
            guard v[i] == 90 else { return nil }  // Z
            zone = 0
        case 6:
            guard v[i] == 43 || v[i] == 45, v[i + 3] == 58 else { return nil }  // + or -, :
            guard let hh = two(v, i + 1), let mm = two(v, i + 4) else { return nil }
            zone = (v[i] == 43 ? 10000 : 20000) + hh * 100 + mm
        default:
            return nil
        }
        return (a, zone * 1001 + ms)
    }

    /// Writes the value `pack` took into `out` (room for `maxBytes`); returns its length.
    static func unpack(_ a: UInt64, _ b: UInt64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var a = a
        var i = 17
        while i >= 0 {
            out[i] = UInt8(48 + a / 10 % 10); out[i + 1] = UInt8(48 + a % 10)
            a /= 100
            i -= i == 2 ? 2 : 3
        }
        out[4] = 45; out[7] = 45; out[10] = 84; out[13] = 58; out[16] = 58
        i = 19
        let ms = b % 1001, zone = b / 1001
        if ms > 0 {
            let m = ms - 1
            out[19] = 46
            out[20] = UInt8(48 + m / 100); out[21] = UInt8(48 + m / 10 % 10); out[22] = UInt8(48 + m % 10)
            i = 23
        }
        if zone == 0 {
            out[i] = 90
            return i + 1
        }
        let d = zone % 10000
        out[i] = zone >= 20000 ? 45 : 43
        out[i + 1] = UInt8(48 + d / 1000); out[i + 2] = UInt8(48 + d / 100 % 10)
        out[i + 3] = 58
        out[i + 4] = UInt8(48 + d / 10 % 10); out[i + 5] = UInt8(48 + d % 10)
        return i + 6
    }
}

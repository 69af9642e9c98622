// JSONEscape: the one decoder of a JSON string's escape sequences (RFC 8259, section 7), shared by the
// capture format's strict reader and the op log's fast one. Foundation-free, so the writer may link it.
// It says what an escape stands for; what to do with one the RFC lacks, or with a lone surrogate, is
// each caller's policy (the capture format refuses both; the op log's CRC-checked lines are lenient).

public enum JSONEscape {
    /// What the escape at a backslash stands for.
    public enum Decoded: Equatable, Sendable {
        /// `\" \\ \/ \b \f \n \r \t`: one byte.
        case byte(UInt8)
        /// `\uXXXX`: one UTF-16 code unit, a surrogate half included (pairing is the caller's).
        case unit(UInt32)
        /// A backslash, then this byte, for which RFC 8259 has no escape.
        case unknown(UInt8)
        /// The input ends right after the backslash.
        case unterminated
        /// `\u` with fewer than four bytes after it.
        case shortUnicode
        /// `\u` followed by a byte that is not a hex digit, at this index.
        case badHexDigit(at: Int)
    }

    /// Decodes the escape whose backslash is at index `backslash` of `s`; returns what it stands for
    /// and the index just after it (after the backslash and the byte read, on an error).
    @inlinable
    public static func decode<C: RandomAccessCollection>(_ s: C, at backslash: Int) -> (Decoded, next: Int)
        where C.Element == UInt8, C.Index == Int {
        let i = backslash + 1
        guard i < s.endIndex else { return (.unterminated, i) }
        let e = s[i]
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return (.byte(e), i + 1)
        case UInt8(ascii: "b"): return (.byte(0x08), i + 1)
        case UInt8(ascii: "f"): return (.byte(0x0C), i + 1)
        case UInt8(ascii: "n"): return (.byte(0x0A), i + 1)
        case UInt8(ascii: "r"): return (.byte(0x0D), i + 1)
        case UInt8(ascii: "t"): return (.byte(0x09), i + 1)
        case UInt8(ascii: "u"):
            let digits = i + 1
            guard s.endIndex - digits >= 4 else { return (.shortUnicode, digits) }
            var v: UInt32 = 0
            for k in digits..<(digits + 4) {
                guard let d = hexDigit(s[k]) else { return (.badHexDigit(at: k), k) }
                v = v << 4 | d
            }
            return (.unit(v), digits + 4)
        default:
            return (.unknown(e), i + 1)
        }
    }

    /// The value of one hex digit, either case.
    @inlinable
    public static func hexDigit(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: return UInt32(c - 0x30)
        case 0x41...0x46: return UInt32(c - 0x41 + 10)
        case 0x61...0x66: return UInt32(c - 0x61 + 10)
        default: return nil
        }
    }
}

// JSONWord: eight bytes of a JSON string's content tested at once for a byte that ends or escapes
// it, so escape-free runs are stepped over a word at a time, by the op log's encoder and the
// capture format's flat reader alike. Foundation-free, so the writer may link it.

public enum JSONWord {
    /// Whether any of the eight bytes of `x` is below 0x20, a quote or a backslash.
    @inlinable @inline(__always)
    public static func anyQuoteBackslashOrControl(_ x: UInt64) -> Bool { quoteBackslashOrControl(x) != 0 }

    /// The high bit of each byte of `x` (little-endian: byte 0 lowest) that is below 0x20, a quote
    /// or a backslash, and perhaps of bytes above the lowest such one; 0 when there is none. Each
    /// test is the "has a byte below n" word test, `(x - n*0x01..) & ~x & 0x80..`: no byte below n,
    /// no borrow and no bit; below the lowest such byte no borrow either, so the lowest bit set is
    /// exactly the first such byte. It is applied directly for 0x20, and as "below 1" (a zero byte)
    /// to x with the quote's or the backslash's bits flipped.
    @inlinable @inline(__always)
    public static func quoteBackslashOrControl(_ x: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
        let control = (x &- ones &* 0x20) & ~x
        let zeroQ = (quote &- ones) & ~quote
        let zeroB = (backslash &- ones) & ~backslash
        return (control | zeroQ | zeroB) & highs
    }

    /// Whether any of the eight bytes of `x` is 0x80 or above (not ASCII).
    @inlinable @inline(__always)
    public static func anyHigh(_ x: UInt64) -> Bool { x & 0x8080_8080_8080_8080 != 0 }
}

// FlatCapture: the capture decoder's fast path for the common shape — one object whose members are
// strings without escapes. It never throws: any other input (escapes, numbers, nesting, a BOM, a
// duplicate known key, a non-ASCII key, bad UTF-8) returns nil and the full parser decides.
import JSONText

enum FlatCapture {
    struct Fields { var text: String?; var at: String?; var source: String?; var page: String? }
    /// The same as ranges of the file's bytes, which are valid UTF-8.
    struct Ranges { var text: Range<Int>?; var at: Range<Int>?; var source: Range<Int>?; var page: Range<Int>? }

    static func scan(_ b: [UInt8]) -> Fields? {
        b.withUnsafeBufferPointer { scan($0) }
    }

    static func scan(_ b: UnsafeBufferPointer<UInt8>) -> Fields? {
        guard let r = ranges(b) else { return nil }
        func str(_ r: Range<Int>?) -> String? {
            r.map { String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self) }
        }
        return Fields(text: str(r.text), at: str(r.at), source: str(r.source), page: str(r.page))
    }

    static func ranges(_ b: UnsafeBufferPointer<UInt8>) -> Ranges? {
        // A plain loop over a Scanner (no closures capturing the cursor: those kept it in memory).
        var s = Scanner(b)
        // text, captured_at, source, page (locals, not an array: no allocation per capture)
        var slots: (Range<Int>?, Range<Int>?, Range<Int>?, Range<Int>?) = (nil, nil, nil, nil)
        s.space()
        guard s.take(UInt8(ascii: "{")) else { return nil }
        s.space()
        if !s.take(UInt8(ascii: "}")) {
            while true {
                s.space()
                guard let key = s.string(asciiOnly: true) else { return nil }
                s.space()
                guard s.take(UInt8(ascii: ":")) else { return nil }
                s.space()
                guard let value = s.string(asciiOnly: false) else { return nil }
                switch known(b, key) {
                case nil: break  // a newer writer's field: ignored, as the full parser does
                case .some(-1): return nil  // attachments: a list, the full parser's to read
                // A duplicate known key: the full parser words the error.
                case .some(0): if slots.0 != nil { return nil }; slots.0 = value
                case .some(1): if slots.1 != nil { return nil }; slots.1 = value
                case .some(2): if slots.2 != nil { return nil }; slots.2 = value
                default: if slots.3 != nil { return nil }; slots.3 = value
                }
                s.space()
                if s.take(UInt8(ascii: ",")) { continue }
                if s.take(UInt8(ascii: "}")) { break }
                return nil
            }
        }
        s.space()
        guard s.i == b.count else { return nil }
        if s.highBytes, UTF8Check.firstInvalidOffset(b) != nil { return nil }
        return Ranges(text: slots.0, at: slots.1, source: slots.2, page: slots.3)
    }

    /// A cursor over the file's bytes; every read is checked against the end.
    private struct Scanner {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        /// Some string held a byte >= 0x80: the whole file's UTF-8 is checked at the end.
        var highBytes = false

        init(_ b: UnsafeBufferPointer<UInt8>) { self.b = b }

        mutating func space() {
            while i < b.count {
                let c = b[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        /// Steps over `c` if it is next.
        mutating func take(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }

        /// An escape-free string starting at the quote at i; its byte range, or nil.
        @inline(__always)
        mutating func string(asciiOnly: Bool) -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = i
            var j = start
            // Eight bytes at a time up to the first that ends the string or refuses it (a quote, a
            // backslash, a control byte), which the byte loop below then takes first.
            var words: UInt64 = 0
            if let base = b.baseAddress {
                while j + 8 <= b.count {
                    let x = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
                    let stops = JSONWord.quoteBackslashOrControl(x)
                    if stops == 0 { words |= x; j += 8; continue }
                    let k = stops.trailingZeroBitCount >> 3  // the first such byte's place in the word
                    if k > 0 { words |= x & (UInt64.max >> (64 - 8 * k)) }
                    j += k
                    break
                }
            }
            var high: UInt8 = JSONWord.anyHigh(words) ? 0x80 : 0
            while j < b.count {
                let c = b[j]
                if c == UInt8(ascii: "\"") {
                    if high >= 0x80 { if asciiOnly { return nil }; highBytes = true }
                    i = j + 1
                    return start..<j
                }
                if c < 0x20 || c == UInt8(ascii: "\\") { return nil }
                high |= c
                j += 1
            }
            return nil
        }
    }

    /// 0 text, 1 captured_at, 2 source, 3 page, -1 attachments, nil for any other (ASCII) key. Told
    /// apart by length first: each known key is then one comparison.
    private static func known(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int? {
        @inline(__always) func equals(_ s: StaticString) -> Bool {
            let p = s.utf8Start
            for k in 0..<r.count where p[k] != b[r.lowerBound + k] { return false }
            return true
        }
        switch r.count {
        case 4: return equals("text") ? 0 : equals("page") ? 3 : nil
        case 6: return equals("source") ? 2 : nil
        case 11: return equals("captured_at") ? 1 : equals("attachments") ? -1 : nil
        default: return nil
        }
    }
}

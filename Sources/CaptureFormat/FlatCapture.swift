// FlatCapture: the capture decoder's fast path for the common shape — one object whose members are
// strings without escapes. It never throws: any other input (escapes, numbers, nesting, a BOM, a
// duplicate known key, a non-ASCII key, bad UTF-8) returns nil and the full parser decides.

enum FlatCapture {
    struct Fields { var text: JSONValue?; var at: JSONValue?; var source: JSONValue?; var page: JSONValue? }

    static func scan(_ b: [UInt8]) -> Fields? {
        b.withUnsafeBufferPointer { scan($0) }
    }

    private static func scan(_ b: UnsafeBufferPointer<UInt8>) -> Fields? {
        let n = b.count
        var i = 0
        var highBytes = false
        func space() { while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        /// An escape-free string starting at the quote at i; its byte range, or nil.
        func string(asciiOnly: Bool) -> Range<Int>? {
            guard i < n, b[i] == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            var j = start
            while j < n {
                let c = b[j]
                if c == UInt8(ascii: "\"") { i = j + 1; return start..<j }
                if c < 0x20 || c == UInt8(ascii: "\\") { return nil }
                if c >= 0x80 { if asciiOnly { return nil }; highBytes = true }
                j += 1
            }
            return nil
        }
        var f = Fields()
        // text, captured_at, source, page (locals, not an array: no allocation per capture)
        var text: Range<Int>?, at: Range<Int>?, source: Range<Int>?, page: Range<Int>?
        /// Records a known member's value; false on a duplicate (the full parser words the error).
        func take(_ slot: Int, _ value: Range<Int>) -> Bool {
            func put(_ r: inout Range<Int>?) -> Bool {
                if r != nil { return false }
                r = value
                return true
            }
            switch slot {
            case 0: return put(&text)
            case 1: return put(&at)
            case 2: return put(&source)
            default: return put(&page)
            }
        }
        space()
        guard i < n, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        space()
        if i < n, b[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                space()
                guard let key = string(asciiOnly: true) else { return nil }
                space()
                guard i < n, b[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                space()
                guard let value = string(asciiOnly: false) else { return nil }
                let slot = known(b, key)
                if slot == -1 { return nil }  // attachments: a list, the full parser's to read
                if let slot, !take(slot, value) { return nil }
                space()
                guard i < n else { return nil }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; break }
                return nil
            }
        }
        space()
        guard i == n else { return nil }
        if highBytes, UTF8Check.firstInvalidOffset(Array(b)) != nil { return nil }
        func str(_ r: Range<Int>?) -> JSONValue? {
            r.map { .string(String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self)) }
        }
        f.text = str(text); f.at = str(at); f.source = str(source); f.page = str(page)
        return f
    }

    /// 0 text, 1 captured_at, 2 source, 3 page, -1 attachments, nil for any other (ASCII) key.
    private static func known(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int? {
        func equals(_ s: StaticString) -> Bool {
            guard s.utf8CodeUnitCount == r.count else { return false }
            let p = s.utf8Start
            for k in 0..<r.count where p[k] != b[r.lowerBound + k] { return false }
            return true
        }
        if equals("text") { return 0 }
        if equals("captured_at") { return 1 }
        if equals("source") { return 2 }
        if equals("page") { return 3 }
        if equals("attachments") { return -1 }
        return nil
    }
}

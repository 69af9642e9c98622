// CaptureFile: the one encoder and decoder of an inbox file (SPEC 3.1). Writer and daemon both
// use it. Trim rule: leading and trailing white space is removed from `text`; what is left must be
// non-empty, at most 64 KiB of UTF-8, and free of C0 controls but tab and newline (CR LF and a lone CR
// are line breaks; text is data: a NUL or an escape sequence never reaches a page or a terminal);
// `source` has none at all; `page`, optional, names the page the block goes to (none, empty or
// "today": the capture's day in the journal), trimmed, at most 1 KiB, without control characters.
// Unknown fields are ignored; a repeated known field is refused.

/// What a writer puts in a file.
public struct Capture: Equatable, Sendable {
    public var text: String
    public var capturedAt: String?
    public var source: String?
    /// The page the block goes to; nil for the capture's day in the journal.
    public var page: String?

    public init(text: String, capturedAt: String? = nil, source: String? = nil, page: String? = nil) {
        self.text = text; self.capturedAt = capturedAt; self.source = source; self.page = page
    }
}

/// What a reader gets from a file that can become a block.
public struct DecodedCapture: Sendable {
    /// The text with leading/trailing white space trimmed (never empty).
    public var text: String
    /// nil when `captured_at` is missing, not a string, or not RFC 3339 with an offset.
    public var capturedAt: Timestamp?
    public var capturedAtRaw: String?
    /// "unknown" when missing.
    public var source: String
    /// Things a reader should log but that do not refuse the file.
    public var warnings: [String]
    /// The page the block goes to (`checkedPage`); nil for the capture's day in the journal.
    public var page: String? = nil
}

/// Why a file cannot become a block; `description` is one line for a `.reason` file or a journal field.
public enum CaptureFormatError: Error, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int)
    case notUTF8(offset: Int)
    case notJSON(String)
    case notAnObject(found: String)
    case textMissing
    case textNotString(found: String)
    case textEmpty
    case textTooLong(bytes: Int)
    case sourceNotString(found: String)
    case pageNotString(found: String)
    case pageTooLong(bytes: Int)
    case duplicateKey(String)
    /// A C0 control character (U+0000–U+001F) where none may be; `offset` is its UTF-8 byte.
    case controlCharacter(field: String, code: UInt8, offset: Int)

    public var description: String {
        switch self {
        case .tooLarge(let n): return "file over 1 MiB (\(n) bytes)"
        case .notUTF8(let o): return "not UTF-8 (invalid byte at offset \(o))"
        case .notJSON(let why): return why
        case .notAnObject(let k): return "not a JSON object (found \(k))"
        case .textMissing: return "text missing"
        case .textNotString(let k): return "text is not a string (found \(k))"
        case .textEmpty: return "text is empty after trimming white space (nothing visible)"
        case .textTooLong(let n): return "text over 64 KiB (\(n) bytes)"
        case .sourceNotString(let k): return "source is not a string (found \(k))"
        case .pageNotString(let k): return "page is not a string (found \(k))"
        case .pageTooLong(let n): return "page name over 1 KiB (\(n) bytes)"
        case .duplicateKey(let k): return "duplicate key \"\(k)\""
        case .controlCharacter(let f, let c, let o):
            let hex = String(c, radix: 16, uppercase: true)
            return "\(f) has the control character U+00\(c < 16 ? "0" : "")\(hex) at byte \(o)"
                + (f == "text" ? " (only tab and newline are allowed)" : "")
        }
    }
}

public enum CaptureFile {
    public static let maxFileBytes = 1 << 20
    public static let maxTextBytes = 64 << 10
    public static let maxPageBytes = 1 << 10

    /// One JSON object on one line, fields in a fixed order, ending in a newline.
    public static func encode(_ c: Capture) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(c.text.utf8.count + 96)
        out.append(contentsOf: Array("{\"text\":".utf8))
        JSON.appendString(c.text, to: &out)
        if let at = c.capturedAt {
            out.append(contentsOf: Array(",\"captured_at\":".utf8))
            JSON.appendString(at, to: &out)
        }
        if let s = c.source {
            out.append(contentsOf: Array(",\"source\":".utf8))
            JSON.appendString(s, to: &out)
        }
        if let p = c.page {
            out.append(contentsOf: Array(",\"page\":".utf8))
            JSON.appendString(p, to: &out)
        }
        out.append(contentsOf: Array("}\n".utf8))
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> DecodedCapture {
        if bytes.count > maxFileBytes { throw CaptureFormatError.tooLarge(bytes: bytes.count) }
        // What every writer of ours produces (a flat object of escape-free strings) is read without
        // a value tree; anything else, valid or not, takes the full parser below, which alone
        // decides errors, so both paths accept and refuse exactly the same files.
        if let f = FlatCapture.scan(bytes) { return try finish(text: f.text, at: f.at, source: f.source, page: f.page) }
        return try decodeFull(bytes)
    }

    /// The full parser alone; `decode` must always agree with it (a test compares the two).
    static func decodeFull(_ bytes: [UInt8]) throws -> DecodedCapture {
        if bytes.count > maxFileBytes { throw CaptureFormatError.tooLarge(bytes: bytes.count) }
        let value: JSONValue
        do {
            value = try JSON.parse(bytes)
        } catch JSONError.invalidUTF8(let o) {
            throw CaptureFormatError.notUTF8(offset: o)
        } catch let e as JSONError {
            throw CaptureFormatError.notJSON(e.description)
        }
        guard case .object(let members) = value else {
            throw CaptureFormatError.notAnObject(found: value.kindName)
        }
        var text: JSONValue?, at: JSONValue?, source: JSONValue?, page: JSONValue?
        for m in members {
            switch m.key {
            case "text":
                if text != nil { throw CaptureFormatError.duplicateKey("text") }
                text = m.value
            case "captured_at":
                if at != nil { throw CaptureFormatError.duplicateKey("captured_at") }
                at = m.value
            case "source":
                if source != nil { throw CaptureFormatError.duplicateKey("source") }
                source = m.value
            case "page":
                if page != nil { throw CaptureFormatError.duplicateKey("page") }
                page = m.value
            default:
                continue  // a newer writer's field: ignored on purpose
            }
        }
        return try finish(text: text, at: at, source: source, page: page)
    }

    /// The checks on the known fields, shared by the flat fast path and the full parser.
    static func finish(text: JSONValue?, at: JSONValue?, source: JSONValue?, page: JSONValue? = nil) throws -> DecodedCapture {
        guard let t = text else { throw CaptureFormatError.textMissing }
        guard case .string(let raw) = t else { throw CaptureFormatError.textNotString(found: t.kindName) }
        let trimmed = try checkedText(raw)

        var warnings: [String] = []
        var src = "unknown"
        if let s = source {
            guard case .string(let v) = s else { throw CaptureFormatError.sourceNotString(found: s.kindName) }
            try checkSource(v)
            src = v
        }
        var stamp: Timestamp?, stampRaw: String?
        switch at {
        case nil:
            warnings.append("captured_at missing")
        case .string(let v)?:
            stampRaw = v
            stamp = Timestamp(rfc3339: v)
            if stamp == nil { warnings.append("captured_at unparsable: \(oneLine(v, max: 80))") }
        case let other?:
            warnings.append("captured_at is not a string (found \(other.kindName))")
        }
        var target: String? = nil
        if let p = page {
            guard case .string(let v) = p else { throw CaptureFormatError.pageNotString(found: p.kindName) }
            target = try checkedPage(v)
        }
        return DecodedCapture(text: trimmed, capturedAt: stamp, capturedAtRaw: stampRaw,
                              source: src, warnings: warnings, page: target)
    }

    /// The page a capture names, as the writer stores it and the decoder reads it: trimmed; nil when
    /// that leaves nothing or "today" (any case), which mean the capture's day in the journal; at
    /// most 1 KiB of UTF-8 and without control characters (a page name is a file name and a title).
    public static func checkedPage(_ raw: String) throws -> String? {
        let name = trimWhitespace(raw)
        if name.isEmpty || name.lowercased() == "today" { return nil }
        if name.utf8.count > maxPageBytes { throw CaptureFormatError.pageTooLong(bytes: name.utf8.count) }
        if let (c, o) = firstControl(name, allowing: []) {
            throw CaptureFormatError.controlCharacter(field: "page", code: c, offset: o)
        }
        return name
    }

    /// The text a capture may carry, from what a writer or a file gave: line ends as LF (a CR LF
    /// typed on Windows and a lone CR of classic Mac OS are line breaks, not controls), trimmed (see
    /// `trimWhitespace`), non-empty, at most 64 KiB, and without control characters but tab and
    /// newline. The writer and the decoder both call this, so what one saves the other accepts.
    /// A leading byte-order mark (a file saved on Windows, piped in) is no part of the text, and
    /// text with nothing visible in it (only white space and default-ignorable characters such as
    /// U+200B ZERO WIDTH SPACE) is empty: it would be a block that looks like none.
    /// Idempotent: what a writer saves, the decoder reads back unchanged.
    public static func checkedText(_ raw: String) throws -> String {
        var trimmed = trimWhitespace(lineBreaksAsLF(raw))
        while trimmed.unicodeScalars.first == "\u{FEFF}" { trimmed = trimWhitespace(String(trimmed.unicodeScalars.dropFirst())) }
        if trimmed.isEmpty || !trimmed.unicodeScalars.contains(where: isVisible) { throw CaptureFormatError.textEmpty }
        if trimmed.utf8.count > maxTextBytes { throw CaptureFormatError.textTooLong(bytes: trimmed.utf8.count) }
        if let (c, o) = firstControl(trimmed, allowing: [0x09, 0x0A]) {
            throw CaptureFormatError.controlCharacter(field: "text", code: c, offset: o)
        }
        return trimmed
    }

    /// `s` with every CR LF and every lone CR written as LF.
    static func lineBreaksAsLF(_ s: String) -> String {
        guard s.utf8.contains(0x0D) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var afterCR = false
        for b in s.utf8 {
            if b == 0x0A && afterCR { afterCR = false; continue }
            afterCR = b == 0x0D
            out.append(afterCR ? 0x0A : b)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A source is a name: no control character at all.
    public static func checkSource(_ s: String) throws {
        if let (c, o) = firstControl(s, allowing: []) {
            throw CaptureFormatError.controlCharacter(field: "source", code: c, offset: o)
        }
    }

    /// Whether a scalar shows as something: not white space, not default-ignorable (zero-width
    /// spaces and joiners, format characters, variation selectors, a byte-order mark).
    static func isVisible(_ u: Unicode.Scalar) -> Bool {
        if u.value < 0x80 { return u.value > 0x20 && u.value != 0x7F }
        return !u.properties.isWhitespace && !u.properties.isDefaultIgnorableCodePoint
    }

    /// The first C0 control byte not in `allowing`, with its UTF-8 offset. (Every byte of a
    /// multi-byte UTF-8 sequence is 0x80 or above, so a byte scan cannot mistake one.)
    static func firstControl(_ s: String, allowing: [UInt8]) -> (UInt8, Int)? {
        var offset = 0
        for b in s.utf8 {
            if b < 0x20 && !allowing.contains(b) { return (b, offset) }
            offset += 1
        }
        return nil
    }

    /// Removes leading and trailing Unicode white space (spaces, tabs, newlines, NBSP, …).
    public static func trimWhitespace(_ s: String) -> String {
        // Fast path: an ASCII non-space byte at both ends is a non-white-space scalar at both ends.
        if let f = s.utf8.first, let l = s.utf8.last, f < 0x80, l < 0x80,
           f != 0x20, !(0x09...0x0D).contains(f), l != 0x20, !(0x09...0x0D).contains(l) { return s }
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }

    /// At most `max` characters of `s` on one line (line breaks and tabs become spaces), for listings.
    public static func oneLine(_ s: String, max: Int) -> String {
        var out = ""
        var n = 0
        for ch in s {
            if n == max { out += "…"; break }
            out.append(ch.isNewline || ch == "\t" ? " " : ch)
            n += 1
        }
        return out
    }
}

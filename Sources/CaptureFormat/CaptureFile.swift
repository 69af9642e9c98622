// CaptureFile: the one encoder and decoder of an inbox file (SPEC 3.1). Writer and daemon both
// use it. Trim rule: leading and trailing white space is removed from `text`; what is left must be
// non-empty, at most 64 KiB of UTF-8, and free of C0 controls but tab and newline (CR LF and a lone CR
// are line breaks; text is data: a NUL or an escape sequence never reaches a page or a terminal);
// `source` has none at all; `page`, optional, names the page the block goes to (none, empty or
// "today": the capture's day in the journal), trimmed, at most 1 KiB, without control characters;
// `attachments`, optional, lists at most 64 files delivered to the inbox before the capture file
// (`Attachment`), and with one or more the text may be empty (a screenshot without a caption).
// Unknown fields are ignored; a repeated known field is refused.

/// One file a capture carries: its inbox name (`CaptureName.attachmentFileName`), the name a
/// person gave it (shown as the link's text, the origin of the asset's name), its exact size and
/// its SHA-256, by which the drain knows the whole file has arrived.
public struct Attachment: Equatable, Sendable {
    public var file: String
    public var name: String
    public var size: Int
    /// 64 lower-case hex digits.
    public var sha256: String
    public init(file: String, name: String, size: Int, sha256: String) {
        self.file = file; self.name = name; self.size = size; self.sha256 = sha256
    }
}

/// What a writer puts in a file.
public struct Capture: Equatable, Sendable {
    public var text: String
    public var capturedAt: String?
    public var source: String?
    /// The page the block goes to; nil for the capture's day in the journal.
    public var page: String?
    public var attachments: [Attachment]

    public init(text: String, capturedAt: String? = nil, source: String? = nil, page: String? = nil,
                attachments: [Attachment] = []) {
        self.text = text; self.capturedAt = capturedAt; self.source = source; self.page = page
        self.attachments = attachments
    }
}

/// What a reader gets from a file that can become a block.
public struct DecodedCapture: Sendable {
    /// The text with leading/trailing white space trimmed; empty only when there are attachments.
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
    /// The files it carries, in the order the writer listed them (checked: `checkedAttachment`).
    public var attachments: [Attachment] = []
}

/// What `CaptureFile.decodeInPlace` reads: the fields of a capture file as ranges of its bytes.
public struct CaptureSpans: Sendable {
    /// The text, as it is (its own checked text).
    public var text: Range<Int>
    /// captured_at as written, and what it says.
    public var capturedAt: Range<Int>
    public var stamp: Timestamp
    /// nil: the file names none (`CaptureFile.unknownSource`).
    public var source: Range<Int>?
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
    case attachmentsNotList(found: String)
    case tooManyAttachments(Int)
    /// The `index`-th attachment (from 1) is unusable; `why` says how.
    case badAttachment(index: Int, why: String)
    /// A C0 control character (U+0000–U+001F) where none may be; `offset` is its UTF-8 byte.
    case controlCharacter(field: String, code: UInt8, offset: Int)
    /// An invisible format character (Unicode Cf: a bidi control such as U+202E, a byte-order mark,
    /// a soft hyphen) or a C1 control where a name must read as it is spelled.
    case invisibleCharacter(field: String, scalar: UInt32, offset: Int)

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
        case .attachmentsNotList(let k): return "attachments is not a list (found \(k))"
        case .tooManyAttachments(let n): return "\(n) attachments, over the limit of \(CaptureFile.maxAttachments)"
        case .badAttachment(let i, let why): return "attachment \(i): \(why)"
        case .controlCharacter(let f, let c, let o):
            let hex = String(c, radix: 16, uppercase: true)
            return "\(f) has the control character U+00\(c < 16 ? "0" : "")\(hex) at byte \(o)"
                + (f == "text" ? " (only tab and newline are allowed)" : "")
        case .invisibleCharacter(let f, let u, let o):
            let hex = String(u, radix: 16, uppercase: true)
            return "\(f) has the invisible character U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex) at byte \(o) "
                + "(a format or control character would make the name read other than it is)"
        }
    }
}

public enum CaptureFile {
    public static let maxFileBytes = 1 << 20
    public static let maxTextBytes = 64 << 10
    /// The source of a capture whose file names none.
    public static let unknownSource: StaticString = "unknown"
    public static let maxPageBytes = 1 << 10
    public static let maxAttachments = 64
    /// An attachment's display name: one file name's worth of UTF-8.
    public static let maxAttachmentNameBytes = 255
    /// The default size limit of one attachment (outld.conf's `attachment-limit` changes it).
    public static let defaultAttachmentLimit = 256 << 20

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
        if !c.attachments.isEmpty {
            out.append(contentsOf: Array(",\"attachments\":[".utf8))
            for (i, a) in c.attachments.enumerated() {
                out.append(contentsOf: Array((i == 0 ? "{\"file\":" : ",{\"file\":").utf8))
                JSON.appendString(a.file, to: &out)
                out.append(contentsOf: Array(",\"name\":".utf8))
                JSON.appendString(a.name, to: &out)
                out.append(contentsOf: Array(",\"size\":\(a.size),\"sha256\":".utf8))
                JSON.appendString(a.sha256, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(contentsOf: Array("}\n".utf8))
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> DecodedCapture {
        if bytes.count > maxFileBytes { throw CaptureFormatError.tooLarge(bytes: bytes.count) }
        // What every writer of ours produces (a flat object of escape-free strings) is read without
        // a value tree; anything else, valid or not, takes the full parser below, which alone
        // decides errors, so both paths accept and refuse exactly the same files.
        if let f = FlatCapture.scan(bytes) { return try finishStrings(text: f.text, at: f.at, source: f.source, page: f.page) }
        return try decodeFull(bytes)
    }

    /// The same from bytes in place (the drain's batch buffer): the common shape is read where it
    /// is; only a file for the full parser is copied.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> DecodedCapture {
        if bytes.count > maxFileBytes { throw CaptureFormatError.tooLarge(bytes: bytes.count) }
        if let f = FlatCapture.scan(bytes) { return try finishStrings(text: f.text, at: f.at, source: f.source, page: f.page) }
        return try decodeFull(Array(bytes))
    }

    /// A capture in the shape every writer of ours makes, read where its bytes are, with no String
    /// made: an escape-free flat object whose text is its own checked text, whose captured_at parses
    /// and whose source (if any) has no control character, with no page. For such a file `decode`
    /// gives exactly these fields (as Strings), no warning, no page and no attachment (a test holds
    /// the two equal); any other file is nil here and `decode`'s to read.
    public static func decodeInPlace(_ bytes: UnsafeBufferPointer<UInt8>) -> CaptureSpans? {
        guard bytes.count <= maxFileBytes, let r = FlatCapture.ranges(bytes), r.page == nil,
              let text = r.text, let at = r.at else { return nil }
        guard isCheckedTextAsIs(UnsafeBufferPointer(rebasing: bytes[text])),
              let stamp = Timestamp(rfc3339: UnsafeBufferPointer(rebasing: bytes[at])) else { return nil }
        if let s = r.source, firstControl(UnsafeBufferPointer(rebasing: bytes[s]), allowed: 0) != nil { return nil }
        return CaptureSpans(text: text, capturedAt: at, stamp: stamp, source: r.source)
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
        var text: JSONValue?, at: JSONValue?, source: JSONValue?, page: JSONValue?, attachments: JSONValue?
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
            case "attachments":
                if attachments != nil { throw CaptureFormatError.duplicateKey("attachments") }
                attachments = m.value
            default:
                continue  // a newer writer's field: ignored on purpose
            }
        }
        return try finish(text: text, at: at, source: source, page: page, attachments: attachments)
    }

    /// The checks on the known fields, shared by the flat fast path and the full parser.
    static func finish(text: JSONValue?, at: JSONValue?, source: JSONValue?, page: JSONValue? = nil,
                       attachments: JSONValue? = nil) throws -> DecodedCapture {
        // The attachments first: with one or more, a missing or empty text is a capture without a caption.
        var files: [Attachment] = []
        if let list = attachments {
            guard case .array(let items) = list else { throw CaptureFormatError.attachmentsNotList(found: list.kindName) }
            if items.count > maxAttachments { throw CaptureFormatError.tooManyAttachments(items.count) }
            for (i, item) in items.enumerated() { files.append(try checkedAttachment(item, index: i + 1)) }
        }
        // Each member's type is checked just before its value, as `finishStrings` checks the values,
        // so a file with two faults is refused for the same one on either path.
        let trimmed: String
        switch text {
        case nil, .string?: trimmed = try finishedText(text.flatMap(\.stringValue), hasFiles: !files.isEmpty)
        case let t?: throw CaptureFormatError.textNotString(found: t.kindName)
        }
        var warnings: [String] = []
        if let s = source, s.stringValue == nil { throw CaptureFormatError.sourceNotString(found: s.kindName) }
        let src = try finishedSource(source?.stringValue)
        var stamp: Timestamp?, stampRaw: String?
        if let other = at, other.stringValue == nil {
            warnings.append("captured_at is not a string (found \(other.kindName))")
        } else {
            (stamp, stampRaw) = finishedStamp(at?.stringValue, &warnings)
        }
        if let p = page, p.stringValue == nil { throw CaptureFormatError.pageNotString(found: p.kindName) }
        let target = try page.flatMap(\.stringValue).flatMap(checkedPage)
        return DecodedCapture(text: trimmed, capturedAt: stamp, capturedAtRaw: stampRaw,
                              source: src, warnings: warnings, page: target, attachments: files)
    }

    /// `finish` of members that are all strings (or absent) and no attachments: the flat reader's,
    /// with no JSON value made of them.
    static func finishStrings(text: String?, at: String?, source: String?, page: String?) throws -> DecodedCapture {
        let trimmed = try finishedText(text, hasFiles: false)
        var warnings: [String] = []
        let src = try finishedSource(source)
        let (stamp, stampRaw) = finishedStamp(at, &warnings)
        let target = try page.flatMap(checkedPage)
        return DecodedCapture(text: trimmed, capturedAt: stamp, capturedAtRaw: stampRaw,
                              source: src, warnings: warnings, page: target, attachments: [])
    }

    /// The text a capture keeps; with attachments, a missing or empty one is a capture without a caption.
    private static func finishedText(_ raw: String?, hasFiles: Bool) throws -> String {
        guard let raw else {
            if hasFiles { return "" }
            throw CaptureFormatError.textMissing
        }
        do { return try checkedText(raw) } catch CaptureFormatError.textEmpty where hasFiles { return "" }
    }

    private static func finishedSource(_ v: String?) throws -> String {
        guard let v else { return "\(unknownSource)" }
        try checkSource(v)
        return v
    }

    /// The time a capture says it was made, as written and parsed; a warning when it is missing or
    /// unparsable (the drain then uses its id's time).
    private static func finishedStamp(_ v: String?, _ warnings: inout [String]) -> (Timestamp?, String?) {
        guard let v else {
            warnings.append("captured_at missing")
            return (nil, nil)
        }
        let stamp = Timestamp(rfc3339: v)
        if stamp == nil { warnings.append("captured_at unparsable: \(oneLine(v, max: 80))") }
        return (stamp, v)
    }

    /// One entry of `attachments`: an object whose `file` is a plain name (the drain holds it to
    /// the one name `CaptureName.attachmentFileName` gives), `name` a display name (trimmed,
    /// non-empty, at most 255 bytes, no control character, no slash), `size` a non-negative integer
    /// and `sha256` 64 hex digits (kept in lower case). Other members are ignored.
    static func checkedAttachment(_ v: JSONValue, index: Int) throws -> Attachment {
        func bad(_ why: String) -> CaptureFormatError { .badAttachment(index: index, why: why) }
        guard case .object(let members) = v else { throw bad("not an object (found \(v.kindName))") }
        var fields: [String: JSONValue] = [:]
        for m in members where ["file", "name", "size", "sha256"].contains(m.key) {
            if fields[m.key] != nil { throw bad("duplicate key \"\(m.key)\"") }
            fields[m.key] = m.value
        }
        func string(_ key: String) throws -> String {
            guard let f = fields[key] else { throw bad("\(key) missing") }
            guard case .string(let s) = f else { throw bad("\(key) is not a string (found \(f.kindName))") }
            return s
        }
        let file = try string("file")
        if file.isEmpty || file.utf8.count > 255 || file.hasPrefix(".") || file.utf8.contains(UInt8(ascii: "/"))
            || firstControl(file, allowing: []) != nil {
            throw bad("file is not a plain file name")
        }
        let name = try checkedAttachmentName(try string("name"), index: index)
        guard let sizeValue = fields["size"] else { throw bad("size missing") }
        guard case .number(let digits) = sizeValue, !digits.isEmpty, digits.utf8.count <= 15,
              digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let size = Int(digits) else {
            throw bad("size is not a whole number of bytes")
        }
        let hash = try string("sha256").lowercased()
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw bad("sha256 is not 64 hex digits")
        }
        return Attachment(file: file, name: name, size: size, sha256: hash)
    }

    /// An attachment's display name as the writer stores it and the decoder reads it.
    public static func checkedAttachmentName(_ raw: String, index: Int) throws -> String {
        let name = trimWhitespace(raw)
        func bad(_ why: String) -> CaptureFormatError { .badAttachment(index: index, why: why) }
        if name.isEmpty { throw bad("name is empty") }
        if name.utf8.count > maxAttachmentNameBytes { throw bad("name over \(maxAttachmentNameBytes) bytes (\(name.utf8.count))") }
        if name.utf8.contains(UInt8(ascii: "/")) { throw bad("name has a slash (a name, not a path)") }
        if let (c, o) = firstControl(name, allowing: []) {
            throw bad("name has the control character U+00\(c < 16 ? "0" : "")\(String(c, radix: 16, uppercase: true)) at byte \(o)")
        }
        return name
    }

    /// The page a capture names, as the writer stores it and the decoder reads it: trimmed; nil when
    /// that leaves nothing or "today" (any case), which mean the capture's day in the journal; at
    /// most 1 KiB of UTF-8 and without control characters (a page name is a file name and a title),
    /// nor invisible format characters (`firstInvisible`).
    public static func checkedPage(_ raw: String) throws -> String? {
        let name = trimWhitespace(raw)
        if name.isEmpty || name.lowercased() == "today" { return nil }
        if name.utf8.count > maxPageBytes { throw CaptureFormatError.pageTooLong(bytes: name.utf8.count) }
        if let (c, o) = firstControl(name, allowing: []) {
            throw CaptureFormatError.controlCharacter(field: "page", code: c, offset: o)
        }
        if let (u, o) = firstInvisible(name) { throw CaptureFormatError.invisibleCharacter(field: "page", scalar: u, offset: o) }
        return name
    }

    /// The first scalar of `s` (with its UTF-8 offset) that would make a name read other than it is
    /// spelled: a format character (general category Cf: bidi controls such as U+202E, U+FEFF, U+00AD)
    /// or a C1 control. The zero-width joiners U+200C and U+200D are kept: Persian, Indic scripts and
    /// emoji sequences need them in a word. ASCII has none, so an ASCII name costs one pass.
    static func firstInvisible(_ s: String) -> (UInt32, Int)? {
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return nil }
        var offset = 0
        for u in s.unicodeScalars {
            let cat = u.properties.generalCategory
            if (cat == .format && u.value != 0x200C && u.value != 0x200D) || (0x80...0x9F).contains(u.value) { return (u.value, offset) }
            offset += UTF8.width(u)
        }
        return nil
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
        // Nearly every text: printable ASCII at both ends (nothing to trim, no BOM, a visible first
        // scalar), no CR and no control but TAB and LF, within the limit. It is its own checked text,
        // found by one pass over its bytes; anything else takes the checks below.
        var text = raw
        return text.withUTF8(isCheckedTextAsIs) ? text : try checkedTextFully(raw)
    }

    /// Whether text of these bytes (valid UTF-8) is its own checked text, `checkedTextFully`'s
    /// checks read from them: within the limit, no control but tab and newline (so no CR), no
    /// white space at either end and no byte-order mark first, and something visible. Nearly every
    /// text begins and ends in printable ASCII, which says all but the controls at once.
    @inline(__always)
    static func isCheckedTextAsIs(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let f = b.first, let l = b.last, b.count <= maxTextBytes else { return false }
        for c in b where c < 0x20 && c != 0x09 && c != 0x0A { return false }
        if (0x21...0x7E).contains(f), (0x21...0x7E).contains(l) { return true }
        return endsAsIs(b)
    }

    /// The rest of `isCheckedTextAsIs` for a text with a scalar other than printable ASCII at an end.
    static func endsAsIs(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        // The last scalar begins at the last byte that is no continuation byte (10xxxxxx).
        var start = b.count - 1
        while start > 0, b[start] & 0xC0 == 0x80 { start -= 1 }
        guard let first = scalar(b, at: 0), let last = scalar(b, at: start),
              !first.properties.isWhitespace, first != "\u{FEFF}", !last.properties.isWhitespace else { return false }
        if b.contains(where: { (0x21...0x7E).contains($0) }) { return true }
        var i = 0
        while i < b.count {
            guard let u = scalar(b, at: i) else { return false }
            if isVisible(u) { return true }
            i += UTF8.width(u)
        }
        return false
    }

    /// The scalar whose UTF-8 begins at `i`.
    private static func scalar(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Unicode.Scalar? {
        var bytes = UnsafeBufferPointer(rebasing: b[i..<min(i + 4, b.count)]).makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let u) = decoder.decode(&bytes) { return u }
        return nil
    }

    /// The checks of `checkedText` one by one, whatever the text (a test holds the two equal).
    static func checkedTextFully(_ raw: String) throws -> String {
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
        // Over the bytes in place, the allowed controls as a mask (a source is checked per capture).
        var allowed: UInt32 = 0
        for a in allowing where a < 0x20 { allowed |= 1 << UInt32(a) }
        var s = s
        return s.withUTF8 { firstControl($0, allowed: allowed) }
    }

    /// The same over bytes, the allowed controls as a mask (bit n allows byte n).
    @inline(__always)
    static func firstControl(_ b: UnsafeBufferPointer<UInt8>, allowed: UInt32) -> (UInt8, Int)? {
        for i in b.indices where b[i] < 0x20 && allowed >> UInt32(b[i]) & 1 == 0 { return (b[i], i) }
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

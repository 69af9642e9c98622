// ShareLink: "a share becomes one line". Parses `outl://capture?text=…&url=…&title=…` links and
// folds text, url and title into the single Markdown line that becomes the block. The one copy of this rule.

public struct ShareLinkError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

public enum ShareLink {
    /// One line from the parts of a share (each may be nil or blank):
    /// title + url -> `[title](url)`; text + url -> `text url`; text + title + url ->
    /// `text [title](url)`; without a url, title and text -> `title: text`. Runs of white space
    /// (line breaks included) become one space. Nil when every part is blank.
    public static func line(text: String?, url: String?, title: String?) -> String? {
        let t = text.map(collapse).flatMap { $0.isEmpty ? nil : $0 }
        let u = url.map(collapse).flatMap { $0.isEmpty ? nil : $0 }
        let ti = title.map(collapse).flatMap { $0.isEmpty ? nil : $0 }
        var link: String?
        if let u {
            let safeURL = markdownURL(u)
            link = ti.map { "[\(markdownLabel($0))](\(safeURL))" } ?? u
        }
        switch (t, link, ti) {
        case let (t?, l?, _): return "\(t) \(l)"
        case let (nil, l?, _): return l
        case let (t?, nil, ti?): return "\(ti): \(t)"
        case let (t?, nil, nil): return t
        case let (nil, nil, ti?): return ti
        default: return nil
        }
    }

    /// Parses an `outl://capture?…` link. Query values are percent-decoded with `+` as a space;
    /// a bad escape, invalid UTF-8, a repeated parameter or another scheme/host is an error.
    /// `source` names the sharing application, `page` (read by `page(uri:)`) the page the capture
    /// goes to. Unknown parameters are ignored, and so is
    /// everything from the first `#` on (the link's fragment: a URL with a fragment must be passed
    /// percent-encoded, as encodeURIComponent does, or its fragment and later parameters are lost).
    public static func parse(uri: String) throws -> (text: String?, url: String?, title: String?, source: String?) {
        let found = try parameters(uri: uri)
        return (found["text"], found["url"], found["title"], found["source"])
    }

    /// The link's `page=` (the page the capture goes to), nil when it has none.
    public static func page(uri: String) throws -> String? { try parameters(uri: uri)["page"] }

    /// The link's known parameters, decoded.
    static func parameters(uri: String) throws -> [String: String] {
        var rest = Substring(uri)
        guard rest.lowercased().hasPrefix("outl:") else { throw ShareLinkError("not an outl: link") }
        rest = rest.dropFirst(5)
        guard rest.hasPrefix("//") else { throw ShareLinkError("expected outl://capture?…") }
        rest = rest.dropFirst(2)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let host: Substring, query: Substring
        if let q = rest.firstIndex(of: "?") {
            host = rest[..<q]; query = rest[rest.index(after: q)...]
        } else {
            host = rest; query = ""
        }
        var h = host
        while h.hasSuffix("/") { h = h.dropLast() }
        guard h.lowercased() == "capture" else {
            throw ShareLinkError("unknown outl: action \"\(h)\" (expected outl://capture)")
        }
        var found: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let key: Substring, value: Substring
            if let eq = pair.firstIndex(of: "=") {
                key = pair[..<eq]; value = pair[pair.index(after: eq)...]
            } else {
                key = pair; value = ""
            }
            let k = try percentDecode(key)
            guard k == "text" || k == "url" || k == "title" || k == "source" || k == "page" else { continue }
            if found[k] != nil { throw ShareLinkError("parameter \"\(k)\" given twice") }
            found[k] = try percentDecode(value)
        }
        return found
    }

    /// application/x-www-form-urlencoded decoding of one component.
    static func percentDecode(_ s: Substring) throws -> String {
        var out: [UInt8] = []
        let b = Array(s.utf8)
        var i = 0
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "+"): out.append(0x20); i += 1
            case UInt8(ascii: "%"):
                guard i + 2 < b.count, let hi = hexValue(b[i + 1]), let lo = hexValue(b[i + 2]) else {
                    throw ShareLinkError("invalid percent escape at character \(i + 1) of \"\(s.prefix(40))\"")
                }
                out.append(hi << 4 | lo); i += 3
            default: out.append(b[i]); i += 1
            }
        }
        if let bad = UTF8Check.firstInvalidOffset(out) {
            throw ShareLinkError("link parameter is not UTF-8 after decoding (byte \(bad))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    static func collapse(_ s: String) -> String {
        var out = ""
        var pendingSpace = false
        for sc in s.unicodeScalars {
            if sc.properties.isWhitespace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" "); pendingSpace = false }
                out.unicodeScalars.append(sc)
            }
        }
        return out
    }

    /// Brackets and backslashes in a link label are escaped so the label cannot end the link.
    static func markdownLabel(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ch == "[" || ch == "]" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    /// Spaces and parentheses in a link target are percent-encoded so the target stays one token.
    static func markdownURL(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case " ": out += "%20"
            case "(": out += "%28"
            case ")": out += "%29"
            default: out.append(ch)
            }
        }
        return out
    }
}

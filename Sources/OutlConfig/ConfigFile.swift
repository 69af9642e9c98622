// ConfigFile: `~/.config/outl/outld.conf`, read by every program through OutlConfig. Lines are
// `key = value`, `#` comments and blank lines. A line that cannot mean exactly one thing is refused
// with the file, its line number and one sentence, and nothing is created from it: an unknown key,
// a key given twice, a quoted value, `~user`, a relative path, a comment after a value.
// To add a key: one entry in `keys`, one field, one case in `set`.
import SystemCalls

struct ConfigFile: Equatable {
    var workspace: String?
    var inboxes: [String] = []
    /// How new days' journal files are named: `yyyy_MM_dd` (Logseq's, the default) or `yyyy-MM-dd`.
    var journalFileFormat: String?
    /// The page `outl-capture` captures to when no --page is given (none: the journal).
    var page: String?
    /// The largest attachment a writer delivers and the drain takes, in bytes (`attachment-limit`).
    var attachmentLimit: Int?
    /// Which of a capture's record its page shows (`page-properties`): words, checked.
    var pageProperties: String?

    /// Every key the file may hold, and whether it may be given more than once.
    static let keys: [String: Bool] = ["workspace": false, "inbox": true, "journal-file-format": false, "page": false, "attachment-limit": false,
                                          "page-properties": false]

    /// Takes one line's value; `line` interprets it (paths) and words its errors.
    mutating func set(_ key: String, _ value: String, _ line: ConfigLine) throws {
        switch key {
        case "workspace": workspace = try line.path(value)
        case "inbox": inboxes.append(try line.path(value))
        case "journal-file-format":
            // Exactly as Logseq writes them: in its date format YYYY is the week year and DD the
            // day of the year, so another spelling is not a harmless variant.
            guard ["yyyy_MM_dd", "yyyy-MM-dd"].contains(value) else {
                throw line.error("journal-file-format is yyyy_MM_dd or yyyy-MM-dd, spelled so (YYYY and DD mean other things), not \"\(value)\"")
            }
            journalFileFormat = value
        case "page": page = value
        case "page-properties":
            let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            guard !words.isEmpty, words.allSatisfy({ ["captured-at", "source", "none"].contains($0) }),
                  !(words.contains("none") && words.count > 1) else {
                throw line.error("page-properties is captured-at, source, both (captured-at source) or none, not \"\(value)\"")
            }
            pageProperties = words.joined(separator: " ")
        case "attachment-limit":
            guard let n = ConfigFile.byteSize(value), n >= 1, n <= ConfigFile.maxAttachmentLimit else {
                throw line.error("attachment-limit is a size from 1 to 16G: bytes, or a number followed by K, M or G (1024-based), not \"\(value)\"")
            }
            attachmentLimit = n
        default: throw line.error("unknown key \"\(key)\"")  // unreachable: `keys` is checked first
        }
    }

    static let maxAttachmentLimit = 16 << 30

    /// `256M`, `1G`, `4096`, `512K` (also `MiB` and the like): a whole number of bytes, 1024-based.
    static func byteSize(_ value: String) -> Int? {
        var digits = Substring(value)
        var unit = 1
        for (suffixes, u) in [(["K", "KiB", "k"], 1 << 10), (["M", "MiB"], 1 << 20), (["G", "GiB"], 1 << 30)] {
            if let s = suffixes.first(where: { value.hasSuffix($0) }) { digits = value.dropLast(s.count); unit = u; break }
        }
        guard !digits.isEmpty, digits.count <= 12, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(digits) else { return nil }
        let (bytes, overflow) = n.multipliedReportingOverflow(by: unit)  // 999999999999G must be refused, not trap
        return overflow ? nil : bytes
    }

    /// The file at `path`, or nil when there is none.
    static func read(_ path: String, home: String) throws -> ConfigFile? {
        let bytes: [UInt8]
        do {
            bytes = try Durable.readRegularFile(path, limit: 1 << 20)
        } catch let e as Errno where e == .ENOENT || e == .ENOTDIR {
            return nil
        } catch {
            throw ConfigError("\(path): cannot read: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError("\(path): not UTF-8 text")
        }
        return try parse(text, path: path, home: home)
    }

    static func parse(_ text: String, path: String, home: String) throws -> ConfigFile {
        var c = ConfigFile()
        var firstSeen: [String: Int] = [:]
        for (n, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = ConfigLine(file: path, number: n + 1, home: home)
            let trimmed = trim(rawLine)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let eq = trimmed.firstIndex(of: "=") else { throw line.error("expected `key = value`") }
            let key = trim(trimmed[..<eq])
            let value = trim(trimmed[trimmed.index(after: eq)...])
            guard let repeatable = keys[key] else { throw line.error("unknown key \"\(key)\"") }
            if !repeatable, let first = firstSeen[key] {
                throw line.error("\(key) is given twice (first on line \(first)); keep one")
            }
            firstSeen[key] = firstSeen[key] ?? n + 1
            guard !value.isEmpty else { throw line.error("empty value for \(key)") }
            if let q = value.first, q == "\"" || q == "'" || value.last == "\"" || value.last == "'" {
                throw line.error("\(key) = \(value): quotes are not removed; write the value without them")
            }
            if value.contains(" #") || value.contains("\t#") {
                throw line.error("\(key) = \(value): a comment must be on a line of its own")
            }
            try c.set(key, value, line)
        }
        return c
    }

    static func trim(_ s: Substring) -> String {
        var t = s
        while let f = t.first, f == " " || f == "\t" || f == "\r" { t.removeFirst() }
        while let l = t.last, l == " " || l == "\t" || l == "\r" { t.removeLast() }
        return String(t)
    }
}

/// Where a value came from, so each refusal names the file and the line.
struct ConfigLine {
    let file: String
    let number: Int
    let home: String

    func error(_ sentence: String) -> ConfigError { ConfigError("\(file):\(number): \(sentence)") }

    /// An absolute directory, or one under `~/`.
    func path(_ value: String) throws -> String {
        switch PathSpelling.interpret(value, home: home, relativeAllowed: false) {
        case .success(let p): return p
        case .failure(let why): throw error("\(value): \(why)")
        }
    }
}

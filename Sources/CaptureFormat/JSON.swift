// JSON: the small reader and writer behind the capture format (RFC 8259, strict).
// The reader takes untrusted bytes: it validates UTF-8 first, refuses lone surrogates and raw
// control characters, bounds nesting depth, and reports byte offsets, so a bad file gets a reason.
// What an escape stands for is JSONEscape's (shared with the op log's reader).
import JSONText

/// A parsed JSON value. Numbers keep their text: the capture format never computes with them.
/// Not `indirect`: its recursion goes through arrays, so a string value is no box of its own.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in file order; duplicates are kept so the caller can refuse them.
    case object([(key: String, value: JSONValue)])

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return Array(x.utf8) == Array(y.utf8)
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count
                && zip(x, y).allSatisfy { Array($0.key.utf8) == Array($1.key.utf8) && $0.value == $1.value }
        default: return false
        }
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

public enum JSONError: Error, Equatable, CustomStringConvertible {
    case invalidUTF8(offset: Int)
    case syntax(String, offset: Int)

    public var description: String {
        switch self {
        case .invalidUTF8(let o): return "not UTF-8 (invalid byte at offset \(o))"
        case .syntax(let why, let o): return "not JSON: \(why) at byte \(o)"
        }
    }
}

public enum JSON {
    /// Deeper nesting than this is refused rather than risking the stack on a hostile file.
    public static let maxDepth = 64

    /// Parses one JSON document (surrounding whitespace allowed, a leading UTF-8 BOM skipped).
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        if let bad = UTF8Check.firstInvalidOffset(bytes) { throw JSONError.invalidUTF8(offset: bad) }
        var p = JSONReader(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.pos = 3 }
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.pos != bytes.count { throw JSONError.syntax("trailing data", offset: p.pos) }
        return v
    }

    /// Appends `s` as a JSON string literal: quotes, backslashes and every control character are
    /// escaped (U+2028/2029 too, so the output is also valid JavaScript); the rest stays UTF-8.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20, 0x7F, 0x2028, 0x2029:
                out.append(contentsOf: Array("\\u".utf8))
                out.append(contentsOf: hex4(scalar.value))
            default:
                out.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func hex4(_ v: UInt32) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return [12, 8, 4, 0].map { digits[Int((v >> UInt32($0)) & 0xF)] }
    }
}

extension JSONValue {
    /// The value as one JSON document for a script to read: members in the order given (so a
    /// document's field list is stable), two spaces of indentation, and a final newline.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        append(to: &out, indent: 0)
        out.append(10)
        return out
    }

    private func append(to out: inout [UInt8], indent: Int) {
        func newline(_ n: Int) {
            out.append(10)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * n))
        }
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): JSON.appendString(s, to: &out)
        case .array(let items):
            guard !items.isEmpty else { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (i, v) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                v.append(to: &out, indent: indent + 1)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                JSON.appendString(m.key, to: &out)
                out.append(contentsOf: ": ".utf8)
                m.value.append(to: &out, indent: indent + 1)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A number from an integer.
    public static func int<I: BinaryInteger>(_ n: I) -> JSONValue { .number(String(n)) }
    /// A string, or null.
    public static func nullable(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
}

/// UTF-8 validation with the offset of the first bad byte (overlongs, surrogates and code points
/// above U+10FFFF are invalid, as RFC 3629 says).
public enum UTF8Check {
    public static func firstInvalidOffset(_ b: [UInt8]) -> Int? {
        b.withUnsafeBufferPointer { firstInvalidOffset($0) }
    }

    public static func firstInvalidOffset(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            var need = 0
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; hi = 0x9F
            case 0xF0: need = 3; lo = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; hi = 0x8F
            default: return i
            }
            if i + need >= n { return i }
            if !(lo...hi).contains(b[i + 1]) { return i }
            var k = 2
            while k <= need {
                if !(0x80...0xBF).contains(b[i + k]) { return i }
                k += 1
            }
            i += need + 1
        }
        return nil
    }
}

/// The recursive-descent reader. Input is already known to be valid UTF-8.
struct JSONReader {
    let bytes: [UInt8]
    var pos = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    func fail(_ why: String) -> JSONError { .syntax(why, offset: pos) }

    mutating func value(depth: Int) throws -> JSONValue {
        guard pos < bytes.count else { throw fail("unexpected end") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard bytes.count - pos >= w.count, Array(bytes[pos..<pos + w.count]) == w else {
            throw fail("invalid literal")
        }
        pos += w.count
    }

    mutating func object(depth: Int) throws -> JSONValue {
        if depth > JSON.maxDepth { throw fail("nested too deeply") }
        pos += 1
        var members: [(key: String, value: JSONValue)] = []
        skipSpace()
        if pos < bytes.count && bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(members) }
        while true {
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try string()
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            skipSpace()
            let v = try value(depth: depth)
            members.append((key, v))
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end in object") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func array(depth: Int) throws -> JSONValue {
        if depth > JSON.maxDepth { throw fail("nested too deeply") }
        pos += 1
        var items: [JSONValue] = []
        skipSpace()
        if pos < bytes.count && bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end in array") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func number() throws -> String {
        let start = pos
        func digits(_ p: inout Int, _ b: [UInt8]) -> Int {
            let s = p
            while p < b.count && (0x30...0x39).contains(b[p]) { p += 1 }
            return p - s
        }
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count, (0x30...0x39).contains(bytes[pos]) else { throw fail("invalid number") }
        if bytes[pos] == UInt8(ascii: "0") { pos += 1 } else { _ = digits(&pos, bytes) }
        if pos < bytes.count && bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            if digits(&pos, bytes) == 0 { throw fail("invalid number") }
        }
        if pos < bytes.count && (bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E")) {
            pos += 1
            if pos < bytes.count && (bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-")) { pos += 1 }
            if digits(&pos, bytes) == 0 { throw fail("invalid number") }
        }
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    /// A string literal; `pos` is at the opening quote.
    mutating func string() throws -> String {
        pos += 1
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count else { throw fail("unterminated string") }
            let c = bytes[pos]
            if c == UInt8(ascii: "\"") { pos += 1; break }
            if c < 0x20 { throw fail("raw control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); pos += 1; continue }
            let escStart = pos
            let (decoded, next) = JSONEscape.decode(bytes, at: pos)
            switch decoded {
            case .byte(let b):
                out.append(b)
                pos = next
            case .unit(var v):
                pos = next
                if (0xDC00...0xDFFF).contains(v) {
                    throw JSONError.syntax("lone low surrogate", offset: escStart)
                }
                if (0xD800...0xDBFF).contains(v) {
                    guard bytes.count - pos >= 6, bytes[pos] == 0x5C, bytes[pos + 1] == UInt8(ascii: "u") else {
                        throw JSONError.syntax("lone high surrogate", offset: escStart)
                    }
                    let (second, after) = JSONEscape.decode(bytes, at: pos)
                    if case .badHexDigit(let at) = second { pos = at; throw fail("invalid \\u escape") }
                    guard case .unit(let low) = second, (0xDC00...0xDFFF).contains(low) else {
                        throw JSONError.syntax("lone high surrogate", offset: escStart)
                    }
                    pos = after
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                out.append(contentsOf: UTF8.encode(Unicode.Scalar(v)!)!)
            case .unterminated:
                pos = next
                throw fail("unterminated escape")
            case .shortUnicode:
                pos = next
                throw fail("short \\u escape")
            case .badHexDigit(let at):
                pos = at
                throw fail("invalid \\u escape")
            case .unknown:
                throw fail("invalid escape")  // at the backslash
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

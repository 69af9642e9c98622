// Hand-written cases for the JSON reader and writer: every escape, surrogate pairs, and the
// inputs it must refuse (invalid UTF-8, lone surrogates, raw control characters, bad syntax).
import Testing
@testable import CaptureFormat

private func parse(_ s: String) throws -> JSONValue { try JSON.parse(Array(s.utf8)) }
private func str(_ s: String) throws -> String {
    guard case .string(let v) = try parse(s) else { Issue.record("not a string: \(s)"); return "" }
    return v
}

@Test func every_simple_escape_decodes() throws {
    #expect(Array(try str(#""\"\\\/\b\f\n\r\t""#).utf8) == [0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09])
}

@Test func unicode_escapes_decode_including_surrogate_pairs() throws {
    #expect(try str(#""\u0041\u00e9\u4E2D""#) == "Aé中")
    #expect(Array(try str(#""\u0000""#).utf8) == [0])
    #expect(try str(#""\ud83d\ude00 ok""#) == "😀 ok")
    #expect(try str(#""\uD834\uDD1E""#) == "𝄞")
}

@Test func lone_surrogates_are_refused() {
    #expect(throws: JSONError.self) { try parse(#""\ud83d""#) }
    #expect(throws: JSONError.self) { try parse(#""\ud83d\u0041""#) }
    #expect(throws: JSONError.self) { try parse(#""\ude00""#) }
    #expect(throws: JSONError.self) { try parse(#""\ud83dx""#) }
}

@Test func raw_control_characters_and_bad_escapes_are_refused() {
    #expect(throws: JSONError.self) { try JSON.parse([0x22, 0x0A, 0x22]) }
    #expect(throws: JSONError.self) { try JSON.parse([0x22, 0x00, 0x22]) }
    #expect(throws: JSONError.self) { try parse(#""\x41""#) }
    #expect(throws: JSONError.self) { try parse(#""\u12""#) }
    #expect(throws: JSONError.self) { try parse(#""\u12G4""#) }
}

@Test func invalid_utf8_is_refused_with_its_offset() {
    let cases: [[UInt8]] = [
        [0x22, 0xFF, 0x22],              // never valid
        [0x22, 0xC0, 0xAF, 0x22],        // overlong "/"
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // an encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xE2, 0x82, 0x22],        // truncated sequence
        [0x22, 0xE2, 0x82],              // truncated at end of input
    ]
    for c in cases {
        #expect(throws: JSONError.invalidUTF8(offset: 1)) { try JSON.parse(c) }
    }
}

@Test func syntax_errors_name_a_byte_offset() {
    for bad in ["", "{", "{\"a\" 1}", "{\"a\":1,}", "[1,]", "01", "1.", "-", "1e", "tru", "{} x", "{'a':1}", "nul"] {
        do {
            _ = try parse(bad)
            Issue.record("accepted \(bad)")
        } catch let e as JSONError {
            #expect(e.description.hasPrefix("not JSON: "), "\(bad): \(e)")
        } catch {
            Issue.record("wrong error \(error)")
        }
    }
}

@Test func numbers_literals_arrays_and_nested_objects_parse() throws {
    let v = try parse(#" {"a": [1, -0.5e+3, true, false, null, {"b": []}], "c": {}} "#)
    #expect(v == .object([
        ("a", .array([.number("1"), .number("-0.5e+3"), .bool(true), .bool(false), .null, .object([("b", .array([]))])])),
        ("c", .object([])),
    ]))
}

@Test func nesting_beyond_the_limit_is_refused_not_a_crash() {
    let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    #expect(throws: JSONError.self) { try parse(deep) }
}

@Test func writer_escapes_quotes_backslashes_and_controls() {
    var out: [UInt8] = []
    JSON.appendString("a\"b\\c\n\t\u{0}\u{1F}\u{7F}\u{2028}é😀", to: &out)
    #expect(String(decoding: out, as: UTF8.self) == #""a\"b\\c\n\t\u0000\u001f\u007f\u2028é😀""#)
}

/// A document outl writes for scripts (`outl status --json`) reads back as the value it was made
/// from, members in the order given, whatever its strings hold.
@Test func an_encoded_document_parses_back_to_its_value() throws {
    let v = JSONValue.object([
        ("text", .string("quote \" backslash \\ tab \t newline \n escape \u{1B}[31m nul \u{0} U+2028 \u{2028} ünï 🧪")),
        ("n", .int(-42)), ("big", .int(Int64.max)), ("none", .nullable(nil)), ("yes", .bool(true)),
        ("empty", .array([])), ("obj", .object([])),
        ("list", .array([.object([("a", .int(1)), ("b", .array([.null, .bool(false), .string("")]))])])),
    ])
    let bytes = v.encoded()
    #expect(bytes.last == 10)
    #expect(!bytes.contains { $0 < 0x20 && $0 != 10 && $0 != 32 }, "a raw control byte")
    #expect(try JSON.parse(bytes) == v)
    guard case .object(let members) = try JSON.parse(bytes) else { Issue.record("not an object"); return }
    #expect(members.map(\.key) == ["text", "n", "big", "none", "yes", "empty", "obj", "list"])
}

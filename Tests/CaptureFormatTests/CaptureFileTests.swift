// The capture file codec: the accepted shape, every rejection reason, the trim rule, and a
// round-trip property over random strings built from the characters that break naive encoders.
import Testing
@testable import CaptureFormat

private func decode(_ s: String) throws -> DecodedCapture { try CaptureFile.decode(Array(s.utf8)) }

@Test func a_spec_example_decodes_with_its_day_in_its_own_offset() throws {
    let c = try decode(#"{"text": "buy oat milk", "captured_at": "2026-12-01T23:58:07.120-05:00", "source": "cli"}"#)
    #expect(c.text == "buy oat milk")
    #expect(c.source == "cli")
    #expect(c.capturedAt?.dayString == "2026-12-01")
    #expect(c.capturedAtRaw == "2026-12-01T23:58:07.120-05:00")
    #expect(c.warnings.isEmpty)
}

@Test func unknown_fields_are_ignored_and_missing_source_is_unknown() throws {
    let c = try decode(#"{"v": 2, "text": "x", "extra": {"deep": [1, {"k": null}]}, "captured_at": "2026-01-01T00:00:00Z"}"#)
    #expect(c.text == "x")
    #expect(c.source == "unknown")
}

@Test func a_bad_or_missing_captured_at_is_a_warning_not_a_rejection() throws {
    let a = try decode(#"{"text": "x", "captured_at": "yesterday"}"#)
    #expect(a.capturedAt == nil && a.capturedAtRaw == "yesterday")
    #expect(a.warnings == ["captured_at unparsable: yesterday"])
    let b = try decode(#"{"text": "x", "captured_at": 17}"#)
    #expect(b.capturedAt == nil && b.warnings.count == 1)
    let c = try decode(#"{"text": "x"}"#)
    #expect(c.capturedAt == nil && c.warnings == ["captured_at missing"])
    let d = try decode(#"{"text": "x", "captured_at": "2026-12-01T23:58:07"}"#)  // no offset
    #expect(d.capturedAt == nil)
}

@Test func text_is_trimmed_and_inner_lines_are_kept() throws {
    let c = try decode(#"{"text": " \n\t first\n  second \u00a0\n"}"#)
    #expect(c.text == "first\n  second")
}

@Test func crlf_and_a_lone_cr_are_line_breaks_in_the_writer_and_the_decoder_alike() throws {
    #expect(try decode(#"{"text": "é\rx\r\ny\r\rz\r"}"#).text == "é\nx\ny\n\nz")
    #expect(try CaptureFile.checkedText("mac\rline ends\r") == "mac\nline ends")
    // Idempotent: what the writer saved the decoder reads back unchanged.
    let saved = try CaptureFile.checkedText("a\r\n\rb")
    #expect(saved == "a\n\nb")
    #expect(try CaptureFile.checkedText(saved) == saved)
}

@Test func tab_and_newline_are_the_only_control_characters_text_may_carry() throws {
    #expect(try decode(#"{"text": "a\tb\nc"}"#).text == "a\tb\nc")
    #expect(try CaptureFile.checkedText("x\u{7F}y") == "x\u{7F}y")  // DEL is not a C0 control
    for code: UInt8 in 0..<0x20 where code != 0x09 && code != 0x0A && code != 0x0D {
        let text = "a" + String(UnicodeScalar(code)) + "b"
        #expect(throws: CaptureFormatError.controlCharacter(field: "text", code: code, offset: 1)) {
            try CaptureFile.checkedText(text)
        }
    }
    #expect(CaptureFormatError.controlCharacter(field: "text", code: 0x1B, offset: 4).description
            == "text has the control character U+001B at byte 4 (only tab and newline are allowed)")
}

/// checkedText takes most texts as they are after one pass over their bytes: for every text, short
/// texts over the bytes that decide it (ends, spaces, controls, CR, DEL, a BOM, NBSP, a combining
/// mark, invisible and white space scalars beyond ASCII) and longer random ones, it gives what the checks one by one give, text or error.
@Test func the_as_is_path_of_checked_text_agrees_with_the_checks_one_by_one() {
    let pieces = ["a", "Z", "~", "!", " ", "\t", "\n", "\r", "\u{1}", "\u{1F}", "\u{7F}", "\u{FEFF}", "\u{A0}", "\u{301}", "é", "🧪",
                  "\u{200B}", "\u{85}", "\u{3000}", "\u{FE0F}", "\u{E0001}", "\u{2028}"]
    func outcome(_ f: (String) throws -> String, _ t: String) -> String {
        do { return "ok " + (try f(t)) } catch { return "error \(error)" }
    }
    var texts = [""]
    for a in pieces { texts.append(a); for b in pieces { texts.append(a + b); for c in pieces { texts.append(a + b + c) } } }
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<2000 { texts.append((0..<Int.random(in: 1...12, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()) }
    texts.append(String(repeating: "x", count: CaptureFile.maxTextBytes + 1))
    texts.append(String(repeating: "x", count: CaptureFile.maxTextBytes))
    for t in texts {
        #expect(outcome(CaptureFile.checkedText, t) == outcome(CaptureFile.checkedTextFully, t), "\(Array(t.utf8))")
    }
}

@Test func each_rejection_has_its_own_one_line_reason() {
    let cases: [(String, CaptureFormatError)] = [
        ("[1]", .notAnObject(found: "an array")),
        ("\"text\"", .notAnObject(found: "a string")),
        ("{}", .textMissing),
        (#"{"text": 5}"#, .textNotString(found: "a number")),
        (#"{"text": null}"#, .textNotString(found: "null")),
        (#"{"text": " \n\t "}"#, .textEmpty),
        (#"{"text": ""}"#, .textEmpty),
        (#"{"text": "x", "source": ["cli"]}"#, .sourceNotString(found: "an array")),
        (#"{"text": "a", "text": "b"}"#, .duplicateKey("text")),
        (#"{"text": "a", "source": "x", "source": "y"}"#, .duplicateKey("source")),
        (#"{"text": "a", "captured_at": "x", "captured_at": "y"}"#, .duplicateKey("captured_at")),
        (#"{"text": "a\u0000b"}"#, .controlCharacter(field: "text", code: 0, offset: 1)),
        (#"{"text": "see \u001b[31mred"}"#, .controlCharacter(field: "text", code: 0x1B, offset: 4)),
        (#"{"text": "a", "source": "c\tli"}"#, .controlCharacter(field: "source", code: 0x09, offset: 1)),
    ]
    for (input, expected) in cases {
        #expect(throws: expected, "\(input)") { try decode(input) }
        #expect(!expected.description.contains("\n"))
    }
    #expect(throws: CaptureFormatError.notUTF8(offset: 9)) { try CaptureFile.decode(Array(#"{"text": "#.utf8) + [0xFF, 0x22, 0x7D]) }
    do {
        _ = try decode(#"{"text": "x",}"#)
        Issue.record("accepted a trailing comma")
    } catch let e as CaptureFormatError {
        #expect(e.description.hasPrefix("not JSON:") && e.description.contains("at byte 13"))
    } catch { Issue.record("\(error)") }
}

@Test func size_limits_are_enforced_for_text_and_file() throws {
    let max = String(repeating: "a", count: CaptureFile.maxTextBytes)
    #expect(try CaptureFile.decode(CaptureFile.encode(Capture(text: max))).text.utf8.count == CaptureFile.maxTextBytes)
    #expect(throws: CaptureFormatError.textTooLong(bytes: CaptureFile.maxTextBytes + 1)) {
        try CaptureFile.decode(CaptureFile.encode(Capture(text: max + "b")))
    }
    let huge = [UInt8](repeating: 0x20, count: CaptureFile.maxFileBytes + 1)
    #expect(throws: CaptureFormatError.tooLarge(bytes: CaptureFile.maxFileBytes + 1)) { try CaptureFile.decode(huge) }
}

@Test func encode_writes_one_line_with_the_three_fields() {
    let bytes = CaptureFile.encode(Capture(text: "say \"hi\"\nnow", capturedAt: "2026-12-01T23:58:07.120-05:00", source: "cli"))
    #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"text":"say \"hi\"\nnow","captured_at":"2026-12-01T23:58:07.120-05:00","source":"cli"}"# + "\n")
}

/// SplitMix64: a seeded generator, so a failing case can be reproduced from its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Quotes, backslashes, NUL and other controls, newlines, emoji (with ZWJ and skin tones),
/// RTL text, combining marks, U+2028, a BOM, and any scalar at all.
func randomText(_ rng: inout SeededRandom) -> String {
    let pieces: [String] = ["\"", "\\", "\u{0}", "\n", "\r\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "/",
                            "😀", "👩‍👩‍👧", "👍🏽", "שלום", "مرحبا", "\u{202E}", "e\u{301}", "\u{2028}",
                            "\u{FEFF}", "\\u0041", "a", " ", "中文", "{\"text\":1}"]
    var s = ""
    for _ in 0..<Int.random(in: 1...40, using: &rng) {
        if Bool.random(using: &rng) {
            s += pieces.randomElement(using: &rng)!
        } else {
            var v: UInt32
            repeat { v = UInt32.random(in: 0...0x10FFFF, using: &rng) } while (0xD800...0xDFFF).contains(v)
            s.unicodeScalars.append(Unicode.Scalar(v)!)
        }
    }
    return s
}

/// CR LF and a lone CR as LF, written apart from the format's own rule.
func lineBreaksAsLF(_ s: String) -> String {
    var out = ""
    var afterCR = false
    for u in s.unicodeScalars {
        if u == "\n" && afterCR { afterCR = false; continue }
        afterCR = u == "\r"
        out.unicodeScalars.append(afterCR ? "\n" : u)
    }
    return out
}

@Test func round_trip_over_random_strings_is_exact() throws {
    var rng = SeededRandom(state: 0x5EED_0071)
    /// The string without the control characters a field may not carry.
    func clean(_ s: String, keeping: Set<UInt32>) -> String {
        var out = ""
        out.unicodeScalars.append(contentsOf: s.unicodeScalars.filter { $0.value >= 0x20 || keeping.contains($0.value) })
        return out
    }
    for _ in 0..<3000 {
        // Non-blank ends: the trim rule is tested separately. CR LF and a lone CR are line breaks.
        let raw = lineBreaksAsLF("x" + randomText(&rng) + "y")
        let rawSource = randomText(&rng)
        let text = clean(raw, keeping: [0x09, 0x0A]), source = clean(rawSource, keeping: [])
        let bytes = CaptureFile.encode(Capture(text: text, capturedAt: "2026-12-01T23:58:07.120-05:00", source: source))
        #expect(!bytes.dropLast().contains(0x0A), "encoded capture spans lines")
        let back = try CaptureFile.decode(bytes)
        #expect(Array(back.text.unicodeScalars) == Array(text.unicodeScalars))
        #expect(Array(back.source.unicodeScalars) == Array(source.unicodeScalars))
        // The same strings with their control characters are refused, never stored.
        if raw != text || rawSource != source {
            let bad = CaptureFile.encode(Capture(text: raw, capturedAt: "2026-12-01T23:58:07.120-05:00", source: rawSource))
            #expect {
                try CaptureFile.decode(bad)
            } throws: { e in
                guard case .controlCharacter(let field, _, _)? = e as? CaptureFormatError else { return false }
                return field == (raw != text ? "text" : "source")
            }
        }
        // And the generic JSON value round-trips too (keys included).
        var keyed: [UInt8] = [UInt8(ascii: "{")]
        JSON.appendString(rawSource, to: &keyed)
        keyed.append(UInt8(ascii: ":"))
        JSON.appendString(raw, to: &keyed)
        keyed.append(UInt8(ascii: "}"))
        #expect(try JSON.parse(keyed) == .object([(rawSource, .string(raw))]))
    }
}

/// A byte-order mark and invisible-only text, by the format's one rule: what the writer keeps is
/// what the decoder reads back, and text with nothing to see is empty for both.
@Test func a_leading_byte_order_mark_is_no_text_and_the_rule_is_idempotent() throws {
    for (raw, want) in [("\u{FEFF}buy milk", "buy milk"), (" \u{FEFF} \u{FEFF}x\u{FEFF}", "x\u{FEFF}"),
                        ("\u{FEFF}\n  two\nlines ", "two\nlines"), ("a\u{200B}b", "a\u{200B}b")] {
        let once = try CaptureFile.checkedText(raw)
        #expect(once == want, "\(raw.unicodeScalars.map { $0.value })")
        #expect(try CaptureFile.checkedText(once) == once)
        let decoded = try CaptureFile.decode(CaptureFile.encode(Capture(text: once, capturedAt: "2026-12-02T10:00:00Z")))
        #expect(decoded.text == once)
    }
    for invisible in ["\u{FEFF}", "\u{200B}\u{200C}\u{200D}\u{2060}", "\u{00A0}\u{3000}", "\u{00AD}", "\u{FE0F}"] {
        #expect(throws: CaptureFormatError.textEmpty) { try CaptureFile.checkedText(invisible) }
        let file = Array("{\"text\":\"\(invisible)\"}\n".utf8)
        #expect(throws: CaptureFormatError.textEmpty) { try CaptureFile.decode(file) }
    }
}

@Test func a_page_is_written_and_read_back_and_today_or_nothing_is_the_journal() throws {
    let bytes = CaptureFile.encode(Capture(text: "a book", capturedAt: "2026-12-02T10:00:00Z", source: "cli", page: "Reading list"))
    #expect(String(decoding: bytes, as: UTF8.self) == #"{"text":"a book","captured_at":"2026-12-02T10:00:00Z","source":"cli","page":"Reading list"}"# + "\n")
    #expect(try CaptureFile.decode(bytes).page == "Reading list")
    #expect(try decode(#"{"text": "x"}"#).page == nil)
    for journal in ["", "  ", "today", "Today", " TODAY "] {
        #expect(try decode(#"{"text": "x", "page": "\#(journal)"}"#).page == nil, "\(journal)")
    }
    #expect(try decode(#"{"text": "x", "page": "  Ideas \u00e9 "}"#).page == "Ideas é")
    #expect(throws: CaptureFormatError.pageNotString(found: "a number")) { try decode(#"{"text": "x", "page": 5}"#) }
    #expect(throws: CaptureFormatError.duplicateKey("page")) { try decode(#"{"text": "x", "page": "a", "page": "b"}"#) }
    #expect(throws: CaptureFormatError.controlCharacter(field: "page", code: 0x1B, offset: 1)) { try decode(#"{"text": "x", "page": "a\u001bb"}"#) }
    #expect(throws: CaptureFormatError.pageTooLong(bytes: 1025)) { try CaptureFile.checkedPage(String(repeating: "p", count: 1025)) }
    #expect(try CaptureFile.checkedPage(String(repeating: "p", count: 1024))?.utf8.count == 1024)
}

/// A page name reads as it is spelled: a bidi override (which shows `txt.exe` as `exe.txt`), a
/// byte-order mark, a soft hyphen or a C1 control is refused, in the writer and the decoder alike;
/// the zero-width joiners a Persian word or an emoji sequence needs are kept.
@Test func a_page_name_with_an_invisible_format_character_is_refused() throws {
    for (name, scalar, offset) in [("a\u{202E}b", 0x202E, 1), ("\u{FEFF}x\u{FEFF}", 0xFEFF, 0), ("Re\u{00AD}port", 0xAD, 2),
                                   ("é\u{0085}x", 0x85, 2), ("\u{2066}Notes", 0x2066, 0)] {
        #expect(throws: CaptureFormatError.invisibleCharacter(field: "page", scalar: UInt32(scalar), offset: offset)) {
            try CaptureFile.checkedPage(name)
        }
    }
    #expect(throws: CaptureFormatError.invisibleCharacter(field: "page", scalar: 0x202E, offset: 3)) {
        try decode(#"{"text": "x", "page": "abc\u202Edef"}"#)
    }
    for kept in ["می\u{200C}خواهم", "👨\u{200D}👩\u{200D}👧 family", "Ideas é"] {
        #expect(try CaptureFile.checkedPage(kept) == kept)
    }
}

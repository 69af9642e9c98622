// FastPathTests: the decoder's flat fast path (FlatCapture) and the full JSON parser must accept and
// refuse exactly the same files, with the same values and the same one-line reasons.
@testable import CaptureFormat
import Testing

struct FastPathTests {
    func outcome(_ f: () throws -> DecodedCapture) -> String {
        do {
            let d = try f()
            return "ok text=\(Array(d.text.utf8)) at=\(d.capturedAtRaw ?? "-") src=\(d.source) page=\(d.page ?? "-") att=\(d.attachments.map { "\($0.file)|\($0.name)|\($0.size)|\($0.sha256)" }) w=\(d.warnings)"
        } catch {
            return "error \(error)"
        }
    }

    @Test func fast_and_full_decoders_agree_on_tricky_and_random_files() {
        var inputs: [[UInt8]] = [
            #"{"text":"buy oat milk","captured_at":"2026-12-01T23:58:07.120-05:00","source":"cli"}"#,
            #"{"text":"a","text":"b"}"#, #"{"source":"x","source":"y","text":"t"}"#,
            #"{"text":"  "}"#, #"{"text":""}"#, #"{"text":"x","mood":"great"}"#, #"{"text":"x","n":1}"#,
            #"{"text":"x","captured_at":"yesterday"}"#, #"{"text":"x","captured_at":5}"#, #"{"text":"x","source":5}"#,
            #" { "text" : "spaced" , "source" : "s" } "#, #"{"text":"x"} trailing"#, #"{"text":"x",}"#,
            #"{"text":"ünïcødé 🧪"}"#, #"{"tëxt":"x","text":"y"}"#, #"{"text":"tab\there"}"#, "{}", "[]", "",
            #"{"text":"x""#, "\u{FEFF}{\"text\":\"bom\"}",
        ].map { Array($0.utf8) }
        inputs.append([0x7B, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D])  // bad UTF-8
        inputs.append(Array(#"{"text":"a"#.utf8) + [0x0A, 0x00] + Array(#""}"#.utf8))              // raw controls
        // The flat reader steps over eight bytes at a time: an escape, a raw control byte, a
        // non-ASCII or a DEL byte, and the closing quote, at every place of the first words.
        // The fast path must also take what is its own (a fall back to the full parser would agree
        // with it, and hide a scanner that stops short), and only that.
        let plain = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        let specials: [([UInt8], Bool)] = [(#"\""#, false), (#"\\"#, false), ("\n", false), ("\t", false), ("\u{1}", false),
                                           ("é", true), ("\u{7F}", true), ("🧪", true)].map { (Array($0.0.utf8), $0.1) }
            + [([0xC3, 0x28], false), ([0xFF], false), ([0xE2, 0x82], false)]  // not UTF-8: the full parser's to refuse
        for (special, flat) in specials {
            for place in 0...19 {
                for length in [place, place + 1, 24] where length >= place {
                    let value = plain[..<place] + special + plain[place..<length]
                    let file = Array(#"{"text":""#.utf8) + value + Array(#"","source":"s"}"#.utf8)
                    #expect((FlatCapture.scan(file) != nil) == flat, "\(String(decoding: file, as: UTF8.self).debugDescription)")
                    inputs.append(file)
                }
            }
        }
        for length in 0...24 {
            let file = Array(#"{"text":""#.utf8) + plain[..<length] + Array(#"","source":"bench"}"#.utf8)
            #expect(FlatCapture.scan(file)?.text == String(decoding: plain[..<length], as: UTF8.self))
            inputs.append(file)
        }
        // Random flat objects built from pieces that stress the scanner's edges.
        var rng = SystemRandomNumberGenerator()
        let keys = ["text", "captured_at", "source", "page", "x", "tëxt", "text ", "attachments"]
        let values = ["\"v\"", "\"\"", "\"  pad  \"", "\"a\\\"b\"", "\"\\u00e9\"", "\"é\"", "1", "null", "\"2026-12-02T10:00:00Z\"", "\"\u{7F}\"", "\"today\"", "\" Reading list \"", "[]", "\"a.att\"",
                      #"[{"file":"01JEXAMPLE0000000000000000.1.att","name":"a.png","size":3,"sha256":"\#(String(repeating: "ab", count: 32))"}]"#]
        for _ in 0..<3000 {
            let n = Int.random(in: 0...4, using: &rng)
            let members = (0..<n).map { _ in "\"\(keys.randomElement(using: &rng)!)\":\(values.randomElement(using: &rng)!)" }
            let ws = [" ", "", "\n", "\t"]
            inputs.append(Array(("{" + members.joined(separator: "," + ws.randomElement(using: &rng)!) + "}").utf8))
        }
        for input in inputs {
            let full = outcome { try CaptureFile.decodeFull(input) }
            #expect(outcome { try CaptureFile.decode(input) } == full, "\(String(decoding: input, as: UTF8.self).debugDescription)")
            // The drain decodes in place, from its batch buffer: the same outcome, read from bytes
            // that end where the file does (a word past them is another file's, or unmapped).
            let inPlace = input.withUnsafeBufferPointer { b in outcome { try CaptureFile.decode(b) } }
            #expect(inPlace == full, "in place: \(String(decoding: input, as: UTF8.self).debugDescription)")
        }
    }

    /// `decodeInPlace` reads a file only when `decode` would give exactly its fields (as Strings),
    /// with no warning, no page and no attachment; every other file is left to `decode`. What our
    /// writer saves is read in place (a reader that never read anything would also agree).
    @Test func reading_in_place_gives_what_decode_gives_or_leaves_the_file_to_it() {
        // Raw characters the flat reader takes (spaces, white space and invisible scalars at either end,
        // DEL, non-ASCII), and escapes and raw controls it leaves to the full parser.
        let texts = ["buy oat milk", " lead", "trail ", "\u{A0}x", "x\u{A0}", "a\u{2028}b", "é", "xé", "éx", "", " ",
                     "\u{200B}x", "x\u{200B}", "\u{200B}", "\u{FEFF}x", "x\u{7F}", "\u{7F}", "- [ ] task", "TODO x", "&amp;", "#+BEGIN",
                     String(repeating: "w", count: 70_000), String(repeating: "w", count: 65_536), "\\tx", "a\\nb", "a\\u0001b", "a\\\\b",
                     "\tx", "a\u{1}b", "~", "\u{85}x", "x\u{85}", "x\u{3000}", "\u{3000}x", "\u{1680}", "\u{301}x", "x\u{E0001}", "🧪",
                     "\u{FE0F}", "\u{FE0F}\u{200B}", "日本語", "x\u{2029}"]
        let stamps = [nil, "2026-12-01T23:58:07.120-05:00", "2026-12-02T10:00:00Z", "yesterday", "2026-13-01T00:00:00Z",
                      "2026-12-02T10:00:00", "9999-12-31T23:59:59+14:00", "0000-01-01T00:00:00Z"]
        let sources = [nil, "cli", "", "a\u{1}b", "a\\u0001b", "ünï", "hot key", "x\u{7F}"]
        let pages = [nil, "Reading list", "today", " "]
        var inputs: [[UInt8]] = []
        for t in texts { for a in stamps { for s in sources { for p in pages {
            var members = ["\"text\":\"\(t)\""]
            if let a { members.append("\"captured_at\":\"\(a)\"") }
            if let s { members.append("\"source\":\"\(s)\"") }
            if let p { members.append("\"page\":\"\(p)\"") }
            inputs.append(Array(("{" + members.joined(separator: ",") + "}").utf8))
        } } } }
        inputs += [#"{"captured_at":"2026-12-02T10:00:00Z"}"#, #"{"text":5,"captured_at":"2026-12-02T10:00:00Z"}"#,
                   #"{"text":"x","captured_at":5}"#, #"{"text":"x","captured_at":"2026-12-02T10:00:00Z","source":5}"#,
                   #"{"text":"x","text":"y","captured_at":"2026-12-02T10:00:00Z"}"#, #"{"text":"x","captured_at":"2026-12-02T10:00:00Z","n":1}"#,
                   #"{"text":"x","captured_at":"2026-12-02T10:00:00Z","mood":"ok"}"#].map { Array($0.utf8) }
        var read = 0
        for input in inputs {
            let spans = input.withUnsafeBufferPointer { CaptureFile.decodeInPlace($0) }
            guard let spans else { continue }
            read += 1
            let field = { (r: Range<Int>) in String(decoding: input[r], as: UTF8.self) }
            let what = String(decoding: input, as: UTF8.self).debugDescription
            guard let d = try? CaptureFile.decode(input) else { Issue.record("read in place, refused by decode: \(what)"); continue }
            #expect(d.text == field(spans.text) && d.capturedAtRaw == field(spans.capturedAt) && d.capturedAt == spans.stamp, "\(what)")
            #expect(d.source == spans.source.map(field) ?? "\(CaptureFile.unknownSource)", "\(what)")
            #expect(d.warnings.isEmpty && d.page == nil && d.attachments.isEmpty, "\(what)")
        }
        #expect(read > 50)
        // What our writer saves, with its time and source, is read in place when it needs no escape.
        for text in ["buy oat milk", "a\nb", "C:\\Users", "ünïcødé 🧪", "日本語のメモ", "- [ ] task", "\"quoted\""] {
            let file = CaptureFile.encode(Capture(text: text, capturedAt: "2026-12-01T23:58:07.120-05:00", source: "cli"))
            let spans = file.withUnsafeBufferPointer { CaptureFile.decodeInPlace($0) }
            #expect(spans != nil || text.contains("\"") || text.contains("\\") || text.contains("\n"), "\(text.debugDescription)")
        }
        let plain = CaptureFile.encode(Capture(text: "buy oat milk", capturedAt: "2026-12-01T23:58:07.120-05:00", source: "cli"))
        #expect(plain.withUnsafeBufferPointer { CaptureFile.decodeInPlace($0) }?.stamp == Timestamp(rfc3339: "2026-12-01T23:58:07.120-05:00"))
    }
}

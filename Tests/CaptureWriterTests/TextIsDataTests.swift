// Text a capture carries is data, never control (SPEC 5): NUL and the other C0 controls but tab
// and newline are refused with 65 from standard input, arguments, --uri and --source alike; an
// argument that is not UTF-8 is refused as standard input is; --list never prints a control
// character raw. Real outl-capture processes.
import Foundation
import Testing
import CaptureFormat
import TestSupport

@Test func control_characters_are_refused_from_every_input_with_65() throws {
    let s = Sandbox()
    let cases: [(args: [String], stdin: [UInt8]?, says: String)] = [
        (["-"], Array("a".utf8) + [0] + Array("b\n".utf8), "U+0000"),
        ([], Array("title\u{1B}]0;owned\u{07}\n".utf8), "U+001B"),
        (["ring", "the\u{07}bell"], nil, "U+0007"),
        (["--uri", "outl://capture?text=x%1B%5B2Jy"], nil, "U+001B"),
        (["--uri", "outl://capture?title=a%00b&url=https://e.x"], nil, "U+0000"),
        (["--source", "c\nli", "x"], nil, "source has the control character U+000A"),
        (["--uri", "outl://capture?text=x&source=a%09b"], nil, "source has the control character U+0009"),
    ]
    for c in cases {
        let r = try s.capture(c.args, stdin: c.stdin)
        #expect(r.status == 65, "\(c.args): \(r.stderr)")
        #expect(r.stderr.hasPrefix("outl-capture: ") && r.stderr.contains(c.says), "\(c.args): \(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1 && !r.stderr.utf8.contains(0x1B), "\(r.stderr)")
    }
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func tab_newline_crlf_and_lone_cr_line_ends_are_text() throws {
    let s = Sandbox()
    #expect(try s.capture(["-"], stdin: Array("one\ttwo\r\nthree\r\n".utf8)).status == 0)
    // Classic Mac OS line ends, from standard input and from an argument.
    #expect(try s.capture(["-"], stdin: Array("four\rfive\r".utf8)).status == 0)
    #expect(try s.capture(["lone\rcarriage return"]).status == 0)
    #expect(try captures(in: s.inbox).map(\.capture.text).sorted() == ["four\nfive", "lone\ncarriage return", "one\ttwo\nthree"])
}

@Test func an_argument_that_is_not_utf8_is_refused_like_standard_input() throws {
    let s = Sandbox()
    // Foundation passes arguments as Strings; a shell passes the raw byte.
    let r = try run("/bin/sh", ["-c", #"exec "$0" "caf$(printf '\351')" latte"#, writer], env: s.baseEnv)
    #expect(r.status == 65, "\(r.stderr)")
    #expect(r.stderr == "outl-capture: argument 1 is not UTF-8 (byte 3); nothing saved\n", "\(r.stderr)")
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func list_shows_control_characters_escaped_and_names_what_will_be_rejected() throws {
    let s = Sandbox()
    try FileManager.default.createDirectory(atPath: s.inbox, withIntermediateDirectories: true)
    // Another writer's files: an escape sequence in a field the drain keeps (an unparsable time),
    // and one in the text, which the drain will set aside.
    try writeText(s.inbox + "/01ARZ3NDEKTSV4RRFFQ69G5FAA.json", #"{"text":"ok","captured_at":"\u001b[2J","source":"x\u009bq"}"#)
    try writeText(s.inbox + "/01ARZ3NDEKTSV4RRFFQ69G5FAB.json", #"{"text":"a\u001b[31mred"}"#)
    let r = try s.capture(["--list"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(!r.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
            "a raw control character reached the terminal: \(r.stdout.debugDescription)")
    let lines = r.stdout.split(separator: "\n").map(String.init)
    #expect(lines == [
        #"01ARZ3NDEKTSV4RRFFQ69G5FAA  \x1B[2J  x\u009Bq  ok"#,
        "01ARZ3NDEKTSV4RRFFQ69G5FAB  -  -  (will be rejected: text has the control character U+001B at byte 1 (only tab and newline are allowed))",
    ], "\(lines)")
}

@Test func list_says_nothing_waiting_on_stderr() throws {
    let s = Sandbox()
    let r = try s.capture(["--list"])
    #expect(r.status == 0 && r.stdout.isEmpty)
    #expect(r.stderr == "outl-capture: nothing waiting\n")
}

@Test func uri_keeps_a_source_parameter_and_the_flag_wins() throws {
    let s = Sandbox()
    #expect(try s.capture(["--uri", "outl://capture?text=from+the+phone&source=android"]).status == 0)
    #expect(try s.capture(["--uri", "outl://capture?text=flag+wins&source=android", "--source", "script"]).status == 0)
    #expect(try s.capture(["--uri", "outl://capture?text=plain"]).status == 0)
    let got = try captures(in: s.inbox).map { "\($0.capture.source): \($0.capture.text)" }
    #expect(got == ["android: from the phone", "script: flag wins", "share: plain"])
}

@Test func double_dash_makes_the_rest_text() throws {
    let s = Sandbox()
    #expect(try s.capture(["--", "--list", "-", "--prompt"]).status == 0)
    #expect(try captures(in: s.inbox).map(\.capture.text) == ["--list - --prompt"])
}

@Test func a_dash_among_words_is_text_and_alone_reads_standard_input() throws {
    let s = Sandbox()
    #expect(try s.capture(["meeting", "3", "-", "4pm"]).status == 0)
    #expect(try s.capture(["-"], stdin: Array("piped\n".utf8)).status == 0)
    #expect(try s.capture(["--source", "script", "-"], stdin: Array("piped with a flag\n".utf8)).status == 0)
    #expect(try s.capture(["--", "-"]).status == 0)  // after --, a lone - is text too
    #expect(try captures(in: s.inbox).map(\.capture.text) == ["meeting 3 - 4pm", "piped", "piped with a flag", "-"])
}

@Test func a_byte_order_mark_is_dropped_and_invisible_text_is_empty() throws {
    let s = Sandbox()
    // A file saved on Windows, piped in: the mark is not part of the line.
    #expect(try s.capture(["-"], stdin: [0xEF, 0xBB, 0xBF] + Array("from notepad\r\n".utf8)).status == 0)
    #expect(try captures(in: s.inbox).map(\.capture.text) == ["from notepad"])
    // Nothing visible: no-break and zero-width spaces, a word joiner, a lone mark.
    for invisible in ["\u{00A0}\u{00A0}", "\u{200B}", " \u{200B}\u{2060} ", "\u{FEFF}", "\u{200D}\n\u{200C}"] {
        let r = try s.capture([invisible])
        #expect(r.status == 64, "\(invisible.unicodeScalars.map { String($0.value, radix: 16) }): \(r.stderr)")
        #expect(r.stderr == "outl-capture: empty text (nothing visible in it); nothing saved\n")
    }
    // Invisible characters inside visible text are text.
    #expect(try s.capture(["a\u{200B}b"]).status == 0)
    #expect(try captures(in: s.inbox).count == 2)
}

/// --json: the receipt and the listing are one JSON document each, as outl-capture(1) lists them,
/// read with a real parser (Python's json); a file's control characters come back as they were.
@Test func json_receipt_and_listing_are_documents_a_script_reads() throws {
    let s = Sandbox()
    let saved = try s.capture(["--json", "--at", "2026-12-02T23:30:00-05:00", "--source", "script", "--", "buy oat milk: 2 cartons"])
    #expect(saved.status == 0, "\(saved.stderr)")
    try FileManager.default.createDirectory(atPath: s.inbox, withIntermediateDirectories: true)
    try writeText(s.inbox + "/01ARZ3NDEKTSV4RRFFQ69G5FAB.json", #"{"text":"a\u001b[31mred"}"#)
    let listed = try s.capture(["--list", "--json"])
    #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
    #expect(!listed.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "a raw control character: \(listed.stdout.debugDescription)")
    let doc = Array((saved.stdout + "\u{0}" + listed.stdout).utf8)
    let read = try run("/usr/bin/python3", ["-c", """
        import json, sys, os
        receipt, listing = sys.stdin.read().split("\\0")
        r = json.loads(receipt)
        print(list(r), r["day"], r["captured_at"], r["source"], os.path.basename(r["file"]) == r["id"] + ".json", os.path.exists(r["file"]))
        l = json.loads(listing)
        print(list(l), [w["id"] for w in l["waiting"]][1] == r["id"])
        bad, good = l["waiting"]
        print(bad["problem"].startswith("text has the control character U+001B"), bad["text"], good["text"], good["problem"])
        print(l["set_aside"][0]["count"], l["set_aside"][0]["newest_reason"])
        """], stdin: doc)
    #expect(read.status == 0, "python could not read them: \(read.stderr)\n\(saved.stdout)\n\(listed.stdout)")
    #expect(read.stdout == """
        ['id', 'day', 'page', 'file', 'captured_at', 'source', 'attachments'] 2026-12-02 2026-12-02T23:30:00.000-05:00 script True True
        ['waiting', 'set_aside'] True
        True None buy oat milk: 2 cartons None
        0 None

        """, "\(read.stdout)")
}

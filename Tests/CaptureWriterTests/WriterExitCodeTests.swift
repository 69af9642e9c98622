// The writer as a process: what it saves, what it prints, and each sysexits code with its
// one-line message. Nothing is saved on any failure.
import Foundation
import Testing
import CaptureFormat
import TestSupport

@Test func words_are_joined_and_saved_with_the_id_on_stdout() throws {
    let s = Sandbox()
    let r = try s.capture(["buy", "oat", "milk"])
    #expect(r.status == 0, "\(r.stderr)")
    let files = try captures(in: s.inbox)
    #expect(files.count == 1)
    #expect(files[0].name == r.stdout.trimmingCharacters(in: .newlines) + ".json")
    #expect(files[0].capture.text == "buy oat milk")
    #expect(files[0].capture.source == "cli")
    // The receipt names the day (SPEC 5): "Saved for Wed 2 Dec; lands in your journal when …".
    #expect(r.stderr.hasPrefix("Saved for "))
    #expect(r.stderr.hasSuffix("; \(s.noOutld)\n"), "\(r.stderr)")
}

@Test func modes_are_0700_for_directories_and_0600_for_files() throws {
    let s = Sandbox()
    try s.capture(["x"])
    #expect(mode(of: s.inbox) == 0o700)
    #expect(mode(of: s.inbox + "/tmp") == 0o700)
    let name = try #require(listDir(s.inbox).first(where: CaptureName.isFinal))
    #expect(mode(of: s.inbox + "/" + name) == 0o600)
    #expect(listDir(s.inbox + "/tmp").isEmpty)
}

@Test func at_stamps_the_file_the_id_and_the_day() throws {
    let s = Sandbox()
    let r = try s.capture(["--at", "2026-12-01T23:58:07.120-05:00", "--source", "phone", "late", "night"])
    #expect(r.status == 0)
    let f = try #require(try captures(in: s.inbox).first)
    #expect(f.capture.capturedAtRaw == "2026-12-01T23:58:07.120-05:00")
    #expect(f.capture.source == "phone")
    #expect(CaptureName.ulid(of: f.name)?.timestampMs == 1_796_187_487_120)
    #expect(r.stderr == "Saved for Tue 1 Dec; \(s.noOutld)\n" || r.stderr == "Saved for Tue 1 Dec 2026; \(s.noOutld)\n", "\(r.stderr)")
}

@Test func stdin_and_dash_are_captured_and_trimmed() throws {
    let s = Sandbox()
    #expect(try s.capture(["-"], stdin: Array("  line one\nline two\n\n".utf8)).status == 0)
    #expect(try s.capture([], stdin: Array("piped\n".utf8)).status == 0)
    let texts = try captures(in: s.inbox).map(\.capture.text)
    #expect(texts == ["line one\nline two", "piped"])
}

@Test func quiet_prints_only_the_id() throws {
    let s = Sandbox()
    let r = try s.capture(["--quiet", "x"])
    #expect(r.status == 0 && r.stderr.isEmpty && r.stdout.count == 27)
}

@Test func usage_errors_exit_64_with_one_line_and_save_nothing() throws {
    let s = Sandbox()
    for (args, stdin) in [(["--bogus", "x"], nil), (["   "], nil), ([], [UInt8]()), (["-"], Array(" \n\t".utf8)),
                          (["--source"], nil), (["x", "--prompt"], nil), (["--list", "x"], nil), (["--quiet=1", "x"], nil)]
        as [([String], [UInt8]?)] {
        let r = try s.capture(args, stdin: stdin)
        #expect(r.status == 64, "\(args)")
        #expect(r.stderr.hasPrefix("outl-capture: ") && r.stderr.filter { $0 == "\n" }.count == 1, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func bad_at_bad_uri_and_bad_input_exit_65() throws {
    let s = Sandbox()
    let cases: [([String], [UInt8]?)] = [
        (["--at", "2026-12-01T23", "x"], nil),           // an hour alone
        (["--at", "someday", "x"], nil),
        (["--at", "2026-04-31", "x"], nil),              // no such day
        (["--at", "9999-12-31T23:59:59Z", "x"], nil),    // more than a year ahead, without --future
        (["--at", "1969-12-31T23:59:59Z", "x"], nil),    // before the ULID epoch
        (["--uri", "outl://capture?text=%zz"], nil),
        (["--uri", "https://example.com"], nil),
        (["--uri", "outl://capture?"], nil),             // nothing in it
        (["-"], [0x66, 0xFF, 0x0A]),                     // not UTF-8
        ([String(repeating: "a", count: CaptureFile.maxTextBytes + 1)], nil),
    ]
    for (args, stdin) in cases {
        let r = try s.capture(args, stdin: stdin)
        #expect(r.status == 65, "\(args.map { $0.prefix(40) })")
        #expect(r.stderr.hasPrefix("outl-capture: ") && r.stderr.filter { $0 == "\n" }.count == 1)
    }
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func an_inbox_that_cannot_be_created_exits_73() throws {
    let s = Sandbox()
    try writeText(s.dir.sub("file"), "in the way")
    let r = try s.capture(["--inbox", s.dir.sub("file/inbox"), "x"])
    #expect(r.status == 73)
    #expect(r.stderr.hasPrefix("outl-capture: cannot create inbox "))
}

@Test func a_malformed_config_exits_78_unless_the_inbox_is_explicit() throws {
    let s = Sandbox()
    try writeText(s.home + "/.config/outl/outld.conf", "workspace = ~/w\nthis is not a setting\n")
    let r = try s.capture(["x"], env: ["OUTL_WORKSPACE": ""])
    #expect(r.status == 78)
    #expect(r.stderr.contains("outld.conf:2:"))
    #expect(try s.capture(["--inbox", s.dir.sub("explicit"), "x"]).status == 0)
}

@Test func environment_and_flags_choose_the_inbox() throws {
    let s = Sandbox()
    let envInbox = s.dir.sub("device-inbox")
    #expect(try s.capture(["a"], env: ["OUTL_CAPTURE_INBOX": envInbox]).status == 0)
    #expect(try captures(in: envInbox).count == 1)
    let flagInbox = s.dir.sub("flag-inbox")
    #expect(try s.capture(["--inbox", flagInbox, "b"], env: ["OUTL_CAPTURE_INBOX": envInbox]).status == 0)
    #expect(try captures(in: flagInbox).count == 1)
    let other = s.dir.sub("other-ws")
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)  // an explicit workspace must exist
    #expect(try s.capture(["--workspace", other, "c"]).status == 0)
    #expect(try captures(in: other + "/.outl/captures").count == 1)
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func uri_links_become_one_line_with_source_share() throws {
    let s = Sandbox()
    let r = try s.capture(["--uri", "outl://capture?title=Swift+%26+Linux&url=https%3A%2F%2Fswift.org%2F"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(try s.capture(["--uri", "outl://capture?text=read+later&url=https://e.x/a"]).status == 0)
    let files = try captures(in: s.inbox)
    #expect(files.map(\.capture.text) == ["[Swift & Linux](https://swift.org/)", "read later https://e.x/a"])
    #expect(files.allSatisfy { $0.capture.source == "share" })
}

@Test func help_and_version_exit_0() throws {
    let s = Sandbox()
    let h = try s.capture(["--help"])
    #expect(h.status == 0 && h.stdout.contains("usage: outl-capture"))
    let v = try s.capture(["--version"])
    #expect(v.status == 0 && v.stdout.hasPrefix("outl-capture "))
}

@Test func list_shows_every_drained_inbox_oldest_first() throws {
    let s = Sandbox()
    let device = s.dir.sub("device")
    try s.capture(["--at", "2026-12-02T09:00:00Z", "second"])
    try s.capture(["--at", "2026-12-01T09:00:00Z", "--inbox", device, "first"])
    try s.capture(["--at", "2026-12-03T09:00:00Z", "third\nline"])
    try writeText(s.inbox + "/notes.txt", "not a capture")
    try writeText(s.inbox + "/01ARZ3NDEKTSV4RRFFQ69G5FAV.json", "{broken")
    let r = try s.capture(["--list"], env: ["OUTL_CAPTURE_INBOX": device])
    #expect(r.status == 0)
    let lines = r.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    // Two inboxes are listed, so each line names its capture's inbox after the source.
    #expect(lines[0].hasPrefix("01ARZ3NDEKTSV4RRFFQ69G5FAV  -  -  \(s.inbox)  (will be rejected: not JSON"), "\(lines[0])")
    #expect(lines[1].hasSuffix("  2026-12-01T09:00:00.000Z  cli  \(device)  first"), "\(lines[1])")
    #expect(lines[2].hasSuffix("  2026-12-02T09:00:00.000Z  cli  \(s.inbox)  second"))
    #expect(lines[3].hasSuffix("  cli  \(s.inbox)  third line"))
    // Without the env var the device inbox is not among the drained ones, and one inbox needs no column.
    let one = try s.capture(["--list"]).stdout.split(separator: "\n").map(String.init)
    #expect(one.count == 3)
    #expect(one[1].hasSuffix("  2026-12-02T09:00:00.000Z  cli  second"))
}

/// --at as a person types it: a date (that day, at this time of day), a local date and time in
/// this machine's zone, today, yesterday; a year ahead only with --future.
@Test func at_takes_a_date_a_local_time_today_and_yesterday() throws {
    let s = Sandbox()
    let zone = ["TZ": "<+01>-1"]  // UTC+1 all year, with or without zoneinfo installed
    let t = time(nil) + 3600  // now, as UTC+1 reads it
    func day(_ shift: Int) -> String {
        var u = t + shift * 86_400
        var x = Glibc.tm()
        gmtime_r(&u, &x)
        return String(format: "%04d-%02d-%02d", Int(x.tm_year) + 1900, Int(x.tm_mon) + 1, Int(x.tm_mday))
    }
    let cases: [(at: String, starts: String)] = [
        ("2026-12-01 10:00", "2026-12-01T10:00:00.000+01:00"),
        ("2026-12-01T10:00:30", "2026-12-01T10:00:30.000+01:00"),
        ("2026-12-01", "2026-12-01T"),
        ("today", day(0) + "T"),
        ("yesterday", day(-1) + "T"),
        ("2026-12-02T09:00:00Z", "2026-12-02T09:00:00.000Z"),
    ]
    for c in cases {
        let r = try s.capture(["--at", c.at, c.at], env: zone)
        #expect(r.status == 0 && !r.stderr.contains("warning"), "\(c.at): \(r.stderr)")
    }
    let got = try captures(in: s.inbox).map { ($0.capture.text, $0.capture.capturedAtRaw ?? "") }
    for c in cases {
        let at = got.first { $0.0 == c.at }?.1 ?? "(none)"
        #expect(at.hasPrefix(c.starts) && (c.at.hasSuffix("Z") || at.hasSuffix("+01:00")), "\(c.at) -> \(at)")
    }
    // A date alone is that day at the current local time of day (this minute, or the next one if
    // the clock turned meanwhile).
    let dated = got.first { $0.0 == "2026-12-01" }?.1 ?? ""
    let minutes = [0, 60].map { shift -> String in
        var u = t + shift
        var x = Glibc.tm()
        gmtime_r(&u, &x)
        return String(format: "%02d:%02d", Int(x.tm_hour), Int(x.tm_min))
    }
    #expect(minutes.contains { dated.dropFirst(11).hasPrefix($0) }, "\(dated) vs \(minutes)")
    // More than a year ahead is a typo unless --future says it is not.
    let far = try s.capture(["--at", "9999-12-31T23:59:59Z", "x"])
    #expect(far.status == 65 && far.stderr.contains("more than a year ahead; add --future"), "\(far.stderr)")
    #expect(try s.capture(["--at", "9999-12-31T23:59:59Z", "--future", "far"]).status == 0)
}

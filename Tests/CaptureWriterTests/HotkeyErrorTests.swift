// A hotkey has no terminal: with --prompt or --notify every failure is also a critical desktop
// notification, a prompt command that cannot run is an error (69), not a cancel, and the receipt
// names the day. Real outl-capture processes, a recording notify-send on $PATH.
import Foundation
import Testing
import CaptureFormat
import TestSupport

/// A bin directory holding a notify-send that appends its arguments (joined by |) to `log`.
private func recordingNotifier(_ s: Sandbox) throws -> (path: String, log: String) {
    let bin = s.dir.sub("notify-bin")
    let log = s.dir.sub("notifications")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    try writeText(bin + "/notify-send", "#!/bin/sh\nprintf '%s|' \"$@\" >> '\(log)'\necho >> '\(log)'\n")
    chmod(bin + "/notify-send", 0o755)
    return (bin + ":/usr/bin:/bin", log)
}

private func notices(_ log: String) -> [String] {
    (readText(log) ?? "").split(separator: "\n").map(String.init)
}

@Test func every_failure_of_a_hotkey_is_a_critical_notification_too() throws {
    let s = Sandbox()
    let (path, log) = try recordingNotifier(s)
    try writeText(s.dir.sub("file"), "in the way")
    let cases: [(args: [String], env: [String: String], status: Int32, says: String)] = [
        (["--prompt"], ["OUTL_PROMPT": "exec /nonexistent/dialog"], 69, "cannot be run"),
        (["--prompt"], ["PATH": s.dir.sub("empty")], 69, "no dialog program found"),
        (["--prompt", "--at", "yesterday"], [:], 65, "--at: not an RFC 3339 time"),
        (["--notify", "--at", "yesterday", "x"], [:], 65, "--at: not an RFC 3339 time"),
        (["--notify", "--inbox", s.dir.sub("file/inbox"), "x"], [:], 73, "cannot create inbox"),
        (["--notify", "--bogus"], [:], 64, "unknown option --bogus"),
        (["--notify", "--workspace", s.dir.sub("typo"), "x"], [:], 73, "no workspace at"),
    ]
    for c in cases {
        try? FileManager.default.removeItem(atPath: log)
        var env = c.env
        if env["PATH"] == nil { env["PATH"] = path }
        let r = try s.capture(c.args, env: env)
        #expect(r.status == c.status, "\(c.args): \(r.stderr)")
        #expect(r.stderr.hasPrefix("outl-capture: ") && r.stderr.contains(c.says), "\(c.args): \(r.stderr)")
        if env["PATH"] == path {
            let sent = notices(log)
            #expect(sent.count == 1, "\(c.args): \(sent)")
            #expect(sent.first?.hasPrefix("-u|critical|--app-name=outl|outl-capture: nothing saved|") == true, "\(sent)")
            #expect(sent.first?.contains(c.says) == true, "\(c.args): \(sent)")
        }
    }
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func a_failure_without_a_hotkey_sends_no_notification() throws {
    let s = Sandbox()
    let (path, log) = try recordingNotifier(s)
    #expect(try s.capture(["--at", "yesterday", "x"], env: ["PATH": path]).status == 65)
    // `--notify` after `--` is text, not a request for notifications.
    #expect(try s.capture(["--at", "yesterday", "--", "--notify"], env: ["PATH": path]).status == 65)
    #expect(notices(log).isEmpty)
}

@Test func a_prompt_command_that_cannot_run_is_69_not_a_cancel() throws {
    let s = Sandbox()
    for (command, code) in [("exec /nonexistent/dialog", 127), ("exec /dev/null", 126)] {
        let r = try s.capture(["--prompt"], env: ["OUTL_PROMPT": command])
        #expect(r.status == 69, "\(command): \(r.stderr)")
        #expect(r.stderr.contains("OUTL_PROMPT (\(command)) cannot be run (exit \(code)"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "the shell's own complaint is quoted, not passed through: \(r.stderr)")
    }
    // A dialog closed with any other status is still a cancel.
    #expect(try s.capture(["--prompt"], env: ["OUTL_PROMPT": "exit 1"]).status == 0)
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func the_receipt_names_the_day_of_the_capture() throws {
    let s = Sandbox()
    let r = try s.capture(["--at", "2020-12-02T23:30:00-05:00", "late"])
    #expect(r.status == 0)
    #expect(r.stderr == "Saved for Wed 2 Dec 2020; lands in your journal when outld drains it\n")
    // Now, in the local zone: the weekday and date of today in $TZ, without a year.
    let now = try s.capture(["today"], env: ["TZ": "UTC"])
    var t = time(nil)
    var tm = tm()
    gmtime_r(&t, &tm)
    var buf = [CChar](repeating: 0, count: 32)
    strftime(&buf, buf.count, "%a %-d %b", &tm)
    #expect(now.stderr == "Saved for \(String(cString: buf)); lands in your journal when outld drains it\n", "\(now.stderr)")
}

@Test func an_unknown_time_zone_is_said_once() throws {
    let s = Sandbox()
    let r = try s.capture(["x"], env: ["TZ": "Mars/Olympus"])
    #expect(r.status == 0)
    let warnings = r.stderr.split(separator: "\n").filter { $0.contains("warning") }
    #expect(warnings == ["outl-capture: warning: TZ=Mars/Olympus is not a time zone this system knows; times are taken as UTC"])
    for known in ["UTC", "EST5EDT", "<+03>-3"] + (FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Europe/Paris") ? ["Europe/Paris", ":Europe/Paris"] : []) {
        let ok = try s.capture(["x"], env: ["TZ": known])
        #expect(!ok.stderr.contains("warning"), "\(known): \(ok.stderr)")
    }
    // With --at the zone plays no part, so there is nothing to warn about.
    #expect(!(try s.capture(["--at", "2026-12-02T10:00:00Z", "x"], env: ["TZ": "Mars/Olympus"]).stderr.contains("warning")))
}

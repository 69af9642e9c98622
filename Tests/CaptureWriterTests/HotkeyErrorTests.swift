// A hotkey has no terminal: with --prompt or --notify every failure is also a critical desktop
// notification, a prompt command that cannot run is an error (69), not a cancel, and the receipt
// names the day. Real outl-capture processes, a recording notify-send on $PATH.
import Foundation
import Testing
import CaptureFormat
import TestSupport

/// A bin directory holding a notify-send that appends its arguments (joined by |) to `log`, and
/// that reads them as the real one does (GLib's option parser): before `--`, a word starting with `-`
/// that is not one of its options is an error (`Unknown option -5 degrees`, exit 1), nothing shown.
func recordingNotifier(_ s: Sandbox) throws -> (path: String, log: String) {
    let bin = s.dir.sub("notify-bin")
    let log = s.dir.sub("notifications")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    try writeText(bin + "/notify-send", """
        #!/bin/sh
        options=1; value=0
        for a; do
          if [ $value = 1 ]; then value=0; continue; fi
          [ $options = 1 ] || continue
          case "$a" in
            --) options=0;;
            -u|--urgency|-t|--expire-time|-i|--icon|-c|--category|-a) value=1;;
            --app-name=*|--urgency=*|--icon=*|--category=*|--expire-time=*) ;;
            -*) echo "Unknown option $a" >&2; exit 1;;
          esac
        done
        printf '%s|' "$@" >> '\(log)'
        echo >> '\(log)'

        """)
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
        (["--prompt", "--at", "someday"], [:], 65, "--at: not a time: someday"),
        (["--notify", "--at", "someday", "x"], [:], 65, "--at: not a time: someday"),
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
            #expect(sent.first?.hasPrefix("-u|critical|--app-name=outl|--|outl-capture: nothing saved|") == true, "\(sent)")
            #expect(sent.first?.contains(c.says) == true, "\(c.args): \(sent)")
        }
    }
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func a_failure_without_a_hotkey_sends_no_notification() throws {
    let s = Sandbox()
    let (path, log) = try recordingNotifier(s)
    #expect(try s.capture(["--at", "someday", "x"], env: ["PATH": path]).status == 65)
    // `--notify` after `--` is text, not a request for notifications.
    #expect(try s.capture(["--at", "someday", "--", "--notify"], env: ["PATH": path]).status == 65)
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
    #expect(r.stderr == "Saved for Wed 2 Dec 2020; \(s.noOutld)\n", "\(r.stderr)")
    // Now, in the local zone: the weekday and date of today in $TZ, without a year.
    let now = try s.capture(["today"], env: ["TZ": "UTC"])
    var t = time(nil)
    var tm = tm()
    gmtime_r(&t, &tm)
    var buf = [CChar](repeating: 0, count: 32)
    strftime(&buf, buf.count, "%a %-d %b", &tm)
    #expect(now.stderr == "Saved for \(String(cString: buf)); \(s.noOutld)\n", "\(now.stderr)")
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

@Test func a_receipt_or_a_failure_that_starts_with_a_dash_still_reaches_the_desktop() throws {
    let s = Sandbox()
    let (path, log) = try recordingNotifier(s)
    let r = try s.capture(["--notify", "--", "-5", "degrees", "this", "morning"], env: ["PATH": path])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(notices(log) == ["--app-name=outl|--|Saved; lands in outl|-5 degrees this morning|"])
    try FileManager.default.removeItem(atPath: log)
    // A failure whose line starts with the option it is about.
    #expect(try s.capture(["--notify", "--at", "noon", "x"], env: ["PATH": path]).status == 65)
    let sent = notices(log)
    #expect(sent.count == 1 && sent[0].hasPrefix("-u|critical|--app-name=outl|--|outl-capture: nothing saved|--at: "), "\(sent)")
}

@Test func a_dialog_that_cannot_reach_the_display_is_69_and_a_notice_not_a_cancel() throws {
    let s = Sandbox()
    let (path, log) = try recordingNotifier(s)
    let bin = s.dir.sub("dialogs")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    // As zenity says it under a stale DISPLAY, with the exit status of a closed dialog.
    try writeText(bin + "/zenity", "#!/bin/sh\necho '(zenity:4242): Gtk-WARNING **: 10:00:00.000: cannot open display: :42' >&2\nexit 1\n")
    chmod(bin + "/zenity", 0o755)
    let r = try s.capture(["--prompt"], env: ["PATH": bin + ":" + path, "DISPLAY": ":42"])
    #expect(r.status == 69, "\(r.stderr)")
    #expect(r.stderr.hasPrefix("outl-capture: --prompt: ") && r.stderr.contains("cannot reach the display")
            && r.stderr.contains("cannot open display: :42"), "\(r.stderr)")
    #expect(notices(log).count == 1, "\(notices(log))")
    // The same dialog closed with nothing said is still a cancel.
    try writeText(bin + "/zenity", "#!/bin/sh\nexit 1\n")
    let closed = try s.capture(["--prompt"], env: ["PATH": bin + ":" + path])
    #expect(closed.status == 0 && closed.stderr == "outl-capture: cancelled; nothing saved\n", "\(closed.stderr)")
    #expect(try captures(in: s.inbox).isEmpty)
}

/// The receipt says whether anything will drain the capture: an outld holds the workspace's lock
/// (read from /proc/locks, the lock untouched), none does, or the one that does is stopped.
@Test func the_receipt_says_whether_an_outld_serves_the_workspace() throws {
    let s = Sandbox()
    let alone = try s.capture(["--at", "2026-12-02T10:00:00Z", "nobody drains me"])
    #expect(alone.status == 0 && alone.stderr.hasSuffix("; \(s.noOutld)\n"), "\(alone.stderr)")
    // This test process holds the lock as outld does (exclusive flock on the workspace directory).
    let fd = open(s.workspace, O_RDONLY | O_DIRECTORY)
    #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
    let served = try s.capture(["--at", "2026-12-02T10:00:00Z", "drained soon"])
    #expect(served.stderr == "Saved for Wed 2 Dec; lands in your journal when outld drains it\n"
            || served.stderr == "Saved for Wed 2 Dec 2026; lands in your journal when outld drains it\n", "\(served.stderr)")
    close(fd)
    // A holder that is stopped (SIGSTOP): the line waits for it to continue.
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    holder.arguments = ["--exclusive", s.workspace, "sleep", "30"]
    try holder.run()
    defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
    var held = false
    for _ in 0..<200 where !held {  // until flock(1) has the lock (bounded: 10 s)
        let probe = open(s.workspace, O_RDONLY | O_DIRECTORY)
        held = flock(probe, LOCK_EX | LOCK_NB) != 0
        close(probe)
        if !held { usleep(50_000) }
    }
    #expect(held, "flock(1) never took the lock")
    kill(holder.processIdentifier, SIGSTOP)
    let stopped = try s.capture(["--at", "2026-12-02T10:00:00Z", "waits for outld"])
    #expect(stopped.stderr.hasSuffix("; outld (pid \(holder.processIdentifier)) is stopped: it lands in your journal once outld continues\n"),
            "\(stopped.stderr)")
    kill(holder.processIdentifier, SIGCONT)
    #expect(try captures(in: s.inbox).count == 3)
}

/// Where /proc/locks cannot be read (no /proc in a container), the receipt claims nothing about
/// outld: it says the usual, never "no outld is running".
@Test(.enabled(if: geteuid() == 0 && access("/usr/bin/unshare", X_OK) == 0, "needs root and unshare to hide /proc/locks"))
func without_proc_locks_the_receipt_claims_nothing() throws {
    let s = Sandbox()
    let env = s.baseEnv.map { "\($0.key)=\($0.value)" }
    let script = "mount --bind /dev/null /proc/locks || exit 99; exec env \"$@\""
    let r = try run("/usr/bin/unshare", ["-m", "sh", "-c", script, "sh"] + env + [writer, "--at", "2026-12-02T10:00:00Z", "x"], env: s.baseEnv)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.hasSuffix("; lands in your journal when outld drains it\n"), "\(r.stderr)")
}

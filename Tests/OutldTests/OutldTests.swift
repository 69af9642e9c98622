// OutldTests: the daemon as a user runs it — real outld and outl-capture processes on real
// files: event-driven drains, --once with and without a running owner, one write actor per
// device, signals, an inbox removed and re-created, hand edits kept.
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct OutldTests {
    @Test func outld_once_drains_waiting_captures_and_prints_a_summary() throws {
        let h = try OutlHome()
        _ = try h.captureID("first from a script")
        _ = try h.captureID("second from a script")
        let r = try h.outld(["--once"])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("drained 2"), "summary was: \(r.stdout)")
        #expect(h.pending().isEmpty)
        let page = h.journal()
        #expect(page.contains("first from a script") && page.contains("second from a script"))
    }

    /// A cron job mails what it prints: nothing to do prints nothing; --verbose says so anyway.
    @Test func outld_once_with_nothing_waiting_exits_zero_and_prints_nothing() throws {
        let h = try OutlHome()
        let r = try h.outld(["--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty && r.stderr.isEmpty, "\(r.stdout)\(r.stderr)")
        let v = try h.outld(["--once", "--verbose"])
        #expect(v.status == 0 && v.stdout == "drained 0, rejected 0\n", "\(v.stdout)")
        #expect(try h.outld(["--verbose"]).status == 64)
        // With a running outld asked to drain: the same.
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        let asked = try h.outld(["--once"])
        #expect(asked.status == 0 && asked.stdout.isEmpty, "\(asked.stdout)")
        #expect(try h.outld(["--once", "-v"]).stdout.hasPrefix("drained by outld (pid \(d.pid)): 0 capture(s)"))
        #expect(d.stop() == 0)
    }

    /// A capture set aside stays in view: outl status and --list count rejected/ and quote the
    /// newest reason (escaped: the reason quotes a file anyone may have written).
    @Test func captures_set_aside_are_counted_with_the_newest_reason() throws {
        let h = try OutlHome()
        _ = try h.captureID("a good line")
        try FileManager.default.createDirectory(atPath: h.inbox, withIntermediateDirectories: true)
        try writeText(h.inbox + "/01JE0000000000000000000000.json", "not json")
        #expect(try h.outld(["--once"]).stdout == "drained 1, rejected 1\n")
        let status = try h.outl(["status"])
        #expect(status.stdout.contains("  \(h.inbox)  empty\n    1 set aside in rejected/; newest: not JSON: "), "\(status.stdout)")
        let list = try h.capture(["--list"])
        #expect(list.status == 0 && list.stdout.isEmpty, "\(list.stdout)")
        #expect(list.stderr.hasPrefix("outl-capture: nothing waiting\noutl-capture: 1 set aside in ~/outl/.outl/captures/rejected/; newest: not JSON: "),
                "\(list.stderr)")
        // A second, later rejection is the newest; its escape sequence is shown, not sent.
        usleep(20_000)
        try writeText(h.inbox + "/01JE0000000000000000000001.json", "{\"text\":\"\\u001b[31mred\"}")
        _ = try h.outld(["--once"])
        let again = try h.outl(["status"])
        #expect(again.stdout.contains("2 set aside in rejected/; newest: text has the control character U+001B"), "\(again.stdout)")
        #expect(!again.stdout.contains("\u{1B}"))
    }

    /// `outl status --json` is one JSON document a script reads with a real parser (Python's json):
    /// the fields outl(1) lists, the running outld's pid, a set-aside reason decoded as the file
    /// held it, and no raw control character in the output.
    @Test func outl_status_json_is_one_document_a_script_reads() throws {
        let h = try OutlHome()
        _ = try h.captureID("a good line")
        try FileManager.default.createDirectory(atPath: h.inbox, withIntermediateDirectories: true)
        try writeText(h.inbox + "/01JE0000000000000000000001.json", "{\"text\":\"\\u001b[31mred\"}")
        #expect(try h.outld(["--once"]).stdout == "drained 1, rejected 1\n")
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        let s = try h.outl(["status", "--json"])
        #expect(s.status == 0 && s.stderr.isEmpty, "\(s.stderr)")
        #expect(!s.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "a raw control character:\n\(s.stdout)")
        let read = try run("/usr/bin/python3", ["-c", """
            import json, sys
            d = json.load(sys.stdin)
            print(sorted(d))
            print(d["outld"]["state"], d["outld"]["pid"])
            log = d["op_logs"][0]
            print(len(d["op_logs"]), log["this_device"], log["device"] == d["device"], log["ops"] >= 2, log["last_op_ms"] > 0)
            box = d["inboxes"][0]
            print(box["path"], box["waiting"], box["set_aside"], box["newest_set_aside_reason"].startswith("text has the control character"))
            print(d["pages_not_written"], d["op_log_faults"], d["notices"], d["not_directories"])
            print(d["set_aside"]["files"], d["set_aside"]["bytes"], d["set_aside"]["directory"].endswith("/set-aside"))
            """], stdin: Array(s.stdout.utf8))
        #expect(read.status == 0, "python could not read it: \(read.stderr)\n\(s.stdout)")
        #expect(read.stdout == """
            ['device', 'inboxes', 'not_directories', 'notices', 'op_log_faults', 'op_logs', 'outld', 'pages_not_written', 'set_aside', 'workspace']
            running \(d.pid)
            1 True True True True
            \(h.inbox) 0 1 True
            [] [] [] []
            0 0 True

            """, "\(read.stdout)\n\(s.stdout)")
        #expect(try h.outl(["check", "--json"]).status == 64)
        #expect(d.stop() == 0)
    }

    /// `outl show --json`: the day's blocks in file order, flat, with parent and depth, read with
    /// Python's json; a block nested by hand comes with its parent.
    @Test func outl_show_json_lists_the_days_blocks_flat_with_their_parents() throws {
        let h = try OutlHome()
        _ = try h.captureID("first: a line with a colon")
        #expect(try h.outld(["--once"]).status == 0)
        let file = Path.join(h.workspace, "journals/2026_12_02.md")
        var page = try #require(readText(file))
        page += "- parent by hand\n  - child by hand\n    mood:: calm\n"
        try writeText(file, page)
        #expect(try h.outl(["reconcile"]).status == 0)
        let s = try h.outl(["show", "--json", "2026-12-02"])
        #expect(s.status == 0, "\(s.stderr)")
        let read = try run("/usr/bin/python3", ["-c", """
            import json, sys
            d = json.load(sys.stdin)
            print(list(d), d["day"])
            for b in d["blocks"]:
                print(b["depth"], b["text"], [k for k, v in b["properties"]], b["parent"] is None)
            first, parent, child = d["blocks"]
            print(child["parent"] == parent["id"], child["properties"])
            """], stdin: Array(s.stdout.utf8))
        #expect(read.status == 0, "python could not read it: \(read.stderr)\n\(s.stdout)")
        #expect(read.stdout == """
            ['day', 'page', 'blocks'] 2026-12-02
            0 first: a line with a colon ['captured-at', 'source'] True
            0 parent by hand [] True
            1 child by hand ['mood'] False
            True [['mood', 'calm']]

            """, "\(read.stdout)\n\(s.stdout)")
        #expect(try h.outl(["show", "--json", "2026-01-01"]).status == 1)
    }

    /// One warning per capture without a usable captured_at, saying what was wrong and what was
    /// used instead (it said the same thing twice).
    @Test func a_capture_without_a_usable_time_is_warned_about_once() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: h.inbox, withIntermediateDirectories: true)
        try writeText(h.inbox + "/01JE0000000000000000000000.json", "{\"text\":\"no stamp\"}")
        try writeText(h.inbox + "/01JE0000000000000000000001.json", "{\"text\":\"bad stamp\",\"captured_at\":\"soon\"}")
        let r = try h.outld(["--once"])
        let warnings = r.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 2, "\(r.stderr)")
        #expect(warnings.first?.hasSuffix("01JE0000000000000000000000.json: captured_at missing: using the capture id's time 2024-12-01T02:15:03.936Z") == true
                || warnings.first?.contains("captured_at missing: using the capture id's time 2024-12-0") == true, "\(warnings)")
        #expect(warnings.last?.contains("captured_at unparsable: soon: using the capture id's time") == true, "\(warnings)")
    }

    /// The workspace's warnings reach outld's log as warnings (with their fields in the journal):
    /// a torn tail of this device's op log, cut at start.
    @Test func a_workspace_warning_is_an_outld_warning() throws {
        let h = try OutlHome()
        _ = try h.captureID("before the crash")
        #expect(try h.outld(["--once"]).status == 0)
        let own = Path.join(h.workspace, ".outl/ops/" + (h.opsFiles().first ?? "none"))
        let fd = open(own, O_WRONLY | O_APPEND)
        _ = write(fd, "1234abcd {\"k\":\"cb\"", 19)
        close(fd)
        let r = try h.outld(["--once"])
        #expect(r.stderr.contains("outld: warning: \(own): cut a torn or invalid tail of 19 bytes"), "\(r.stderr)")
    }

    /// A rescan says why: SIGHUP (and what a reload does not change) or the kernel's overflow.
    @Test func a_rescan_says_whether_sighup_or_an_overflow_asked_for_it() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        d.signal(SIGHUP)
        #expect(eventually { d.log.contains("rescanning: SIGHUP from pid \(getpid()): outld.conf read again (journal-file-format, page-properties and the workspace take a restart)") },
                "\(d.log)")
        #expect(d.stop() == 0)
    }

    /// A stopped outld (SIGSTOP, a debugger) drains nothing: status and the receipt say so.
    @Test func a_stopped_outld_is_reported_as_stopped_not_running() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        let running = try h.outl(["status"])
        #expect(running.stdout.contains("outld      running (pid \(d.pid))"), "\(running.stdout)")
        kill(d.pid, SIGSTOP)
        defer { kill(d.pid, SIGCONT) }
        let stopped = try h.outl(["status"])
        #expect(stopped.stdout.contains("outld      stopped (pid \(d.pid)): it drains nothing until it continues"), "\(stopped.stdout)")
        let receipt = try h.capture(["while stopped"], extra: ["--at", "2026-12-02T10:00:00Z"])
        #expect(receipt.stderr.hasSuffix("outld (pid \(d.pid)) is stopped: it lands in your journal once outld continues\n"), "\(receipt.stderr)")
        kill(d.pid, SIGCONT)
        #expect(eventually { h.journal().contains("while stopped") }, "\(d.log)")
        #expect(d.stop() == 0)
    }

    /// The directories outld makes follow the person's umask (077 keeps journals/ and the op log's
    /// folder private; 022 shares them), and an inbox is 0700 whatever the umask.
    @Test(arguments: [(0o077, 0o700), (0o022, 0o755)])
    func directories_follow_the_umask_and_an_inbox_stays_private(_ mask: Int, _ shared: Int) throws {
        let h = try OutlHome()
        _ = try h.captureID("a line")
        let r = try run("/bin/sh", ["-c", "umask \(String(mask, radix: 8)); exec \"$0\" --once --log stderr", binPath("outld")], env: h.env)
        #expect(r.status == 0, "\(r.stderr)")
        func mode(_ rel: String) -> Int { Int(((try? Sys.lstat(Path.join(h.workspace, rel)))?.st_mode ?? 0) & 0o777) }
        #expect(mode("journals") == shared && mode(".outl/ops") == shared, "journals \(String(mode("journals"), radix: 8)), .outl/ops \(String(mode(".outl/ops"), radix: 8))")
        #expect(mode(".outl/captures") == 0o700, "inbox \(String(mode(".outl/captures"), radix: 8))")
    }

    @Test func running_outld_drains_a_capture_when_it_lands() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { FileManager.default.fileExists(atPath: h.inbox) })
        let id = try h.captureID("lands by inotify")
        #expect(eventually { h.journal().contains("lands by inotify") }, "log: \(d.log)")
        // The page is written before the file is unlinked: the line need not wait for the unlink.
        #expect(eventually { h.pending().isEmpty })
        #expect(eventually { d.log.contains(id) }, "one readable line per drained capture on stderr")
        #expect(d.stop() == 0)
    }

    @Test func second_outld_exits_75_naming_the_owner() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { FileManager.default.fileExists(atPath: h.inbox) && d.log.contains("ready") })
        let second = try h.outld([])
        #expect(second.status == 75)
        #expect(second.stderr.contains("pid \(d.pid)"), "stderr: \(second.stderr)")
        #expect(h.opsFiles().count <= 1, "a second actor left an ops file: \(h.opsFiles())")
        #expect(d.stop() == 0)
    }

    @Test func outld_once_asks_the_running_daemon_instead_of_writing() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("warm up")
        #expect(eventually { h.pending().isEmpty })
        d.signal(SIGSTOP)  // the owner cannot drain yet, so these captures wait
        _ = try h.captureID("waiting one")
        _ = try h.captureID("waiting two")
        let once = Process()
        once.executableURL = URL(fileURLWithPath: binPath("outld"))
        once.arguments = ["--once", "--timeout", "20", "--log", "stderr"]
        once.environment = ProcessInfo.processInfo.environment.merging(h.env) { $1 }
        let out = Pipe()
        once.standardOutput = out
        try once.run()
        // --once has asked the stopped owner: its SIGUSR1 waits, pending, until the owner runs.
        #expect(eventually { signalPending(SIGUSR1, in: d.pid) }, "--once never signalled the owner")
        d.signal(SIGCONT)
        once.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(once.terminationStatus == 0, "\(text)")
        #expect(text.contains("pid \(d.pid)"), "summary: \(text)")
        #expect(h.pending().isEmpty)
        #expect(h.opsFiles().count == 1, "--once must not write as a second actor: \(h.opsFiles())")
        #expect(d.stop() == 0)
    }

    /// `--once` asking a running owner holds a snapshot of at most a pass's worth of names (the
    /// first in capture order); once they are gone it takes the next, so it returns only when every
    /// capture waiting has left.
    @Test func outld_once_asking_the_owner_waits_past_a_snapshots_worth() throws {
        let h = try OutlHome()
        let limit = ["OUTL_LISTING_LIMIT": "5"]
        let d = try h.start(extraEnv: limit)
        #expect(eventually { d.log.contains("ready") })
        d.signal(SIGSTOP)
        func at(_ i: Int) -> String { "2026-12-02T10:00:\(i < 10 ? "0" : "")\(i)Z" }
        for i in 0..<12 { _ = try h.captureID("asked \(i)", at: at(i)) }
        let once = Process()
        once.executableURL = URL(fileURLWithPath: binPath("outld"))
        once.arguments = ["--once", "--timeout", "30", "--log", "stderr"]
        once.environment = ProcessInfo.processInfo.environment.merging(h.env.merging(limit) { $1 }) { $1 }
        let out = Pipe()
        once.standardOutput = out
        try once.run()
        // Signalled: its first snapshot is taken. The first five leave (by hand: the owner is stopped).
        #expect(eventually { signalPending(SIGUSR1, in: d.pid) }, "--once never signalled the owner")
        for name in h.pending().sorted().prefix(5) { try FileManager.default.moveItem(atPath: Path.join(h.inbox, name), toPath: h.tmp.sub(name)) }
        usleep(500_000)
        #expect(once.isRunning, "--once returned with seven captures still waiting")
        d.signal(SIGCONT)
        once.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(once.terminationStatus == 0 && text.contains("none left"), "\(text)")
        #expect(h.pending().isEmpty)
        #expect((5..<12).allSatisfy { h.journal().contains("- asked \($0)\n") }, "\(h.journal())")
        #expect(d.stop() == 0)
    }

    @Test func outld_once_times_out_with_75_when_the_owner_is_stuck() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        d.signal(SIGSTOP)
        _ = try h.captureID("stuck")
        let r = try h.outld(["--once", "--timeout", "1"])
        #expect(r.status == 75, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("1 capture"), "\(r.stdout)")
        d.signal(SIGCONT)
        #expect(eventually { h.pending().isEmpty })
        #expect(d.stop() == 0)
    }

    @Test func sigusr1_and_sighup_keep_it_running_and_sigterm_exits_zero() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        d.signal(SIGUSR1)
        d.signal(SIGHUP)
        _ = try h.captureID("after signals")
        #expect(eventually { h.journal().contains("after signals") })
        #expect(d.process.isRunning)
        #expect(d.stop() == 0)
    }

    @Test func inbox_removed_and_recreated_is_watched_again() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        try FileManager.default.removeItem(atPath: h.inbox)
        #expect(eventually { FileManager.default.fileExists(atPath: h.inbox) }, "outld re-creates the inbox: \(d.log)")
        _ = try h.captureID("into the new inbox")
        #expect(eventually { h.journal().contains("into the new inbox") }, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test func hand_edit_to_the_journal_survives_a_capture() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("captured first")
        let page = Path.join(h.workspace, "journals/2026_12_02.md")
        #expect(eventually { h.journal().contains("captured first") })
        var text = h.journal()
        text += "- typed by hand in an editor\n"
        try writeText(page, text)
        // outld has read the edit (inotify on journals/) and turned it into ops.
        let ops = { h.opsFiles().compactMap { readText(Path.join(h.workspace, ".outl/ops/\($0)")) }.joined() }
        #expect(eventually { ops().contains("typed by hand in an editor") }, "\(d.log)")
        _ = try h.captureID("captured second")
        #expect(eventually { h.journal().contains("captured second") }, "\(d.log)")
        let final = h.journal()
        #expect(final.contains("typed by hand in an editor"), "hand edit lost:\n\(final)")
        #expect(final.contains("captured first"))
        #expect(d.stop() == 0)
        // The hand edit is in the op log too, so it survives the projection being rebuilt.
        #expect(ops().contains("typed by hand in an editor"))
    }

    @Test func captures_written_while_outld_was_down_drain_at_start() throws {
        let h = try OutlHome()
        _ = try h.captureID("written before boot")
        let d = try h.start()
        #expect(eventually { h.journal().contains("written before boot") })
        #expect(d.stop() == 0)
    }

    /// A pass lists at most OUTL_LISTING_LIMIT captures (DrainOptions.listingLimit); the rest are
    /// drained by the passes after it: `--once` runs them before it exits, a running outld at once,
    /// with no inotify event to wake it (all 17 were there before it started).
    @Test func an_inbox_past_the_listing_limit_drains_whole_in_passes() throws {
        let h = try OutlHome()
        // Each a second after the last: a capture's id, and so its place in capture order, takes its time.
        func at(_ i: Int) -> String { "2026-12-02T10:00:\(i < 10 ? "0" : "")\(i)Z" }
        for i in 0..<17 { _ = try h.captureID("waiting \(i)", at: at(i)) }
        let r = try h.outld(["--once"], extraEnv: ["OUTL_LISTING_LIMIT": "5"])
        #expect(r.status == 0 && r.stdout == "drained 17, rejected 0\n", "\(r.stdout) \(r.stderr)")
        func inOrder(_ n: Int) -> Bool {
            let page = h.journal()
            let places = (0..<n).compactMap { page.range(of: "- waiting \($0)\n")?.lowerBound }
            return places.count == n && places == places.sorted()
        }
        #expect(inOrder(17) && h.pending().isEmpty)
        for i in 17..<40 { _ = try h.captureID("waiting \(i)", at: at(i)) }
        let d = try h.start(extraEnv: ["OUTL_LISTING_LIMIT": "5"])
        #expect(eventually { inOrder(40) && h.pending().isEmpty }, "\(h.pending().count) left; \(d.log)")
        #expect(d.stop() == 0)
    }

    @Test func usage_errors_exit_64_with_one_line() throws {
        let h = try OutlHome()
        let r = try h.outld(["--bogus"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option --bogus"))
        let help = try run(binPath("outld"), ["--help"])
        #expect(help.status == 0 && help.stdout.contains("--once"))
    }
}

@Suite(.serialized) struct OutldConfigTests {
    @Test func sighup_rereads_outld_conf_and_drains_a_new_inbox() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        let extra = h.tmp.sub("phone-inbox")
        let conf = Path.join(h.home, ".config/outl/outld.conf")
        try FileManager.default.createDirectory(atPath: Path.parent(of: conf), withIntermediateDirectories: true)
        try writeText(conf, "# synced from the phone\ninbox = \(extra)\n")
        d.signal(SIGHUP)
        #expect(eventually { d.log.contains("now draining inbox \(extra)") }, "\(d.log)")
        #expect(eventually { FileManager.default.fileExists(atPath: extra) })
        let r = try run(binPath("outl-capture"), ["--inbox", extra, "--quiet", "--at", "2026-12-02T10:00:00Z", "from the phone inbox"], env: h.env)
        #expect(r.status == 0)
        #expect(eventually { h.journal().contains("from the phone inbox") }, "\(d.log)")
        #expect(d.stop() == 0)
    }
}

/// Whether `signo` is pending for the process `pid` (its ShdPnd mask in /proc).
func signalPending(_ signo: Int32, in pid: Int32) -> Bool {
    let line = (readText("/proc/\(pid)/status") ?? "").split(separator: "\n").first { $0.hasPrefix("ShdPnd:") }
    let mask = line.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
    return mask & (1 << UInt64(signo - 1)) != 0
}

@Suite(.serialized) struct IdleTests {
    /// Whether the process `pid` sleeps in poll(2)/ppoll(2) with no deadline (/proc/PID/syscall:
    /// the number, then the arguments): only an event on one of its descriptors can wake it.
    func sleepsWithoutDeadline(_ pid: Int32) -> Bool {
        let f = (readText("/proc/\(pid)/syscall") ?? "").split(separator: " ").map(String.init)
        guard f.count >= 4, let nr = Int(f[0]) else { return false }
        #if arch(x86_64)
        let (poll, ppoll, restart) = (7, 271, 219)  // an interrupted poll resumes as restart_syscall
        #elseif arch(arm64)
        let (poll, ppoll, restart) = (-1, 73, 128)
        #endif
        switch nr {
        case poll, restart: return f[3] == "0xffffffff" || f[3] == "0xffffffffffffffff"  // timeout -1
        case ppoll: return f[3] == "0x0"  // no timespec
        default: return false
        }
    }

    @Test func idle_outld_is_one_thread_that_never_wakes() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("one capture, then silence")
        #expect(eventually { h.journal().contains("one capture, then silence") })
        // After 10 s without a drain the io_uring ring (and its kernel worker) is let go.
        #expect(eventually(30) { listDir("/proc/\(d.pid)/task").count == 1 }, "threads: \(listDir("/proc/\(d.pid)/task"))")
        // Idle is asleep with no deadline: no timer, no watchdog (not under systemd here), no poll.
        #expect(eventually { sleepsWithoutDeadline(d.pid) }, "syscall: \(readText("/proc/\(d.pid)/syscall") ?? "")")
        #expect(d.stop() == 0)
    }
}

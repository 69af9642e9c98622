// One configuration for every program (SPEC 5 and 6), as a user meets it: outl, outld, outld --once
// and outl-capture resolve the workspace, the inboxes and the state directory the same way, refuse
// the same bad outld.conf lines with the same sentence, and treat a missing workspace as their role
// says. Real processes in a private HOME.
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

extension OutlHome {
    var conf: String { Path.join(home, ".config/outl/outld.conf") }

    func writeConf(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: Path.parent(of: conf), withIntermediateDirectories: true)
        try writeText(conf, text)
    }

    @discardableResult
    func outl(_ args: [String], extraEnv: [String: String] = [:], stdin: [UInt8]? = nil, cwd: String? = nil) throws -> ProcessResult {
        try run(binPath("outl"), args, env: env.merging(extraEnv) { $1 }, stdin: stdin, cwd: cwd)
    }

    /// Each program's way of being pointed at the configuration, and what it does with it.
    func everyProgram(cwd: String, extraArgs: [String] = []) throws -> [(String, ProcessResult)] {
        [
            ("outl-capture", try run(binPath("outl-capture"), extraArgs + ["x"], env: env, cwd: cwd)),
            ("outl-capture --list", try run(binPath("outl-capture"), extraArgs + ["--list"], env: env, cwd: cwd)),
            ("outld --once", try run(binPath("outld"), extraArgs + ["--once", "--log", "stderr"], env: env, cwd: cwd)),
            ("outld", try run(binPath("outld"), extraArgs + ["--log", "stderr"], env: env, cwd: cwd)),
            ("outl show", try run(binPath("outl"), extraArgs + ["show"], env: env, cwd: cwd)),
        ]
    }
}

@Suite(.serialized) struct OneConfigurationTests {
    @Test func every_program_takes_the_workspace_from_outld_conf() throws {
        let h = try OutlHome(workspace: false)
        try h.writeConf("# the notes live elsewhere\nworkspace = ~/notes\n")
        let notes = Path.join(h.home, "notes")
        try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
        _ = try h.captureID("into the configured workspace")
        #expect(FileManager.default.fileExists(atPath: Path.join(notes, ".outl/captures")))
        let list = try run(binPath("outl-capture"), ["--list"], env: h.env)
        #expect(list.stdout.contains("into the configured workspace"), "\(list.stdout) \(list.stderr)")
        let once = try h.outld(["--once"])
        #expect(once.status == 0 && once.stdout.contains("drained 1"), "\(once.stdout) \(once.stderr)")
        let show = try h.outl(["show", "2026-12-02"])
        #expect(show.status == 0 && show.stdout.contains("- into the configured workspace"), "\(show.stdout) \(show.stderr)")
        #expect(try h.outl(["check"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: h.workspace), "nothing went to the default ~/outl")
    }

    @Test func outld_creates_the_configured_workspace_on_first_start_and_says_so() throws {
        let h = try OutlHome(workspace: false)
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        #expect(d.log.contains("outld: created the workspace \(h.workspace) (from the default): it did not exist"), "\(d.log)")
        #expect(FileManager.default.fileExists(atPath: h.workspace))
        #expect(d.stop() == 0)
        let again = try h.start()
        #expect(eventually { again.log.contains("ready") }, "\(again.log)")
        #expect(!again.log.contains("created the workspace"))
        #expect(again.stop() == 0)
    }

    /// Only the daemon makes a workspace: the writer, `outld --once` (cron) and outl refuse a
    /// missing one in one line that says where its path came from, whatever that was (exit 73).
    @Test func only_the_daemon_creates_a_workspace_wherever_its_path_came_from() throws {
        let h = try OutlHome(workspace: false)
        let typo = h.tmp.sub("Dcuments/notes")
        let cases: [(args: [String], env: [String: String], origin: String)] = [
            (["--workspace", typo], [:], "--workspace"),
            ([], ["OUTL_WORKSPACE": typo], "$OUTL_WORKSPACE"),
            ([], ["XDG_CONFIG_HOME": h.tmp.sub("conf")], "outld.conf"),
            ([], [:], "the default"),
        ]
        try FileManager.default.createDirectory(atPath: h.tmp.sub("conf/outl"), withIntermediateDirectories: true)
        try writeText(h.tmp.sub("conf/outl/outld.conf"), "workspace = \(typo)\n")
        for c in cases {
            let root = c.origin == "the default" ? h.workspace : typo
            let says = "no workspace at \(root) (from \(c.origin)); start outld to create it, or create the directory"
            let env = h.env.merging(c.env) { $1 }
            let capture = try run(binPath("outl-capture"), c.args + ["x"], env: env)
            #expect(capture.status == 73 && capture.stderr == "outl-capture: \(says); nothing saved\n", "\(c.origin): \(capture.stderr)")
            let once = try run(binPath("outld"), c.args + ["--once", "--log", "stderr"], env: env)
            #expect(once.status == 73 && once.stderr == "outld: error: \(says)\n", "\(c.origin): \(once.stderr)")
            let show = try run(binPath("outl"), c.args + ["show"], env: env)
            #expect(show.status == 73 && show.stderr == "outl: \(says)\n", "\(c.origin): \(show.stderr)")
            #expect(!FileManager.default.fileExists(atPath: root), "\(c.origin): a missing workspace was created")
        }
        // The inbox of an existing workspace is made by whoever needs it first.
        try FileManager.default.createDirectory(atPath: h.workspace, withIntermediateDirectories: true)
        #expect(try h.capture(["x"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: h.inbox))
    }

    @Test func a_workspace_named_on_the_command_line_must_exist() throws {
        let h = try OutlHome()
        let typo = h.tmp.sub("notse")
        let capture = try run(binPath("outl-capture"), ["--workspace", typo, "x"], env: h.env)
        #expect(capture.status == 73 && capture.stderr.contains("no workspace at \(typo)"), "\(capture.stderr)")
        let once = try h.outld(["--once", "--workspace", typo])
        #expect(once.status == 73 && once.stderr.contains("no workspace at \(typo)"), "\(once.stderr)")
        let show = try h.outl(["--workspace", typo, "show"])
        #expect(show.status == 73 && show.stderr.hasPrefix("outl: no workspace at \(typo) (from --workspace)"), "\(show.stderr)")
        #expect(!FileManager.default.fileExists(atPath: typo), "a typo became a directory")
        // Starting the daemon is the deliberate act that makes a workspace, named or configured.
        let named = h.tmp.sub("new-notes")
        let d = try h.start(["--workspace", named])
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        #expect(d.log.contains("created the workspace \(named) (from --workspace)"), "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test func outl_never_creates_a_workspace_nor_its_state() throws {
        let h = try OutlHome(workspace: false)
        for args in [["show"], ["check"], ["daily", "append", "x"], ["reconcile"]] {
            let r = try h.outl(args)
            #expect(r.status == 73, "\(args): \(r.stderr)")
            #expect(r.stderr == "outl: no workspace at \(h.workspace) (from the default); start outld to create it, or create the directory\n", "\(r.stderr)")
        }
        #expect(listDir(h.home).isEmpty, "outl created \(listDir(h.home)) in HOME")
    }

    @Test func a_bad_outld_conf_line_is_refused_by_every_program_alike_and_creates_nothing() throws {
        let cases: [(conf: String, says: String)] = [
            ("workspace = b\n", "outld.conf:1: b: a relative path; write an absolute path or one starting with ~/"),
            ("# mine\nworkspace = \"~/x\"\n", "outld.conf:2: workspace = \"~/x\": quotes are not removed; write the value without them"),
            ("workspace = ~root/notes\n", "outld.conf:1: ~root/notes: only ~/ (your own home) is expanded; write the full path"),
            ("workspace = ~/a\nworkspace = ~/b\n", "outld.conf:2: workspace is given twice (first on line 1); keep one"),
            ("inbox = ~/phone # synced\n", "outld.conf:1: inbox = ~/phone # synced: a comment must be on a line of its own"),
            ("inbox = relative/inbox\n", "outld.conf:1: relative/inbox: a relative path"),
        ]
        for c in cases {
            let h = try OutlHome(workspace: false)
            try h.writeConf(c.conf)
            let cwd = h.tmp.sub("cwd")
            try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
            for (program, r) in try h.everyProgram(cwd: cwd) {
                #expect(r.status == 78, "\(program) with \(c.conf.debugDescription): \(r.status) \(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1 && r.stderr.contains(c.says), "\(program): \(r.stderr)")
                #expect(r.stderr.hasPrefix("\(program.split(separator: " ")[0]): "), "\(program): \(r.stderr)")
            }
            #expect(listDir(cwd).isEmpty, "a refused value created \(listDir(cwd))")
            #expect(listDir(h.home) == [".config"], "\(listDir(h.home))")
        }
    }

    @Test func the_environment_inbox_yields_to_an_inbox_or_workspace_on_the_command_line() throws {
        let h = try OutlHome()
        let device = h.tmp.sub("device-inbox")
        let other = h.tmp.sub("other-ws")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let env = ["OUTL_CAPTURE_INBOX": device]
        let r = try run(binPath("outl-capture"), ["--workspace", other, "--quiet", "--at", "2026-12-02T10:00:00Z", "to the named workspace"],
                        env: h.env.merging(env) { $1 })
        #expect(r.status == 0, "\(r.stderr)")
        #expect(listDir(Path.join(other, ".outl/captures")).filter(CaptureName.isFinal).count == 1)
        #expect(listDir(device).isEmpty)
        // Without flags the device inbox is where a capture goes and what outld drains too...
        _ = try run(binPath("outl-capture"), ["--quiet", "--at", "2026-12-02T10:00:00Z", "device capture"], env: h.env.merging(env) { $1 })
        #expect(listDir(device).filter(CaptureName.isFinal).count == 1)
        // ...but not into a workspace the command line names.
        let once = try h.outld(["--once", "--workspace", other], extraEnv: env)
        #expect(once.status == 0 && once.stdout.contains("drained 1"), "\(once.stdout)")
        #expect(listDir(device).filter(CaptureName.isFinal).count == 1, "the device inbox was drained into the named workspace")
        let mine = try h.outld(["--once"], extraEnv: env)
        #expect(mine.stdout.contains("drained 1") && listDir(device).filter(CaptureName.isFinal).isEmpty, "\(mine.stdout)")
    }

    @Test func one_state_directory_rule_one_lock_for_every_program() throws {
        let h = try OutlHome()
        let state = h.tmp.sub("state")
        let d = try h.start(extraEnv: ["OUTL_STATE_DIR": state])
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        #expect(listDir(state).contains { $0.hasPrefix("ws-") }, "outld keeps its lock in $OUTL_STATE_DIR")
        // outl, with the same environment, finds outld's lock (75), and reads beside it.
        let append = try h.outl(["daily", "append", "x"], extraEnv: ["OUTL_STATE_DIR": state])
        #expect(append.status == 75 && append.stderr.contains("pid \(d.pid)"), "\(append.stderr)")
        _ = try h.captureID("drained while outl reads")
        #expect(eventually { h.journal().contains("drained while outl reads") })
        let show = try h.outl(["show", "2026-12-02"], extraEnv: ["OUTL_STATE_DIR": state])
        #expect(show.status == 0 && show.stdout.contains("drained while outl reads"), "\(show.stderr)")
        #expect(try h.outl(["check"], extraEnv: ["OUTL_STATE_DIR": state]).status == 0)
        // outld --once asks the owner it finds there instead of writing as a second actor.
        _ = try h.captureID("asked of the owner")
        let once = try h.outld(["--once"], extraEnv: ["OUTL_STATE_DIR": state])
        #expect(once.status == 0, "\(once.stdout) \(once.stderr)")
        #expect(h.opsFiles().count == 1, "\(h.opsFiles())")
        #expect(d.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: Path.join(h.home, ".local/state/outl")), "a second state directory appeared")
    }

    @Test func outl_show_and_check_read_without_the_lock_beside_a_running_outld() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("visible to outl show")
        #expect(eventually { h.journal().contains("visible to outl show") })
        let show = try h.outl(["show", "2026-12-02"])
        #expect(show.status == 0 && show.stdout.contains("- visible to outl show"), "\(show.status) \(show.stderr)")
        let check = try h.outl(["check"])
        #expect(check.status == 0 && check.stdout.hasPrefix("ok: "), "\(check.stdout) \(check.stderr)")
        #expect(h.opsFiles().count == 1, "a reader minted an actor: \(h.opsFiles())")
        #expect(d.stop() == 0)
    }
}

@Suite(.serialized) struct ProgramManners {
    @Test func every_stderr_line_names_its_program_once() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: Path.join(h.workspace, ".outl/ops"), withIntermediateDirectories: true)
        // Another device's op log with a torn tail: the workspace's own note about it goes to outld's log.
        try writeText(Path.join(h.workspace, ".outl/ops/ops-0190a1b2-0000-7000-8000-000000000001.jsonl"), "{\"torn")
        _ = try h.captureID("x")
        let d = try h.start(extraEnv: ["TZ": "Mars/Olympus"])
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        #expect(d.stop() == 0)
        let lines = d.log.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("another device's file") }, "\(lines)")
        #expect(lines.filter { $0.contains("TZ=Mars/Olympus") }.count == 1, "\(lines)")
        for l in lines {
            #expect(l.hasPrefix("outld: ") && !l.hasPrefix("outld: outld") && !l.contains("outl: "), "\(l)")
        }
    }

    @Test func outld_usage_errors_are_one_line_and_64() throws {
        let h = try OutlHome()
        for args in [["--timeout", "5"], ["--bogus"], ["--once", "--timeout", "soon"]] {
            let r = try h.outld(args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.hasPrefix("outld: ") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(try h.outld(["--once", "--timeout", "5"]).status == 0)
    }

    @Test func outl_takes_help_and_options_anywhere_and_an_option_is_never_text() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: h.workspace, withIntermediateDirectories: true)
        for args in [["--help"], ["help"], ["show", "--help"], ["daily", "append", "--help"], ["status", "-h"]] {
            let r = try h.outl(args)
            #expect(r.status == 0 && r.stdout.hasPrefix("usage: outl ") && r.stdout.hasSuffix(".\n"), "\(args): \(r.stderr)")
        }
        for args in [["version"], ["--version"], ["check", "-V"]] {
            let r = try h.outl(args)
            #expect(r.status == 0 && r.stdout == "outl 0.1.0\n", "\(args): \(r.stdout)")
        }
        // Words that start with - before -- are options: an unknown one is a usage error, no block.
        for args in [["daily", "append", "-q", "hello"], ["daily", "append", "--at", "2026-12-01", "x"]] {
            let r = try h.outl(args)
            #expect(r.status == 64 && r.stderr.hasPrefix("outl: unknown option -"), "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: h.workspace + "/.outl/ops"), "an option became a block")
        // Options after the command.
        let status = try h.outl(["status", "--workspace", h.workspace])
        #expect(status.status == 0 && status.stdout.contains(h.workspace), "\(status.stderr)")
        // A lone - among words is text; alone it is standard input.
        #expect(try h.outl(["daily", "append", "meeting", "3", "-", "4pm"], extraEnv: ["TZ": "UTC"]).status == 0)
        let today = try h.outl(["show", "today"], extraEnv: ["TZ": "UTC"])
        #expect(today.status == 0 && today.stdout.hasPrefix("- meeting 3 - 4pm\n"), "\(today.stdout)")
        #expect(try h.outl(["show"], extraEnv: ["TZ": "UTC"]).stdout == today.stdout)
        // Yesterday and tomorrow are days of the local calendar.
        let t = time(nil)
        var days: [String] = []
        for offset in [-1, 1] {
            var shifted = t + offset * 86_400
            var tm = tm()
            gmtime_r(&shifted, &tm)
            days.append(String(format: "%04d-%02d-%02d", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday)))
        }
        for (word, day) in zip(["yesterday", "tomorrow"], days) {
            let r = try h.outl(["show", word], extraEnv: ["TZ": "UTC"])
            #expect(r.status == 1 && r.stderr == "outl: no journal page for \(day)\n", "\(word): \(r.stderr)")
        }
    }

    @Test func outl_usage_version_stdin_and_double_dash() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: h.workspace, withIntermediateDirectories: true)
        for args in [["reconcile", "extra"], ["check", "extra"], ["show", "a", "b"], ["frobnicate"], [], ["--bogus", "show"]] {
            let r = try h.outl(args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.hasPrefix("outl: ") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        let v = try h.outl(["-V"])
        #expect(v.status == 0 && v.stdout.hasPrefix("outl "))
        #expect(try h.outl(["daily", "append", "-"], stdin: Array("from standard input\n".utf8)).status == 0)
        #expect(try h.outl(["daily", "append", "--", "-x", "--y"]).status == 0)
        let nul = try h.outl(["daily", "append", "-"], stdin: Array("a".utf8) + [0] + Array("b".utf8))
        #expect(nul.status == 65 && nul.stderr.contains("U+0000"), "\(nul.stderr)")
        let show = try h.outl(["show"])
        #expect(show.stdout.contains("- from standard input") && show.stdout.contains("- -x --y"), "\(show.stdout)")
    }

    /// A workspace on a read-only file system is 77 from the daemon and from --once alike (the
    /// daemon said 69, "cannot watch the inboxes", and systemd restarted it five times), and the line
    /// names the step that failed.
    @Test(.enabled(if: geteuid() == 0 && access("/usr/bin/unshare", X_OK) == 0, "needs root and unshare for a read-only mount"))
    func a_read_only_workspace_is_77_from_the_daemon_and_from_once() throws {
        let h = try OutlHome()
        _ = try h.captureID("drained before the mount")
        #expect(try h.outld(["--once"]).status == 0)
        try FileManager.default.removeItem(atPath: h.inbox + "/tmp")  // the daemon must make it again
        // A private mount namespace: the read-only bind mount is seen by these processes only.
        let script = """
            mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
            timeout 20 "$2" --log stderr; echo "daemon $?" >&2
            timeout 20 "$2" --once --log stderr; echo "once $?" >&2
            """
        let r = try run("/usr/bin/unshare", ["-m", "sh", "-c", script, "sh", h.workspace, binPath("outld")], env: h.env)
        #expect(!r.stderr.contains("daemon 99") && r.status == 0, "\(r.stderr)")
        let daemon = r.stderr.components(separatedBy: "daemon ")[0].split(separator: "\n").last.map(String.init) ?? ""
        #expect(daemon.hasPrefix("outld: error: cannot ") && daemon.hasSuffix(": Read-only file system"), "\(r.stderr)")
        #expect(r.stderr.contains("daemon 77\n"), "\(r.stderr)")
        #expect(r.stderr.contains("once 77"), "\(r.stderr)")
        #expect(!r.stderr.contains("cannot watch"))
    }

    @Test(.enabled(if: geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0, "needs root to run as another user"))
    func a_workspace_this_user_may_not_write_is_77() throws {
        let h = try OutlHome()
        _ = try h.captureID("waiting")
        for dir in [h.tmp.path, h.home] { chmod(dir, 0o755) }
        let nobody = h.env.merging(["XDG_STATE_HOME": h.tmp.sub("nobody-state")]) { $1 }
        let once = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                                binPath("outld"), "--once", "--log", "stderr"], env: nobody)
        #expect(once.status == 77, "\(once.stdout) \(once.stderr)")
        #expect(once.stderr.contains("Permission denied"), "\(once.stderr)")
        #expect(h.pending().count == 1)
    }
}

// UntrustedFolderTests: the workspace is a synced folder, so any file may be at any name in it. The
// real outld and outl-capture on real temp workspaces meet what a sync tool or a peer can leave there:
// a capture whose day cannot be named, a rejected/ that is a file or a link, a captures directory
// (or .outl) replaced by a link (set right, never followed), an op file of another device without a newline. Each test names
// what it proves; none of these may stop capture, follow a link, or take unbounded memory.
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct UntrustedFolderTests {
    /// A bad capture (not JSON) whose name sorts before every capture made with --at 2026.
    static let badName = "01AAAAAAAAAAAAAAAAAAAAAAAA.json"

    /// A workspace with its inbox made and two good captures waiting, which sort after `badName`.
    func homeWithCaptures() throws -> (OutlHome, [String]) {
        let h = try OutlHome()
        let ids = [try h.captureID("good one"), try h.captureID("good two")]
        try writeText(Path.join(h.inbox, Self.badName), "not json at all\n")
        return (h, ids)
    }

    @Test func capture_past_year_9999_is_set_aside_and_the_next_lands() throws {
        let h = try OutlHome()
        _ = try h.captureID("before the far future")
        let far = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ.json"  // a valid ULID: its time is in the year 10889
        try writeText(Path.join(h.inbox, far), #"{"text":"from the far future"}"#)
        let r = try h.outld(["--once"])
        #expect(!r.signaled && r.status == 0, "status \(r.status): \(r.stderr)")
        #expect(h.journal().contains("before the far future"))
        let reason = readText(Path.join(h.inbox, "rejected/\(far).reason")) ?? ""
        #expect(reason.contains("9999"), "reason: \(reason)")
        #expect(!h.pending().contains(far))
        // The start after it is not a crash loop: the next capture lands too.
        _ = try h.captureID("after the far future")
        let again = try h.outld(["--once"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(h.journal().contains("after the far future"))
    }

    @Test func rejected_as_a_file_keeps_the_bad_capture_and_drains_the_rest() throws {
        let (h, _) = try homeWithCaptures()
        let rejected = Path.join(h.inbox, "rejected")
        try writeText(rejected, "a file where rejected/ belongs\n")
        let r = try h.outld(["--once"])
        #expect(r.status == 73, "status \(r.status): \(r.stdout) \(r.stderr)")
        let page = h.journal()
        #expect(page.contains("good one") && page.contains("good two"), "the good captures wait behind the bad one")
        #expect(h.pending() == [Self.badName], "the bad capture is kept where it is")
        #expect(r.stderr.contains(Self.badName) && r.stderr.contains("rejected"), "stderr: \(r.stderr)")
        #expect(readText(rejected) == "a file where rejected/ belongs\n")
    }

    @Test func rejected_as_a_symlink_is_never_followed() throws {
        let (h, _) = try homeWithCaptures()
        let elsewhere = h.tmp.sub("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: Path.join(h.inbox, "rejected"), withDestinationPath: elsewhere)
        let r = try h.outld(["--once"])
        #expect(r.status == 73, "status \(r.status): \(r.stdout) \(r.stderr)")
        #expect(listDir(elsewhere).isEmpty, "something was written through the link: \(listDir(elsewhere))")
        let page = h.journal()
        #expect(page.contains("good one") && page.contains("good two"))
        #expect(h.pending() == [Self.badName])
        #expect(r.stderr.contains("symbolic link"), "stderr: \(r.stderr)")
    }

    @Test func missing_rejected_is_made_and_a_bad_capture_set_aside() throws {
        let (h, _) = try homeWithCaptures()
        let r = try h.outld(["--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(listDir(Path.join(h.inbox, "rejected")) == [Self.badName, Self.badName + ".reason"])
    }

    /// `link` (a path inside the workspace) made a symlink to a directory outside holding one capture.
    func linkedAway(_ h: OutlHome, _ link: String, captureIn sub: String) throws -> (target: String, file: String) {
        let target = h.tmp.sub("target")
        let inbox = Path.join(target, sub)
        try FileManager.default.createDirectory(atPath: Path.join(inbox, "tmp"), withIntermediateDirectories: true)
        let file = Path.join(inbox, "01KBZZZZZZZZZZZZZZZZZZZZZZ.json")
        try writeText(file, #"{"text":"in the link's target"}"#)
        try FileManager.default.createDirectory(atPath: Path.parent(of: link), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        return (target, file)
    }

    /// A peer made the workspace's own inbox (or `.outl`) a link to a directory outside holding a
    /// capture: the writer refuses it (nothing saved through it), and outld sets it right without
    /// following it, at every start and while it runs: it starts, serves, and never reads the target.
    @Test(arguments: [".outl/captures", ".outl"])
    func symlinked_captures_dir_is_set_right_and_its_target_untouched(_ linked: String) throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: Path.join(h.workspace, "journals"), withIntermediateDirectories: true)
        let link = Path.join(h.workspace, linked)
        let (target, file) = try linkedAway(h, link, captureIn: linked == ".outl" ? "captures" : "")
        let before = listDir(target)

        let capture = try h.capture(["never written there"])
        #expect(capture.status == 73, "outl-capture: \(capture.status) \(capture.stderr)")
        #expect(capture.stderr.contains(link) && capture.stderr.contains("symbolic link"), "\(capture.stderr)")
        let list = try h.capture([], extra: ["--list"])
        #expect(list.status == 73 && !list.stdout.contains("link's target"), "--list: \(list.status) \(list.stderr)")

        let once = try h.outld(["--once"])
        #expect(once.status == 0, "--once: \(once.status) \(once.stderr)")
        let said = once.stderr.split(separator: "\n").filter { $0.contains(link) }
        #expect(said.count == 1 && said[0].contains("was a symbolic link to \(target)") && said[0].contains("directory made again"), "\(once.stderr)")
        #expect(((try? Sys.lstat(link))?.st_mode ?? 0) & S_IFMT == S_IFDIR, "\(link) is not a directory again")
        let status = try run(binPath("outl"), ["status"], env: h.env)
        #expect(status.stdout.contains("notices") && status.stdout.contains("was a symbolic link"), "\(status.stdout)")

        // Set right, the inbox takes captures again; a link made again while outld runs costs nothing.
        _ = try h.captureID("after the repair")
        let daemon = try h.start()
        #expect(eventually { h.journal().contains("- after the repair") }, "\(daemon.log)")
        let swap = Path.join(Path.parent(of: link), ".peer-swap")
        try FileManager.default.createSymbolicLink(atPath: swap, withDestinationPath: target)
        #expect(exchange(swap, link) == 0, "renameat2: \(errno)")
        #expect(eventually { ((try? Sys.lstat(link))?.st_mode ?? 0) & S_IFMT == S_IFDIR && ((try? Sys.lstat(h.inbox))?.st_mode ?? 0) & S_IFMT == S_IFDIR },
                "\(daemon.log)")
        #expect(eventually { (try? h.captureID("while it runs")) != nil })
        #expect(eventually { h.journal().contains("- while it runs") }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")

        #expect(FileManager.default.fileExists(atPath: file), "a capture in the target was deleted")
        #expect(listDir(target) == before, "the target changed: \(listDir(target))")
        #expect(!h.journal().contains("link's target"))
    }

    @Test func op_file_without_a_newline_is_read_in_bounded_memory() throws {
        let h = try OutlHome()
        _ = try h.captureID("lands despite the huge op file")
        let ops = Path.join(h.workspace, ".outl/ops")
        try FileManager.default.createDirectory(atPath: ops, withIntermediateDirectories: true)
        // Another device's op file: 1 GiB, sparse (no disk), no newline anywhere.
        let peer = Path.join(ops, "ops-0f0e0d0c-0b0a-4908-8706-050403020100.jsonl")
        let fd = open(peer, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0)
        #expect(ftruncate(fd, 1 << 30) == 0)
        close(fd)
        let r = try runMeasuringPeakRSS(binPath("outld"), ["--once", "--log", "stderr"], env: h.env)
        #expect(r.status == 0, "status \(r.status): \(r.stderr)")
        #expect(h.journal().contains("lands despite the huge op file"))
        #expect(r.peakRSSKiB < 300 * 1024, "peak RSS \(r.peakRSSKiB) KiB")
        #expect(r.stderr.contains(peer) && r.stderr.contains("offset 0"), "the long line is reported: \(r.stderr)")
        print("op_file_without_a_newline_is_read_in_bounded_memory: peak RSS \(r.peakRSSKiB) KiB for a 1 GiB line")
    }
}

/// Runs a program to completion and reports its own peak RSS, as GNU time measures it (wait4's
/// rusage). Not this process's wait4: a child spawned straight from the test runner (vfork, then
/// exec) starts its ru_maxrss at the runner's own peak, which other tests in the same process raise
/// past any bound. time is small, and its child's count starts from time's own size.
func runMeasuringPeakRSS(_ executable: String, _ args: [String], env: [String: String]) throws
    -> (status: Int32, peakRSSKiB: Int, stderr: String) {
    let dir = TempDir("rss")
    let errPath = dir.sub("stderr"), rssPath = dir.sub("rss")
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OUTL_") }
    for (k, v) in env { if v.isEmpty { environment.removeValue(forKey: k) } else { environment[k] = v } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let time = "/usr/bin/time"
    guard access(time, X_OK) == 0 else { throw Errno(ENOENT) }
    let argv = ([time, "-q", "-o", rssPath, "-f", "%M", executable] + args).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, time, &actions, nil, argv, envp)
    guard rc == 0 else { throw Errno(rc) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exited = status & 0x7f == 0
    let rss = (readText(rssPath) ?? "").split(separator: "\n").last.flatMap { Int($0) }
    guard let rss else { throw Errno(EIO) }
    // time exits with its child's status (a signal's as 128 + n).
    return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), rss, readText(errPath) ?? "")
}

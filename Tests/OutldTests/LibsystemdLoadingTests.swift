// LibsystemdLoadingTests: outld maps libsystemd (and the six libraries it pulls in) only when it
// talks to systemd or the journal, and says so in one line when it cannot load it. What the
// dynamic loader maps is read from its own trace (LD_DEBUG=files), on the real binary.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct LibsystemdLoadingTests {
    /// A directory whose libsystemd.so.0 is not a library: the dynamic loader finds it first
    /// (LD_LIBRARY_PATH) and dlopen fails, as on a system without libsystemd0.
    func brokenLibrary(_ h: OutlHome) throws -> String {
        let dir = h.tmp.sub("broken-lib")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("not an ELF object\n".utf8).write(to: URL(fileURLWithPath: Path.join(dir, "libsystemd.so.0")))
        return dir
    }

    @Test func outld_once_logging_to_stderr_never_loads_libsystemd() throws {
        let h = try OutlHome()
        _ = try h.captureID("a line from a script")
        let r = try h.outld(["--once"], extraEnv: ["LD_DEBUG": "files"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(h.journal().contains("a line from a script"))
        // The trace names what is mapped (so it would name libsystemd) ...
        #expect(r.stderr.contains("file=libc.so.6"), "\(r.stderr.prefix(2000))")
        #expect(!r.stderr.contains("libsystemd"), "\(r.stderr.prefix(4000))")
        // ... and logging to the journal loads it, when the log is made.
        let j = try run(binPath("outld"), ["--once", "--log", "journal"], env: h.env.merging(["LD_DEBUG": "files"]) { $1 })
        #expect(j.status == 0, "\(j.stderr.suffix(2000))")
        #expect(j.stderr.contains("file=libsystemd.so.0"), "\(j.stderr.prefix(4000))")
    }

    @Test func a_journal_log_without_libsystemd_says_why_once_and_logs_to_stderr() throws {
        let h = try OutlHome()
        _ = try h.captureID("kept although the journal is out of reach")
        let lib = try brokenLibrary(h)
        let r = try run(binPath("outld"), ["--once", "--log", "journal", "--verbose"],
                        env: h.env.merging(["LD_LIBRARY_PATH": lib]) { $1 })
        #expect(r.status == 0, "\(r.stderr)")
        #expect(h.journal().contains("kept although the journal is out of reach"))
        let lines = r.stderr.split(separator: "\n")
        let said = lines.filter { $0.contains("cannot load libsystemd") }
        #expect(said.count == 1, "\(r.stderr)")
        #expect(said.first?.hasPrefix("outld: warning: cannot load libsystemd (") == true, "\(r.stderr)")
        #expect(said.first?.contains("logging to stderr, not the journal") == true, "\(r.stderr)")
        // Each drained capture is still logged, as a line.
        #expect(lines.contains { $0.hasPrefix("outld: drained ") }, "\(r.stderr)")
    }

    /// Under systemd ($NOTIFY_SOCKET set) READY=1 could never be sent: outld says why and exits 69
    /// (EX_UNAVAILABLE) at once, instead of running until TimeoutStartSec kills it.
    @Test func outld_under_systemd_without_libsystemd_exits_69_saying_why() throws {
        let h = try OutlHome()
        let lib = try brokenLibrary(h)
        let d = try h.start(extraEnv: ["NOTIFY_SOCKET": h.tmp.sub("notify"), "LD_LIBRARY_PATH": lib])
        #expect(eventually { !d.process.isRunning }, "\(d.log)")
        #expect(d.stop() == 69, "\(d.log)")
        #expect(d.log.contains("error: cannot load libsystemd ("), "\(d.log)")
        #expect(d.log.contains("so systemd ($NOTIFY_SOCKET) cannot be told that outld is ready"), "\(d.log)")
        #expect(!d.log.contains("ready:"), "\(d.log)")
    }
}

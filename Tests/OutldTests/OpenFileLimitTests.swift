// OpenFileLimitTests: a burst larger than the open files a process may hold drains in one pass, on
// the ring and on plain syscalls. systemd gives a user service a soft limit of 1,024; a drain that
// held a whole batch (4,096 files) open stopped at EMFILE after about a thousand and left the rest
// for later passes, behind a growing backoff.
import BatchIO
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct OpenFileLimitTests {
    static let ringHere = BatchIO.make(forcePlain: false).backend == .uring

    /// `count` captures dropped as a writer drops them: each written in tmp/, then renamed in.
    static func drop(_ count: Int, into inbox: String) throws {
        let tmp = Path.join(inbox, "tmp")
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        var ids = ULIDGenerator()
        for k in 0..<count {
            let name = CaptureName.fileName(for: ids.next())
            let bytes = CaptureFile.encode(Capture(text: "line \(k)", capturedAt: "2026-12-02T10:00:00Z", source: "test"))
            try Data(bytes).write(to: URL(fileURLWithPath: Path.join(tmp, name)))
            try FileManager.default.moveItem(atPath: Path.join(tmp, name), toPath: Path.join(inbox, name))
        }
    }

    /// outld --once with a soft limit of 128 open files, reading capture files as `io` says.
    static func drainUnderLimit(_ h: OutlHome, io: String) throws -> ProcessResult {
        try run("/bin/sh", ["-c", "ulimit -S -n 128 && exec \"$0\" \"$@\"", binPath("outld"), "--once", "--io", io, "--log", "stderr"],
                env: h.env.merging(["OUTL_INBOX_IO": io]) { $1 })
    }

    @Test(.enabled(if: ringHere, "needs io_uring"))
    func a_burst_of_more_captures_than_files_may_be_open_drains_in_one_pass_on_the_ring() throws {
        try drainsInOnePass(io: "uring")
    }

    @Test func a_burst_of_more_captures_than_files_may_be_open_drains_in_one_pass_with_plain_syscalls() throws {
        try drainsInOnePass(io: "plain")
    }

    func drainsInOnePass(io: String) throws {
        let h = try OutlHome()
        try Self.drop(600, into: h.inbox)
        let r = try Self.drainUnderLimit(h, io: io)
        #expect(r.status == 0, "\(r.stderr.suffix(600))")
        #expect(h.pending().isEmpty, "\(h.pending().count) left")
        let page = h.journal()
        #expect(page.contains("- line 0\n") && page.contains("- line 599\n"))
        #expect(!r.stderr.contains("Too many open files"), "\(r.stderr.suffix(600))")
    }
}

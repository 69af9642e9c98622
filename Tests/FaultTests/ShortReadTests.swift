// ShortReadTests: files read in pieces, as FUSE or a network mount may return them (every read(2) and
// pread(2) under the workspace asks the kernel for a few dozen bytes at most): a page read so must not
// look like a page with blocks removed, and an op file read so must hand over every op.
// Serialized: Sys.interposer is a process global (withInterposer also holds a process-wide gate).
import Glibc
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct ShortReadTests {
    func capture(_ text: String, on day: JournalDay) -> CaptureBlock {
        CaptureBlock(id: BlockIDs.fresh(), day: day, text: text, capturedAt: "2026-12-02T09:00:00.000+01:00", source: "cli")
    }

    func open(_ root: String, _ state: String) throws -> Workspace {
        var o = WorkspaceOptions(root: root)
        o.stateDirectory = state
        o.log = .silent
        return try Workspace(options: o)
    }

    /// Appends to a file at its first read, after the reader's fstat: a writer not following the
    /// protocol, or a sync tool writing in place.
    final class GrowAtFirstRead: SysInterposer {
        let path: String, more: [UInt8]
        var grown = false
        init(_ path: String, _ more: [UInt8]) { self.path = path; self.more = more }
        func before(_ call: SysCall) -> SysFault? {
            if call.op == .read, !grown, descriptor(call.fd, isFileAt: path) {
                grown = true
                let fd = Glibc.open(path, O_WRONLY | O_APPEND)
                _ = more.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                Glibc.close(fd)
            }
            return nil
        }
        func after(_ call: SysCall, result: Int) {}
    }

    /// A whole file read is every byte it has when read, in pieces or grown after its size was taken
    /// (read past that size, to its end), and refused past the limit: read into room left
    /// uninitialized, as far as the size and one byte, then grown.
    @Test func a_file_read_whole_is_all_of_it_read_in_pieces_or_grown_after_its_size_was_taken() throws {
        let t = TempDir("read-whole")
        let path = t.sub("page.md")
        let first = Array((0..<5000).map { UInt8(truncatingIfNeeded: $0 % 251) }), more = Array(repeating: UInt8(ascii: "m"), count: 9000)
        for size in [0, 1, 4095, 4096, 5000] {
            try writeText(path, "")
            try Durable.publish(Array(first.prefix(size)), to: path, via: t.sub("page.tmp"))
            #expect(try Durable.readRegularFile(path, limit: 1 << 20) == Array(first.prefix(size)))
            let inj = FaultInjector(.shortRead(37), untilHealed: true, match: SysMatch(ops: [.read], under: t.path))
            let pieces = try withInterposer(inj) { try Durable.readRegularFile(path, limit: 1 << 20) }
            #expect(pieces == Array(first.prefix(size)), "read in pieces: \(pieces.count) of \(size) bytes")
            let grown = try withInterposer(GrowAtFirstRead(path, more)) { try Durable.readRegularFile(path, limit: 1 << 20) }
            #expect(grown == Array(first.prefix(size)) + more, "grown after fstat: \(grown.count) of \(size + more.count) bytes")
            try Durable.publish(Array(first.prefix(size)), to: path, via: t.sub("page.tmp"))
            #expect(throws: Errno(EFBIG)) {
                try withInterposer(GrowAtFirstRead(path, more)) { try Durable.readRegularFile(path, limit: size + 100) }
            }
        }
    }

    @Test func a_page_read_in_pieces_is_the_whole_page_and_deletes_nothing() async throws {
        let t = TempDir("short-read-page")
        let root = t.sub("ws"), day = JournalDay(year: 2026, month: 12, day: 2)!
        try Durable.makeDirectory(root, mode: 0o755)
        let ws = try open(root, t.sub("state"))
        _ = try await ws.appendCaptures((0..<100).map { capture("capture number \($0): buy oat milk", on: day) })
        _ = try await ws.projectDirtyPages()
        let file = Path.join(root, "journals/\(day.fileStem).md")
        let before = try Durable.readRegularFile(file, limit: 1 << 20)
        // The person's editor saved the page (so its changes are judged three-way against this
        // device's projection, where a page lacking blocks is their deletion): read in pieces.
        let inj = FaultInjector(.shortRead(37), untilHealed: true, match: SysMatch(ops: [.read, .pread], under: root))
        try await withInterposer(inj) { try await ws.reconcile(path: file, origin: .editedHere) }
        #expect(inj.injected > 10, "the page was not read in pieces (\(inj.injected) short reads)")
        #expect(try Durable.readRegularFile(file, limit: 1 << 20) == before, "the page changed")
        let md = await ws.journalMarkdown(day) ?? ""
        #expect(md.components(separatedBy: "\n- capture number").count == 100, "blocks were lost:\n\(md)")
        for name in try Sys.readDirectory(Path.join(root, ".outl/ops")) {
            let ops = try Durable.readRegularFile(Path.join(root, ".outl/ops/\(name)"), limit: 1 << 24)
            #expect(!String(decoding: ops, as: UTF8.self).contains("\"k\":\"db\""), "a delete op was written to \(name)")
        }
        await ws.close()
    }

    @Test func an_op_file_read_in_pieces_hands_over_every_op() async throws {
        let t = TempDir("short-read-ops")
        let root = t.sub("ws"), day = JournalDay(year: 2026, month: 12, day: 2)!
        try Durable.makeDirectory(root, mode: 0o755)
        // Device b's op log, written in a workspace of its own, then delivered into a's.
        let rootB = t.sub("ws-b")
        try Durable.makeDirectory(rootB, mode: 0o755)
        let b = try open(rootB, t.sub("state-b"))
        _ = try await b.appendCaptures((0..<50).map { capture("from b \($0)", on: day) })
        func deliver() throws {
            try Durable.makeDirectory(Path.join(root, ".outl/ops"), mode: 0o755)
            for name in try Sys.readDirectory(Path.join(rootB, ".outl/ops")) {
                let bytes = try Durable.readRegularFile(Path.join(rootB, ".outl/ops/\(name)"), limit: 1 << 24)
                try Durable.publish(bytes, to: Path.join(root, ".outl/ops/\(name)"), via: Path.join(root, ".outl/ops/.\(name).tmp"), mode: 0o644)
            }
        }
        let a = try open(root, t.sub("state-a"))
        try deliver()
        let inj = FaultInjector(.shortRead(29), untilHealed: true, match: SysMatch(ops: [.read, .pread], under: Path.join(root, ".outl/ops")))
        let report = try await withInterposer(inj) { try await a.mergeForeignOps() }
        #expect(inj.injected > 50, "the op file was not read in pieces (\(inj.injected) short reads)")
        #expect(report.appliedByActor.values.reduce(0, +) == report.applied && report.read == 51,
                "read \(report.read) of b's 50 captures and its page")
        _ = try await b.appendCaptures([capture("from b, later", on: day)])
        try deliver()
        let again = try await withInterposer(inj) { try await a.mergeForeignOps() }
        #expect(again.read == 1, "the next merge read \(again.read)")
        let md = await a.journalMarkdown(day) ?? ""
        #expect((0..<50).allSatisfy { md.contains("- from b \($0)\n") } && md.contains("- from b, later"), "\(md)")
        await a.close()
        await b.close()
    }
}

// ArchiveFullTests: the state directory's disk full (every write to this device's archive of ops,
// `seen/`, fails with ENOSPC) costs no capture: each lands in the op log and is acknowledged, before
// and after a restart; the failure is said as the archive's, and the archive catches up once it can.
// Serialized: Sys.interposer is a process global (withInterposer also holds a process-wide gate).
import Glibc
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct ArchiveFullTests {
    let day = JournalDay(year: 2026, month: 12, day: 2)!

    func capture(_ text: String) -> CaptureBlock {
        CaptureBlock(id: BlockIDs.fresh(), day: day, text: text, capturedAt: "2026-12-02T09:00:00.000+01:00", source: "cli")
    }

    func open(_ root: String, _ state: String, said: LineLog) throws -> Workspace {
        var o = WorkspaceOptions(root: root)
        o.stateDirectory = state
        o.log = WorkspaceLog { said.add($0) }
        return try Workspace(options: o)
    }

    final class LineLog: @unchecked Sendable {
        var lines: [String] = []
        func add(_ s: String) { lines.append(s) }
    }

    @Test func a_full_archive_holds_back_no_capture_before_or_after_a_restart() async throws {
        let t = TempDir("archive-full")
        let root = t.sub("ws"), state = t.sub("state"), said = LineLog()
        try Durable.makeDirectory(root, mode: 0o755)
        let first = try open(root, state, said: said)
        _ = try await first.appendCaptures([capture("before the disk filled")])
        await first.close()
        // The workspace's own state directory under the base: its archive is `seen/` in it.
        let seen = Path.join(Path.join(state, try Sys.readDirectory(state).first { $0.hasPrefix("ws-") } ?? "none"), "seen")
        let full = FaultInjector(.fail(.ENOSPC), untilHealed: true, match: SysMatch(ops: [.write, .pwrite], under: seen))
        try await withInterposer(full) {
            let ws = try open(root, state, said: said)
            _ = try await ws.appendCaptures([capture("while the archive's disk is full")])
            await ws.close()
            // A restart finds the op log holding more than the archive: the archive is behind, not the log.
            let again = try open(root, state, said: said)
            _ = try await again.appendCaptures([capture("after a restart, still full")])
            await again.close()
        }
        #expect(full.injected >= 2, "the archive was never written: \(full.injected)")
        #expect(said.lines.contains { $0.contains("this device's archive of ops is behind: No space left on device") }, "\(said.lines)")
        #expect(!said.lines.contains { $0.contains("written again") }, "the op log was rewritten from a behind archive: \(said.lines)")
        // Room again: the next start catches the archive up with the op log, byte for byte.
        let healed = try open(root, state, said: said)
        let md = await healed.journalMarkdown(day) ?? ""
        await healed.close()
        for text in ["before the disk filled", "while the archive's disk is full", "after a restart, still full"] {
            #expect(md.components(separatedBy: "- \(text)").count == 2, "\(text):\n\(md)")
        }
        let own = try Sys.readDirectory(Path.join(root, ".outl/ops")).filter { $0.hasPrefix("ops-") }
        #expect(own.count == 1)
        let log = try Durable.readRegularFile(Path.join(root, ".outl/ops/\(own[0])"), limit: 1 << 20)
        let archive = try Durable.readRegularFile(Path.join(seen, own[0]), limit: 1 << 20)
        #expect(archive == log, "the archive did not catch up: \(archive.count) of \(log.count) bytes")
    }
}

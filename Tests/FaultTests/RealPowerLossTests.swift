// RealPowerLossTests: the power-loss model over the REAL writer + boot + drain. The writer delivers
// captures, outld boots and drains; for every crash state: boot the real Workspace on it (must
// succeed), drain again, and nothing the writer reported saved is lost or doubled (op log, page).
// The device state dir sits inside the recorded root: it is on the same disk and loses power too
// (its page index included: whatever of it survives, each page shows the model after the start).
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct RealPowerLossTests {
    static let captures = 2

    /// `plain: false` runs on io_uring when the kernel allows it; RecordingFS models its
    /// .uringUnlink exactly like unlink (the op log's append is write+fdatasync on both).
    @Test(arguments: [true, false])
    func deliver_drain_boot_loses_nothing_and_doubles_nothing_at_any_crash(plain: Bool) async throws {
        let run = RealRun(dir: TempDir("rpl").path)
        try FileManager.default.createDirectory(atPath: run.state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: run.root, withIntermediateDirectories: true)
        let io = BatchIO.make(forcePlain: plain)
        var savedAt: [Int] = []
        let fs = RecordingFS(root: run.dir)
        try await withInterposer(fs) {
            for k in 0..<Self.captures {
                _ = try run.deliver(1, from: k)
                savedAt.append(fs.count)
            }
            let (ws, r) = try await run.bootAndDrain(io)
            await ws.close()
            #expect(r.drained == Self.captures && r.transientError == nil, "\(r)")
        }
        run.expectExactlyOnce(0..<Self.captures, "the recorded run itself")
        let ops = fs.opDescriptions
        if !plain && io.backend == .uring {
            #expect(ops.contains { $0.contains("write ws/.outl/ops/ops-") }, "io_uring appends are recorded: \(ops)")
        }

        var checked = 0
        for state in fs.allCrashStates() {
            let after = RealRun(dir: TempDir("rpl-boot").path)
            try state.write(to: after.dir)
            try FileManager.default.createDirectory(atPath: after.state, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: after.root, withIntermediateDirectories: true)
            let ws: Workspace, r: DrainReport
            do {
                (ws, r) = try await after.bootAndDrain(BatchIO.make(forcePlain: plain))
            } catch {
                Issue.record("\(state): boot failed: \(error)\n\(ops.joined(separator: "\n"))")
                continue
            }
            // The page index (in the state dir, never fsync'd) may survive or not: no entry of it may
            // let the start skip a page that does not show the model.
            #expect(await ws.check() == [], "\(state)")
            await ws.close()
            #expect(r.transientError == nil, "\(state): \(r)")
            let saved = (0..<Self.captures).filter { state.point >= savedAt[$0] }
            let page = after.journal()
            for k in 0..<Self.captures {
                let inLog = after.opLines(k), inPage = after.occurrences(RealRun.text(k), in: page)
                if saved.contains(k) {
                    #expect(inLog == 1 && inPage == 1, "\(state): saved capture \(k): \(inLog) op lines, \(inPage)× in page\n\(page)\n\(ops.joined(separator: "\n"))")
                } else {
                    #expect(inLog <= 1 && inPage <= 1, "\(state): capture \(k) doubled: \(inLog) op lines, \(inPage)× in page")
                }
            }
            #expect(after.pending().isEmpty, "\(state): inbox not empty: \(after.pending())")
            #expect(after.rejected().isEmpty, "\(state): rejected \(after.rejected())\n\(ops.joined(separator: "\n"))")
            checked += 1
        }
        #expect(checked > 50)
    }
}

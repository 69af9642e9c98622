// AttachmentPowerLossTests: the power-loss model (RecordingFS) over the real writer and drain of a
// capture with two attachments. In every state a power cut could leave: a capture file that the
// drain can see names attachments that are whole (their data was synced before the capture file's
// name came); a block in the op log links assets that are whole (asset data and assets/ synced
// before the append); and a boot and drain of that state leaves every saved capture landed once,
// with its assets, the inbox empty and nothing set aside.
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct AttachmentPowerLossTests {
    @Test(arguments: [true, false])
    func a_capture_with_attachments_is_whole_in_every_crash_state(plain: Bool) async throws {
        let sources = TempDir("apl-src")  // outside the recorded root: the user's files
        try AttachmentSweepTests.writeSources(sources.path)
        let run = RealRun(dir: TempDir("apl").path)
        try FileManager.default.createDirectory(atPath: run.state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: run.root, withIntermediateDirectories: true)
        var gen = ULIDGenerator()
        let id = gen.next()
        let files = AttachmentSweepTests.files
        let assets = files.map { AssetLinkName.of($0.name, id: id, bytes: $0.bytes) }
        var savedAt = 0
        let fs = RecordingFS(root: run.dir)
        try await withInterposer(fs) {
            try AttachmentSweepTests.deliver(id, inbox: run.inbox, sources: sources.path)
            savedAt = fs.count
            let (ws, r) = try await run.bootAndDrain(BatchIO.make(forcePlain: plain))
            await ws.close()
            #expect(r.drained == 1 && r.transientError == nil, "\(r)")
        }
        let ops = fs.opDescriptions.joined(separator: "\n")
        var checked = 0
        for state in fs.allCrashStates() {
            let captureFile = "ws/.outl/captures/" + CaptureName.fileName(for: id)
            let inLog = state.names(in: "ws/.outl/ops").contains { state.text("ws/.outl/ops/" + $0)?.contains("caption zq") == true }
            if let c = state.contents(captureFile).flatMap({ try? CaptureFile.decode($0) }), !inLog {
                for (k, a) in c.attachments.enumerated() {
                    #expect(state.contents("ws/.outl/captures/" + a.file) == files[k].bytes,
                            "\(state): the capture file names \(a.file), which is not whole\n\(ops)")
                }
            }
            if inLog {
                for (k, name) in assets.enumerated() {
                    #expect(state.contents("ws/assets/" + name) == files[k].bytes,
                            "\(state): the block is in the op log but assets/\(name) is not whole\n\(ops)")
                }
            }
            // The state as a disk: the next boot and drain finish the job.
            let after = RealRun(dir: TempDir("apl-boot").path)
            try state.write(to: after.dir)
            try FileManager.default.createDirectory(atPath: after.state, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: after.root, withIntermediateDirectories: true)
            let (ws, r) = try await after.bootAndDrain(BatchIO.make(forcePlain: plain))
            await ws.close()
            #expect(r.transientError == nil && r.waiting.isEmpty && r.rejected == 0, "\(state): \(r)\n\(ops)")
            let page = after.journal()
            if state.point >= savedAt {
                #expect(after.occurrences("caption zq", in: page) == 1, "\(state): the saved capture is not in the page once\n\(page)")
                for (k, name) in assets.enumerated() {
                    #expect((try? Durable.readRegularFile(Path.join(after.root, "assets/\(name)"), limit: 1 << 20)) == files[k].bytes,
                            "\(state): assets/\(name) after the next drain")
                }
            } else {
                #expect(after.occurrences("caption zq", in: page) <= 1)
            }
            #expect(after.pending().isEmpty && after.rejected().isEmpty, "\(state): \(after.pending()) \(after.rejected())")
            checked += 1
        }
        #expect(checked > 30, "\(checked) crash states")
    }
}

// DrainOrderTests: the order of a drain's durable steps as the recording file system sees them.
// A capture's line reaches its journal before its file is unlinked: an unlink can wait on a
// synchronous discard, which the line need not wait for (the file's replay is a no-op anyway).
import BatchIO
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct DrainOrderTests {
    @Test(arguments: [true, false])
    func a_captures_page_is_durable_before_its_file_is_unlinked(plain: Bool) async throws {
        let run = RealRun(dir: TempDir("order").path)
        try FileManager.default.createDirectory(atPath: run.state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: run.root, withIntermediateDirectories: true)
        let id = try run.deliver(1)[0]
        let fs = RecordingFS(root: run.dir)
        try await withInterposer(fs) {
            let (ws, r) = try await run.bootAndDrain(BatchIO.make(forcePlain: plain))
            await ws.close()
            #expect(r.drained == 1 && r.transientError == nil, "\(r)")
        }
        let ops = fs.opDescriptions
        func at(_ what: String) -> Int? { ops.firstIndex { $0.hasSuffix(what) } }
        let opLogSynced = ops.firstIndex { $0.contains("fsync ws/.outl/ops/ops-") }
        let published = at("-> ws/\(RealRun.journalRel)")
        let journalsSynced = ops.indices.first { i in (published.map { i > $0 } ?? false) && ops[i].hasSuffix("fsync dir ws/journals/") }
        let unlinked = at("unlink ws/.outl/captures/\(id.string).json")
        #expect(opLogSynced != nil && published != nil && journalsSynced != nil && unlinked != nil, "\(ops.joined(separator: "\n"))")
        if let o = opLogSynced, let j = journalsSynced, let u = unlinked {
            #expect(o < j && j < u, "op log synced at \(o), page durable at \(j), file unlinked at \(u):\n\(ops.joined(separator: "\n"))")
        }
        run.expectExactlyOnce(0..<1, "the recorded run")
    }
}

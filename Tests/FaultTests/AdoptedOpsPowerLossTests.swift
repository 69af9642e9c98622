// AdoptedOpsPowerLossTests: the record of ops taken from another producer's page file must be durable
// before those ops are appended (a lost record would let them pass for evidence, and evidence
// deletes): in every state a power cut can leave after `adopt` returned, a fresh PageFiles reads them.
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite(.serialized) struct AdoptedOpsPowerLossTests {
    @Test func adopted_stamps_survive_every_crash_state_after_adopt_returned() throws {
        let dir = TempDir("pl-adopted")
        let state = dir.sub("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let actor = BlockID(hi: 0x01a2_3c25_be49_7f1c, lo: 0x97e1_fcb0_3edc_25ae)
        let first = [HLC(wall: 1_796_000_000_000, counter: 0, actor: actor), HLC(wall: 1_796_000_000_000, counter: 1, actor: actor)]
        let second = [HLC(wall: 1_796_000_000_500, counter: 0, actor: actor)]
        let fs = RecordingFS(root: dir.path)
        var marks: [Int] = []
        try withInterposer(fs) {
            let pages = PageFiles(stateDir: state, records: ReconcilerRecords(stateDir: state, log: .silent))
            try pages.adopt(first)    // creates the record: its name must be made durable too
            marks.append(fs.count)
            try pages.adopt(second)   // appends to it
            marks.append(fs.count)
        }
        var checked = 0
        for point in 0...fs.count {
            for crash in fs.crashStates(at: point) {
                let out = TempDir("pl-adopted-state")
                try crash.write(to: out.path)
                let read = PageFiles(stateDir: Path.join(out.path, "state"),
                                     records: ReconcilerRecords(stateDir: Path.join(out.path, "state"), log: .silent))
                if point >= marks[0] { #expect(read.adopted.isSuperset(of: first), "\(crash): \(read.adopted)") }
                if point >= marks[1] { #expect(read.adopted.isSuperset(of: second), "\(crash): \(read.adopted)") }
                checked += 1
            }
        }
        #expect(checked > 4, "the model generated \(checked) crash states")
    }

    @Test func a_torn_last_line_does_not_swallow_the_next_stamp() throws {
        let dir = TempDir("adopted-torn")
        let actor = BlockID(hi: 0x01a2_3c25_be49_7f1c, lo: 0x97e1_fcb0_3edc_25ae)
        let kept = HLC(wall: 1_796_000_000_000, counter: 0, actor: actor)
        try writeText(Path.join(dir.path, "adopted-ops"), "\(kept.wall) \(kept.counter) \(actor)\n1796000000\n".dropLast().description)
        let next = HLC(wall: 1_796_000_000_900, counter: 2, actor: actor)
        try PageFiles(stateDir: dir.path, records: ReconcilerRecords(stateDir: dir.path, log: .silent)).adopt([next])
        let read = PageFiles(stateDir: dir.path, records: ReconcilerRecords(stateDir: dir.path, log: .silent))
        #expect(read.adopted == [kept, next], "\(read.adopted)")
    }
}

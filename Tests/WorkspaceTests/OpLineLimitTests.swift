// The op-log line bound, on real files: a line longer than the bound is skipped (an invalid line,
// reported with its offset) and never buffered whole; the lines after it are read, and the tail
// logic of this device's own file never cuts them. A small bound makes the edges cheap to reach.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct OpLineLimitTests {
    let actor = BlockID.random()

    func read(_ path: String, bound: Int, writable: Bool) throws -> (ids: [BlockID], cursor: OpFileCursor, log: [String], outcome: OpFileCursor.Outcome) {
        var c = OpFileCursor()
        c.maxLine = bound
        var ids: [BlockID] = []
        var log: [String] = []
        let o = try c.read(path, writable: writable, log: WorkspaceLog { log.append($0) }, sink: { op, _ in ids.append(op.raw.id) })
        return (ids, c, log, o)
    }

    @Test func a_line_over_the_bound_is_skipped_and_reported_and_the_lines_after_it_are_read() throws {
        let dir = TempDir("outl-linelimit")
        let path = dir.sub("ops-own.jsonl")
        let ops = captureOps(actor, 3)
        let first = encode([ops[0]])
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5000) + [10]
        try putFile(path, first + long + encode(Array(ops[1...])))
        let r = try read(path, bound: 1024, writable: true)
        #expect(r.ids == ops.map(\.id))
        #expect(r.cursor.bad == 1, "the long line counts as one invalid line")
        #expect(r.log.count == 1 && r.log[0].contains(path) && r.log[0].contains("offset \(first.count)"), "\(r.log)")
        let size = try Sys.lstat(path).st_size
        #expect(Int(size) == first.count + long.count + encode(Array(ops[1...])).count, "nothing valid was cut")
    }

    @Test func an_overlong_last_line_of_the_own_file_is_the_torn_tail_and_is_cut() throws {
        let dir = TempDir("outl-linelimit")
        let path = dir.sub("ops-own.jsonl")
        let valid = encode(captureOps(actor, 2))
        try putFile(path, valid + [UInt8](repeating: 0, count: 100_000))
        let r = try read(path, bound: 4096, writable: true)
        #expect(r.ids.count == 2)
        #expect(r.outcome == .read(from: 0, again: false, ops: 2, size: valid.count + 100_000, tail: 100_000))
        #expect(Int(try Sys.lstat(path).st_size) == valid.count)
        #expect(r.log.contains { $0.contains("offset \(valid.count)") }, "\(r.log)")
    }

    @Test func another_devices_overlong_tail_is_left_and_read_on_when_it_ends() throws {
        let dir = TempDir("outl-linelimit")
        let path = dir.sub("ops-peer.jsonl")
        let ops = captureOps(actor, 2)
        let long = [UInt8](repeating: UInt8(ascii: "y"), count: 9000)
        try putFile(path, encode([ops[0]]) + long)
        var c = OpFileCursor()
        c.maxLine = 2048
        var ids: [BlockID] = []
        _ = try c.read(path, writable: false, sink: { op, _ in ids.append(op.raw.id) })
        #expect(ids == [ops[0].id])
        #expect(Int(try Sys.lstat(path).st_size) == encode([ops[0]]).count + long.count, "another device's file is never cut")
        try putFile(path, encode([ops[0]]) + long + [10] + encode([ops[1]]))
        _ = try c.read(path, writable: false, sink: { op, _ in ids.append(op.raw.id) })
        #expect(ids == ops.map(\.id))
        #expect(c.bad == 1)
    }

    @Test func the_bound_is_larger_than_the_largest_capture_op() {
        // A capture file is at most 1 MiB; its longest possible op is its text and source at
        // their longest, each spelled in the op no longer than in the file.
        var op = captureOps(actor, 1)[0]
        op.text = String(repeating: "\"", count: 64 << 10)
        op.props = [Property("captured-at", "2026-12-02T09:00:00.000+01:00"), Property("source", String(repeating: "s", count: 1 << 20))]
        #expect(OpEncoder.line(op).count < OpFileCursor.maxLineBytes)
    }

    @Test func the_fuzz_seeds_are_valid_op_lines() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let seed = try Data(contentsOf: root.appendingPathComponent("fuzz/corpus/fuzz-oplog/seed-valid-log"))
        let dir = TempDir("outl-linelimit")
        let path = dir.sub("ops-seed.jsonl")
        try putFile(path, Array(seed.dropFirst()))
        let r = try read(path, bound: OpFileCursor.maxLineBytes, writable: false)
        #expect(r.ids.count == 8 && r.cursor.bad == 0, "seed ops: \(r.ids.count), bad \(r.cursor.bad)")
    }
}

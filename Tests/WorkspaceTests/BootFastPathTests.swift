// The boot's fast paths must not change what it reads: fingerprinted id index, packed row flags,
// the 8-bytes-at-a-time string scan and the reader that parses one op ahead of its sink.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Test func ids_with_the_same_hash_are_told_apart_by_their_rows() {
    // hi ^ lo is all the index hashes, so (x ^ d, y ^ d) lands in x, y's slot with the same fingerprint.
    var t = BlockTable()
    var ids: [BlockID] = []
    for k in 0..<3000 {
        let base = BlockID.random()
        let d = UInt64(k + 1) &* 0x1234_5678_9ABC_DEF1
        ids.append(base)
        ids.append(BlockID(hi: base.hi ^ d, lo: base.lo ^ d))
    }
    for (k, id) in ids.enumerated() {
        #expect(t.find(id) == nil)
        _ = t.insert(BlockRow(id: id, page: id, parent: id, content: UInt64(k), pos: UInt64(k), hasParent: false, deleted: false))
    }
    #expect(t.rowBits == 14, "grew from 16 slots through every width up to 2^14")
    #expect(ids.enumerated().allSatisfy { t.find($1) == $0 })
    for id in ids.prefix(500) {
        let twin = BlockID(hi: id.hi ^ 0xFFFF_0000_FFFF_0000, lo: id.lo ^ 0xFFFF_0000_FFFF_0000)
        #expect(t.find(twin) == nil, "an absent id whose hash matches a present one is absent")
    }
}

@Test func row_flags_survive_offset_changes() {
    let id = BlockID.random()
    var r = BlockRow(id: id, page: id, parent: id, content: 12, pos: 34, hasParent: true, deleted: true)
    #expect(r.content == 12 && r.pos == 34 && r.hasParent && r.deleted)
    r.content = 1 << 40
    r.pos = 7
    #expect(r.content == 1 << 40 && r.pos == 7 && r.hasParent && r.deleted)
    r.deleted = false
    r.hasParent = false
    #expect(r.content == 1 << 40 && r.pos == 7 && !r.hasParent && !r.deleted)
    #expect(MemoryLayout<BlockRow>.stride == 64, "one cache line per row")
}

@Test func strings_with_a_quote_or_backslash_at_any_offset_parse_exactly() {
    for special in ["\"", "\\", "\n", "é", "\"\\\""] {
        for before in 0..<20 {
            for after in [0, 1, 7, 8, 9, 17] {
                let text = String(repeating: "a", count: before) + special + String(repeating: "b", count: after)
                var op = Op(hlc: HLC(wall: 5, counter: 1, actor: BlockID.random()), kind: .createBlock, id: BlockID.random())
                op.page = BlockID.random()
                op.pos = text
                op.text = text
                op.props = [Property(text, text)]
                let parsed = OpEncoder.line(op).dropLast().withUnsafeBufferPointer { OpParser.parse($0) }
                #expect(parsed?.text == text && parsed?.pos == text && parsed?.props == [Property(text, text)])
            }
        }
    }
}

@Test func the_reader_hands_over_every_valid_op_in_order_across_buffer_chunks() throws {
    let dir = TempDir("outl-reader")
    let path = dir.sub("ops-x.jsonl")
    let actor = BlockID.random()
    var bytes: [UInt8] = []
    var expected: [BlockID] = []
    // About 3 MB: several 1 MB reads, lines split across every read boundary, garbage in between.
    for k in 0..<12_000 {
        var op = Op(hlc: HLC(wall: Int64(k), counter: 0, actor: actor), kind: .createBlock, id: BlockID.random())
        op.page = actor
        op.pos = "p\(k)"
        op.text = String(repeating: "x", count: k % 300)
        OpEncoder.append(op, to: &bytes)
        expected.append(op.id)
        if k % 997 == 0 { bytes += Array("garbage line\n".utf8) }
    }
    let fd = try Sys.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    try bytes.withUnsafeBytes { try Sys.writeAll(fd, $0) }
    Sys.close(fd)
    var seen: [BlockID] = []
    var nexts: [BlockID?] = []
    let r = try OpLogReader.readFile(path, writable: false, sink: { op, next in
        seen.append(op.raw.id)
        nexts.append(next)
    }, progress: { _ in })
    #expect(seen == expected)
    #expect(r.bad == 13 && r.validEnd == bytes.count && r.size == bytes.count)
    // `next` is the following op's id, or nil where the reader had to hand over early (buffer end).
    #expect(nexts.last! == nil)
    #expect(nexts.indices.dropLast().allSatisfy { nexts[$0] == nil || nexts[$0] == expected[$0 + 1] })
    #expect(nexts.filter { $0 == nil }.count < 10)
}

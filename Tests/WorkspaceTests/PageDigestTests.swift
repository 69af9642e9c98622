// PageDigest names what a page's file is rendered from: the same for the same ops in any arrival
// order, and different whenever the rendering differs (random ops of three devices, every page after
// every op). PageRenderer.formatVersion is pinned to one rendering, so a change to how pages render
// cannot land without the version that makes every start read its pages again.
import Testing
import TestSupport
@testable import Workspace

@Suite struct PageDigestTests {
    /// A digest is recorded and compared across restarts: reading a string's last bytes in wider
    /// loads must hash every length and place as the byte-at-a-time reading did.
    @Test func a_strings_last_bytes_hash_as_they_did_read_a_byte_at_a_time() {
        var rng = SplitMix64(seed: 17)
        let bytes = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBufferPointer { all in
            for start in 0..<9 {
                for n in 0...(all.count - start) {
                    let b = UnsafeBufferPointer(rebasing: all[start..<(start + n)])
                    var fast = DigestHasher(seed: 5), slow = DigestHasher(seed: 5)
                    fast.add(b)
                    slow.add(UInt64(n))
                    var i = 0
                    while i + 8 <= n {
                        var w: UInt64 = 0
                        for k in 0..<8 { w |= UInt64(b[i + k]) << (8 * UInt64(k)) }
                        slow.add(w)
                        i += 8
                    }
                    var tail: UInt64 = 0, shift: UInt64 = 0
                    while i < n { tail |= UInt64(b[i]) << shift; shift += 8; i += 1 }
                    if shift > 0 { slow.add(tail) }
                    #expect(fast.finished == slow.finished, "\(n) bytes from \(start)")
                }
            }
        }
    }

    @Test func a_digest_changes_whenever_the_rendering_does_and_not_with_the_arrival_order() throws {
        var changes = 0
        for seed in UInt64(1)...200 {
            var rng = SplitMix64(seed: seed)
            let (_, files) = randomDeviceOps(&rng)
            func interleaved(_ rng: inout SplitMix64) -> [Op] {
                var queues = files, ops: [Op] = []
                while queues.contains(where: { !$0.isEmpty }) {
                    let a = queues.indices.filter { !queues[$0].isEmpty }.randomElement(using: &rng)!
                    ops.append(queues[a].removeFirst())
                }
                return ops
            }
            let t = TestWorkspace()
            let core = try openCore(t.root, state: t.state())
            defer { core.close() }
            var last: [BlockID: ([UInt8], UInt64)] = [:]
            for op in interleaved(&rng) {
                _ = core.model.apply(op)
                for page in core.model.pages.keys {
                    let now = (core.renderWhole(page), core.startDigest(page))
                    if let before = last[page], before.0 != now.0 {
                        changes += 1
                        if before.1 == now.1 {
                            Issue.record("seed \(seed): page \(page) renders differently with the same digest")
                            return
                        }
                    }
                    last[page] = now
                }
            }
            // The same ops in another order: the same model, so the same digests.
            let u = TestWorkspace()
            let other = try openCore(u.root, state: u.state())
            defer { other.close() }
            for op in interleaved(&rng).reversed() { _ = other.model.apply(op) }
            for page in core.model.pages.keys {
                #expect(other.startDigest(page) == core.startDigest(page), "seed \(seed): page \(page)")
            }
        }
        #expect(changes > 2_000)  // the comparisons happened
    }

    /// What random ops rarely meet: a move that changes only the parent, and a cycle of parents
    /// whose rendering only the newer of two moves decides.
    @Test func a_parent_alone_and_the_move_that_breaks_a_cycle_change_the_digest() throws {
        func model(_ moves: [(BlockID, BlockID?, Int64)]) throws -> (TestWorkspace, WorkspaceCore) {
            let t = TestWorkspace()
            let core = try openCore(t.root, state: t.state())
            let actor = BlockID(hi: 7, lo: 7), page = BlockID.journalPage(day1)
            var p = Op(hlc: HLC(wall: 1, counter: 0, actor: actor), kind: .createPage, id: page)
            p.pageKind = .journal; p.text = day1.iso
            _ = core.model.apply(p)
            for (k, id) in [a, b].enumerated() {
                var c = Op(hlc: HLC(wall: 2 + Int64(k), counter: 0, actor: actor), kind: .createBlock, id: id)
                c.page = page; c.pos = "a0"; c.text = "block \(k)"
                _ = core.model.apply(c)
            }
            for (id, parent, wall) in moves {
                var m = Op(hlc: HLC(wall: wall, counter: 0, actor: actor), kind: .moveBlock, id: id)
                m.parent = parent; m.pos = "a0"
                _ = core.model.apply(m)
            }
            return (t, core)
        }
        let page = BlockID.journalPage(day1)
        let (t1, flat) = try model([(b, nil, 10)]), (t2, nested) = try model([(b, a, 10)])
        let (t3, aNewer) = try model([(b, a, 10), (a, b, 11)]), (t4, bNewer) = try model([(a, b, 10), (b, a, 11)])
        defer { for c in [flat, nested, aNewer, bNewer] { c.close() }; _ = [t1, t2, t3, t4] }
        #expect(flat.render(page) != nested.render(page))
        #expect(flat.startDigest(page) != nested.startDigest(page))
        #expect(aNewer.render(page) != bNewer.render(page))
        #expect(aNewer.startDigest(page) != bNewer.startDigest(page))
    }

    private let a = BlockID(hi: 0x0193_0000_0000_7000, lo: 0x8000_0000_0000_00A1)
    private let b = BlockID(hi: 0x0193_0000_0000_7000, lo: 0x8000_0000_0000_00B2)

    @Test func the_page_file_limit_is_part_of_the_digest() throws {
        let t = TestWorkspace()
        let core = try openCore(t.root, state: t.state())
        defer { core.close() }
        let page = BlockID.journalPage(day1)
        var p = Op(hlc: HLC(wall: 1, counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .createPage, id: page)
        p.pageKind = .journal; p.text = day1.iso
        _ = core.model.apply(p)
        let before = core.startDigest(page)
        core.maxPageBytes = 1 << 10
        #expect(core.startDigest(page) != before)
    }

    /// One page with what the renderer escapes and nests. If this fails because rendering changed on
    /// purpose, bump PageRenderer.formatVersion (every start then reads its pages again once) and
    /// update the expected text with it.
    @Test func the_renderer_format_version_is_pinned_to_its_rendering() throws {
        let t = TestWorkspace()
        let core = try openCore(t.root, state: t.state())
        defer { core.close() }
        let actor = BlockID(hi: 7, lo: 7)
        let page = BlockID.journalPage(day1)
        var wall: Int64 = 1_796_206_489_000
        func op(_ kind: OpKind, _ id: BlockID, _ fill: (inout Op) -> Void) {
            wall += 1
            var o = Op(hlc: HLC(wall: wall, counter: 0, actor: actor), kind: kind, id: id)
            fill(&o)
            _ = core.model.apply(o)
        }
        op(.createPage, page) { $0.pageKind = .journal; $0.text = day1.iso }
        op(.setPreamble, page) { $0.text = "title:: a day" }
        let a = BlockID(hi: 0x0193_0000_0000_7000, lo: 0x8000_0000_0000_0001)
        let b = BlockID(hi: 0x0193_0000_0000_7000, lo: 0x8000_0000_0000_0002)
        let c = BlockID(hi: 0x0193_0000_0000_7000, lo: 0x8000_0000_0000_0003)
        op(.createBlock, a) { $0.page = page; $0.pos = "a0"; $0.text = "TODO call mum\nsecond line"
            $0.props = [Property("captured-at", "2026-12-01T23:58:07.120-05:00"), Property("source", "cli")] }
        op(.createBlock, b) { $0.page = page; $0.parent = a; $0.pos = "a0"; $0.text = "key:: not a property\n- not a block" }
        op(.createBlock, c) { $0.page = page; $0.pos = "a1"; $0.text = "#tag [[link]] `code`"; $0.props = [Property("source", "a book")] }
        #expect(PageRenderer.formatVersion == 2)
        let text = String(decoding: core.render(page), as: UTF8.self)
        #expect(text == Self.expected, "rendering changed: bump PageRenderer.formatVersion and update this text")
    }

    static let expected = """
    title:: a day
    - TODO call mum
      id:: 01930000-0000-7000-8000-000000000001
      second line
      - key:\\: not a property
        id:: 01930000-0000-7000-8000-000000000002
        \\- not a block
    - #tag [[link]] `code`
      source:: a book
      id:: 01930000-0000-7000-8000-000000000003

    """
}

// ReconcilerRecords on real files: a projection is one append; the record keeps the newest three
// projections, the newest identity and the blocks' presence across reopens and rewrites, and a torn
// append loses only itself.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct ReconcilerRecordsTests {
    let page = BlockID.journalPage(day1)

    @Test func the_record_keeps_the_newest_projections_and_identity_across_appends_and_rewrites() throws {
        let t = TempDir("records")
        var r = ReconcilerRecords(stateDir: t.path, log: .silent)
        for n in 1...40 {
            r.remember(Array("- projection \(n)\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 7, inode: UInt64(n)), of: page)
            if n % 7 == 0 { r = ReconcilerRecords(stateDir: t.path, log: .silent) }  // a restart now and then
            let again = ReconcilerRecords(stateDir: t.path, log: .silent)
            #expect(again.projections(of: page).map { String(decoding: $0, as: UTF8.self) }
                    == (max(1, n - 2)...n).map { "- projection \($0)\n" }, "after \(n)")
            #expect(again.publishedIdentity(of: page) == FileIdentity(device: 7, inode: UInt64(n)))
        }
        // Appends, not rewrites: the file never holds more than the compaction bound of entries.
        let size = (try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)).count
        #expect(size < (ReconcilerRecords.compactAfter + 2) * 40, "record of \(size) bytes")
    }

    /// A start that writes every page of a big workspace remembers each once: the records hold
    /// the pages used last, and a page let go answers as it did before, read from its record.
    @Test func records_hold_only_the_pages_used_last_and_a_page_let_go_answers_as_before() throws {
        let t = TempDir("records")
        let r = ReconcilerRecords(stateDir: t.path, log: .silent)
        let pages = (1...200).map { BlockID.journalPage(JournalDay(year: 2026, month: 1 + $0 / 28, day: 1 + $0 % 28)!) }
        func blocks(_ k: Int) -> [BlockID] { (0..<3).map { BlockID(hi: UInt64(k), lo: UInt64($0)) } }
        func text(_ k: Int, _ n: Int) -> [UInt8] { Array("- page \(k) projection \(n)\n".utf8) }
        for round in 1...4 {
            for (k, page) in pages.enumerated() {
                r.remember(text(k, round), ids: Array(blocks(k).prefix(round == 1 ? 2 : 3)), fileHeld: { _ in round > 2 },
                           identity: FileIdentity(device: 9, inode: UInt64(1000 * round + k)), of: page)
                #expect(r.pagesHeld <= ReconcilerRecords.keptPages)
            }
            if round == 2 { r.noteRead(Set(blocks(5).prefix(1)), of: pages[5]) }  // a reading, then let go
        }
        #expect(r.pagesHeld == ReconcilerRecords.keptPages)
        // What a page let go long ago answers, read again, is what a fresh start reads from its record.
        let fresh = ReconcilerRecords(stateDir: t.path, log: .silent)
        for k in [0, 5, 100, 199] {
            #expect(r.projections(of: pages[k]) == (2...4).map { text(k, $0) }, "page \(k)")
            #expect(r.projections(of: pages[k]) == fresh.projections(of: pages[k]))
            #expect(r.publishedIdentity(of: pages[k]) == FileIdentity(device: 9, inode: UInt64(4000 + k)))
            #expect(r.presence(of: pages[k]) == fresh.presence(of: pages[k]), "page \(k)")
            let third = blocks(k)[2], first = blocks(k)[0]
            // The third block came after the first: a buffer holding it was read with the first there.
            #expect(r.presence(of: pages[k]).wasRead(with: first, holding: [third]), "page \(k)")
        }
        // Past the byte bound only the page in use is held.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: ReconcilerRecords.keptBytes / 2)
        r.remember(big, ids: [], fileHeld: nil, identity: nil, of: pages[1])
        r.remember(big + [10], ids: [], fileHeld: nil, identity: nil, of: pages[2])
        _ = r.projections(of: pages[3])
        #expect(r.pagesHeld < ReconcilerRecords.keptPages)
        #expect(r.projections(of: pages[1]).last == big)
        // The big pages let go, their bytes no longer count: small pages are held again.
        for k in 10..<(10 + ReconcilerRecords.keptPages) { _ = r.projections(of: pages[k]) }
        #expect(r.pagesHeld == ReconcilerRecords.keptPages)
    }

    @Test func a_projection_that_only_added_at_its_end_is_recorded_as_what_it_added() throws {
        let t = TempDir("records")
        let r = ReconcilerRecords(stateDir: t.path, log: .silent)
        let day = (0..<100).map { "- capture number \($0): buy oat milk\n  id:: \(BlockID.random())\n" }.joined()
        var want: [String] = []
        for (n, text) in [day, day + "- one more\n", day + "- one more\n- and another\n", "- rewritten\n" + day, day].enumerated() {
            r.remember(Array(text.utf8), ids: [], fileHeld: nil, identity: FileIdentity(device: 1, inode: UInt64(n)), of: page)
            want = Array((want + [text]).suffix(ReconcilerRecords.keptBases))
            let again = ReconcilerRecords(stateDir: t.path, log: .silent)
            #expect(again.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == want, "after \(n)")
        }
        // Written whole twice (the first and the rewritten one) and once shared with the one before it
        // (the last is the first again: shared up to where "- rewritten" differs, nothing).
        let size = (try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)).count
        #expect(size < 4 * day.utf8.count, "record of \(size) bytes for projections of \(day.utf8.count)")
        // An entry that keeps more than the projection before it held is torn: the list ends before it.
        var bytes = try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)
        bytes.append(contentsOf: "+999999 3\n- x".utf8)
        try Durable.publish(bytes, to: r.basesFile(page), via: r.basesFile(page) + ".torn")
        let torn = ReconcilerRecords(stateDir: t.path, log: .silent)
        #expect(torn.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == want)
    }

    @Test func a_torn_append_loses_only_itself_and_the_next_remember_rewrites_the_record() throws {
        let t = TempDir("records")
        let r = ReconcilerRecords(stateDir: t.path, log: .silent)
        r.remember(Array("- one\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 1, inode: 1), of: page)
        r.remember(Array("- two\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 1, inode: 2), of: page)
        // A crash in the middle of the next append: its length line promises more than is there.
        var bytes = try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)
        bytes.append(contentsOf: "100\n- thr".utf8)
        try Durable.publish(bytes, to: r.basesFile(page), via: r.basesFile(page) + ".torn")
        let after = ReconcilerRecords(stateDir: t.path, log: .silent)
        #expect(after.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n", "- two\n"])
        #expect(after.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 2))
        after.remember(Array("- four\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 1, inode: 4), of: page)
        let reread = ReconcilerRecords(stateDir: t.path, log: .silent)
        #expect(reread.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n", "- two\n", "- four\n"])
        #expect(reread.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 4))
    }

    /// A damaged record whose identity line is shorter than "i <device> <inode>" is read as far as
    /// that line, as a torn entry is, and the next remember rewrites it: no trap on the way.
    @Test func an_identity_line_cut_short_ends_the_record_like_a_torn_entry() throws {
        let t = TempDir("records")
        let r = ReconcilerRecords(stateDir: t.path, log: .silent)
        r.remember(Array("- one\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 1, inode: 1), of: page)
        for damage in ["i\n", "i\n6\n- more\n"] {
            var bytes = try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)
            bytes.append(contentsOf: damage.utf8)
            try Durable.publish(bytes, to: r.basesFile(page), via: r.basesFile(page) + ".damaged")
            let after = ReconcilerRecords(stateDir: t.path, log: .silent)
            #expect(after.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n"])
            #expect(after.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 1))
        }
        let after = ReconcilerRecords(stateDir: t.path, log: .silent)
        after.remember(Array("- two\n".utf8), ids: [], fileHeld: { _ in false }, identity: FileIdentity(device: 1, inode: 2), of: page)
        let reread = ReconcilerRecords(stateDir: t.path, log: .silent)
        #expect(reread.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n", "- two\n"])
        #expect(reread.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 2))
    }

    @Test func presence_survives_reopens_and_rewrites_and_errs_towards_keeping_blocks() throws {
        let t = TempDir("records")
        let x = BlockID(hi: 1, lo: 1), y = BlockID(hi: 2, lo: 2), z = BlockID(hi: 3, lo: 3)
        var r = ReconcilerRecords(stateDir: t.path, log: .silent)
        r.remember(Array("- x\n".utf8), ids: [x], fileHeld: { _ in false }, identity: nil, of: page)
        // y is made here after x: a buffer holding y was read with x in the file.
        r.remember(Array("- x\n- y\n".utf8), ids: [x, y], fileHeld: { _ in false }, identity: nil, of: page)
        #expect(r.presence(of: page).wasRead(with: x, holding: [y]))
        // z arrives (another device's block) after y: a buffer holding only x and y may predate it.
        r.remember(Array("- x\n- y\n- z\n".utf8), ids: [x, y, z], fileHeld: { _ in false }, identity: nil, of: page)
        #expect(!r.presence(of: page).wasRead(with: z, holding: [x, y]))
        #expect(r.presence(of: page).wasRead(with: z, holding: [z]))
        // A file read without x (a delivered copy that lacked it): x's presence starts again, even
        // when the projection that puts it back is the same bytes as before.
        r.noteRead([y, z], of: page)
        #expect(!r.presence(of: page).wasRead(with: x, holding: [y, z]))
        r.remember(Array("- x\n- y\n- z\n".utf8), ids: [x, y, z], fileHeld: { $0 != x }, identity: nil, of: page)
        let before = r.presence(of: page)
        #expect(before.present == [x, y, z])
        #expect(!before.wasRead(with: x, holding: [y, z]))
        for n in 0..<(ReconcilerRecords.compactAfter + 3) {  // through a rewrite of the whole record
            r.remember(Array("- x\n- y\n- z\n\(n)\n".utf8), ids: [x, y, z], fileHeld: { _ in true }, identity: nil, of: page)
            if n % 5 == 0 { r = ReconcilerRecords(stateDir: t.path, log: .silent) }
        }
        let after = ReconcilerRecords(stateDir: t.path, log: .silent).presence(of: page)
        #expect(after.present == [x, y, z])
        #expect(after.shownSince == before.shownSince && after.firstSeen == before.firstSeen)
        // A record lost: blocks already in the file count as seen before any projection, so nothing
        // held proves a buffer was read with them.
        try Sys.unlink(r.basesFile(page))
        let lost = ReconcilerRecords(stateDir: t.path, log: .silent)
        lost.remember(Array("- x\n- y\n".utf8), ids: [x, y], fileHeld: { _ in true }, identity: nil, of: page)
        #expect(!lost.presence(of: page).wasRead(with: x, holding: [y]))
        #expect(!lost.presence(of: page).wasRead(with: y, holding: [x]))
    }

    /// A record written whole spells presence once per epoch and leaves out the "f" line of an id
    /// shown since it was first seen: replayed, it is the same presence, whatever mix of epochs,
    /// earlier sightings and gone ids it holds.
    @Test func a_presence_spelled_whole_replays_to_the_same_presence() {
        let ids = (0..<40).map { BlockID(hi: 9, lo: UInt64($0)) }
        var p = FilePresence()
        _ = p.projected(Array(ids[0..<10]), fileHeld: nil)
        _ = p.projected(Array(ids[0..<20]), fileHeld: { $0.lo % 3 == 0 })  // some held before they were shown
        _ = p.read(Set(ids[5..<20]))                                        // 0..<5 gone from the file
        _ = p.projected(Array(ids[0..<30]), fileHeld: { $0.lo < 3 })        // back, now seen earlier than shown
        _ = p.read(Set(ids[0..<25] + ids[35..<40]))                         // 35..<40 read, never shown
        var replayed = FilePresence()
        for line in p.spelled().split(separator: 10) {
            let took = replayed.replay(line)
            #expect(took)
        }
        #expect(replayed == p)
        #expect(p.firstSeen.contains { id, e in p.present.contains(id) && p.shownSince[id]! > e },
                "the case the \"f\" lines exist for is among them")
    }
}

// ReconcilerRecords on real files: a projection is one append; the record keeps the newest three
// projections and the newest identity across reopens and rewrites, and a torn append loses only itself.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct ReconcilerRecordsTests {
    let page = BlockID.journalPage(day1)

    @Test func the_record_keeps_the_newest_projections_and_identity_across_appends_and_rewrites() throws {
        let t = TempDir("records")
        var r = ReconcilerRecords(stateDir: t.path, log: { _ in })
        for n in 1...40 {
            r.remember(Array("- projection \(n)\n".utf8), identity: FileIdentity(device: 7, inode: UInt64(n)), of: page)
            if n % 7 == 0 { r = ReconcilerRecords(stateDir: t.path, log: { _ in }) }  // a restart now and then
            let again = ReconcilerRecords(stateDir: t.path, log: { _ in })
            #expect(again.projections(of: page).map { String(decoding: $0, as: UTF8.self) }
                    == (max(1, n - 2)...n).map { "- projection \($0)\n" }, "after \(n)")
            #expect(again.publishedIdentity(of: page) == FileIdentity(device: 7, inode: UInt64(n)))
        }
        // Appends, not rewrites: the file never holds more than the compaction bound of entries.
        let size = (try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)).count
        #expect(size < (ReconcilerRecords.compactAfter + 2) * 40, "record of \(size) bytes")
    }

    @Test func a_torn_append_loses_only_itself_and_the_next_remember_rewrites_the_record() throws {
        let t = TempDir("records")
        let r = ReconcilerRecords(stateDir: t.path, log: { _ in })
        r.remember(Array("- one\n".utf8), identity: FileIdentity(device: 1, inode: 1), of: page)
        r.remember(Array("- two\n".utf8), identity: FileIdentity(device: 1, inode: 2), of: page)
        // A crash in the middle of the next append: its length line promises more than is there.
        var bytes = try Durable.readRegularFile(r.basesFile(page), limit: 1 << 20)
        bytes.append(contentsOf: "100\n- thr".utf8)
        try Durable.publish(bytes, to: r.basesFile(page), via: r.basesFile(page) + ".torn")
        let after = ReconcilerRecords(stateDir: t.path, log: { _ in })
        #expect(after.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n", "- two\n"])
        #expect(after.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 2))
        after.remember(Array("- four\n".utf8), identity: FileIdentity(device: 1, inode: 4), of: page)
        let reread = ReconcilerRecords(stateDir: t.path, log: { _ in })
        #expect(reread.projections(of: page).map { String(decoding: $0, as: UTF8.self) } == ["- one\n", "- two\n", "- four\n"])
        #expect(reread.publishedIdentity(of: page) == FileIdentity(device: 1, inode: 4))
    }
}

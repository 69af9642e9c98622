// StartCheck: a start reads a page file only when the file or the page's model changed since this
// device last projected it (PageIndex, PageDigest). Whatever happened while nothing ran (a hand edit,
// another device's ops, a file deleted, replaced or spelled twice) is still taken, and an index that
// is lost, torn or written by someone else only costs reads. Page reads are counted at the Sys seam.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import TestSupport
import Testing
@testable import Workspace

private let days = (0..<3).map { k in (0..<k).reduce(day1) { d, _ in d.next } }

@Suite(.serialized) struct StartCheckTests {
    /// A workspace with one capture on each of three days, projected, closed.
    func seeded() async throws -> TestWorkspace {
        let t = TestWorkspace()
        let ws = try t.open()
        for (k, d) in days.enumerated() { _ = try await ws.appendCaptures([capture("line \(k)", day: d)]) }
        _ = try await ws.projectDirtyPages()
        await ws.close()
        return t
    }

    /// A start as outld makes it (boot, the catch-up's reconcileAll, a pass): the page files it
    /// opened, by name. The workspace is left open for the caller to look at.
    func start(_ t: TestWorkspace) async throws -> (Workspace, [String]) {
        let counter = FaultInjector(nil, match: SysMatch(ops: [.open], under: t.root))
        let ws = try await withInterposer(counter) { () async throws -> Workspace in
            let ws = try t.open()
            _ = try await ws.mergeForeignOps()
            try await ws.reconcileAll()
            _ = try await ws.projectDirtyPages()
            return ws
        }
        let read = counter.log.compactMap { l -> String? in
            let path = String(l.dropFirst("open ".count))
            return path.hasSuffix(".md") && !path.contains("/.outl/") ? Path.lastComponent(path) : nil
        }
        return (ws, read)
    }

    func indexFile(_ t: TestWorkspace) -> String {
        Path.join(DeviceState.directory(root: t.root, stateDirectory: t.state()), "page-index")
    }

    func texts(_ ws: Workspace, _ day: JournalDay) async -> [String] { await ws.journalBlocks(day).map(\.text) }

    @Test func a_start_reads_no_page_file_left_as_projected() async throws {
        let t = try await seeded()
        let (ws, read) = try await start(t)
        #expect(read == [])
        #expect(await ws.check() == [])
        await ws.close()
        // Without the index every page is read: the zero above is the check's doing.
        try Sys.unlink(indexFile(t))
        let (again, all) = try await start(t)
        #expect(Set(all) == Set(days.map { "\($0.fileStem).md" }))
        await again.close()
        let (third, none) = try await start(t)  // and the index was written again
        #expect(none == [])
        await third.close()
    }

    @Test func a_hand_edit_made_while_stopped_is_taken_at_start() async throws {
        let t = try await seeded()
        // Appended in place (the same inode), and another file edited in place keeping its size.
        let fd = try Sys.open(t.journal(days[0]), O_WRONLY | O_APPEND, 0)
        try Sys.writeAll(fd, Array("- typed while outld was stopped\n".utf8))
        Sys.close(fd)
        var bytes = try Durable.readRegularFile(t.journal(days[1]), limit: 1 << 20)
        let at = bytes.firstIndex(of: UInt8(ascii: "l"))!
        bytes[at] = UInt8(ascii: "L")
        let g = try Sys.open(t.journal(days[1]), O_WRONLY, 0)
        _ = try bytes.withUnsafeBytes { try Sys.pwrite(g, $0, at: 0) }
        Sys.close(g)
        let (ws, read) = try await start(t)
        #expect(Set(read).isSuperset(of: ["\(days[0].fileStem).md", "\(days[1].fileStem).md"]))
        #expect(!read.contains("\(days[2].fileStem).md"))
        #expect(await texts(ws, days[0]) == ["line 0", "typed while outld was stopped"])
        #expect(await texts(ws, days[1]) == ["Line 1"])
        #expect(await ws.check() == [])
        await ws.close()
    }

    @Test func ops_that_arrived_while_stopped_rewrite_their_page_at_start() async throws {
        let t = try await seeded()
        // Another device's op log, delivered while this device's outld was stopped; the page file
        // itself is untouched, so only the page's digest says it changed.
        let other = TestWorkspace()
        let ows = try other.open(device: "b")
        _ = try await ows.appendCaptures([capture("from the laptop", day: days[2])])
        let name = "ops-\(ows.actorID).jsonl"
        await ows.close()
        let bytes = try Durable.readRegularFile(Path.join(other.root, ".outl/ops/\(name)"), limit: 1 << 20)
        try Durable.publish(bytes, to: Path.join(t.root, ".outl/ops/\(name)"), via: Path.join(t.root, ".outl/tmp/\(name).tmp"))
        let (ws, read) = try await start(t)
        #expect(read.filter { $0.hasSuffix(".md") } .allSatisfy { $0 == "\(days[2].fileStem).md" })
        #expect(read.contains("\(days[2].fileStem).md"))
        let file = String(decoding: try Durable.readRegularFile(t.journal(days[2]), limit: 1 << 20), as: UTF8.self)
        #expect(file.contains("- line 2\n") && file.contains("- from the laptop\n"))
        await ws.close()
    }

    @Test func a_page_file_deleted_replaced_or_spelled_twice_while_stopped_is_checked() async throws {
        let t = try await seeded()
        // Deleted: absence never deletes; the page is written again.
        try Sys.unlink(t.journal(days[0]))
        // Replaced by rename with the same bytes and one line more (a sync tool's delivery).
        let second = t.journal(days[1])
        var bytes = try Durable.readRegularFile(second, limit: 1 << 20)
        bytes += Array("- added on the phone\n".utf8)
        try Durable.publish(bytes, to: second, via: Path.join(t.root, ".outl/tmp/replaced.tmp"))
        // Another spelling of the third day's file, holding a line more.
        var third = try Durable.readRegularFile(t.journal(days[2]), limit: 1 << 20)
        third += Array("- typed in the other spelling\n".utf8)
        let iso = Path.join(t.root, "journals/\(days[2].iso).md")
        try Durable.publish(third, to: iso, via: Path.join(t.root, ".outl/tmp/iso.tmp"))
        let (ws, _) = try await start(t)
        #expect(await texts(ws, days[0]) == ["line 0"])
        #expect(try Durable.readRegularFile(t.journal(days[0]), limit: 1 << 20).count > 0)
        #expect(await texts(ws, days[1]) == ["line 1", "added on the phone"])
        #expect(await texts(ws, days[2]) == ["line 2", "typed in the other spelling"])
        #expect((try? Sys.lstat(iso)) == nil)
        #expect(await ws.check() == [])
        await ws.close()
    }

    @Test func a_torn_forged_or_foreign_index_only_costs_reads() async throws {
        let t = try await seeded()
        let index = indexFile(t)
        let good = try Durable.readRegularFile(index, limit: 1 << 20)
        let lines = good.split(separator: 10, omittingEmptySubsequences: false)
        // One entry forged (its digest changed, its CRC kept), one torn: those two pages are read.
        var forged = Array(lines[1])
        let sp = forged.lastIndex(of: 32)! - 1
        forged[sp] = forged[sp] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        var out = Array(lines[0]) + [10] + forged + [10] + Array(lines[2]) + [10]
        out += Array(lines[3].prefix(lines[3].count / 2))
        try Durable.publish(out, to: index, via: index + ".w")
        let (ws, read) = try await start(t)
        #expect(read.count == 2)
        #expect(await ws.check() == [])
        await ws.close()
        // Another version's index (or garbage) is no index at all: every page is read, none lost.
        for junk in ["outl-page-index 999 renderer 1\n" + String(decoding: lines[1], as: UTF8.self) + "\n", "\u{0}\u{1}garbage"] {
            try Durable.publish(Array(junk.utf8), to: index, via: index + ".w")
            let (ws, read) = try await start(t)
            #expect(read.count == 3)
            for (k, d) in days.enumerated() { #expect(await texts(ws, d) == ["line \(k)"]) }
            await ws.close()
        }
        let (last, none) = try await start(t)
        #expect(none == [])
        await last.close()
    }

    @Test func an_unknown_event_about_a_file_as_this_device_left_it_reads_nothing() async throws {
        // outld sees its own page writes as renames from elsewhere (.outl/tmp): origin unknown. A file
        // still as this device left it is not read again; any change of it still is.
        let t = try await seeded()
        let ws = try t.open()
        let page = t.journal(days[1])
        let counter = FaultInjector(nil, match: SysMatch(ops: [.open], under: t.root))
        try await withInterposer(counter) { try await ws.reconcile(path: page, origin: .unknown, project: false) }
        #expect(!counter.log.contains { $0.hasSuffix(".md") }, "\(counter.log)")
        #expect(await ws.stalePages == 0)
        try handEdit(page, "line 1", "line 1, edited while outld ran")
        try await ws.reconcile(path: page, origin: .unknown, project: false)
        #expect(await ws.stalePages == 1, "a changed file is marked, and taken at the next pass")
        _ = try await ws.projectDirtyPages()
        #expect(fileText(page).contains("line 1, edited while outld ran"))
        #expect(await WorkspaceTests.texts(ws, days[1]) == ["line 1, edited while outld ran"])
        await ws.close()
    }
}

// A page file a sync tool replaces is read before anything is written over it: Syncthing 1.19 unlinks
// the old file and then renames its temporary in, and a projection written in that gap, or renamed
// over the delivery, threw a phone's edit away on every device (issue 48, finding 2).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// Does, once, what a peer does at the moment outld is about to write its projection to `page`:
/// `act` runs (with plain libc calls, outside the seam) just before the first look at the name
/// (the check of what it holds) or the first rename to it, whichever comes first.
private final class BeforePublish: SysInterposer {
    let page: String
    let act: () -> Void
    private let lock = NSLock()
    private var done = false
    private(set) var renames: [Int32] = []

    init(page: String, act: @escaping () -> Void) { self.page = page; self.act = act }

    func before(_ call: SysCall) -> SysFault? {
        let isRename = call.op == .rename && call.path2 == page
        guard isRename || call.op == .lstat && call.path == page else { return nil }
        let first = lock.withLock { () -> Bool in
            if isRename { renames.append(call.flags) }
            defer { done = true }
            return !done
        }
        if first { act() }
        return nil
    }

    func after(_ call: SysCall, result: Int) {}
}

/// Writes `text` to a temporary beside `path` and renames it over `path` as Syncthing does (its
/// temporary's name is `.syncthing.NAME.tmp`), with plain libc calls.
private func deliverLikeSyncthing(_ path: String, _ text: String, unlinkFirst: Bool = false) {
    let tmp = Path.join(Path.parent(of: path), ".syncthing.\(Path.lastComponent(path)).tmp")
    FileManager.default.createFile(atPath: tmp, contents: Data(text.utf8))
    if unlinkFirst { Glibc.unlink(path) }
    Glibc.rename(tmp, path)
}

@Suite(.serialized) struct ReplacedPageFileTests {
    /// A phone's save: the capture's text changed and a child typed under it.
    func phoneEdit(of file: String) -> String {
        file.replacingOccurrences(of: "- from the laptop\n", with: "- from the laptop, edited on the phone\n")
            + "  - typed on the phone\n"
    }

    /// Judges waiting pages until `done` holds, for at most ten seconds.
    func judgeUntil(_ ws: Workspace, _ done: () async -> Bool) async throws {
        let deadline = Date().addingTimeInterval(10)
        while await !done(), Date() < deadline {
            let next = try await ws.judgeWaiting()
            usleep(UInt32(min(max(next ?? 20, 10), 500)) * 1000)
        }
    }

    @Test func a_page_file_unlinked_then_renamed_in_is_not_written_in_the_gap() async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 1500  // the gap never lasts this long; the delivery's changes wait as long
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("from the laptop")])
        _ = try await ws.projectDirtyPages()
        let phone = phoneEdit(of: fileText(page))
        // Syncthing's first half: the old file unlinked; outld sees IN_DELETE and judges the page.
        try Sys.unlink(page)
        try await ws.reconcile(path: page, origin: .removed)
        #expect(!FileManager.default.fileExists(atPath: page), "the page was written in the gap of a replace:\n\(fileText(page))")
        // The second half: the temporary renamed in.
        deliverLikeSyncthing(page, phone)
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        try await judgeUntil(ws) { await texts(ws).count == 2 }
        #expect(await texts(ws) == ["from the laptop, edited on the phone", "typed on the phone"], "\(fileText(page))")
        #expect(fileText(page).contains("edited on the phone") && fileText(page).contains("typed on the phone"))
        await ws.close()
    }

    @Test func a_file_gone_for_the_settle_time_is_written_again_and_loses_nothing() async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 300
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("still here")])
        _ = try await ws.projectDirtyPages()
        try Sys.unlink(page)
        try await ws.reconcile(path: page, origin: .removed)
        #expect(!FileManager.default.fileExists(atPath: page))
        // Judged again once the settle time has passed with nothing at the name: written again.
        #expect(try await ws.judgeWaiting() != nil, "a page whose file went away waits for nothing")
        try await judgeUntil(ws) { FileManager.default.fileExists(atPath: page) }
        #expect(fileText(page).contains("- still here"), "not written again: \(fileText(page))")
        #expect(await texts(ws) == ["still here"])
        await ws.close()
    }

    @Test(arguments: ["absent when read", "present when read"])
    func a_file_delivered_between_the_read_and_the_rename_is_not_written_over(_ how: String) async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("from the laptop")])
        _ = try await ws.projectDirtyPages()
        let phone = phoneEdit(of: fileText(page))
        if how == "absent when read" { try Sys.unlink(page) }
        // A capture makes the page stale; just before outld's projection is renamed to the page,
        // the phone's file is renamed there (Syncthing's rename landing first).
        _ = try await ws.appendCaptures([capture("second capture")])
        let peer = BeforePublish(page: page) { deliverLikeSyncthing(page, phone) }
        try await withInterposer(peer) { _ = try await ws.projectDirtyPages() }
        #expect(peer.renames.count >= 1, "outld never tried to write the page")
        #expect(peer.renames.first == (how == "absent when read" ? 1 : 0), "renames: \(peer.renames)")
        // Read again, then written: the phone's edit and both captures.
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        let shown = fileText(page)
        #expect(await texts(ws) == ["from the laptop, edited on the phone", "typed on the phone", "second capture"], "\(shown)")
        #expect(shown.contains("edited on the phone") && shown.contains("typed on the phone") && shown.contains("second capture"), "\(shown)")
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    @Test func an_edit_in_place_between_the_read_and_the_rename_is_read_first() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("first")])
        _ = try await ws.projectDirtyPages()
        _ = try await ws.appendCaptures([capture("second")])
        // An editor writes in place just before the projection's rename: its line is kept.
        let peer = BeforePublish(page: page) {
            let edited = fileText(page) + "- typed in vim\n"
            let fd = Glibc.open(page, O_WRONLY | O_TRUNC)
            _ = edited.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
            Glibc.close(fd)
        }
        try await withInterposer(peer) { _ = try await ws.projectDirtyPages() }
        let now = await texts(ws)
        #expect(now == ["first", "typed in vim", "second"] || now == ["first", "second", "typed in vim"], "\(fileText(page))")
        #expect(fileText(page).contains("- typed in vim"))
        await ws.close()
    }
}

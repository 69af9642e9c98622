// InotifyWatcher on real directories: arrivals, departures, page edits, overflow, and an inbox that
// is removed and re-created. Serialized: the overflow test briefly shrinks a kernel-wide limit.
import Foundation
import Testing
import CInotifyShim
import Daemon
import SystemCalls
import Workspace
import TestSupport

private func makeInbox(_ t: TempDir) throws -> String {
    let inbox = t.sub("captures")
    try Durable.makeDirectory(Path.join(inbox, "tmp"), mode: 0o700)
    return inbox
}

/// Writes a file in tmp/ and renames it into the inbox, as a writer does.
private func deliver(_ inbox: String, _ name: String) throws {
    let tmp = Path.join(Path.join(inbox, "tmp"), name)
    try writeText(tmp, #"{"text":"x"}"#)
    try Sys.rename(tmp, Path.join(inbox, name))
}

@Suite(.serialized) struct InotifyTests {
    @Test func inotify_sees_a_rename_into_a_watched_inbox() throws {
        let t = TempDir("inotify")
        let inbox = try makeInbox(t)
        let w = try InotifyWatcher()
        try w.watchInbox(inbox)
        #expect(try w.readEvents() == [])
        try deliver(inbox, "01JDZ0000000000000000000AA.json")
        let events = try w.readEvents()
        #expect(events == [.captureArrived(inbox: inbox, name: "01JDZ0000000000000000000AA.json")])
        // Nothing is reported twice, and the temp file's own creation in tmp/ is not watched.
        #expect(try w.readEvents() == [])
    }

    @Test func inotify_reports_files_leaving_an_inbox() throws {
        let t = TempDir("inotify")
        let inbox = try makeInbox(t)
        try Durable.makeDirectory(Path.join(inbox, "rejected"), mode: 0o700)
        try deliver(inbox, "A.json")
        try deliver(inbox, "B.json")
        let w = try InotifyWatcher()
        try w.watchInbox(inbox)
        try Sys.unlink(Path.join(inbox, "A.json"))
        try Sys.rename(Path.join(inbox, "B.json"), Path.join(inbox, "rejected/B.json"))
        #expect(try w.readEvents() == [.fileRemoved(dir: inbox, name: "A.json"),
                                       .fileRemoved(dir: inbox, name: "B.json")])
    }

    /// outld's own page write is seen as what it is, a rename from a directory nobody watches (its
    /// origin unknown, which a page file as last left ignores), never as a write in place, which
    /// is a person's edit: closed after the rename, its written descriptor made one, and every page
    /// outld wrote was read back and judged again.
    @Test func a_page_published_with_its_stamp_is_seen_as_a_rename_not_as_an_edit_in_place() throws {
        let t = TempDir("inotify")
        let pages = t.sub("pages"), tmp = t.sub("tmp")
        try Durable.makeDirectory(pages, mode: 0o755)
        try Durable.makeDirectory(tmp, mode: 0o700)
        let w = try InotifyWatcher()
        try w.watchPages(pages)
        let dir = try FileDescriptor.open(pages, O_RDONLY | O_DIRECTORY)
        defer { dir.close() }
        let tdir = try FileDescriptor.open(tmp, O_RDONLY | O_DIRECTORY)
        defer { tdir.close() }
        for text in ["- first\n", "- second\n"] {  // a new file, then one replaced
            let st = try Durable.publish(Array(text.utf8), name: "Inbox.md", in: dir, dirPath: pages, via: "Inbox.md.tmp",
                                         in: tdir, tempDirPath: tmp, statAfterRename: true)
            #expect(try w.readEvents() == [.pageChanged(path: Path.join(pages, "Inbox.md"), origin: .unknown)])
            // The stamp is still the published file's, taken after the rename.
            let now = try Sys.lstat(Path.join(pages, "Inbox.md"))
            let got = try #require(st)
            #expect(got.st_ino == now.st_ino && got.st_size == now.st_size)
            #expect(got.st_ctim.tv_sec == now.st_ctim.tv_sec && got.st_ctim.tv_nsec == now.st_ctim.tv_nsec)
        }
    }

    /// A temporary directory (`dir`) with a `journals/` a watcher watches as a page directory.
    struct WatchedJournals {
        let dir = TempDir("inotify")
        let journals: String
        let watcher: InotifyWatcher

        init() throws {
            journals = dir.sub("journals")
            try Durable.makeDirectory(journals, mode: 0o755)
            watcher = try InotifyWatcher()
            try watcher.watchPages(journals)
        }
    }

    @Test func inotify_reports_hand_edits_of_pages() throws {
        let watched = try WatchedJournals()
        let (journals, w) = (watched.journals, watched.watcher)
        try writeText(Path.join(journals, "2026_12_02.md"), "- edited by hand\n")
        let events = try w.readEvents()
        #expect(events.contains(.pageChanged(path: Path.join(journals, "2026_12_02.md"), origin: .editedHere)))
        #expect(!events.contains { if case .captureArrived = $0 { return true } else { return false } })
    }

    /// The origin the watcher reports last for `name` after `act` (the daemon keeps the last).
    func lastOrigin(of name: String, in dir: String, _ w: InotifyWatcher) throws -> PageFileOrigin? {
        var origin: PageFileOrigin? = nil
        for e in try w.readEvents() {
            if case .pageChanged(let p, let o) = e, p == Path.join(dir, name) { origin = o }
        }
        return origin
    }

    @Test func a_rename_from_a_sync_tools_temporary_is_a_delivery_any_other_save_a_person() throws {
        let watched = try WatchedJournals()
        let (journals, w) = (watched.journals, watched.watcher)
        let elsewhere = watched.dir.sub("elsewhere")
        try Durable.makeDirectory(elsewhere, mode: 0o755)
        let page = "2026_12_02.md"
        func renamed(from temp: String, in dir: String) throws -> PageFileOrigin? {
            try writeText(Path.join(dir, temp), "- x\n")
            _ = try w.readEvents()
            try Sys.rename(Path.join(dir, temp), Path.join(journals, page))
            return try lastOrigin(of: page, in: journals, w)
        }
        // Sync tools, with their own temporary names.
        #expect(try renamed(from: ".syncthing.\(page).tmp", in: journals) == .delivered(by: "syncthing"))
        #expect(try renamed(from: "~syncthing~\(page).tmp", in: journals) == .delivered(by: "syncthing"))
        #expect(try renamed(from: ".\(page).Ab3xY9", in: journals) == .delivered(by: "rsync"))
        #expect(try renamed(from: ".unison.\(page).e3b0c44298fc1c14.unison.tmp", in: journals) == .delivered(by: "unison"))
        #expect(try renamed(from: ".\(page).~0a1b2c3d", in: journals) == .delivered(by: "nextcloud"))
        // Editors saving by rename (gedit, sed -i, vim's backupcopy=no writes in place after a rename).
        #expect(try renamed(from: ".goutputstream-ZK3TQ2", in: journals) == .editedHere)
        #expect(try renamed(from: "sedAbC123", in: journals) == .editedHere)
        // In place.
        try writeText(Path.join(journals, page), "- y\n")
        #expect(try lastOrigin(of: page, in: journals, w) == .editedHere)
        // From a directory nobody watches (Dropbox's cache, a person's mv): unknown.
        #expect(try renamed(from: "x.md", in: elsewhere) == .unknown)
    }

    /// The first half of Syncthing 1.19's replace (the old file unlinked) and a name renamed away
    /// are `.removed`, so the page waits for what comes to its name; the second half, the
    /// temporary renamed in, is a delivery.
    @Test func a_page_file_unlinked_or_renamed_away_is_removed_and_the_rename_in_a_delivery() throws {
        let watched = try WatchedJournals()
        let (journals, w) = (watched.journals, watched.watcher)
        let page = Path.join(journals, "2026_12_02.md")
        try writeText(page, "- x\n")
        _ = try w.readEvents()
        try Sys.unlink(page)
        #expect(try lastOrigin(of: "2026_12_02.md", in: journals, w) == .removed)
        try writeText(Path.join(journals, ".syncthing.2026_12_02.md.tmp"), "- x, edited on the phone\n")
        try Sys.rename(Path.join(journals, ".syncthing.2026_12_02.md.tmp"), page)
        #expect(try lastOrigin(of: "2026_12_02.md", in: journals, w) == .delivered(by: "syncthing"))
        try Sys.rename(page, Path.join(journals, "2026_12_02.md~"))
        #expect(try lastOrigin(of: "2026_12_02.md", in: journals, w) == .removed)
    }

    @Test func sync_conflict_copies_are_recognised_by_name() {
        #expect(SyncToolNames.conflictOriginal("2026_12_02.sync-conflict-20261202-101010-ABCDEFG.md") == "2026_12_02.md")
        #expect(SyncToolNames.conflictOriginal("My page.sync-conflict-20261202-101010-7XQ2KZL.md") == "My page.md")
        #expect(SyncToolNames.conflictOriginal("2026_12_02.md") == nil)
        #expect(SyncToolNames.conflictOriginal("notes.sync-conflict-2026-x.md") == nil)
    }

    @Test func other_devices_op_files_arriving_are_reported() throws {
        let t = TempDir("inotify")
        let ops = t.sub("ops")
        try Durable.makeDirectory(ops, mode: 0o755)
        let w = try InotifyWatcher()
        try w.watchOps(ops)
        try writeText(Path.join(ops, ".syncthing.ops-b.jsonl.tmp"), "x\n")
        _ = try w.readEvents()
        try Sys.rename(Path.join(ops, ".syncthing.ops-b.jsonl.tmp"), Path.join(ops, "ops-b.jsonl"))
        #expect(try w.readEvents().contains(.opsChanged(name: "ops-b.jsonl")))
    }

    @Test func inbox_removed_and_recreated_is_watched_again() throws {
        let t = TempDir("inotify")
        let inbox = t.sub("captures")
        try Durable.makeDirectory(inbox, mode: 0o700)
        let w = try InotifyWatcher()
        try w.watchInbox(inbox)
        #expect(rmdir(inbox) == 0)
        #expect(try w.readEvents() == [.inboxGone(inbox)])
        #expect(w.watchedInboxes == [])
        try Sys.mkdir(inbox, 0o700)
        #expect(try w.readEvents() == [.inboxReturned(inbox)])
        #expect(w.watchedInboxes == [inbox])
        try Sys.mkdir(Path.join(inbox, "tmp"), 0o700)
        try deliver(inbox, "C.json")
        #expect(try w.readEvents() == [.captureArrived(inbox: inbox, name: "C.json")])
    }

    @Test func inbox_recreated_before_the_loop_looks_is_watched_again() throws {
        let t = TempDir("inotify")
        let inbox = t.sub("captures")
        try Durable.makeDirectory(inbox, mode: 0o700)
        let w = try InotifyWatcher()
        try w.watchInbox(inbox)
        #expect(rmdir(inbox) == 0)
        try Sys.mkdir(inbox, 0o700)  // before readEvents: the parent watch cannot see this mkdir
        #expect(try w.readEvents() == [.inboxGone(inbox), .inboxReturned(inbox)])
        try Sys.mkdir(Path.join(inbox, "tmp"), 0o700)
        try deliver(inbox, "D.json")
        #expect(try w.readEvents() == [.captureArrived(inbox: inbox, name: "D.json")])
    }

    static let maxQueued = "/proc/sys/fs/inotify/max_queued_events"

    @Test(.enabled(if: access(maxQueued, W_OK) == 0,
                   "needs a writable /proc/sys/fs/inotify/max_queued_events (root, not read-only /proc)"))
    func inotify_queue_overflow_is_reported() throws {
        let t = TempDir("inotify")
        let inbox = try makeInbox(t)
        // The limit is read when the inotify instance is created: shrink it just for that, then restore.
        let saved = readText(Self.maxQueued)!.trimmingCharacters(in: .whitespacesAndNewlines)
        try writeText(Self.maxQueued, "8\n")
        let w: InotifyWatcher
        do {
            defer { try? writeText(Self.maxQueued, saved + "\n") }
            w = try InotifyWatcher()
        }
        #expect(readText(Self.maxQueued)?.trimmingCharacters(in: .whitespacesAndNewlines) == saved)
        try w.watchInbox(inbox)
        for i in 0..<40 { try deliver(inbox, "F\(i).json") }
        let events = try w.readEvents()
        #expect(events.contains(.overflow))
        #expect(events.filter { $0 == .overflow }.count == 1)
    }
}

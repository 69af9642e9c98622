// InotifyWatcher: the inotify side of outld's event loop — inbox arrivals, hand edits of pages,
// queue overflow, and inboxes that go away and come back. Never blocks: the fd is IN_NONBLOCK and
// the loop polls it. Watches are added before the caller scans, so nothing arriving between is missed.
#if canImport(Glibc)
import Glibc
#endif
import CInotifyShim
import SystemCalls
import Workspace

/// What the daemon needs to know from inotify; names are not filtered (CaptureFormat owns the form).
public enum WatchEvent: Equatable, Sendable {
    /// A file was renamed into, or closed after writing in, an inbox.
    case captureArrived(inbox: String, name: String)
    /// A file in journals/ or pages/ was written, renamed in or out, or deleted: reconcile it, as
    /// `origin` says (a rename is paired with the name it came from by the kernel's cookie).
    case pageChanged(path: String, origin: PageFileOrigin)
    /// A file in .outl/ops/ was renamed in, written and closed, or removed: another device's op log may have
    /// grown (a sync tool delivers a grown file by rename): merge what is new.
    case opsChanged(name: String)
    /// The inbox directory was deleted, moved away or unmounted; its watch is gone. The watcher
    /// keeps an eye on the parent and reports `inboxReturned` when a directory of that name is back.
    case inboxGone(String)
    /// A directory of a gone inbox's name exists again and is watched again: rescan it.
    case inboxReturned(String)
    /// `.outl/ops` was deleted or moved away (a peer replaced it): its watch is gone.
    case opsGone(String)
    /// journals/ or pages/ was deleted or moved away: its watch is gone.
    case pagesGone(String)
    /// `.outl` was deleted or moved away: the inbox and op watches in it follow the old directory.
    case ownGone(String)
    /// The kernel dropped events (IN_Q_OVERFLOW): rescan everything.
    case overflow
    /// A file left an inbox (deleted, or moved to rejected/): what `outld --once` waiters watch for.
    case fileRemoved(dir: String, name: String)
}

public final class InotifyWatcher {
    public let fd: Int32

    private struct Watch {
        var path: String
        var inbox = false
        var pages = false
        var ops = false
        /// `.outl`: only its going away is watched (a peer replacing it takes every own directory).
        var own = false
        /// Names of gone inboxes in this directory we wait to see created again.
        var awaited: Set<String> = []
    }

    private var watches: [Int32: Watch] = [:]
    private var buffer: UnsafeMutableRawBufferPointer
    /// IN_MOVED_FROM names in page directories by cookie, until their IN_MOVED_TO: the kernel
    /// queues the two halves of a rename within one directory back to back, so this stays small;
    /// a half whose other end is in an unwatched directory is dropped when the table grows.
    private var movedFrom: [UInt32: (wd: Int32, name: String)] = [:]

    private static let inboxMask = CInotifyShim_mask_movedTo() | CInotifyShim_mask_closeWrite()
        | CInotifyShim_mask_deleteSelf() | CInotifyShim_mask_moveSelf() | CInotifyShim_mask_onlyDir()
        | CInotifyShim_mask_delete() | CInotifyShim_mask_movedFrom()
    /// Page and op directories are inside the workspace, where a link is never followed, not even
    /// by a watch (an inbox outside it may be reached through the person's own link).
    private static let pagesMask = CInotifyShim_mask_closeWrite() | CInotifyShim_mask_movedTo()
        | CInotifyShim_mask_delete() | CInotifyShim_mask_movedFrom() | CInotifyShim_mask_onlyDir() | CInotifyShim_mask_dontFollow()
    /// Page and op directories are watched going away too (a peer replacing one), so a watch never
    /// follows a directory renamed out of the workspace.
    private static let selfMask = CInotifyShim_mask_deleteSelf() | CInotifyShim_mask_moveSelf()
    /// On the parent of a gone inbox: a directory created or renamed in (IN_CREATE is 0x100).
    private static let parentMask = UInt32(0x100) | CInotifyShim_mask_movedTo() | CInotifyShim_mask_onlyDir()

    public init() throws {
        let r = CInotifyShim_init()
        if r < 0 { throw Errno(-r) }
        fd = r
        // 64 KiB drains a burst in a few reads; the floor is one event with the longest name.
        buffer = .allocate(byteCount: max(65536, CInotifyShim_minimumBufferSize()), alignment: 8)
    }

    deinit {
        Sys.close(fd)
        buffer.deallocate()
    }

    /// The inbox directories currently watched.
    public var watchedInboxes: [String] { watches.values.filter(\.inbox).map(\.path).sorted() }

    /// Watches an inbox for arrivals and departures. Call before scanning it. Watching it again
    /// (after `inboxGone`) is fine.
    public func watchInbox(_ dir: String) throws {
        try add(dir) { $0.inbox = true }
    }

    /// Watches journals/ or pages/ for hand edits.
    public func watchPages(_ dir: String) throws {
        try add(dir) { $0.pages = true }
    }

    /// Watches .outl/ops/ for other devices' op files arriving or growing.
    public func watchOps(_ dir: String) throws {
        try add(dir) { $0.ops = true }
    }

    /// Watches `.outl` for going away.
    public func watchOwn(_ dir: String) throws {
        try add(dir) { $0.own = true }
    }

    /// Stops watching `dir` in every role.
    public func unwatch(_ dir: String) {
        for (wd, w) in watches where w.path == dir {
            watches[wd] = nil
            _ = CInotifyShim_removeWatch(fd, wd)
        }
    }

    private func mask(for w: Watch) -> UInt32 {
        var m: UInt32 = 0
        if w.inbox { m |= Self.inboxMask }
        if w.pages || w.ops { m |= Self.pagesMask | Self.selfMask }
        if w.own { m |= Self.selfMask | CInotifyShim_mask_onlyDir() | CInotifyShim_mask_dontFollow() }
        if !w.awaited.isEmpty { m |= Self.parentMask }
        return m
    }

    /// Adds (or widens) the watch on `path`; the kernel returns the existing wd for a path already
    /// watched, and the mask given replaces the old one, so it is always the union of the roles.
    private func add(_ path: String, _ role: (inout Watch) -> Void) throws {
        var w = watches.first { $0.value.path == path }?.value ?? Watch(path: path)
        role(&w)
        let wd = CInotifyShim_addWatch(fd, path, mask(for: w))
        if wd < 0 { throw Errno(-wd) }
        // A path renamed away keeps its wd; if the kernel hands back a wd we know under another
        // name, the old entry is stale.
        if let old = watches[wd], old.path != path { watches[wd] = nil }
        for (k, v) in watches where v.path == path && k != wd { watches[k] = nil }
        watches[wd] = w
    }

    /// Every event pending now (empty when none); never blocks.
    public func readEvents() throws -> [WatchEvent] {
        var out: [WatchEvent] = []
        while true {
            let n: Int
            do {
                n = try Sys.read(fd, into: buffer)
            } catch let e as Errno where e == .EAGAIN || e == .EWOULDBLOCK {
                return out
            }
            if n <= 0 { return out }
            var offset = 0
            var ev = CInotifyShim_Event()
            while true {
                let next = CInotifyShim_nextEvent(buffer.baseAddress, n, offset, &ev)
                if next < 0 { break }
                offset = next
                handle(wd: ev.wd, mask: ev.mask, cookie: ev.cookie, name: String(cString: ev.name), into: &out)
            }
        }
    }

    private func handle(wd: Int32, mask: UInt32, cookie: UInt32, name: String, into out: inout [WatchEvent]) {
        func has(_ m: UInt32) -> Bool { mask & m != 0 }
        if has(CInotifyShim_mask_queueOverflow()) {
            if out.last != .overflow { out.append(.overflow) }
            return
        }
        guard var w = watches[wd] else { return }  // e.g. IN_IGNORED after our own unwatch
        let isDir = has(CInotifyShim_mask_isDir())

        if has(CInotifyShim_mask_deleteSelf()) || has(CInotifyShim_mask_moveSelf())
            || has(CInotifyShim_mask_ignored()) || has(CInotifyShim_mask_unmount()) {
            watches[wd] = nil
            // After IN_MOVE_SELF the watch would follow the directory to its new name; drop it.
            // After IN_DELETE_SELF the kernel drops it and sends IN_IGNORED, which lands above.
            if has(CInotifyShim_mask_moveSelf()) { _ = CInotifyShim_removeWatch(fd, wd) }
            if w.inbox {
                out.append(.inboxGone(w.path))
                awaitReturn(of: w.path, into: &out)
            }
            if w.ops { out.append(.opsGone(w.path)) }
            if w.pages { out.append(.pagesGone(w.path)) }
            if w.own { out.append(.ownGone(w.path)) }
            return
        }

        if !w.awaited.isEmpty && isDir && w.awaited.contains(name) {
            let inbox = Path.join(w.path, name)
            w.awaited.remove(name)
            watches[wd] = w
            if (try? watchInbox(inbox)) != nil { out.append(.inboxReturned(inbox)) }
            refreshParentMask(wd)
        }
        guard !name.isEmpty, !isDir else { return }

        if w.inbox {
            if has(CInotifyShim_mask_movedTo()) || has(CInotifyShim_mask_closeWrite()) {
                out.append(.captureArrived(inbox: w.path, name: name))
            } else if has(CInotifyShim_mask_delete()) || has(CInotifyShim_mask_movedFrom()) {
                out.append(.fileRemoved(dir: w.path, name: name))
            }
        }
        // A removal too: it may have been this device's own file, which is then written again.
        if w.ops && (has(CInotifyShim_mask_movedTo()) || has(CInotifyShim_mask_closeWrite())
                     || has(CInotifyShim_mask_delete()) || has(CInotifyShim_mask_movedFrom())) {
            out.append(.opsChanged(name: name))
        }
        if w.pages && (has(Self.pagesMask & ~(CInotifyShim_mask_onlyDir() | CInotifyShim_mask_dontFollow()))) {
            out.append(.pageChanged(path: Path.join(w.path, name), origin: origin(wd: wd, mask: mask, cookie: cookie, name: name)))
        }
    }

    /// Who wrote a page file, from what the kernel says: a rename from a sync tool's temporary is
    /// a delivery; a write in place, or a rename from any other name in the same directory (an
    /// editor's save, `sed -i`), is a person here; a name unlinked or renamed away is `.removed`
    /// (perhaps the first half of a replace); a rename from elsewhere is unknown.
    private func origin(wd: Int32, mask: UInt32, cookie: UInt32, name: String) -> PageFileOrigin {
        if mask & CInotifyShim_mask_movedFrom() != 0 {
            if movedFrom.count >= 256 { movedFrom.removeAll() }
            movedFrom[cookie] = (wd, name)
            return .removed
        }
        if mask & CInotifyShim_mask_delete() != 0 { return .removed }
        if mask & CInotifyShim_mask_movedTo() != 0 {
            guard let from = movedFrom.removeValue(forKey: cookie), from.wd == wd else { return .unknown }
            return SyncToolNames.deliveringTool(from: from.name, final: name).map { .delivered(by: $0) } ?? .editedHere
        }
        if mask & CInotifyShim_mask_closeWrite() != 0 { return .editedHere }
        return .unknown
    }

    /// Watches the parent of a gone inbox for a directory of its name; if one is already there
    /// (re-created before the watch was up), watches it again at once.
    private func awaitReturn(of inbox: String, into out: inout [WatchEvent]) {
        let parent = Path.parent(of: inbox)
        let name = Path.lastComponent(inbox)
        guard (try? add(parent, { $0.awaited.insert(name) })) != nil else { return }
        if let st = try? Sys.lstat(inbox), (st.st_mode & S_IFMT) == S_IFDIR {
            if let (wd, _) = watches.first(where: { $0.value.path == parent }) {
                watches[wd]?.awaited.remove(name)
                refreshParentMask(wd)
            }
            if (try? watchInbox(inbox)) != nil { out.append(.inboxReturned(inbox)) }
        }
    }

    /// Narrows a parent's watch once nothing is awaited there (and drops it if it has no role left).
    private func refreshParentMask(_ wd: Int32) {
        guard let w = watches[wd], w.awaited.isEmpty else { return }
        if !w.inbox && !w.pages && !w.ops && !w.own {
            watches[wd] = nil
            _ = CInotifyShim_removeWatch(fd, wd)
        } else {
            _ = CInotifyShim_addWatch(fd, w.path, mask(for: w))
        }
    }
}

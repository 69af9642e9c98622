// InboxReport: what each inbox holds, for a person's report (`outl status`): the captures waiting,
// their attachments, and what the drain set aside in rejected/. Read only, each inbox opened as the drain opens it (no
// link below the workspace's root followed), so a report never reads what the drain would refuse.
import CaptureFormat
import CaptureInbox
import SystemCalls

public struct InboxReport: Equatable, Sendable {
    public var inbox: String
    public var waiting: Int
    /// Attachment files in the inbox (`<ULID>.<k>.att`): of the captures waiting, or on their way.
    public var attachments = 0
    public var setAside: Int
    /// The first line of the newest reason (by the reason file's mtime), as the file holds it.
    public var newestReason: String?
    /// Why the inbox or its rejected/ could not be read (a link, no directory); nil when it could
    /// or is not there yet.
    public var unreadable: String?

    public static func read(_ inboxes: [String], workspace: String) -> [InboxReport] {
        inboxes.map { inbox in
            var r = InboxReport(inbox: inbox, waiting: 0, setAside: 0)
            let fd: FileDescriptor
            do {
                fd = try Inbox.open(inbox, workspace: workspace)
            } catch let e as Errno where e == .ENOENT {
                return r
            } catch {
                r.unreadable = "\(error)"
                return r
            }
            return fd.closeAfter {
                // Counted name by name, none kept: an inbox a peer filled costs a listing, not memory.
                var waiting = 0, attachments = 0
                try? fd.readDirectory(path: inbox) { bytes in
                    if CaptureName.ulid(ofBytes: bytes) != nil {
                        waiting += 1
                    } else if listedAttachment(bytes) != nil {
                        attachments += 1
                    }
                }
                r.waiting = waiting
                r.attachments = attachments
                let aside = Inbox.setAside(fd, at: inbox)
                r.setAside = aside.count
                r.newestReason = aside.newestReason
                r.unreadable = aside.unreadable.map { "rejected/: \($0)" }
                return r
            }
        }
    }
}

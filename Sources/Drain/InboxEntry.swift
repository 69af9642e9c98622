// InboxEntry: opens one final-form inbox entry without trusting it. Anyone who can write to the
// inbox (a sync tool, another program of ours, a mistake) controls what the name points at.
// Threats and defences, in the order they are checked:
//  * a symlink with a final-form name (e.g. to /etc/passwd or a huge file): O_NOFOLLOW, so open
//    fails with ELOOP and the link itself is set aside, never its target;
//  * a FIFO or a device: O_NONBLOCK so open cannot hang, then fstat must say S_IFREG;
//  * a directory: fstat says S_IFDIR; set aside (rename moves the directory, not its contents);
//  * a file of another user: fstat's st_uid must be ours (only root's daemon could be tricked
//    into reading it, and an inbox is per user), set aside unread;
//  * a hard link with a final-form name to some other file of the same user (as Postfix's
//    safe_open.c refuses st_nlink != 1): set aside unread, so the drain never reads, and never
//    deletes the content of, a file that has another name elsewhere; writers publish by rename;
//  * a huge file: fstat's size is checked against the limit before any read, and the read is
//    bounded by the limit too, in case the file grows while it is read;
//  * a file that vanishes between the scan and the open (another drainer, a sync tool): ENOENT
//    is not an error, the entry is simply gone.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import SystemCalls

/// An entry opened and checked: read at most `size` bytes (within the limit), then close `file`.
/// It names its entry by its place in the pass's entries, where the batch reads it.
struct OpenedEntry {
    var place: Int
    var file: FileDescriptor
    var size: Int
    /// Its inode's change time (seconds): when it arrived here, which no sync tool can set.
    var changedAt: Int
}

enum InboxEntry {
    /// Asked once: the drain checks every file's owner against it.
    static let euid = geteuid()

    /// Opens `entry` relative to its inbox's directory (no walk of the full path) and judges it.
    /// Only a file that will be read stays open; every other verdict has closed it.
    static func open(_ entry: PendingEntry, in inboxes: PassInboxes) -> Verdict<OpenedEntry> {
        let file: FileDescriptor
        // By its name spelled on the stack: no String is made per capture file.
        let opened = CaptureName.withFileName(entry.id) { name in
            untrusted(missing: .gone) {
                try FileDescriptor.open(cName: name, in: entry.directory, untrustedFlags, fullPath: inboxes.fullPath(of: entry))
            }
        }
        switch opened {
        case .land(let f): file = f
        case let other: return other.then { _ in .gone }
        }
        let verdict = judge(file).map { OpenedEntry(place: entry.place, file: file, size: $0.size, changedAt: $0.changedAt) }
        if case .land = verdict { return verdict }
        file.close()
        return verdict
    }

    /// Opens `name` in an inbox's directory as every file there is opened (a capture or one of its
    /// attachments): not following a link, not blocking on a FIFO, never becoming our terminal.
    /// `missing` is what an absent name means to the caller.
    static func openUntrusted(_ name: String, in directory: FileDescriptor, fullPath: @autoclosure () -> String,
                              missing: Verdict<FileDescriptor>) -> Verdict<FileDescriptor> {
        untrusted(missing: missing) { try FileDescriptor.open(name, in: directory, untrustedFlags, fullPath: fullPath()) }
    }

    static let untrustedFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

    /// What an open of an inbox's file (`open`, with `untrustedFlags`) means for it.
    private static func untrusted(missing: Verdict<FileDescriptor>, _ open: () throws -> FileDescriptor) -> Verdict<FileDescriptor> {
        do {
            return .land(try open())
        } catch let e as Errno {
            switch e.code {
            case ENOENT: return missing
            case ELOOP: return .setAside("is a symbolic link (never followed)")
            case ENXIO: return .setAside("is a socket or device, not a regular file")
            case EACCES, EPERM: return .setAside("cannot be opened for reading: \(e)")
            default: return e.isTransient ? .keep("\(e)") : .setAside("cannot be opened: \(e)")
            }
        } catch {
            return .keep("\(Errno.EIO)")
        }
    }

    /// Why an open file of an inbox must not be read, or nil when it may: only a regular file of
    /// this user with one link is read (see the threats above).
    static func refusal(_ st: stat) -> String? {
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            if st.st_uid != euid { return "is owned by uid \(st.st_uid), not by this user (\(euid)): not read" }
            if st.st_nlink != 1 { return "has \(st.st_nlink) hard links (another name points at the same file): not read" }
            return nil
        case S_IFDIR: return "is a directory, not a regular file"
        case S_IFIFO: return "is a FIFO, not a regular file (not read)"
        case S_IFSOCK: return "is a socket, not a regular file"
        case S_IFCHR, S_IFBLK: return "is a device, not a regular file"
        default: return "is not a regular file"
        }
    }

    /// What fstat says of an open entry: its size if it is a capture we may read.
    private static func judge(_ file: FileDescriptor) -> Verdict<(size: Int, changedAt: Int)> {
        var st = stat()
        do {
            try Sys.fstat(file.rawValue, into: &st)
        } catch {
            return .keep("\((error as? Errno) ?? Errno.EIO)")
        }
        if let why = refusal(st) { return .setAside(why) }
        if Int(st.st_size) > CaptureFile.maxFileBytes {
            return .setAside("is \(st.st_size) bytes, over the \(CaptureFile.maxFileBytes)-byte limit: not read")
        }
        return .land((Int(st.st_size), Int(st.st_ctim.tv_sec)))
    }
}

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

enum EntryOpen {
    /// Open and checked: read at most `size` bytes (size is within the limit).
    case file(fd: Int32, size: Int)
    /// Not a capture; set it aside with this reason.
    case bad(String)
    /// Gone before we could open it.
    case vanished
    /// The machine is unwell (EMFILE, EIO, …): keep the entry, try again later.
    case transient(Errno)
}

enum InboxEntry {
    /// Asked once: the drain checks every file's owner against it.
    static let euid = geteuid()

    static func open(_ path: String) -> EntryOpen {
        open(at: AT_FDCWD, path, path: path)
    }

    /// The same checks, opening `name` relative to the inbox directory fd `dirfd` (no walk of the
    /// full path); `path` is built only for the seam.
    static func open(at dirfd: Int32, _ name: String, path: @autoclosure () -> String) -> EntryOpen {
        let fd: Int32
        do {
            fd = try Sys.openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, fullPath: path())
        } catch let e as Errno {
            switch e.code {
            case ENOENT: return .vanished
            case ELOOP: return .bad("is a symbolic link (never followed)")
            case ENXIO: return .bad("is a socket or device, not a regular file")
            case EACCES, EPERM: return .bad("cannot be opened for reading: \(e)")
            default: return e.isTransient ? .transient(e) : .bad("cannot be opened: \(e)")
            }
        } catch {
            return .transient(Errno.EIO)
        }
        let st: stat
        do {
            st = try Sys.fstat(fd)
        } catch let e as Errno {
            Sys.close(fd)
            return .transient(e)
        } catch {
            Sys.close(fd)
            return .transient(Errno.EIO)
        }
        let kind = st.st_mode & S_IFMT
        let reason: String?
        switch kind {
        case S_IFREG:
            if st.st_uid != euid {
                reason = "is owned by uid \(st.st_uid), not by this user (\(euid)): not read"
            } else if st.st_nlink != 1 {
                reason = "has \(st.st_nlink) hard links (another name points at the same file): not read"
            } else if Int(st.st_size) > CaptureFile.maxFileBytes {
                reason = "is \(st.st_size) bytes, over the \(CaptureFile.maxFileBytes)-byte limit: not read"
            } else {
                reason = nil
            }
        case S_IFDIR: reason = "is a directory, not a regular file"
        case S_IFIFO: reason = "is a FIFO, not a regular file (not read)"
        case S_IFSOCK: reason = "is a socket, not a regular file"
        case S_IFCHR, S_IFBLK: reason = "is a device, not a regular file"
        default: reason = "is not a regular file"
        }
        if let reason {
            Sys.close(fd)
            return .bad(reason)
        }
        return .file(fd: fd, size: Int(st.st_size))
    }
}

// HeldDirectories: directories below a root nobody fully controls, opened by DirectoryWalk's rules
// once and then held open, so a busy caller (a projection, a merge) does not walk from the root each
// time. Invariant: a descriptor handed out since the last `expire()` was checked after it: each
// component below the root is still the directory its parent holds at that name, seen by fstatat
// without following, and the root still the directory at its path (checked at most every
// `rootCheckNs`: the root is the user's choice, out of a peer's reach); one that is not is closed and
// opened again, so a directory replaced, removed or made a link is never used through the old one.
#if canImport(Glibc)
import Glibc
#endif

public final class HeldDirectories {
    public let root: String
    private struct Held {
        let fd: FileDescriptor
        let device: UInt64
        let inode: UInt64
        var checked: UInt64

        init(_ fd: FileDescriptor, checked: UInt64) throws {
            let st: stat
            do { st = try fd.stat() } catch { fd.close(); throw error }
            self.fd = fd
            device = UInt64(st.st_dev); inode = UInt64(st.st_ino)
            self.checked = checked
        }

        func isStill(_ st: stat) -> Bool {
            st.st_mode & S_IFMT == S_IFDIR && UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
        }
    }
    private var top: Held?
    /// By path below the root ("journals", ".outl/tmp"); every prefix of a held path is held too.
    private var held: [String: Held] = [:]
    private var generation: UInt64 = 1
    /// How long a check of the root stands (0: it is checked at every generation, like the rest).
    public let rootCheckNs: UInt64
    private var rootCheckedAtNs: UInt64 = 0

    public init(root: String, rootCheckNs: UInt64 = 0) {
        self.root = root
        self.rootCheckNs = rootCheckNs
    }

    deinit { closeAll() }

    /// Everything held is checked again before its next use (call at the start of each pass: what
    /// a peer did to the tree between passes is seen; within one, the tree is taken as it was).
    public func expire() { generation &+= 1 }

    /// The directory at `rel` below the root (one or more components). With `create`, a missing
    /// component is made with that mode (see DirectoryWalk.open). Throws as DirectoryWalk.open
    /// does: ENOENT for a missing one, `UnsafeComponent` for a link or a non-directory.
    public func directory(_ rel: String, create: mode_t? = nil) throws -> FileDescriptor {
        var parent = try rootDirectory(create: create)
        var prefix = ""
        for name in rel.split(separator: "/") where name != "." {
            let parentPrefix = prefix
            prefix = prefix.isEmpty ? String(name) : prefix + "/" + name
            if var h = held[prefix] {
                if h.checked == generation { parent = h.fd; continue }
                if let st = try? parent.stat(String(name), fullPath: Path.join(root, prefix)), h.isStill(st) {
                    h.checked = generation
                    held[prefix] = h
                    parent = h.fd
                    continue
                }
                drop(prefix)
            }
            let fd = try openComponent(prefix, parentPrefix, from: parent, create: create)
            let h = try Held(fd, checked: generation)
            held[prefix] = h
            parent = h.fd
        }
        return parent
    }

    /// Directories only this program writes into (`.outl` and below): a link or a file found where
    /// one of them belongs, when asked to create it, is told to `removing` and taken away
    /// (OwnDirectory); nil: refused like any other.
    public var own: (prefix: String, keepingUpTo: Int, removing: (OwnDirectory.Found) -> Void)?

    private func openComponent(_ prefix: String, _ parentPrefix: String, from parent: FileDescriptor, create: mode_t?) throws -> FileDescriptor {
        let path = Path.join(root, prefix), parentPath = parentPrefix.isEmpty ? root : Path.join(root, parentPrefix)
        do {
            return try DirectoryWalk.open(path, beneath: parentPath, create: create, from: parent)
        } catch let u as UnsafeComponent {
            guard create != nil, let own, prefix == own.prefix || prefix.hasPrefix(own.prefix + "/"),
                  try OwnDirectory.takeAway(u.path, beneath: root, keepingUpTo: own.keepingUpTo, removing: own.removing) else { throw u }
            return try DirectoryWalk.open(path, beneath: parentPath, create: create, from: parent)
        }
    }

    /// The names in the directory at `rel` (checked as `directory` does), without "." and "..",
    /// through a stream kept open on it and rewound at each listing.
    public func names(_ rel: String) throws -> [String] {
        let fd = try directory(rel)
        let full = Path.join(root, rel)
        let stream = try streams[rel] ?? Sys.openDirectoryStream(fd.rawValue, path: full)
        streams[rel] = stream
        return try Sys.readDirectory(stream: stream, path: full)
    }

    /// Streams kept open on held directories (`names`), closed with their directory.
    private var streams: [String: OpaquePointer] = [:]

    /// Closes everything held; the next use opens again.
    public func closeAll() {
        for d in streams.values { Sys.closeDirectoryStream(d) }
        streams.removeAll()
        for h in held.values { h.fd.close() }
        held.removeAll()
        top?.fd.close()
        top = nil
    }

    private func rootDirectory(create: mode_t?) throws -> FileDescriptor {
        if var t = top {
            if t.checked == generation { return t.fd }
            let now = rootCheckNs > 0 ? monotonicNanoseconds() : 0
            if rootCheckNs > 0, now &- rootCheckedAtNs < rootCheckNs {
                t.checked = generation
                top = t
                return t.fd
            }
            // The root is the user's choice and may be reached through links: its path is followed.
            if let st = try? Sys.statFollowingLinks(root), t.isStill(st) {
                t.checked = generation
                top = t
                rootCheckedAtNs = now
                return t.fd
            }
            closeAll()
        }
        let t = try Held(try DirectoryWalk.open(root, beneath: root, create: create), checked: generation)
        top = t
        rootCheckedAtNs = rootCheckNs > 0 ? monotonicNanoseconds() : 0
        return t.fd
    }

    /// Closes `prefix` and everything held below it.
    private func drop(_ prefix: String) {
        let below = prefix + "/"
        for (k, h) in held where k == prefix || k.hasPrefix(below) {
            if let d = streams.removeValue(forKey: k) { Sys.closeDirectoryStream(d) }
            h.fd.close()
            held[k] = nil
        }
    }
}

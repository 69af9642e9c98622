// OwnDirectory: a directory below a synced root that only this program writes into (`.outl`, its op
// files' directory, its temporaries, its inbox). A peer or a sync tool can leave a link, a FIFO or a file
// at its name; refusing it would stop the service until a person repairs the folder, so the entry is
// taken away and the directory made again. Invariant: nothing is followed, and only the one entry found
// at the directory's own name is removed, after the caller was told of it (a regular file with its first
// bytes, so they can be kept durably before the file is gone).
#if canImport(Glibc)
import Glibc
#endif

public enum OwnDirectory {
    /// What stands where the directory belongs, about to be removed.
    public struct Found: Sendable {
        public let path: String
        /// "a symbolic link to /x", "a FIFO", "a file of 12 bytes", ...
        public let what: String
        /// A regular file's first bytes (up to the caller's limit); nil for anything else.
        public let bytes: [UInt8]?
    }

    /// Opens (making it when missing, with `mode`) the directory at `path` below `root`, as
    /// `DirectoryWalk.open` does; a component that is not a directory is told to `removing`, then
    /// taken away. Every component of `path` below `root` must be this program's own. A peer that puts
    /// something back as fast as it is removed is refused after a few rounds (`UnsafeComponent`).
    public static func open(_ path: String, beneath root: String, mode: mode_t, keepingUpTo limit: Int,
                            removing: (Found) -> Void) throws -> FileDescriptor {
        for _ in 0..<4 {
            do { return try DirectoryWalk.open(path, beneath: root, create: mode) } catch let u as UnsafeComponent {
                _ = try takeAway(u.path, beneath: root, keepingUpTo: limit, removing: removing)
            }
        }
        return try DirectoryWalk.open(path, beneath: root, create: mode)
    }

    /// Tells `removing` what non-directory is at `path` (below `root`, its parents real directories),
    /// then removes it and fsyncs its parent; false when a directory stands there now (another
    /// creator won) or nothing does.
    @discardableResult
    public static func takeAway(_ path: String, beneath root: String, keepingUpTo limit: Int,
                                removing: (Found) -> Void) throws -> Bool {
        let parentPath = Path.parent(of: path), name = Path.lastComponent(path)
        let parent = try DirectoryWalk.open(parentPath, beneath: root)
        return try parent.closeAfter {
            let st: stat
            do { st = try parent.stat(name, fullPath: path) } catch let e as Errno where e == .ENOENT { return false }
            let what: String
            var bytes: [UInt8]? = nil
            switch st.st_mode & S_IFMT {
            case S_IFDIR: return false
            case S_IFLNK: what = "a symbolic link" + (linkTarget(name, in: parent).map { " to \($0)" } ?? "")
            case S_IFIFO: what = "a FIFO"
            case S_IFSOCK: what = "a socket"
            case S_IFCHR, S_IFBLK: what = "a device node"
            case S_IFREG:
                what = "a file of \(st.st_size) bytes"
                bytes = (try? parent.openat(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, fullPath: path))
                    .map { f in f.closeAfter { firstBytes(of: f, upTo: limit) } }
            default: what = "not a directory"
            }
            removing(Found(path: path, what: what, bytes: bytes))
            try parent.unlink(name, fullPath: path)
            try parent.sync()
            return true
        }
    }

    /// The target a link names (read, never followed), on one line and bounded, for the log.
    private static func linkTarget(_ name: String, in dir: FileDescriptor) -> String? {
        var buf = [CChar](repeating: 0, count: 256)
        let n = readlinkat(dir.rawValue, name, &buf, buf.count - 1)
        guard n > 0 else { return nil }
        let bytes = buf[..<n].map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self).map { $0.isNewline ? " " : $0 }.reduce(into: "") { $0.append($1) }
    }

    private static func firstBytes(of file: FileDescriptor, upTo limit: Int) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < limit {
            let want = min(chunk.count, limit - out.count)
            let n = chunk.withUnsafeMutableBytes { (try? Sys.read(file.rawValue, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]))) ?? 0 }
            if n <= 0 { break }
            out += chunk[..<n]
        }
        return out
    }
}

// DirectoryWalk: opens a directory inside a tree nobody fully controls (a synced workspace), the way
// Postfix's safe_open.c reasons. The tree's root is the user's choice and may be reached through
// links; below it, a sync tool, a phone or a peer may have put a symlink or a file at any name, so
// each component is opened from its parent's descriptor with O_NOFOLLOW | O_DIRECTORY, one at a
// time. Invariant: the descriptor returned is a directory every component of which below the root
// was a real directory when it was opened; a link is refused by name, never followed, even once.
#if canImport(Glibc)
import Glibc
#endif

/// A component below the root that is not a real directory: refused, never followed.
public struct UnsafeComponent: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable { case symlink, notDirectory }
    public let path: String
    public let kind: Kind
    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }
    public var description: String {
        switch kind {
        case .symlink: return "\(path) is a symbolic link, and nothing inside the workspace is followed; make it a directory"
        case .notDirectory: return "\(path) is not a directory"
        }
    }
}

public enum DirectoryWalk {
    /// The components of `path` below `root`, or nil when `path` is not lexically inside it (a
    /// `..` component counts as outside: where it leads is whatever the user's spelling meant).
    /// Paths are compared as the kernel does, byte for byte: a String's comparison would take two
    /// spellings of "é" for one, and its Character walk costs the writer pages of code.
    public static func components(of path: String, below root: String) -> [String]? {
        let p = Array(path.utf8), r = Array(root.utf8)
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        if p == r { return [] }
        let base = r.last == slash ? r.count : r.count + 1
        guard p.count >= base, p[..<r.count].elementsEqual(r), base == r.count || p[r.count] == slash else { return nil }
        var parts: [String] = []
        var start = base
        while start < p.count {
            var end = start
            while end < p.count, p[end] != slash { end += 1 }
            switch end - start {
            case 0: break
            case 1 where p[start] == dot: break
            case 2 where p[start] == dot && p[start + 1] == dot: return nil
            default: parts.append(String(decoding: p[start..<end], as: UTF8.self))
            }
            start = end + 1
        }
        return parts
    }

    /// Opens `path` (at or below `root`) one component at a time from `root`'s descriptor. With
    /// `create`, a missing component is made with that mode, its parent fsync'd (and a missing root
    /// with its parents, as `Durable.makeDirectory` does). Throws `UnsafeComponent` for a link or
    /// a non-directory below the root, else the errno (ENOENT for a missing one without `create`).
    public static func open(_ path: String, beneath root: String, create: mode_t? = nil) throws -> FileDescriptor {
        guard let names = components(of: path, below: root) else { throw Errno(EINVAL) }
        let top = try openRoot(root, create: create)
        return try top.closeAfter { try walk(names, from: top, at: root, create: create) }
    }

    /// The same walk from `root` already open as `from` (which stays open): a caller that holds a
    /// directory it opened safely goes on from there without walking its path again.
    public static func open(_ path: String, beneath root: String, create: mode_t? = nil,
                            from top: FileDescriptor) throws -> FileDescriptor {
        guard let names = components(of: path, below: root) else { throw Errno(EINVAL) }
        return try walk(names, from: top, at: root, create: create)
    }

    /// A new descriptor for the directory `names` lead to from `top`, however deep (none: `top` again).
    private static func walk(_ names: [String], from top: FileDescriptor, at root: String, create: mode_t?) throws -> FileDescriptor {
        var dir: FileDescriptor? = nil  // nil: still at `top`, which is not ours to close
        var at = root
        for name in names {
            let next = Path.join(at, name)
            let parent = dir ?? top
            let child: FileDescriptor
            do {
                child = try step(into: name, of: parent, path: next, create: create)
            } catch {
                dir?.close()
                throw error
            }
            dir?.close()
            dir = child
            at = next
        }
        if let dir { return dir }
        return try top.openat(".", O_RDONLY | O_DIRECTORY, fullPath: root)
    }

    private static func openRoot(_ root: String, create: mode_t?) throws -> FileDescriptor {
        do {
            return try FileDescriptor.open(root, O_RDONLY | O_DIRECTORY)
        } catch let e as Errno where e == .ENOENT {
            guard let mode = create else { throw e }
            try Durable.makeDirectory(root, mode: mode)
            return try FileDescriptor.open(root, O_RDONLY | O_DIRECTORY)
        }
    }

    /// One component: opened without following it; made first when missing and `create` says so.
    private static func step(into name: String, of dir: FileDescriptor, path: String, create: mode_t?) throws -> FileDescriptor {
        do {
            return try openChild(name, of: dir, path: path)
        } catch let e as Errno where e == .ENOENT {
            guard let mode = create else { throw e }
            var made = true
            do {
                try dir.makeDirectory(name, mode, fullPath: path)
            } catch let e as Errno where e == .EEXIST {
                made = false  // another creator won the race; what it made is checked below like any other
            }
            let child = try openChild(name, of: dir, path: path)
            guard made else { return child }
            do {
                if Durable.isPrivate(mode) { try child.chmod(mode) }
                try dir.sync()
            } catch {
                child.close()
                throw error
            }
            return child
        }
    }

    /// O_DIRECTORY | O_NOFOLLOW answers ENOTDIR for a link as for a file; fstatat tells them apart
    /// so the refusal can say which.
    private static func openChild(_ name: String, of dir: FileDescriptor, path: String) throws -> FileDescriptor {
        do {
            return try dir.openat(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, fullPath: path)
        } catch let e as Errno where e == .ENOTDIR || e == .ELOOP {
            let isLink = (try? dir.stat(name, fullPath: path)).map { $0.st_mode & S_IFMT == S_IFLNK } ?? false
            throw UnsafeComponent(path: path, kind: isLink ? .symlink : .notDirectory)
        }
    }
}

// FileDescriptor: an open descriptor, the operations on it, and the one way this project lets go of
// it. `closeAfter` closes it on every path out of its body, the throwing ones included (swift-system's
// FileHelpers habit), so no branch has to remember a close of its own. Every operation goes through
// the Sys seam; those relative to a directory descriptor (openat, fstatat, mkdirat, renameat,
// unlinkat) take the full path only for the seam, so fault injection and the power-loss model see
// them as the path calls they stand for.
#if canImport(Glibc)
import Glibc
#endif

public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// open(2) through the seam (O_CLOEXEC added).
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws -> FileDescriptor {
        FileDescriptor(rawValue: try Sys.open(path, flags, mode))
    }

    /// openat(2) of `name` in the directory `directory`; the seam sees `fullPath` (see `Sys.openat`).
    public static func open(_ name: String, in directory: FileDescriptor, _ flags: Int32,
                            fullPath: @autoclosure () -> String) throws -> FileDescriptor {
        FileDescriptor(rawValue: try Sys.openat(directory.rawValue, name, flags, fullPath: fullPath()))
    }

    /// The same with the name as a C string (see `Sys.openat(_:cName:_:_:fullPath:)`).
    public static func open(cName: UnsafePointer<CChar>, in directory: FileDescriptor, _ flags: Int32,
                            fullPath: @autoclosure () -> String) throws -> FileDescriptor {
        FileDescriptor(rawValue: try Sys.openat(directory.rawValue, cName: cName, flags, fullPath: fullPath()))
    }

    public func close() { Sys.close(rawValue) }

    /// openat(2) of `name` in this directory (see `open(_:in:_:fullPath:)`).
    public func openat(_ name: String, _ flags: Int32, _ mode: mode_t = 0,
                       fullPath: @autoclosure () -> String) throws -> FileDescriptor {
        FileDescriptor(rawValue: try Sys.openat(rawValue, name, flags, mode, fullPath: fullPath()))
    }

    /// fstat(2).
    public func stat() throws -> Glibc.stat { try Sys.fstat(rawValue) }

    /// fstatat(2) of `name` in this directory, never following a final link.
    public func stat(_ name: String, fullPath: @autoclosure () -> String) throws -> Glibc.stat {
        try Sys.fstatat(rawValue, name, fullPath: fullPath())
    }

    /// fsync(2): for a directory, makes the creates, renames and unlinks in it durable.
    public func sync() throws { try Sys.fsync(rawValue) }

    /// fchmod(2).
    public func chmod(_ mode: mode_t) throws { try Sys.fchmod(rawValue, mode) }

    /// The names in this directory, without "." and ".."; the seam sees `path`.
    public func readDirectory(path: @autoclosure () -> String) throws -> [String] {
        try Sys.readDirectory(rawValue, path: path())
    }

    /// Each name in this directory as its bytes, valid only during the call (see
    /// `Sys.readDirectory(_:path:each:)`).
    public func readDirectory(path: @autoclosure () -> String, each body: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        try Sys.readDirectory(rawValue, path: path(), each: body)
    }

    /// mkdirat(2) of `name` in this directory.
    public func makeDirectory(_ name: String, _ mode: mode_t, fullPath: @autoclosure () -> String) throws {
        try Sys.mkdirat(rawValue, name, mode, fullPath: fullPath())
    }

    /// renameat(2) of `name` in this directory to `newName` in `directory`.
    public func rename(_ name: String, to newName: String, in directory: FileDescriptor,
                       fullPaths: @autoclosure () -> (String, String)) throws {
        try Sys.renameat(rawValue, name, directory.rawValue, newName, fullPaths: fullPaths())
    }

    /// renameat2(2) with RENAME_NOREPLACE: EEXIST when `newName` exists in `directory`; EINVAL
    /// where the file system has no such rename.
    public func renameNoReplace(_ name: String, to newName: String, in directory: FileDescriptor,
                                fullPaths: @autoclosure () -> (String, String)) throws {
        try Sys.renameatNoReplace(rawValue, name, directory.rawValue, newName, fullPaths: fullPaths())
    }

    /// unlinkat(2) of `name` in this directory.
    public func unlink(_ name: String, fullPath: @autoclosure () -> String) throws {
        try Sys.unlinkat(rawValue, name, fullPath: fullPath())
    }

    /// Runs `body`, then closes the descriptor however `body` ended.
    public func closeAfter<R>(_ body: () throws -> R) rethrows -> R {
        defer { close() }
        return try body()
    }
}

extension Array where Element == FileDescriptor {
    /// Runs `body`, then closes every descriptor, in order, however `body` ended.
    public func closeAfter<R>(_ body: () throws -> R) rethrows -> R {
        defer { forEach { $0.close() } }
        return try body()
    }
}

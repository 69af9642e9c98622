// FileDescriptor: an open descriptor and the one way this project lets go of it. `closeAfter` closes
// it on every path out of its body, the throwing ones included (swift-system's FileHelpers habit), so
// no branch has to remember a close of its own; opening and closing go through the Sys seam.
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

    public func close() { Sys.close(rawValue) }

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

    /// The same for an async body (the drain keeps its inboxes' directories open for a whole pass).
    public func closeAfter<R>(_ body: () async throws -> R) async rethrows -> R {
        defer { forEach { $0.close() } }
        return try await body()
    }
}

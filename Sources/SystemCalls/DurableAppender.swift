// DurableAppender: how the op log makes an append durable, a seam of the workspace's options. Every
// caller uses `PlainAppender`, on either I/O backend: an fdatasync on io_uring always runs on a
// kernel worker thread, two more wake-ups on the way to durable (bench/c/uring_tail.c measures it).
#if canImport(Glibc)
import Glibc
#endif

public protocol DurableAppender: AnyObject {
    /// Appends `bytes` to `fd` (opened with O_APPEND) and returns only once they are on stable
    /// storage (fdatasync). On error nothing is promised about how much reached the file; the
    /// caller must treat the tail as possibly torn.
    func appendDurably(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws
}

/// write(2) until done, then fdatasync(2): two syscalls per batch.
public final class PlainAppender: DurableAppender {
    public init() {}
    public func appendDurably(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        try Sys.writeAll(fd, bytes)
        try Sys.fdatasync(fd)
    }
}

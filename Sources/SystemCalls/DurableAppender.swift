// DurableAppender: how the op log makes an append durable. The workspace takes one of these so the
// daemon can hand it the io_uring implementation (write linked to fdatasync) while tests and the
// plain path use `PlainAppender`; both go through the Sys seam.
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

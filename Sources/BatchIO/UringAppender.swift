// UringAppender: the op log's durable append as one io_uring submission — a write linked
// (IOSQE_IO_LINK) to an fdatasync, so the sync starts only if the whole write landed.
// A short write breaks the link (the sync completes -ECANCELED); the rest is resubmitted, linked again.
#if canImport(Glibc)
import Glibc
#endif
import CURingShim
import SystemCalls

final class UringAppender: DurableAppender {
    /// The owner's current ring (made again after a release), nil when io_uring is gone.
    private let currentRing: () -> Ring?

    init(ring: @escaping () -> Ring?) { currentRing = ring }

    func appendDurably(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        guard let ring = currentRing(), ring.broken == nil else {
            return try PlainAppender().appendDurably(fd, bytes)
        }
        var done = 0
        while true {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            var count = rest.count
            var writeCall = SysCall(.uringWrite, fd: fd, data: rest)
            if rest.count > 0 {
                switch Sys.fault(for: writeCall) {
                case .fail(let e)?: throw e
                case .shortWrite(let n)?: count = min(n, rest.count)
                case .shortRead?, nil: break
                }
                writeCall.data = UnsafeRawBufferPointer(rebasing: rest[0..<count])
            }
            // The sync is asked about only when it would really be submitted (this write is meant to
            // finish the buffer), so "fail the Nth fdatasync" counts fdatasyncs, not attempts.
            let syncCall = SysCall(.uringFdatasync, fd: fd)
            let finishing = count == rest.count
            let syncFault = finishing ? Sys.injectedFailure(syncCall, record: false) : nil
            let withSync = finishing && syncFault == nil
            let hasWrite = count > 0
            let ops = (hasWrite ? 1 : 0) + (withSync ? 1 : 0)
            let c = count
            let res = ops == 0 ? [] : ring.run(ops, chunkBoundary: { _ in false }) { k, ud in
                if hasWrite && k == 0 {
                    // Offset -1: the file position, like write(2); with O_APPEND the kernel appends.
                    return CURingShim_queueWrite(ring.handle, fd, rest.baseAddress, UInt32(c),
                                                 UInt64.max, ud, withSync ? 1 : 0)
                }
                return CURingShim_queueFdatasync(ring.handle, fd, ud)
            }
            if hasWrite {
                let w = res[0]
                Sys.record(writeCall, Int(w))
                if w < 0 {
                    if w == -EINTR || w == -EAGAIN { continue }  // nothing written: submit it again
                    throw Errno(-w)
                }
                if w == 0 { throw Errno.EIO }  // a zero-length write for a non-empty buffer is a dead end
                done += Int(w)
            }
            if let e = syncFault {
                if done < bytes.count { continue }  // a real short write: the sync was never due
                Sys.record(syncCall, -Int(e.code))  // after the write, as it would have completed
                throw e
            }
            if withSync {
                let s = res[hasWrite ? 1 : 0]
                if s == -ECANCELED { continue }  // the write was short: resubmit the rest, linked again
                Sys.record(syncCall, Int(s))
                if s < 0 {
                    if s == -EINTR { continue }
                    throw Errno(-s)
                }
                if done == bytes.count { return }
            }
        }
    }
}

// Ring: one io_uring instance and the one loop that submits a batch and collects its completions.
// Invariant: a batch never outlives its buffers — `run` returns only when every SQE it queued has
// completed, or the ring has been torn down (which cancels and waits for whatever was in flight).
#if canImport(Glibc)
import Glibc
#endif
import CURingShim
import SystemCalls

final class Ring {
    let handle: OpaquePointer
    let entries: Int
    /// Set when the kernel refused a submission for good; BatchIO then uses plain syscalls.
    private(set) var broken: Errno?

    /// io_uring_queue_init plus a check that the kernel has both opcodes we use.
    /// Throws the refusal (EPERM under a seccomp sandbox or io_uring_disabled, ENOSYS on old or
    /// stripped kernels, EINVAL when an opcode is missing).
    init(entries: Int = 256) throws {
        var h: OpaquePointer?
        let r = CURingShim_create(UInt32(entries), &h)
        if r < 0 { throw Errno(-r) }
        handle = h!
        self.entries = entries
    }

    deinit {
        if broken == nil { CURingShim_destroy(handle) }
    }

    /// Queues `count` independent operations (`queue(i, userData)` calls one CURingShim_queue*
    /// with that user data), submits them in chunks that fit the ring, and returns each one's
    /// result (>= 0 or -errno).
    func run(_ count: Int, queue: (Int, UInt64) -> Int32) -> [Int32] {
        var results = [Int32](repeating: -ECANCELED, count: count)
        if let b = broken { return [Int32](repeating: -b.code, count: count) }
        var start = 0
        var userData = [UInt64](repeating: 0, count: entries)
        var res = [Int32](repeating: 0, count: entries)
        while start < count {
            let end = min(start + entries, count)
            for i in start..<end {
                // The ring is empty at the start of each chunk and the chunk fits, so this cannot fail.
                let q = queue(i, UInt64(i))
                precondition(q == 0, "io_uring submission queue full inside a chunk")
            }
            var outstanding = end - start
            var first = true
            while outstanding > 0 {
                // The first call submits the chunk and waits for all of it; later calls only wait.
                // io_uring_enter(2) is not a Sys call (the seam sees each op instead), so this is no
                // retry of one: the loop waits until every op of the chunk has completed, and an
                // interrupted or refused-for-now wait has submitted nothing new.
                let r = CURingShim_submitAndWait(handle, UInt32(outstanding))
                if r < 0 {
                    let e = -r
                    if e == EINTR || e == EAGAIN || e == EBUSY {
                        // EAGAIN/EBUSY: the kernel is short of resources or the CQ is full; what
                        // completes below makes room, so reaping and trying again makes progress.
                    } else if first {
                        // A hard refusal with nothing submitted: give up on the ring for good.
                        breakRing(Errno(e))
                        for i in start..<count where results[i] == -ECANCELED { results[i] = -e }
                        return results
                    }
                }
                first = false
                let n = Int(userData.withUnsafeMutableBufferPointer { u in
                    res.withUnsafeMutableBufferPointer { c in
                        CURingShim_reap(handle, u.baseAddress, c.baseAddress, UInt32(entries))
                    }
                })
                for k in 0..<n { results[Int(userData[k])] = res[k] }
                outstanding -= n
            }
            start = end
        }
        return results
    }

    private func breakRing(_ e: Errno) {
        broken = e
        CURingShim_destroy(handle)  // cancels and waits for anything in flight before buffers go
    }
}

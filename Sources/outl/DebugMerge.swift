// DebugMerge: `outl debug-merge`, bench/merge.sh's live merge. It runs on a MainThreadExecutor, as
// outld runs its loop and the Workspace actor, so what it times is what outld does: no thread hop
// between the caller and the actor is counted that outld does not make.
#if canImport(Glibc)
import Glibc
#endif
import MainExecutor
import SystemCalls
import Workspace

enum DebugMerge {
    struct Timings: Sendable {
        var merges: [Double] = [], projections: [Double] = [], applied = 0
    }

    /// Projects what the boot left stale, then for each end in `ends` (offsets into `full`, in
    /// order) delivers `opsFile` as Syncthing does (temp file, fsync, rename) holding `full` up to
    /// that end, and times `mergeForeignOps` and `projectDirtyPages` apart.
    static func run(_ ws: Workspace, full: [UInt8], ends: [Int], opsFile: String) throws -> Timings {
        let executor = MainThreadExecutor()
        nonisolated(unsafe) var result: Result<Timings, Error> = .failure(Errno(EINTR))
        Task.detached(executorPreference: executor) {
            do {
                _ = try await ws.projectDirtyPages()  // what the boot left stale, untimed
                result = .success(try await deliveries(ws, full: full, ends: ends, opsFile: opsFile))
            }
            catch { result = .failure(error) }
            executor.finish()
        }
        executor.run()
        return try result.get()
    }

    private static func deliveries(_ ws: Workspace, full: [UInt8], ends: [Int], opsFile: String) async throws -> Timings {
        func seconds(_ body: () async throws -> Void) async rethrows -> Double {
            let start = monotonicNanoseconds()
            try await body()
            return Double(monotonicNanoseconds() - start) / 1e9
        }
        var t = Timings()
        let tmp = Path.join(Path.parent(of: opsFile), ".syncthing.\(Path.lastComponent(opsFile)).tmp")
        for end in ends {
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try full.withUnsafeBytes { try Sys.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[..<end])) }
            try Sys.fsync(fd)  // as Syncthing does before its rename (sharedPullerState.finalClose)
            Sys.close(fd)
            try Sys.rename(tmp, opsFile)
            t.merges.append(try await seconds { t.applied += try await ws.mergeForeignOps().applied })
            t.projections.append(try await seconds { _ = try await ws.projectDirtyPages() })
        }
        return t
    }
}

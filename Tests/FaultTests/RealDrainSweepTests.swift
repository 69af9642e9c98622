// RealDrainSweepTests: SQLite's loop over the REAL drain (drain_capture_inbox into a real Workspace)
// on both BatchIO backends — fail matching call N for every N with EIO, ENOSPC, EINTR and a short
// write; then a fresh boot must succeed and a clean drain must land every capture exactly once.
import BatchIO
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct RealDrainSweepTests {
    static let faults: [SysFault] = [.fail(.EIO), .fail(.ENOSPC), .fail(.EINTR), .shortWrite(9)]
    static let captures = 3

    /// Runs one drain per N with the injector armed only around the drain; returns N and the ops seen.
    func sweep(_ fault: SysFault, plain: Bool, untilHealed: Bool = false,
               check: (RealRun, Int, DrainReport, FaultInjector) async throws -> Void) async throws -> [String] {
        let base = TempDir("rd-sweep")
        var total = 0, n = 0, kinds: [String] = []
        repeat {
            let run = RealRun(dir: base.sub("r\(n)"))
            let inj = FaultInjector(n == 0 ? nil : fault, at: max(n, 1), untilHealed: untilHealed,
                                    match: SysMatch(under: run.dir))
            inj.armed = false
            let io = BatchIO.make(forcePlain: plain)
            let report: DrainReport = try await withInterposer(inj) {
                _ = try run.deliver(Self.captures)
                let ws = try run.open(io)
                inj.armed = true
                let r = await drain_capture_inbox([run.inbox], into: ws, io: io, observer: SilentDrainObserver(), options: RealRun.options)
                if untilHealed {
                    // The daemon backs off and retries on the same workspace once the disk is back.
                    #expect(r.transientError != nil || r.drained == Self.captures, "run \(n): \(r)")
                    inj.heal()
                    let r2 = await drain_capture_inbox([run.inbox], into: ws, io: io, observer: SilentDrainObserver(), options: RealRun.options)
                    #expect(r2.transientError == nil, "run \(n) after heal: \(r2)\ncalls \(inj.log)")
                }
                inj.armed = false
                await ws.close()
                return r
            }
            if n == 0 {
                total = inj.count
                kinds = inj.log
                #expect(report.drained == Self.captures && report.transientError == nil, "counting run: \(report)")
            }
            try await check(run, n, report, inj)
            n += 1
        } while n <= total
        return kinds
    }

    /// After a faulted run: nothing lost (logged at boot + still waiting = all), nothing rejected,
    /// then a fresh boot and drain land each capture exactly once in the op log and the page.
    func afterFault(_ run: RealRun, _ n: Int, _ report: DrainReport, _ inj: FaultInjector, plain: Bool) async throws {
        #expect(report.rejected == 0 && run.rejected().isEmpty, "run \(n): a transient fault rejected a good file: \(report)")
        let (ws, r) = try await run.bootAndDrain(BatchIO.make(forcePlain: plain))
        await ws.close()
        #expect(r.transientError == nil, "run \(n): clean drain after the fault: \(r)")
        run.expectExactlyOnce(0..<Self.captures, "run \(n), first drain \(report), calls \(inj.log)")
    }

    @Test(arguments: faults, [true, false])
    func a_drain_faulted_at_any_call_loses_nothing_and_a_clean_retry_lands_each_capture_once(
        _ fault: SysFault, plain: Bool
    ) async throws {
        let kinds = try await sweep(fault, plain: plain) { run, n, report, inj in
            if n > 0, inj.injected > 0, fault == .fail(.EINTR) || fault == .shortWrite(9) {
                #expect(report.transientError == nil && report.drained == Self.captures,
                        "run \(n): EINTR and short writes are absorbed by Sys: \(report)")
            }
            try await afterFault(run, n, report, inj, plain: plain)
        }
        // Every op kind the drain does was swept.
        let ops = Set(kinds.map { String($0.split(separator: " ")[0]) })
        let want: Set<String> = plain ? ["open", "write", "fdatasync", "unlink", "rename", "fsync"]
                                      : ["open", "write", "fdatasync", "uringUnlink", "rename", "fsync"]
        if plain || BatchIO.make(forcePlain: false).backend == .uring {
            #expect(want.isSubset(of: ops), "swept \(ops)")
        }
    }

    @Test(arguments: [true, false])
    func a_drain_failing_until_healed_keeps_the_files_and_succeeds_after_heal(plain: Bool) async throws {
        _ = try await sweep(.fail(.ENOSPC), plain: plain, untilHealed: true) { run, n, report, inj in
            if n > 0 && report.transientError != nil {
                // The failing pass kept what it could not make durable (or could not even list it).
                #expect(report.deferred > 0 || report.transientError!.hasPrefix("cannot list"), "run \(n): \(report)")
            }
            try await afterFault(run, n, report, inj, plain: plain)
        }
    }
}

// WorkspaceBoot: opening a workspace for writing. WriteLocks takes the two locks; WorkspaceBoot then
// builds the model, the clock and the boot figures in one pass of the one op-log reader (OpLogFollower),
// whose cursors stay where the boot left them for the first live merge. Invariant (kept by
// WorkspaceCore.init): no actor is minted and no op file touched before both locks are held.
import SystemCalls

/// The machine-wide lock on the workspace directory and the device write lock in the state directory
/// (DeviceState), taken in that order and released together.
struct WriteLocks {
    private(set) var workspaceFD: Int32
    private(set) var deviceFD: Int32

    init(root: String, stateDir: String) throws {
        workspaceFD = try DeviceState.lockWorkspace(root)
        do { deviceFD = try DeviceState.lock(stateDir) } catch { Sys.close(workspaceFD); throw error }
    }

    /// No lock at all: a read-only open beside a running writer.
    static let none = WriteLocks(workspaceFD: -1, deviceFD: -1)
    private init(workspaceFD: Int32, deviceFD: Int32) { self.workspaceFD = workspaceFD; self.deviceFD = deviceFD }

    mutating func release() {
        if deviceFD >= 0 { Sys.close(deviceFD); deviceFD = -1 }
        if workspaceFD >= 0 { Sys.close(workspaceFD); workspaceFD = -1 }
    }
}

struct WorkspaceBoot {
    /// The model and clock of every op read: the model is a function of the set of ops, so each file
    /// is applied as it is read, in any order.
    let model: Model
    let clock: HLClock
    let stats: OpLogReadStats
    /// Ops stamped too far ahead of this machine's clock for it to adopt (HLClock.maxAhead).
    let heldBack: HeldBackStamps

    /// Reads every op file once through `follower` (this device's own file cut at its torn tail),
    /// leaving the cursors where the boot stopped for the first live merge.
    init(follower: OpLogFollower, actor: BlockID, progress: ((Int, Int) -> Void)?) throws {
        var booted = Model()
        var bootClock = HLClock(actor: actor)
        var held = HeldBackStamps()
        // One reading of the wall clock for the whole boot: a boot takes seconds, the bound is minutes.
        let now = wallClockMilliseconds()
        stats = try follower.boot(progress: progress, sizing: { booted.blocks.reserve(logBytes: $0) }) { op, next in
            if let next { booted.blocks.prefetch(next) }
            // This device's own file too: an edit stamped after a held-back field (HLClock.stamp(after:))
            // is as far ahead as that field, and a restart must not adopt it either.
            if !bootClock.observe(op.hlc, now: now) { held.note(op.hlc, kind: op.kind, id: op.id, now: now) }
            booted.apply(op)
        }
        heldBack = held
        booted.alsoTouched.removeAll()  // every page is dirty after the boot anyway
        model = booted
        clock = bootClock
    }
}

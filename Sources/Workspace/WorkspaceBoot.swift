// WorkspaceBoot: opens a workspace for writing: takes the two locks, learns this device's actor, then
// builds the model, the clock and the boot figures in one pass of the one op-log reader (OpLogFollower),
// whose cursors stay where the boot left them for the first live merge. Invariants: no actor is minted
// and no op file touched before both locks are held; a boot that fails releases both.
import SystemCalls

/// The machine-wide lock on the workspace directory and the device write lock in the state directory
/// (DeviceState), taken in that order and released together.
struct WriteLocks {
    private(set) var workspaceFD: Int32
    private(set) var deviceFD: Int32

    init(root: String, stateDir: String) throws {
        // The locks first: a second process must never mint an actor or touch an ops file.
        workspaceFD = try DeviceState.lockWorkspace(root)
        do { deviceFD = try DeviceState.lock(stateDir) } catch { Sys.close(workspaceFD); throw error }
    }

    mutating func release() {
        if deviceFD >= 0 { Sys.close(deviceFD); deviceFD = -1 }
        if workspaceFD >= 0 { Sys.close(workspaceFD); workspaceFD = -1 }
    }
}

struct WorkspaceBoot {
    var locks: WriteLocks
    let actor: BlockID
    /// Every op file's cursor, left where the boot stopped reading.
    let follower: OpLogFollower
    /// The model and clock of every op read: the model is a function of the set of ops, so each file
    /// is applied as it is read, in any order.
    let model: Model
    let clock: HLClock
    let stats: OpLogReadStats

    init(root: String, opsDir: String, stateDir: String, progress: ((Int, Int) -> Void)?,
         log: @escaping (String) -> Void) throws {
        var locks = try WriteLocks(root: root, stateDir: stateDir)
        do {
            let actor = try DeviceState.actor(stateDir)
            let follower = OpLogFollower(dir: opsDir, ownName: OpLogWriter.fileName(actor), log: log)
            var model = Model()
            var clock = HLClock(actor: actor)
            stats = try follower.boot(progress: progress, sizing: { model.blocks.reserve(logBytes: $0) }) { op, next in
                if let next { model.blocks.prefetch(next) }
                clock.observe(op.hlc)
                model.apply(op)
            }
            model.alsoTouched.removeAll()  // every page is dirty after the boot anyway
            self.actor = actor
            self.follower = follower
            self.model = model
            self.clock = clock
        } catch {
            locks.release()
            throw error
        }
        self.locks = locks
    }
}

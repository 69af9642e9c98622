// FaultInjection: SQLite-style I/O error tests through the Sys seam — fail the Nth matching file
// operation (or every one from the Nth until healed) and sweep N over a whole protocol run.
// Invariant: Sys.interposer is a process global, so every installer goes through `withInterposer`,
// which holds one process-wide lock; suites that use it are also `.serialized`.
import Foundation
import SystemCalls

/// Which calls a `FaultInjector` counts. Calls on a file descriptor match by the path the fd was
/// opened with, so "under the test's TempDir" also catches its writes and fsyncs, and calls made
/// by unrelated tests running in parallel in the same process are never counted nor failed.
public struct SysMatch: Sendable {
    public var ops: Set<SysOp>?
    public var under: String?

    /// `ops` nil means every op; `under` nil means every path (only safe when nothing else runs).
    public init(ops: Set<SysOp>? = nil, under: String? = nil) {
        self.ops = ops
        self.under = under.map(SeamPaths.normalize)
    }

    public static let all = SysMatch()
    /// Calls that change what is on disk; reads and stats are left alone.
    public static let mutating: Set<SysOp> = [
        .open, .write, .pwrite, .fsync, .fdatasync, .rename, .unlink, .mkdir, .ftruncate,
        .chmod, .uringUnlink,
    ]
}

/// fd -> path, learnt from every successful open the seam reports, so fd-based calls have a path.
/// Known gap: a close on one thread racing an open of the same fd number on another can drop a
/// mapping; tests that need exactness keep their protocol on one thread.
final class SeamPaths {
    private var byFd: [Int32: String] = [:]

    static func normalize(_ path: String) -> String {
        var p = path
        if !p.hasPrefix("/") {
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buf, buf.count) != nil { p = Path.join(String(cString: buf), p) }
        }
        // Split on the "/" byte, not on Characters (a combining mark can fuse with a "/").
        var parts: [String] = []
        for c in p.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let part = String(decoding: c, as: UTF8.self)
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func isUnder(_ path: String, _ root: String) -> Bool {
        root == "/" || path.utf8.elementsEqual(root.utf8) || path.utf8.starts(with: (root + "/").utf8)
    }

    /// The path a call is about: its own path, else the one its fd was opened with.
    func path(of call: SysCall) -> String? {
        if let p = call.path { return SeamPaths.normalize(p) }
        return call.fd >= 0 ? byFd[call.fd] : nil
    }

    /// Keeps the table in step with opens; call from `after`.
    func track(_ call: SysCall, result: Int) {
        if call.op == .open, result >= 0 { byFd[Int32(result)] = call.path.map(SeamPaths.normalize) }
    }

    /// Forgets a closing fd; call from `before`, while the number is still this caller's (in
    /// `after`, another thread's open may already have been given the same number).
    func forget(_ call: SysCall) {
        if call.op == .close { byFd[call.fd] = nil }
    }
}

/// Fails the Nth call matching `match` (1-based) with `fault`, or every matching call from the
/// Nth on until `heal()` when `untilHealed` is set. With `fault` nil it only counts.
public final class FaultInjector: SysInterposer, @unchecked Sendable {
    public let match: SysMatch
    public let fault: SysFault?
    public let nth: Int
    public let untilHealed: Bool

    private let lock = NSLock()
    private let paths = SeamPaths()
    private var _count = 0
    private var _injected = 0
    private var _healed = false
    private var _armed = true
    private var _log: [String] = []

    public init(_ fault: SysFault? = nil, at nth: Int = 1, untilHealed: Bool = false, match: SysMatch) {
        // An EINTR that never stops would spin forever in Sys's retry loop, which is not a fault
        // any real kernel produces; a single EINTR at the Nth call is the useful test.
        precondition(!(untilHealed && fault == .fail(.EINTR)), "EINTR until healed would never return")
        precondition(nth >= 1, "calls are counted from 1")
        self.fault = fault
        self.nth = nth
        self.untilHealed = untilHealed
        self.match = match
    }

    /// Matching calls seen so far (an EINTR-retried call counts once per attempt).
    public var count: Int { lock.withLock { _count } }
    /// How many times the fault was applied.
    public var injected: Int { lock.withLock { _injected } }
    /// "op path" of every matching call, in order, for failure messages.
    public var log: [String] { lock.withLock { _log } }

    /// Stops injecting: the next matching call reaches the kernel.
    public func heal() { lock.withLock { _healed = true } }

    /// While false, calls are neither counted nor failed, but opens and closes are still tracked:
    /// install the injector before the set-up (a workspace boot opening its op log), arm it around
    /// the protocol under test, so writes on an fd opened during set-up still match `under:`.
    public var armed: Bool {
        get { lock.withLock { _armed } }
        set { lock.withLock { _armed = newValue } }
    }

    public func before(_ call: SysCall) -> SysFault? {
        lock.lock()
        defer {
            paths.forget(call)  // after matching: a close is matched by the path it was opened with
            lock.unlock()
        }
        guard _armed, matches(call) else { return nil }
        _count += 1
        _log.append("\(call.op.rawValue) \(paths.path(of: call) ?? "fd \(call.fd)")")
        guard let fault, !_healed else { return nil }
        let hit = untilHealed ? _count >= nth : _count == nth
        guard hit else { return nil }
        // A short write only means something for a write; other calls at that N pass through.
        if case .shortWrite = fault, !Self.isWrite(call.op) { return nil }
        if case .shortRead = fault, call.op != .read, call.op != .pread { return nil }
        _injected += 1
        return fault
    }

    public func after(_ call: SysCall, result: Int) {
        lock.lock()
        defer { lock.unlock() }
        paths.track(call, result: result)
    }

    private func matches(_ call: SysCall) -> Bool {
        if let ops = match.ops, !ops.contains(call.op) { return false }
        if let root = match.under {
            guard let p = paths.path(of: call) else { return false }
            if !SeamPaths.isUnder(p, root) {
                // A rename into the tree counts by its destination too.
                guard let p2 = call.path2, SeamPaths.isUnder(SeamPaths.normalize(p2), root) else { return false }
            }
        }
        return true
    }

    static func isWrite(_ op: SysOp) -> Bool { op == .write || op == .pwrite }

    // MARK: the sweep

    /// One run of a sweep: the fault was aimed at matching call `n` (0 for the counting run).
    public struct Outcome<T> {
        public let n: Int
        public let result: Result<T, Error>
        /// False when the run had fewer than n matching calls or the fault did not apply (a short
        /// write aimed at a non-write): the run was then fault-free.
        public let injected: Bool
        public let log: [String]
        public var error: Error? { if case .failure(let e) = result { return e }; return nil }
        public var succeeded: Bool { error == nil }
    }

    /// SQLite's loop: runs `body` once with no fault to count its N matching calls, then for n in
    /// 1...N runs it again with `fault` at call n. `body(n)` must set up its own fresh state (e.g.
    /// a new directory per n); `check` runs after each run with no interposer installed, so it may
    /// use Sys freely to inspect what the run left. Returns every outcome, the counting run first.
    @discardableResult
    public static func sweep<T>(
        _ fault: SysFault, match: SysMatch, untilHealed: Bool = false,
        _ body: (Int) throws -> T,
        check: (Outcome<T>) throws -> Void = { _ in }
    ) rethrows -> [Outcome<T>] {
        var outcomes: [Outcome<T>] = []
        let counter = FaultInjector(nil, match: match)
        let first = withInterposer(counter) { Result { try body(0) } }
        let o0 = Outcome(n: 0, result: first, injected: false, log: counter.log)
        try check(o0)
        outcomes.append(o0)
        for n in stride(from: 1, through: counter.count, by: 1) {
            let inj = FaultInjector(fault, at: n, untilHealed: untilHealed, match: match)
            let r = withInterposer(inj) { Result { try body(n) } }
            let o = Outcome(n: n, result: r, injected: inj.injected > 0, log: inj.log)
            try check(o)
            outcomes.append(o)
        }
        return outcomes
    }
}

/// The gate every interposer installation passes: Sys.interposer is one global for the process.
/// A flag, not a mutex, because the async form may release it on another thread than took it.
/// Not re-entrant: a body must not call `withInterposer` again.
private enum InterposerGate {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var held = false

    static func tryAcquire() -> Bool {
        lock.withLock { if held { return false }; held = true; return true }
    }
    static func acquire() { while !tryAcquire() { usleep(2_000) } }
    static func acquire() async { while !tryAcquire() { try? await Task.sleep(nanoseconds: 2_000_000) } }
    static func release() { lock.withLock { held = false } }
}

/// Installs `interposer` for the duration of `body` and always uninstalls it, holding a
/// process-wide gate so two tests never install one at the same time (they would count and fail
/// each other's calls). Code that runs Sys calls on other threads must finish inside `body`.
public func withInterposer<R>(_ interposer: SysInterposer, _ body: () throws -> R) rethrows -> R {
    InterposerGate.acquire()
    Sys.interposer = interposer
    defer {
        Sys.interposer = nil
        InterposerGate.release()
    }
    return try body()
}

/// The async form, for tests that drive the daemon in-process; same gate, same guarantee.
public func withInterposer<R>(_ interposer: SysInterposer, _ body: () async throws -> R) async rethrows -> R {
    await InterposerGate.acquire()
    Sys.interposer = interposer
    defer {
        Sys.interposer = nil
        InterposerGate.release()
    }
    return try await body()
}

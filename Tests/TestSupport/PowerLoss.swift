// PowerLoss: a recording file system behind the Sys seam, and the states a power cut could leave.
// Invariant: the model is conservative — nothing counts as durable unless a fsync says so — so a
// protocol that passes here does not lean on a file system being kinder than POSIX promises.
//
// The model (after ALICE, OSDI 2014):
// * A file's data (write, pwrite, ftruncate, O_TRUNC) is durable once that file is fsync'd or
//   fdatasync'd (fdatasync is treated like fsync for data; no file system we target loses the
//   size an fdatasync needed). A fsync of a file does NOT make its name durable.
// * A name change (create, mkdir, unlink, rename) is durable once its directory is
//   fsync'd. A rename is atomic (every journaling file system commits it as one transaction) and
//   is durable once the destination directory is fsync'd.
// * Anything not yet durable may or may not have reached the disk. The generated states are:
//   only the durable ops; everything; each prefix of the un-synced ops in order; names without
//   un-synced data and data without un-synced names (the ext4 "renamed but empty" bug); and for
//   each un-synced write that grows a file, a torn version of it (half + zeros, half, all zeros).
// * The tree under `root` when the recorder is created is taken as durable. Calls outside `root`
//   are passed through and ignored. Install with `withInterposer` (see FaultInjection.swift).
import Foundation
import SystemCalls

// Relative paths are compared as bytes: a combining mark can fuse with a "/" into one Character.
func starts(_ s: String, _ prefix: String) -> Bool { s.utf8.starts(with: prefix.utf8) }
func dropBytes(_ s: String, _ n: Int) -> String { String(decoding: s.utf8.dropFirst(n), as: UTF8.self) }

/// One state of the tree after a power cut, relative to the recorded root.
public struct CrashState: CustomStringConvertible {
    /// What was kept, e.g. "durable only", "prefix 2/3", "torn #4 half+zeros".
    public let label: String
    /// The crash came after this many recorded ops (0 = before the first one).
    public let point: Int
    /// Regular files by path relative to the root ("inbox/new/x"), with their contents.
    public let files: [String: [UInt8]]
    /// Directories by relative path (the root itself is "" and always present).
    public let directories: Set<String>

    public var description: String { "crash after op \(point), \(label)" }

    public func contents(_ rel: String) -> [UInt8]? { files[rel] }
    public func text(_ rel: String) -> String? { files[rel].map { String(decoding: $0, as: UTF8.self) } }

    /// Names directly inside directory `rel` ("" for the root), sorted.
    public func names(in rel: String) -> [String] {
        let prefix = rel.isEmpty ? "" : rel + "/"
        let all = Array(files.keys) + Array(directories)
        return all.filter { starts($0, prefix) && $0 != rel && !$0.utf8.dropFirst(prefix.utf8.count).contains(UInt8(ascii: "/")) }
            .map { dropBytes($0, prefix.utf8.count) }.sorted()
    }

    /// Writes this state as a real tree under `dir` (created if missing, must be empty), so the
    /// real boot, scan and parse code can run on it. Uses Foundation, not Sys: nothing recorded.
    public func write(to dir: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for d in directories.sorted() where !d.isEmpty {
            try fm.createDirectory(atPath: Path.join(dir, d), withIntermediateDirectories: true)
        }
        for (rel, bytes) in files {
            let p = Path.join(dir, rel)
            try fm.createDirectory(atPath: Path.parent(of: p), withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: p))
        }
    }
}

/// Passes every call through to the kernel and records, under `root`, what reached it.
public final class RecordingFS: SysInterposer, @unchecked Sendable {
    public let root: String

    enum Node: Equatable { case dir, file(Int) }

    enum Op {
        case create(String, Int)
        case mkdir(String)
        /// The node moved, so a durable rename lands even if the name it came from never did
        /// (a temp file's create in an un-synced tmp/ does not stop its rename into the inbox).
        case rename(String, String, Node?)
        case unlink(String)
        /// `grows` marks writes past the end of the file, the ones a power cut can tear.
        case write(Int, offset: Int, bytes: [UInt8], grows: Bool)
        case truncate(Int, Int)
        case syncFile(Int)
        case syncDir(String)
    }

    private enum FdTarget { case file(Int), dir(String), outside }
    private struct FdInfo { var target: FdTarget; var append: Bool; var position: Int }

    private let lock = NSLock()
    private var baseNames: [String: Node] = ["": .dir]
    private var baseData: [Int: [UInt8]] = [:]
    private var live: [String: Node] = ["": .dir]
    private var liveSize: [Int: Int] = [:]
    private var fds: [Int32: FdInfo] = [:]
    private var nextFile = 1
    private var trace: [Op] = []
    private var names: [String] = []  // the file name behind each file id, for descriptions

    /// Snapshots the tree under `root` as it is now; that snapshot is the durable starting point.
    public init(root: String) {
        self.root = SeamPaths.normalize(root)
        let fm = FileManager.default
        if let e = fm.enumerator(atPath: self.root) {
            while let rel = e.nextObject() as? String {
                let p = Path.join(self.root, rel)
                guard let st = try? Sys.lstat(p) else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    baseNames[rel] = .dir
                } else if (st.st_mode & S_IFMT) == S_IFREG {
                    let id = newFile(rel)
                    baseNames[rel] = .file(id)
                    baseData[id] = fm.contents(atPath: p).map { [UInt8]($0) } ?? []
                    liveSize[id] = baseData[id]!.count
                }
            }
        }
        live = baseNames
    }

    /// Recorded ops so far: the crash points are 0...count.
    public var count: Int { lock.withLock { trace.count } }

    /// One line per recorded op, for failure messages.
    public var opDescriptions: [String] {
        lock.withLock { trace.enumerated().map { "\($0.offset + 1): \(describe($0.element))" } }
    }

    // MARK: recording

    /// A close forgets its fd here, before the kernel frees the number: done in `after`, another
    /// thread could already have been handed the same number by open(2) and lose its mapping.
    public func before(_ call: SysCall) -> SysFault? {
        if call.op == .close {
            lock.lock()
            fds[call.fd] = nil  // the fd is gone even on error
            lock.unlock()
        }
        return nil
    }

    public func after(_ call: SysCall, result: Int) {
        lock.lock()
        defer { lock.unlock() }
        if call.op == .close { return }
        guard result >= 0 else { return }
        switch call.op {
        case .open:
            opened(call, fd: Int32(result))
        case .write, .pwrite:
            guard let info = fds[call.fd], case .file(let id) = info.target, let data = call.data else { return }
            let n = min(result, data.count)
            let offset: Int
            if call.op == .pwrite {
                offset = Int(call.offset)
            } else {
                offset = info.append ? liveSize[id, default: 0] : info.position
                if !info.append { fds[call.fd]!.position += n }
            }
            guard n > 0 else { return }
            let size = liveSize[id, default: 0]
            trace.append(.write(id, offset: offset, bytes: Array(data.prefix(n)), grows: offset + n > size))
            liveSize[id] = max(size, offset + n)
        case .ftruncate:
            guard let info = fds[call.fd], case .file(let id) = info.target else { return }
            trace.append(.truncate(id, Int(call.offset)))
            liveSize[id] = Int(call.offset)
        case .fsync, .fdatasync:
            switch fds[call.fd]?.target {
            case .file(let id)?: trace.append(.syncFile(id))
            case .dir(let rel)?: trace.append(.syncDir(rel))
            default: break
            }
        case .rename:
            guard let a = call.path.flatMap(relative), let b = call.path2.flatMap(relative) else {
                // Into or out of the recorded tree: seen from inside, an unlink (a rename in from
                // outside is not modelled; keep protocols' temp dirs under the root).
                if let a = call.path.flatMap(relative) { trace.append(.unlink(a)); Self.remove(&live, a) }
                return
            }
            trace.append(.rename(a, b, live[a]))
            Self.move(&live, a, b)
        case .unlink, .uringUnlink:
            guard let a = call.path.flatMap(relative) else { return }
            trace.append(.unlink(a))
            Self.remove(&live, a)
        case .mkdir:
            guard let a = call.path.flatMap(relative) else { return }
            trace.append(.mkdir(a))
            live[a] = .dir
        default:
            break
        }
    }

    private func opened(_ call: SysCall, fd: Int32) {
        guard let rel = call.path.flatMap(relative) else {
            fds[fd] = FdInfo(target: .outside, append: false, position: 0)
            return
        }
        let append = call.flags & O_APPEND != 0
        let writable = call.flags & (O_WRONLY | O_RDWR) != 0
        switch live[rel] {
        case .dir?:
            fds[fd] = FdInfo(target: .dir(rel), append: false, position: 0)
        case .file(let id)?:
            if writable && call.flags & O_TRUNC != 0 && liveSize[id, default: 0] > 0 {
                trace.append(.truncate(id, 0))
                liveSize[id] = 0
            }
            fds[fd] = FdInfo(target: .file(id), append: append, position: 0)
        case nil:
            let id = newFile(rel)
            if call.flags & O_CREAT != 0 {
                trace.append(.create(rel, id))
                liveSize[id] = 0
            } else {
                // Made behind the seam's back (a test's setup after init): adopt it as durable.
                let bytes = FileManager.default.contents(atPath: Path.join(root, rel)).map { [UInt8]($0) } ?? []
                baseNames[rel] = .file(id)
                baseData[id] = bytes
                liveSize[id] = bytes.count
            }
            live[rel] = .file(id)
            fds[fd] = FdInfo(target: .file(id), append: append, position: 0)
        }
    }

    private func newFile(_ rel: String) -> Int {
        defer { nextFile += 1 }
        names.append(rel)
        return nextFile
    }

    private func relative(_ path: String) -> String? {
        let p = SeamPaths.normalize(path)
        if p == root { return "" }
        guard SeamPaths.isUnder(p, root) else { return nil }
        return dropBytes(p, root == "/" ? 1 : root.utf8.count + 1)
    }

    static func parent(_ rel: String) -> String {
        let b = Array(rel.utf8)
        guard let slash = b.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return String(decoding: b[..<slash], as: UTF8.self)
    }

    static func remove(_ t: inout [String: Node], _ rel: String) {
        t[rel] = nil
        for k in t.keys where starts(k, rel + "/") { t[k] = nil }
    }

    static func move(_ t: inout [String: Node], _ a: String, _ b: String) {
        guard let node = t[a] else { return }
        var moved: [(String, Node)] = [(b, node)]
        for (k, v) in t where starts(k, a + "/") { moved.append((b + dropBytes(k, a.utf8.count), v)) }
        remove(&t, a)
        remove(&t, b)  // a rename replaces its target
        for (k, v) in moved { t[k] = v }
    }

    private func describe(_ op: Op) -> String {
        func f(_ id: Int) -> String { names.indices.contains(id - 1) ? names[id - 1] : "#\(id)" }
        switch op {
        case .create(let p, _): return "create \(p)"
        case .mkdir(let p): return "mkdir \(p)"
        case .rename(let a, let b, _): return "rename \(a) -> \(b)"
        case .unlink(let p): return "unlink \(p)"
        case .write(let id, let off, let bytes, _): return "write \(f(id)) @\(off) \(bytes.count)B"
        case .truncate(let id, let n): return "truncate \(f(id)) to \(n)"
        case .syncFile(let id): return "fsync \(f(id))"
        case .syncDir(let p): return "fsync dir \(p.isEmpty ? "." : p)/"
        }
    }

    // MARK: crash states

    /// Which of ops[0..<point] are durable at `point`: those a later fsync in the prefix covers.
    static func durable(_ ops: ArraySlice<Op>) -> [Bool] {
        var syncedFiles = Set<Int>(), syncedDirs = Set<String>()
        var out = [Bool](repeating: false, count: ops.count)
        for i in stride(from: ops.count - 1, through: 0, by: -1) {
            switch ops[ops.startIndex + i] {
            case .syncFile(let id): syncedFiles.insert(id); out[i] = true
            case .syncDir(let d): syncedDirs.insert(d); out[i] = true
            case .write(let id, _, _, _), .truncate(let id, _): out[i] = syncedFiles.contains(id)
            case .create(let p, _), .mkdir(let p), .unlink(let p):
                out[i] = syncedDirs.contains(parent(p))
            case .rename(_, let b, _): out[i] = syncedDirs.contains(parent(b))
            }
        }
        return out
    }

    static func isName(_ op: Op) -> Bool {
        switch op {
        case .create, .mkdir, .rename, .unlink: return true
        default: return false
        }
    }

    /// The states a power cut right after recorded op `point` (0...count) could leave.
    public func crashStates(at point: Int) -> [CrashState] {
        lock.lock()
        defer { lock.unlock() }
        precondition(point >= 0 && point <= trace.count, "crash point \(point) is outside 0...\(trace.count)")
        let ops = trace[0..<point]
        let isDurable = Self.durable(ops)
        let kept = ops.indices.filter { isDurable[$0] }
        let pending = ops.indices.filter { !isDurable[$0] }

        var states: [CrashState] = []
        var seen = Set<String>()
        func add(_ label: String, _ indices: [Int], torn: (Int, TornKind)? = nil) {
            let s = materialise(label, point, ops, indices.sorted(), torn: torn)
            if seen.insert(Self.fingerprint(s)).inserted { states.append(s) }
        }
        add("durable only", kept)
        add("everything", Array(ops.indices))
        for k in stride(from: 1, to: pending.count, by: 1) {
            add("prefix \(k)/\(pending.count)", kept + pending.prefix(k))
        }
        add("names without un-synced data", kept + pending.filter { Self.isName(ops[$0]) })
        add("data without un-synced names", kept + pending.filter { !Self.isName(ops[$0]) })
        for (k, i) in pending.enumerated() {
            guard case .write(_, _, let bytes, true) = ops[i] else { continue }
            for kind in TornKind.allCases where !(kind == .half && bytes.count < 2) {
                add("torn \(describe(ops[i])) \(kind.rawValue)", kept + pending.prefix(k), torn: (i, kind))
            }
        }
        return states
    }

    /// Every crash state at every point from `from` on, for "after X returned, nothing is lost".
    public func allCrashStates(from: Int = 0) -> [CrashState] {
        (from...count).flatMap { crashStates(at: $0) }
    }

    enum TornKind: String, CaseIterable { case halfZeros = "half+zeros", half = "half", zeros = "zeros" }

    private func materialise(_ label: String, _ point: Int, _ ops: ArraySlice<Op>, _ indices: [Int],
                             torn: (Int, TornKind)?) -> CrashState {
        var tree = baseNames
        var data = baseData
        func apply(_ op: Op) {
            switch op {
            case .create(let p, let id):
                if tree[Self.parent(p)] == .dir { tree[p] = .file(id); if data[id] == nil { data[id] = [] } }
            case .mkdir(let p):
                if tree[Self.parent(p)] == .dir { tree[p] = .dir }
            case .rename(let a, let b, let node):
                guard tree[Self.parent(b)] == .dir, let node else { break }
                if tree[a] == node {
                    Self.move(&tree, a, b)
                } else {
                    Self.remove(&tree, b)
                    tree[b] = node
                    if case .file(let id) = node, data[id] == nil { data[id] = [] }
                }
            case .unlink(let p):
                if case .file? = tree[p] { tree[p] = nil }
            case .write(let id, let off, let bytes, _):
                var d = data[id] ?? []
                if d.count < off + bytes.count { d += [UInt8](repeating: 0, count: off + bytes.count - d.count) }
                d.replaceSubrange(off..<(off + bytes.count), with: bytes)
                data[id] = d
            case .truncate(let id, let n):
                var d = data[id] ?? []
                if d.count > n { d.removeSubrange(n...) } else { d += [UInt8](repeating: 0, count: n - d.count) }
                data[id] = d
            case .syncFile, .syncDir:
                break
            }
        }
        for i in indices { apply(ops[i]) }
        if let (i, kind) = torn, case .write(let id, let off, let bytes, let grows) = ops[i] {
            let half = bytes.count / 2
            switch kind {
            case .halfZeros: apply(.write(id, offset: off, bytes: Array(bytes.prefix(half)) + [UInt8](repeating: 0, count: bytes.count - half), grows: grows))
            case .half: apply(.write(id, offset: off, bytes: Array(bytes.prefix(half)), grows: grows))
            case .zeros: apply(.write(id, offset: off, bytes: [UInt8](repeating: 0, count: bytes.count), grows: grows))
            }
        }
        var files: [String: [UInt8]] = [:]
        var dirs = Set<String>()
        for (p, n) in tree {
            switch n {
            case .dir: dirs.insert(p)
            case .file(let id): files[p] = data[id] ?? []
            }
        }
        return CrashState(label: label, point: point, files: files, directories: dirs)
    }

    static func fingerprint(_ s: CrashState) -> String {
        var h = s.directories.sorted().joined(separator: "\n") + "\n--\n"
        for (p, b) in s.files.sorted(by: { $0.key < $1.key }) { h += "\(p)=\(b.count):\(b.hashValue)\n" }
        return h
    }
}

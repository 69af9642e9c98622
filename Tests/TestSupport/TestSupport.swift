// TestSupport: real temporary directories and real child processes for the test suites.
// Invariant: nothing here fakes the system; tests assert on files the code under test wrote.
import Foundation
import SystemCalls

/// A fresh directory under $TMPDIR (or `base`), removed when the value is released unless
/// OUTL_KEEP_TMP is set.
public final class TempDir: @unchecked Sendable {
    public let path: String
    public init(_ label: String = "outl", under base: String? = nil) {
        let base = base ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(label).XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(p != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
        path = String(cString: p!)
    }
    deinit {
        if ProcessInfo.processInfo.environment["OUTL_KEEP_TMP"] == nil {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
    public func sub(_ name: String) -> String { Path.join(path, name) }
}

/// Where the built executables are: $OUTL_BIN_DIR (set by the Makefile), else .build/debug
/// next to this source tree.
public func binPath(_ name: String) -> String {
    if let dir = ProcessInfo.processInfo.environment["OUTL_BIN_DIR"], !dir.isEmpty {
        return Path.join(dir, name)
    }
    var root = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { root.deleteLastPathComponent() }
    return root.appendingPathComponent(".build/debug/\(name)").path
}

public struct ProcessResult: Sendable {
    public var status: Int32
    public var signaled: Bool
    public var stdout: String
    public var stderr: String
    public var stdoutBytes: [UInt8]
}

/// Runs a program to completion with the given arguments, environment additions and stdin.
/// The child's environment is the test's, minus OUTL_* variables, plus `env`.
@discardableResult
public func run(_ executable: String, _ arguments: [String], env: [String: String] = [:],
                stdin: [UInt8]? = nil, cwd: String? = nil) throws -> ProcessResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    var e = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OUTL_") || $0.key == "OUTL_BIN_DIR" }
    for (k, v) in env { e[k] = v }
    p.environment = e
    if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let inPipe = Pipe()
    p.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
    try p.run()
    if let stdin {
        let h = inPipe.fileHandleForWriting
        DispatchQueue.global().async {
            // A child may exit without reading all of it (a refusal, a limit): EPIPE, not SIGPIPE,
            // which would kill the test runner. SIGPIPE is thread-directed, so blocking it here and
            // taking the pending one afterwards leaves every other thread as it was.
            var pipeOnly = sigset_t(), old = sigset_t()
            sigemptyset(&pipeOnly)
            sigaddset(&pipeOnly, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeOnly, &old)
            stdin.withUnsafeBytes { b in
                var done = 0
                while done < b.count {
                    let n = Glibc.write(h.fileDescriptor, b.baseAddress! + done, b.count - done)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    done += n
                }
            }
            var zero = timespec()
            while sigtimedwait(&pipeOnly, nil, &zero) == SIGPIPE {}
            pthread_sigmask(SIG_SETMASK, &old, nil)
            try? h.close()
        }
    }
    // Read both pipes concurrently so a chatty child cannot block on a full pipe.
    final class Box: @unchecked Sendable { var data = Data() }  // written before group.leave()
    let errBox = Box()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    let errData = errBox.data
    p.waitUntilExit()
    return ProcessResult(
        status: p.terminationStatus,
        signaled: p.terminationReason == .uncaughtSignal,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self),
        stdoutBytes: [UInt8](outData))
}

/// Files in a directory (names only), sorted; empty if it does not exist.
public func listDir(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

public func readText(_ path: String) -> String? {
    guard let d = FileManager.default.contents(atPath: path) else { return nil }
    return String(decoding: d, as: UTF8.self)
}

public func writeText(_ path: String, _ text: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Mounts a tmpfs of `size` (e.g. "64k") at `path` (created if missing), for the full-disk tests.
/// Returns nil once mounted; otherwise why it was refused (not root, a sandbox).
/// The caller unmounts with `unmountTmpfs`.
public func mountTmpfs(at path: String, size: String) -> String? {
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let m = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path])
        return m.status == 0 ? nil : m.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    } catch {
        return "\(error)"
    }
}

/// Whether this machine lets the tests mount a tmpfs (root or CAP_SYS_ADMIN, no sandbox), asked
/// once by mounting and unmounting a tiny one: the full-disk tests are `.enabled(if:)` it, so on a
/// machine that refuses they show as skipped, never as passed.
public let canMountTmpfs: Bool = {
    let probe = TempDir("tmpfs-probe")
    let mnt = probe.path + "/mnt"
    guard mountTmpfs(at: mnt, size: "4k") == nil else { return false }
    unmountTmpfs(mnt)
    return true
}()

/// Lazily unmounts what `mountTmpfs` mounted (lazy: a test's open files must not block it).
public func unmountTmpfs(_ path: String) {
    _ = try? run("/bin/umount", ["-l", path])
}

/// Whether `fd` is open on the file now at `path` (same device and inode): an interposer sees every
/// thread's calls, so one that acts on "a read" must first tell its file's reads from another test's.
public func descriptor(_ fd: Int32, isFileAt path: String) -> Bool {
    var a = stat(), b = stat()
    guard fd >= 0, fstat(fd, &a) == 0, stat(path, &b) == 0 else { return false }
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

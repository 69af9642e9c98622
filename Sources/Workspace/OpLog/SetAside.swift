// SetAside: what others put where this device's own things belong (lines in its own op log, a file
// where one of its directories belongs), kept for a person to look at and never applied, in the state
// directory: device-local, so it never travels with the folder and no peer can replace it. Invariant:
// at most `maxFiles` files and `maxBytes` bytes in all, each at most `maxFileBytes`; the oldest go
// first, each said in one line. Names sort by age (`<13-digit ms>-<what>.kept`).
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class SetAside {
    static let maxFileBytes = 16 << 20
    static let maxBytes = 64 << 20
    static let maxFiles = 32
    static let directoryName = "set-aside"

    let dir: String
    let log: WorkspaceLog

    init(stateDir: String, log: WorkspaceLog) {
        dir = Path.join(stateDir, SetAside.directoryName)
        self.log = log
    }

    /// Keeps `bytes` (their first `maxFileBytes`) in a new file named for `what` (an op file's or a
    /// directory's name), then drops the oldest past the bounds. Returns the new file's path.
    func keep(_ bytes: some Collection<UInt8>, what: String) throws -> String {
        try io(dir) { try Durable.makeDirectory(dir, mode: 0o700) }
        let ms = String(wallClockMilliseconds())
        let stem = what.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" }
        let name = String(repeating: "0", count: max(0, 13 - ms.count)) + ms + "-" + String(stem.prefix(80)) + ".kept"
        let path = Path.join(dir, name)
        try io(path) { try Durable.publish(Array(bytes.prefix(SetAside.maxFileBytes)), to: path, via: path + ".tmp", mode: 0o600) }
        prune()
        return path
    }

    /// Drops the oldest kept files until the newest ones fit the bounds, one line each.
    private func prune() {
        var files = SetAside.files(dir)
        var total = files.reduce(0) { $0 + $1.bytes }
        while let oldest = files.first, files.count > SetAside.maxFiles || total > SetAside.maxBytes, files.count > 1 {
            let path = Path.join(dir, oldest.name)
            // Not made durable: a crash that brings back a dropped file only keeps more than the bound
            // until the next keep drops it again.
            do { try Sys.unlink(path) } catch {
                log.warning("\(path): could not drop this set-aside file (\(error))")
                return
            }
            log.warning("\(path): dropped, the oldest set-aside file (\(oldest.bytes) bytes): what is set aside is kept within \(SetAside.maxFiles) files and \(SetAside.maxBytes >> 20) MiB")
            files.removeFirst()
            total -= oldest.bytes
        }
    }

    /// The kept files in `dir`, oldest first.
    static func files(_ dir: String) -> [(name: String, bytes: Int)] {
        ((try? Sys.readDirectory(dir)) ?? []).filter { $0.hasSuffix(".kept") }.sorted().compactMap { name in
            (try? Sys.lstat(Path.join(dir, name))).map { (name, Int($0.st_size)) }
        }
    }
}

/// What is set aside on this device, for `outl status`.
public struct SetAsideSummary: Sendable, Equatable {
    public var directory: String
    public var files: Int
    public var bytes: Int
}

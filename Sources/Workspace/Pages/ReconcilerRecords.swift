// ReconcilerRecords: what the reconciler keeps device-locally about each page (under the state
// directory's bases/): its last few projections (the bases of a three-way) and the identity its file
// had when this device last left it. Invariant: records are written by rename but never fsync'd, on
// purpose: one lost in a crash only makes the next reconcile of that page more cautious, never wrong.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// A file's identity: (st_dev, st_ino). A page file still the one this device published was edited
/// in place here; another identity came from a sync tool (or an editor saving by rename).
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The identity of what is at `path` now (a symlink's own); nil when nothing is there.
    init?(of path: String) {
        guard let st = try? Sys.lstat(path) else { return nil }
        self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }
}

final class ReconcilerRecords {
    /// How many recent projections of a page are kept.
    static let keptBases = 3
    let dir: String
    let log: (String) -> Void
    /// Cached per page once read: the recent projections, oldest first, and the file's identity.
    private var bases: [BlockID: [[UInt8]]] = [:]
    private var identities: [BlockID: FileIdentity] = [:]

    init(stateDir: String, log: @escaping (String) -> Void) {
        dir = Path.join(stateDir, "bases")
        self.log = log
    }

    func basesFile(_ pageID: BlockID) -> String { Path.join(dir, pageID.description) }
    func identityFile(_ pageID: BlockID) -> String { basesFile(pageID) + ".inode" }

    /// The page's recent projections, oldest first; none when nothing is recorded.
    func projections(of pageID: BlockID) -> [[UInt8]] {
        if let b = bases[pageID] { return b }
        var list: [[UInt8]] = []
        if let bytes = try? Durable.readRegularFile(basesFile(pageID), limit: 256 << 20) {
            // "<length>\n<bytes>" repeated, oldest first; a torn record ends the list.
            var i = 0
            while i < bytes.count {
                guard let nl = bytes[i...].firstIndex(of: 10), let n = Int(String(decoding: bytes[i..<nl], as: UTF8.self)),
                      nl + 1 + n <= bytes.count else { break }
                list.append(Array(bytes[(nl + 1)..<(nl + 1 + n)]))
                i = nl + 1 + n
            }
        }
        bases[pageID] = list
        return list
    }

    /// Records `bytes` as the page's newest projection, keeping the last `keptBases`.
    func rememberProjection(_ bytes: [UInt8], of pageID: BlockID) {
        var list = projections(of: pageID)
        if list.last == bytes { return }
        list.append(bytes)
        if list.count > ReconcilerRecords.keptBases { list.removeFirst(list.count - ReconcilerRecords.keptBases) }
        bases[pageID] = list
        var out: [UInt8] = []
        for b in list { out.append(contentsOf: "\(b.count)\n".utf8); out.append(contentsOf: b) }
        write(basesFile(pageID), out)
    }

    /// The identity the page's file had when this device last projected it; nil when unrecorded.
    func publishedIdentity(of pageID: BlockID) -> FileIdentity? {
        if let i = identities[pageID] { return i }
        guard let bytes = try? Durable.readRegularFile(identityFile(pageID), limit: 128) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        let i = FileIdentity(device: device, inode: inode)
        identities[pageID] = i
        return i
    }

    /// Records the identity of the page's file at `path` as it is now.
    func rememberIdentity(of pageID: BlockID, at path: String) {
        guard let i = FileIdentity(of: path) else { return }
        if publishedIdentity(of: pageID) == i { return }
        identities[pageID] = i
        write(identityFile(pageID), Array("\(i.device) \(i.inode)\n".utf8))
    }

    /// Writes one record by rename, without fsync (see the header); a failure is logged, not thrown.
    private func write(_ file: String, _ bytes: [UInt8]) {
        do {
            try Durable.makeDirectory(dir, mode: 0o700)
            let tmp = file + ".tmp"
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            defer { Sys.close(fd) }
            try Sys.writeAll(fd, bytes)
            try Sys.rename(tmp, file)
        } catch {
            log("\(file): could not keep this reconciler record (\(error)); reconciling stays conservative")
        }
    }
}

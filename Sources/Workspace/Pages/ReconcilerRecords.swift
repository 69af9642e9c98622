// ReconcilerRecords: what the reconciler keeps device-locally about each page (under the state
// directory's bases/, one file per page): its last few projections (the bases of a three-way) and the
// identity its file had when this device last published it. Invariant: records are written by rename
// but never fsync'd, on purpose: one lost in a crash only makes the next reconcile of that page more
// cautious, never wrong.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// A file's identity: (st_dev, st_ino). A page file still the one this device published was edited
/// in place here; another identity came from a sync tool (or an editor saving by rename).
struct FileIdentity: Equatable {
    /// "<device> <inode>"; nil for anything else.
    static func parse(_ b: ArraySlice<UInt8>) -> FileIdentity? {
        let parts = String(decoding: b, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let d = UInt64(parts[0]), let i = UInt64(parts[1]) else { return nil }
        return FileIdentity(device: d, inode: i)
    }

    var device: UInt64
    var inode: UInt64

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    init(_ st: stat) { self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)) }
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
    /// Where an older version kept the identity apart; still read, no longer written.
    func legacyIdentityFile(_ pageID: BlockID) -> String { basesFile(pageID) + ".inode" }

    /// The page's recent projections, oldest first; none when nothing is recorded.
    func projections(of pageID: BlockID) -> [[UInt8]] {
        if let b = bases[pageID] { return b }
        load(pageID)
        return bases[pageID] ?? []
    }

    /// The identity the page's file had when this device last published it; nil when unrecorded.
    func publishedIdentity(of pageID: BlockID) -> FileIdentity? {
        if bases[pageID] == nil { load(pageID) }
        return identities[pageID]
    }

    /// "i <device> <inode>\n" (when known), then "<length>\n<bytes>" per projection, oldest first;
    /// a torn record ends the list.
    private func load(_ pageID: BlockID) {
        var list: [[UInt8]] = []
        if let bytes = try? Durable.readRegularFile(basesFile(pageID), limit: 256 << 20) {
            var i = 0
            if bytes.starts(with: Array("i ".utf8)), let nl = bytes.firstIndex(of: 10) {
                identities[pageID] = FileIdentity.parse(bytes[2..<nl])
                i = nl + 1
            }
            while i < bytes.count {
                guard let nl = bytes[i...].firstIndex(of: 10), let n = Int(String(decoding: bytes[i..<nl], as: UTF8.self)),
                      nl + 1 + n <= bytes.count else { break }
                list.append(Array(bytes[(nl + 1)..<(nl + 1 + n)]))
                i = nl + 1 + n
            }
        }
        if identities[pageID] == nil, let b = try? Durable.readRegularFile(legacyIdentityFile(pageID), limit: 128) {
            identities[pageID] = FileIdentity.parse(b[...])
        }
        bases[pageID] = list
    }

    /// Records `bytes` as the page's newest projection (keeping the last `keptBases`) and
    /// `identity` as its file's: one record, written only when either changed.
    func remember(_ bytes: [UInt8], identity: FileIdentity?, of pageID: BlockID) {
        var list = projections(of: pageID)
        let known = identities[pageID]
        if list.last == bytes && (identity == nil || identity == known) { return }
        if list.last != bytes { list.append(bytes) }
        if list.count > ReconcilerRecords.keptBases { list.removeFirst(list.count - ReconcilerRecords.keptBases) }
        bases[pageID] = list
        if let identity { identities[pageID] = identity }
        var out: [UInt8] = []
        if let i = identities[pageID] { out.append(contentsOf: "i \(i.device) \(i.inode)\n".utf8) }
        for b in list { out.append(contentsOf: "\(b.count)\n".utf8); out.append(contentsOf: b) }
        write(basesFile(pageID), out)
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

// ReconcilerRecords: what the reconciler keeps device-locally about each page (under the state
// directory's bases/, one file per page): its last few projections (the bases of a three-way), the
// identity its file had when this device last published it, and since when each block has been in
// the file (FilePresence). Invariant: records are written by rename but never fsync'd, on purpose:
// one lost in a crash only makes the next reconcile of that page more cautious, never wrong.
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
    let log: WorkspaceLog
    /// Held per page once read, for the pages used last (`held`): the recent projections, oldest
    /// first, the file's identity and its presence.
    private var bases: [BlockID: [[UInt8]]] = [:]
    private var identities: [BlockID: FileIdentity] = [:]
    private var presences: [BlockID: FilePresence] = [:]
    /// The pages whose records are held, least recently used first. At most `keptPages` of them,
    /// and past `keptBytes` of projections only the one in use: every page's projections held at
    /// once cost as much as the pages themselves (a start that wrote 10,000 pages of a
    /// 1,000,000-op workspace went from 146 to 466 MiB resident). A page let go is read from its
    /// record again when it is next needed: every change is written to it as it is made, and one
    /// whose write failed is lost as in a crash (see the header: reconciling is more cautious).
    private var held: [BlockID] = []
    static let keptPages = 64
    static let keptBytes = 32 << 20

    /// How many pages' records are held now (for tests).
    var pagesHeld: Int { held.count }

    init(stateDir: String, log: WorkspaceLog) {
        dir = Path.join(stateDir, "bases")
        self.log = log
    }

    func basesFile(_ pageID: BlockID) -> String { Path.join(dir, pageID.description) }
    /// Where an older version kept the identity apart; still read, no longer written.
    func legacyIdentityFile(_ pageID: BlockID) -> String { basesFile(pageID) + ".inode" }

    /// The page's recent projections, oldest first; none when nothing is recorded.
    func projections(of pageID: BlockID) -> [[UInt8]] {
        use(pageID)
        return bases[pageID] ?? []
    }

    /// The identity the page's file had when this device last published it; nil when unrecorded.
    func publishedIdentity(of pageID: BlockID) -> FileIdentity? {
        use(pageID)
        return identities[pageID]
    }

    /// Since when each block has been in the page's file, as far as this device wrote and read it.
    func presence(of pageID: BlockID) -> FilePresence {
        use(pageID)
        return presences[pageID] ?? FilePresence()
    }

    /// The page's own file was read holding `ids` (FilePresence.read).
    func noteRead(_ ids: Set<BlockID>, of pageID: BlockID) {
        use(pageID)
        var p = presences.removeValue(forKey: pageID) ?? FilePresence()
        let out = p.read(ids)
        presences[pageID] = p
        if !out.isEmpty { keep(out, of: pageID) }
    }

    /// Reads the page's record unless it is held, and lets go of the pages used longest ago.
    private func use(_ pageID: BlockID) {
        if bases[pageID] == nil { load(pageID) }
        if let k = held.lastIndex(of: pageID) {
            if k != held.count - 1 { held.remove(at: k); held.append(pageID) }
        } else {
            held.append(pageID)
        }
        while held.count > 1, held.count > ReconcilerRecords.keptPages || heldBytes > ReconcilerRecords.keptBytes {
            let page = held.removeFirst()
            setBases(nil, of: page)
            identities[page] = nil
            presences[page] = nil
            entryCounts[page] = nil
        }
    }

    /// The bytes of the projections held, kept as they change (`setBases`): `use` asks it on every
    /// call, several per page projected.
    private var heldBytes = 0

    private func setBases(_ list: [[UInt8]]?, of pageID: BlockID) {
        heldBytes -= (bases[pageID] ?? []).reduce(0) { $0 + $1.count }
        heldBytes += (list ?? []).reduce(0) { $0 + $1.count }
        bases[pageID] = list
    }

    /// Entries, oldest first: "i <device> <inode>\n" (the published identity), "<length>\n<bytes>"
    /// (a projection), "+<kept> <length>\n<bytes>" (a projection: the first `kept` bytes of the one
    /// before, then these), or a line of FilePresence ("f", "s", "b"); the last identity and the
    /// last `keptBases` projections count. Appended, and rewritten whole only when it holds
    /// `compactAfter` entries, so a projection that only added at its end costs a write of what it
    /// added. A torn entry ends the list.
    private func load(_ pageID: BlockID) {
        var list: [[UInt8]] = []
        var entries = 0
        if let bytes = try? Durable.readRegularFile(basesFile(pageID), limit: 256 << 20) {
            var i = 0
            defer {
                // A torn entry (a crash in an append): what follows it could not be read, so the
                // next remember rewrites the record whole.
                if i < bytes.count { entries = ReconcilerRecords.compactAfter + 1 }
            }
            while i < bytes.count {
                guard let nl = bytes[i...].firstIndex(of: 10) else { break }
                if bytes[i] == UInt8(ascii: "i") {
                    // "i <device> <inode>": a shorter line is damage, read as a torn entry (its slice
                    // would start past its end).
                    guard nl >= i + 2 else { break }
                    if let id = FileIdentity.parse(bytes[(i + 2)..<nl]) { identities[pageID] = id }
                    i = nl + 1
                } else if bytes[i] == UInt8(ascii: "+") {
                    let f = String(decoding: bytes[(i + 1)..<nl], as: UTF8.self).split(separator: " ")
                    guard f.count == 2, let kept = Int(f[0]), let n = Int(f[1]), kept >= 0, n >= 0,
                          let before = list.last, kept <= before.count, nl + 1 + n <= bytes.count else { break }
                    list.append(Array(before[..<kept]) + bytes[(nl + 1)..<(nl + 1 + n)])
                    if list.count > ReconcilerRecords.keptBases { list.removeFirst() }
                    i = nl + 1 + n
                } else if !(bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9")) {
                    var p = presences[pageID] ?? FilePresence()
                    guard p.replay(bytes[i..<nl]) else { break }
                    presences[pageID] = p
                    i = nl + 1
                } else {
                    guard let n = Int(String(decoding: bytes[i..<nl], as: UTF8.self)), nl + 1 + n <= bytes.count else { break }
                    list.append(Array(bytes[(nl + 1)..<(nl + 1 + n)]))
                    if list.count > ReconcilerRecords.keptBases { list.removeFirst() }
                    i = nl + 1 + n
                }
                entries += 1
            }
        }
        if identities[pageID] == nil, let b = try? Durable.readRegularFile(legacyIdentityFile(pageID), limit: 128) {
            identities[pageID] = FileIdentity.parse(b[...])
        }
        setBases(list, of: pageID)
        entryCounts[pageID] = entries
    }

    /// How many entries each page's record holds (appends since its last rewrite).
    private var entryCounts: [BlockID: Int] = [:]
    static let compactAfter = 64

    /// Records `bytes`, showing the blocks `ids`, as the page's newest projection (keeping the last
    /// `keptBases`), what the file held just before (`fileHeld`, FilePresence.projected; nil: what
    /// it was last known to hold), and `identity` as its file's, by one append of what changed.
    func remember(_ bytes: [UInt8], ids: [BlockID], fileHeld: ((BlockID) -> Bool)?, identity: FileIdentity?, of pageID: BlockID) {
        var list = projections(of: pageID)
        let known = identities[pageID]
        // Taken out while it changes, so its tables are changed in place, not copied.
        var p = presences.removeValue(forKey: pageID) ?? FilePresence()
        // The same bytes again still show blocks anew when a reading found the file without them.
        let newBytes = !sameBytes(list.last, bytes), newIdentity = identity != nil && identity != known
        let newPresence = newBytes || !p.shows(exactly: ids)
        if !newPresence && !newIdentity { presences[pageID] = p; return }
        // A record written whole (the first, or one past `compactAfter` appends) is spelled from the
        // state below: the append form is then not built at all (for a big first projection it
        // was a second copy of the page and of every id).
        let appends = entryCounts[pageID] ?? 0
        let whole = appends == 0 || appends >= ReconcilerRecords.compactAfter
        var out: [UInt8] = []
        if newBytes {
            if !whole {
                let kept = list.last.map { ReconcilerRecords.commonPrefix($0, bytes) } ?? 0
                if kept >= 64 {
                    out.append(contentsOf: "+\(kept) \(bytes.count - kept)\n".utf8)
                    bytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[kept...])) }
                } else {
                    out.append(contentsOf: "\(bytes.count)\n".utf8); out.append(contentsOf: bytes)
                }
            }
            list.append(bytes)
            if list.count > ReconcilerRecords.keptBases { list.removeFirst(list.count - ReconcilerRecords.keptBases) }
            setBases(list, of: pageID)
        }
        if newPresence { out.append(contentsOf: p.projected(ids, fileHeld: fileHeld, spelling: !whole)) }
        presences[pageID] = p
        if let identity, newIdentity {
            identities[pageID] = identity
            if !whole { out.append(contentsOf: "i \(identity.device) \(identity.inode)\n".utf8) }
        }
        if whole { writeWhole(pageID) } else { keep(out, of: pageID) }
    }

    /// How many bytes `a` and `b` share at their start.
    static func commonPrefix(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                let n = min(x.count, y.count)
                var i = 0
                while i + 8 <= n, x.loadUnaligned(fromByteOffset: i, as: UInt64.self) == y.loadUnaligned(fromByteOffset: i, as: UInt64.self) { i += 8 }
                while i < n, x[i] == y[i] { i += 1 }
                return i
            }
        }
    }

    /// Appends `out` to the page's record, or writes the record whole once it holds `compactAfter`
    /// appends (or one failed).
    private func keep(_ out: [UInt8], of pageID: BlockID) {
        let count = (entryCounts[pageID] ?? 0) + 1
        if count <= ReconcilerRecords.compactAfter, append(pageID, out) {
            entryCounts[pageID] = count
            return
        }
        writeWhole(pageID)
    }

    /// Writes the page's record whole from what is kept of it: its identity, its projections (each
    /// written from its own bytes, not copied into one buffer first) and its presence.
    private func writeWhole(_ pageID: BlockID) {
        var pieces: [[UInt8]] = []
        if let i = identities[pageID] { pieces.append(Array("i \(i.device) \(i.inode)\n".utf8)) }
        for b in bases[pageID] ?? [] { pieces.append(Array("\(b.count)\n".utf8)); pieces.append(b) }
        if let p = presences[pageID] { pieces.append(p.spelled()) }
        write(basesFile(pageID), pieces, page: pageID)
        entryCounts[pageID] = 1
    }

    /// Records open for appending, a few at a time: a page projected again appends without opening
    /// its record again. Dropped when the record is written whole (a new file) or an append fails.
    private var appending: [BlockID: Int32] = [:]
    static let appendingKept = 16

    /// Appends to an existing record (never fsync'd, see the header); false when there is none yet
    /// or the append failed, so the record is written whole.
    private func append(_ pageID: BlockID, _ bytes: [UInt8]) -> Bool {
        let fd: Int32
        if let open = appending[pageID] {
            fd = open
        } else {
            guard let opened = try? Sys.open(basesFile(pageID), O_WRONLY | O_APPEND | O_NOFOLLOW, 0) else { return false }
            if appending.count >= ReconcilerRecords.appendingKept, let (other, old) = appending.first {
                Sys.close(old)
                appending[other] = nil
            }
            appending[pageID] = opened
            fd = opened
        }
        do { try Sys.writeAll(fd, bytes); return true } catch {
            stopAppending(pageID)
            return false
        }
    }

    private func stopAppending(_ pageID: BlockID) {
        if let fd = appending.removeValue(forKey: pageID) { Sys.close(fd) }
    }

    deinit { close() }

    /// Closes the records held open for appending.
    func close() {
        for fd in appending.values { Sys.close(fd) }
        appending.removeAll()
    }

    /// Writes one record by rename, without fsync (see the header); a failure is logged, not thrown.
    private func write(_ file: String, _ pieces: [[UInt8]], page: BlockID) {
        stopAppending(page)
        do {
            try Durable.makeDirectory(dir, mode: 0o700)
            let tmp = file + ".tmp"
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            defer { Sys.close(fd) }
            for bytes in pieces { try Sys.writeAll(fd, bytes) }
            try Sys.rename(tmp, file)
        } catch {
            log.warning("\(file): could not keep this reconciler record (\(error)); reconciling stays conservative",
                        ["OUTL_PAGE": page.description])
        }
    }
}

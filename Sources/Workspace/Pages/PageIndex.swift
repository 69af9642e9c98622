// PageIndex: where and as what this device last left each page's file: the file's stamp (device,
// inode, size, mtime, ctime, read through the descriptor it was written or read by) and the digest of
// what the model rendered into it (PageDigest). A start reads a page's file only when either changed.
// Invariants: an entry (stamp S, digest D) is recorded only when a file with stamp S held exactly
// what D renders to, so an entry is true whenever it is old; the record is appended, never fsync'd,
// and every line carries its CRC: a line lost or torn in a crash only makes its page read again.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

struct PageIndexEntry: Equatable {
    /// The file's stamp; nil when the page had no file (it rendered to nothing).
    var stamp: FileStamp?
    /// PageDigest of the model the file was rendered from.
    var digest: UInt64
    /// FNV-1a of the file's path relative to the root: the page's file may move (another journal
    /// spelling appears), and a stamp found at another path says nothing.
    var pathHash: UInt64

    static func pathHash(_ rel: String) -> UInt64 { FNV1a.hash(rel.utf8) }
}

final class PageIndex {
    /// Bumped when what an entry means changes; a record of another version (or renderer version,
    /// or page-properties setting) is read as empty, so every page is read once and recorded again. 2: a packed capture time
    /// (CompactTimestamp) is digested as packed.
    static let version = 2
    let path: String
    private let header: String
    private(set) var entries: [BlockID: PageIndexEntry] = [:]
    /// Lines the record holds (its header excluded): rewritten whole once they pass twice the pages.
    private var lines = 0
    private var pending: [UInt8] = []
    private var fd: Int32 = -1
    private var mustRewrite = false
    /// A failed write is said once, not at every pass.
    private var warned = false
    let log: WorkspaceLog

    init(stateDir: String, pageProperties: PageProperties = .none, log: WorkspaceLog) {
        path = Path.join(stateDir, "page-index")
        // The setting is part of what a page renders to: changed, every page is read once.
        header = "outl-page-index \(PageIndex.version) renderer \(PageRenderer.formatVersion) page-properties \(pageProperties.description.split(separator: " ").joined(separator: ","))\n"
        self.log = log
        load()
    }

    private func load() {
        guard let bytes = try? Durable.readRegularFile(path, limit: 256 << 20),
              bytes.starts(with: header.utf8) else { mustRewrite = true; return }
        var i = header.utf8.count
        while i < bytes.count {
            guard let nl = bytes[i...].firstIndex(of: 10) else { mustRewrite = true; break }  // torn
            if let (id, e) = PageIndex.parse(bytes[i..<nl]) { entries[id] = e } else { mustRewrite = true }
            lines += 1
            i = nl + 1
        }
    }

    /// "<page> <dev> <ino> <size> <mtime> <ctime> <digest> <pathhash> <crc>" ("-" for the five stamp
    /// fields of a page without a file), the CRC32C of all before its space.
    static func line(_ id: BlockID, _ e: PageIndexEntry) -> [UInt8] {
        var s = "\(id) "
        if let t = e.stamp { s += "\(t.device) \(t.inode) \(t.size) \(t.mtimeNs) \(t.ctimeNs) " } else { s += "- - - - - " }
        s += hex(e.digest) + " " + hex(e.pathHash)
        var b = Array(s.utf8)
        let crc = b.withUnsafeBytes { CRC32C.checksum($0) }
        b.append(contentsOf: " \(hex(UInt64(crc)))\n".utf8)
        return b
    }

    static func parse(_ line: ArraySlice<UInt8>) -> (BlockID, PageIndexEntry)? {
        guard let sp = line.lastIndex(of: 32) else { return nil }
        let crc = line[line.startIndex..<sp].withUnsafeBytes { CRC32C.checksum($0) }
        guard UInt64(String(decoding: line[(sp + 1)...], as: UTF8.self), radix: 16) == UInt64(crc) else { return nil }
        let f = String(decoding: line[line.startIndex..<sp], as: UTF8.self).split(separator: " ")
        guard f.count == 8, let id = BlockID(String(f[0])), let digest = UInt64(f[6], radix: 16),
              let pathHash = UInt64(f[7], radix: 16) else { return nil }
        var stamp: FileStamp? = nil
        if f[1] != "-" {
            guard let d = UInt64(f[1]), let n = UInt64(f[2]), let size = Int64(f[3]), let m = Int64(f[4]),
                  let c = Int64(f[5]) else { return nil }
            stamp = FileStamp(device: d, inode: n, size: size, mtimeNs: m, ctimeNs: c)
        }
        return (id, PageIndexEntry(stamp: stamp, digest: digest, pathHash: pathHash))
    }

    static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// Records that the page's file (at `rel`, with `stamp`; nil: no file) now holds what the model of
    /// `digest` renders to. Kept in memory; `flush` writes it.
    func record(_ id: BlockID, stamp: FileStamp?, digest: UInt64, rel: String) {
        let e = PageIndexEntry(stamp: stamp, digest: digest, pathHash: PageIndexEntry.pathHash(rel))
        if entries[id] == e { return }
        entries[id] = e
        pending.append(contentsOf: PageIndex.line(id, e))
        lines += 1
    }

    /// Writes what was recorded since the last flush: one append, or the record whole when it is
    /// new, unreadable in part, or holds more than twice as many lines as pages. A failure is logged
    /// and costs only reads at the next start.
    func flush() {
        if pending.isEmpty && !mustRewrite { return }
        if !mustRewrite && lines <= 2 * entries.count + 64 && append() { pending = []; return }
        rewrite()
    }

    private func append() -> Bool {
        if fd < 0 {
            guard let opened = try? Sys.open(path, O_WRONLY | O_APPEND | O_NOFOLLOW, 0) else { return false }
            fd = opened
        }
        do { try Sys.writeAll(fd, pending); return true } catch {
            close()
            return false
        }
    }

    private func rewrite() {
        close()
        var whole = Array(header.utf8)
        for (id, e) in entries.sorted(by: { $0.key < $1.key }) { whole.append(contentsOf: PageIndex.line(id, e)) }
        do {
            try Durable.makeDirectory(Path.parent(of: path), mode: 0o700)
            let tmp = path + ".tmp"
            let t = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            defer { Sys.close(t) }
            try Sys.writeAll(t, whole)
            try Sys.rename(tmp, path)
            lines = entries.count
            pending = []
            mustRewrite = false
            warned = false
        } catch {
            if !warned { log.warning("\(path): could not keep the page index (\(error)); the next start reads every page file again") }
            warned = true
            pending = []
            mustRewrite = true
        }
    }

    func close() {
        if fd >= 0 { Sys.close(fd); fd = -1 }
    }

    deinit { close() }
}

// AttachmentStage: a capture's attachments from its inbox into the workspace's assets/, before its
// block is appended. Invariants: an attachment is taken only under the one name its capture may give
// it (`<ULID>.<k>.att`), as a regular file of ours with one link, opened without following links,
// and only when its size and SHA-256 match what the capture file says (else the capture waits, for
// a sync still under way, and after `attachmentWaitSeconds` is set aside); its asset's name comes
// from its name, its capture's time and its hash, so a replay or a second device writes the same
// name with the same bytes (and the same mtime, the capture's time: a sync tool sees one file); an
// asset is durable (file and assets/ fsync'd) before the block that links it can be appended; an
// existing asset is never overwritten with other bytes.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import CaptureInbox
import SystemCalls
import Workspace

/// The workspace's assets/ directory, opened (and made, 0755) the first time a capture needs it,
/// beneath the root without following a link: a linked assets/ is refused, its target untouched.
final class AssetsDirectory {
    let root: String
    var path: String { Path.join(root, "assets") }
    private var fd: FileDescriptor?
    /// Something was renamed into it since the last `sync`.
    var unsynced = false

    init(root: String) { self.root = root }

    func open() throws -> FileDescriptor {
        if let fd { return fd }
        let d = try DirectoryWalk.open(path, beneath: root, create: 0o755)
        fd = d
        return d
    }

    func sync() throws {
        guard unsynced, let fd else { return }
        try fd.sync()
        unsynced = false
    }

    func close() { fd?.close(); fd = nil }
}

/// An attachment that is not (yet) what its capture says.
enum AttachmentWait: Error { case waiting(String) }

enum AttachmentStage {
    /// Checks and stores every attachment of `capture`; the links its block gets.
    static func store(_ capture: DecodedCapture, entry: PendingEntry, inbox: String, arrivedAt: Int, assets: AssetsDirectory,
                      options: DrainOptions, now: Int = time(nil)) -> Verdict<[AssetLink]> {
        var links: [AssetLink] = []
        for (i, a) in capture.attachments.enumerated() {
            let index = i + 1
            let what = "attachment \(index) (\(CaptureFile.oneLine(a.name, max: 60)))"
            let expected = CaptureName.attachmentFileName(for: entry.id, index: index)
            guard a.file == expected else {
                return .setAside("\(what): its file is \(CaptureFile.oneLine(a.file, max: 60)), but a capture names only its own attachments (\(expected))")
            }
            guard a.size <= options.attachmentLimit else {
                return .setAside("\(what): \(a.size) bytes, over the attachment limit of \(options.attachmentLimit) bytes")
            }
            switch storeOne(a, file: expected, entry: entry, inbox: inbox, assets: assets) {
            case .land(let link): links.append(link)
            case .setAside(let why): return .setAside("\(what): \(why)")
            case .keep(let why): return .keep("\(what): \(why)")
            case .gone: return .gone
            case .wait(let why, _):
                // Bounded by the capture file's change time here (a sync tool cannot forge it).
                let waited = now - arrivedAt
                if waited >= options.attachmentWaitSeconds {
                    return .setAside("\(what): \(why), still after \(waited) s (the wait is \(options.attachmentWaitSeconds) s)")
                }
                return .wait("\(what): \(why)", retryAt: arrivedAt + options.attachmentWaitSeconds)
            }
        }
        do { try assets.sync() } catch { return .keep("assets/ not synced: \(error)") }
        return .land(links)
    }

    /// One attachment, checked and stored; the link to its asset.
    private static func storeOne(_ a: Attachment, file: String, entry: PendingEntry, inbox: String, assets: AssetsDirectory) -> Verdict<AssetLink> {
        let source: FileDescriptor
        switch InboxEntry.openUntrusted(file, in: entry.directory, fullPath: Path.join(inbox, file), missing: .wait("has not arrived")) {
        case .land(let f): source = f
        case let other: return other.then { _ in .gone }
        }
        return source.closeAfter {
            let st: stat
            do { st = try Sys.fstat(source.rawValue) } catch { return .keep("\(error)") }
            if let why = InboxEntry.refusal(st) { return .setAside(why) }
            guard Int(st.st_size) == a.size else { return .wait("\(st.st_size) of its \(a.size) bytes are here") }
            let name = AssetNames.name(for: a.name, captureMs: entry.id.timestampMs, sha256: a.sha256)
            let mtime = timespec(tv_sec: Int(entry.id.timestampMs / 1000), tv_nsec: Int(entry.id.timestampMs % 1000) * 1_000_000)
            for candidate in [name, AssetNames.name(for: a.name, captureMs: entry.id.timestampMs, sha256: a.sha256, long: true)] {
                switch place(a, from: source, as: candidate, entry: entry, mtime: mtime, assets: assets) {
                case .land: return .land(AssetLink(label: a.name, file: candidate))
                case .gone: continue  // taken by other bytes: the longer name
                case .setAside(let why): return .setAside(why)
                case .keep(let why): return .keep(why)
                case .wait(let why, _): return .wait(why)
                }
            }
            return .setAside("assets/\(name) and its longer name both hold other bytes; nothing is overwritten")
        }
    }

    /// Puts the attachment's bytes at assets/`name`: already there with the same bytes, copied
    /// there now, or `.gone` when that name holds other bytes.
    private static func place(_ a: Attachment, from source: FileDescriptor, as name: String, entry: PendingEntry,
                              mtime: timespec, assets: AssetsDirectory) -> Verdict<Void> {
        let dir: FileDescriptor
        do { dir = try assets.open() } catch let e as UnsafeComponent {
            // A person's problem, not the machine's: this capture waits (and says so), no other does.
            return .wait("assets/ refused: \(e)")
        } catch let e as Errno where e == .ENOTDIR {
            return .wait("assets/ is not a directory")
        } catch { return .keep("assets/ cannot be opened: \(error)") }
        let path = Path.join(assets.path, name)
        switch existing(name, in: dir, path: path, size: a.size, sha256: a.sha256) {
        case .same: return .land(())
        case .other: return .gone
        case .failed(let why): return .keep(why)
        case .missing: break
        }
        // Copied under a temp name of this capture's (one a crash left is removed first, and the new
        // one made with O_EXCL: never written through whatever else has that name), stamped with
        // the capture's time, fsync'd (the stamp with it), then renamed into place.
        let temp = ".outl-\(entry.id.string)-\(a.sha256.prefix(16)).tmp"
        let tempPath = Path.join(assets.path, temp)
        do {
            do { try dir.unlink(temp, fullPath: tempPath) } catch let e as Errno where e == .ENOENT {}
            let out = try dir.openat(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644, fullPath: tempPath)
            let (size, hash) = try out.closeAfter { () throws -> (Int, String) in
                guard lseek(source.rawValue, 0, SEEK_SET) == 0 else { throw Errno.current }
                let copied = try AttachmentDelivery.copy(from: source.rawValue, to: out.rawValue, limit: a.size)
                if copied.bytes == a.size && copied.sha256 == a.sha256 {
                    var times = [mtime, mtime]
                    if futimens(out.rawValue, &times) != 0 { throw Errno.current }
                    try Sys.fsync(out.rawValue)
                }
                return copied
            }
            guard size == a.size, hash == a.sha256 else {
                try? dir.unlink(temp, fullPath: tempPath)
                return .wait("its bytes do not match its sha256 yet")
            }
            try dir.rename(temp, to: name, in: dir, fullPaths: (tempPath, path))
            assets.unsynced = true
            return .land(())
        } catch {
            try? dir.unlink(temp, fullPath: tempPath)
            let e: Errno?
            switch error {
            case let x as Errno: e = x
            case AttachmentError.read(let x), AttachmentError.write(let x): e = x
            default: e = nil
            }
            // The machine's trouble (a full disk, EIO) is retried; anything else sets the capture aside.
            return e.map { $0.isTransient } ?? true ? .keep("cannot copy into assets/: \(error)") : .setAside("cannot copy into assets/: \(error)")
        }
    }

    enum Existing { case missing, same, other, failed(String) }

    /// What assets/`name` holds: nothing, these very bytes, or something else (a link, a
    /// directory, other bytes: never followed, never overwritten).
    private static func existing(_ name: String, in dir: FileDescriptor, path: String, size: Int, sha256: String) -> Existing {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(name, in: dir, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, fullPath: path)
        } catch let e as Errno where e == .ENOENT {
            return .missing
        } catch let e as Errno where e.isTransient {
            return .failed("assets/\(name): \(e)")
        } catch {
            return .other
        }
        return fd.closeAfter {
            guard let st = try? Sys.fstat(fd.rawValue), st.st_mode & S_IFMT == S_IFREG, Int(st.st_size) == size else { return .other }
            guard let (n, hash) = try? AttachmentDelivery.copy(from: fd.rawValue, to: nil, limit: size) else { return .failed("assets/\(name) cannot be read") }
            return n == size && hash == sha256 ? .same : .other
        }
    }
}

/// How an attachment's asset is named: `<stem>_<capture ms>_<first 8 hex of its SHA-256>.<ext>`
/// (Logseq's own assets are `<name>_<ms>_<n>.<ext>`), the stem and extension from the name a person
/// gave it, kept to ASCII letters, digits, `-` and `_` (other characters become `_`, runs of them one;
/// at most 64 bytes), so every device derives the same name and no reader needs it escaped. The
/// long form carries the whole hash, for when the short name holds other bytes.
enum AssetNames {
    static func name(for display: String, captureMs: UInt64, sha256: String, long: Bool = false) -> String {
        var stemPart = Substring(display)
        var ext = ""
        if let dot = display.lastIndex(of: "."), dot != display.startIndex {
            let e = display[display.index(after: dot)...]
            if !e.isEmpty, e.utf8.count <= 10, e.utf8.allSatisfy({ isAlnum($0) }) {
                ext = e.lowercased()
                stemPart = display[..<dot]
            }
        }
        var stem: [UInt8] = []
        for b in stemPart.utf8 {
            if isAlnum(b) || b == UInt8(ascii: "-") { stem.append(b) }
            else if stem.last != UInt8(ascii: "_") { stem.append(UInt8(ascii: "_")) }
            if stem.count >= 64 { break }
        }
        while stem.last == UInt8(ascii: "_") { stem.removeLast() }
        while stem.first == UInt8(ascii: "_") || stem.first == UInt8(ascii: "-") { stem.removeFirst() }
        let base = stem.isEmpty ? "attachment" : String(decoding: stem, as: UTF8.self)
        let hash = long ? sha256 : String(sha256.prefix(8))
        return "\(base)_\(captureMs)_\(hash)" + (ext.isEmpty ? "" : ".\(ext)")
    }

    private static func isAlnum(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
    }
}

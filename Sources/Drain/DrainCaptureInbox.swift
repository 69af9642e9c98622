// drain_capture_inbox: the ONLY path from an inbox to the workspace (see docs/ARCHITECTURE.md).
// Invariants: entries are settled in capture-id (= file-name) order across all inboxes; a file is
// deleted only after its op is durable in the op log, and its attachments only after it, once they
// are durable in assets/; a bad file is set aside, never deleted; a transient error keeps the file
// and every file after it for the next pass, so order holds; a capture whose attachments are not
// whole yet waits alone, holding back no other.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureFormat
import CaptureInbox
import SystemCalls
import Workspace

public struct DrainOptions: Sendable {
    /// Captures committed with one fdatasync at most; bounds memory in a burst of 100,000 files.
    public var batchLimit = 4096
    /// The bytes of capture files one batch reads: once they are reached (by one file at least) the
    /// batch reads no more and the next batch goes on. A file may hold up to 1 MiB, so a batch of
    /// 4,096 files could have held 4 GiB at once.
    public var batchBytes = 32 << 20
    /// Read and unlink capture files on io_uring (true), with plain syscalls (false), or decide per
    /// pass (nil): plain on tmpfs/ramfs, where neither blocks and the ring only adds CPU (measured
    /// on a burst of 10,000: reads on the ring went partly to io-wq workers, ~40 ms more system
    /// time), and for a pass of fewer than `ringFromFiles` files (one); io_uring otherwise.
    public var inboxFilesOnRing: Bool? = nil
    /// The captures one pass lists at most, in capture order: whatever a peer puts in an inbox, a
    /// pass holds this many entries (about 40 bytes each) and ends; the next pass goes on (`more`).
    public var listingLimit = 1 << 17
    /// The largest attachment taken (outld.conf's `attachment-limit`); a larger one is set aside.
    public var attachmentLimit = CaptureFile.defaultAttachmentLimit
    /// How long a capture waits for its attachments to be whole, from when its file arrived.
    public var attachmentWaitSeconds = 24 * 3600
    public init() {}

    /// The defaults, with `OUTL_BATCH_LIMIT=N` honoured (1 turns group commit off, for make bench),
    /// and the other limits' variables (for tests).
    public static func fromEnvironment() -> DrainOptions {
        var o = DrainOptions()
        if let v = getenv("OUTL_BATCH_LIMIT"), let n = Int(String(cString: v)), n > 0 { o.batchLimit = n }
        if let v = getenv("OUTL_LISTING_LIMIT"), let n = Int(String(cString: v)), n > 0 { o.listingLimit = n }
        if let v = getenv("OUTL_BATCH_BYTES"), let n = Int(String(cString: v)), n > 0 { o.batchBytes = n }
        if let v = getenv("OUTL_ATTACHMENT_WAIT_SECONDS"), let n = Int(String(cString: v)), n >= 0 { o.attachmentWaitSeconds = n }
        switch getenv("OUTL_INBOX_IO").map({ String(cString: $0) }) {
        case "uring": o.inboxFilesOnRing = true
        case "plain": o.inboxFilesOnRing = false
        default: break
        }
        return o
    }
}

/// One pending entry: a final-form name in one of the inboxes. It holds no String (its name is
/// its id's spelling, its inbox's path and attachments are the pass's `PassInboxes`), so the
/// drain's copies of it retain nothing.
struct PendingEntry {
    var id: ULID
    /// The inbox's directory (open for the whole pass).
    var directory: FileDescriptor
    /// Its inbox's rank in the inbox list: its index in the pass's `PassInboxes`.
    var inbox: Int
    /// Its place in the pass's capture order: where a transient error stops the pass.
    var place = 0
    /// `<ULID>.json`, made when a message or a slow path needs it (the hot ones spell it on the stack).
    var name: String { CaptureName.fileName(for: id) }
}

/// The inboxes of one pass, by rank (an entry's `inbox`): each one's path, and the attachment
/// files (`<ULID>.<k>.att`) listed there for each capture id, deleted after it lands, set aside with it.
struct PassInboxes {
    var paths: [String]
    var attachments: [[ULID: [String]]]

    init(_ paths: [String]) {
        self.paths = paths
        attachments = Array(repeating: [:], count: paths.count)
    }

    func path(of e: PendingEntry) -> String { paths[e.inbox] }
    func fullPath(of e: PendingEntry) -> String { Path.join(paths[e.inbox], e.name) }
    func attachmentFiles(of e: PendingEntry) -> [String] {
        attachments[e.inbox].isEmpty ? [] : attachments[e.inbox][e.id] ?? []
    }
}

/// The fewest files a pass reads and unlinks on io_uring (on a disk). An unlink on the ring runs on
/// an io-wq worker thread: two wake-ups more than unlinkat(2), which pay only when unlinks overlap,
/// each a synchronous discard here. bench/c/uring_tail.c, files synced to disk then unlinked
/// together, ring against plain: one file 1.08-1.23x in every run (nothing to overlap); two to four
/// 0.79-0.93x in four runs and 1.05-1.46x in five (so the ring stays, as before); sixteen 0.47-0.65x.
let ringFromFiles = 2

/// Drains every final-form file of `inboxes` into `workspace`: parse, append one block per capture
/// in its day's journal (group commit: one fdatasync per batch), delete the files, projecting the
/// changed pages once, before the last batch's files are deleted. Safe to call at any time and to
/// repeat: a replay is a no-op.
public func drain_capture_inbox(
    _ inboxes: [String], into workspace: Workspace, io: BatchIO,
    observer: DrainObserver, options: DrainOptions = DrainOptions()
) async -> DrainReport {
    let listing = InboxListing(inboxes, workspace: workspace.root, probeFileSystems: options.inboxFilesOnRing == nil,
                               limit: options.listingLimit)
    let onRing = options.inboxFilesOnRing ?? (!listing.onMemoryFileSystem && listing.entries.count >= ringFromFiles)
    var report = DrainReport()
    report.transientError = listing.error
    report.refusedInboxes = listing.refused
    report.more = listing.cut
    // Each inbox's directory stays open for the pass: entries are opened and unlinked relative to
    // it (openat/unlinkat), which spares the kernel a walk of the full path per file.
    let assets = AssetsDirectory(root: workspace.root)
    defer { assets.close() }
    return await listing.directories.closeAfter {
        let entries = listing.entries
        var start = 0
        while start < entries.count {
            // At most batchLimit entries; the batch itself ends earlier once it has read batchBytes.
            let limit = min(start + max(1, options.batchLimit), entries.count)
            let batch = await drainBatch(entries[start..<limit], of: listing.inboxes, passEnd: entries.count, workspace: workspace,
                                         io: io, onRing: onRing, observer: observer, assets: assets, options: options)
            report += batch.settle.report
            if let stoppedAt = batch.settle.stoppedAt {
                report.deferred += entries.count - stoppedAt
                break
            }
            start = batch.end
        }
        await removeLanded(listing.orphans, workspace: workspace, observer: observer)
        // Always: a page left stale by a failed projection or a crash (boot marks every page dirty)
        // must catch up even on a pass with nothing new; with nothing dirty this does no I/O.
        await project(workspace, observer)
        return report
    }
}

/// Writes the stale pages; a failure is said and left to the next pass.
private func project(_ workspace: Workspace, _ observer: DrainObserver) async {
    do {
        _ = try await workspace.projectDirtyPages()
    } catch {
        // The ops are durable; the Markdown catches up on the next pass.
        observer.warning(inbox: "", name: "", message: "projection deferred: \(error)")
    }
}

/// The inboxes as one pass sees them: the first `limit` final-form entries in capture order (all of
/// them, nearly always), and each inbox's directory, open until the pass ends. An inbox inside the
/// workspace is opened without following any link below the workspace's root (`Inbox.open`): a
/// linked one is refused, its target unread. Bounded whatever a peer puts in an inbox: at most
/// `limit` entries and `limit` attachment names are held; past that (`cut`) the next pass lists again
/// and goes on where this one stopped.
struct InboxListing {
    var entries: [PendingEntry] = []
    var inboxes: PassInboxes
    var directories: [FileDescriptor] = []
    /// Some inbox is on tmpfs or ramfs (asked only when `probeFileSystems`).
    var onMemoryFileSystem = false
    var error: String?
    var refused: [String] = []
    /// Attachment files whose capture file is not among the entries.
    var orphans: [OrphanAttachments] = []
    /// More captures wait than `limit`: the entries are the first of them.
    var cut = false

    /// An attachment file's name as listed: `<ULID>.<k>.att` in the inbox of rank `inbox`.
    private struct ListedAttachment {
        var id: ULID
        var inbox: Int
        var name: String
    }

    init(_ inboxes: [String], workspace root: String, probeFileSystems: Bool, limit: Int) {
        self.inboxes = PassInboxes(inboxes)
        // Capture order across inboxes: a same-id copy in inbox order. Within one inbox a name is
        // its id's spelling, so (id, inbox order) is a total order.
        var kept = SmallestKept<PendingEntry>(limit: limit) { a, b in a.id != b.id ? a.id < b.id : a.inbox < b.inbox }
        // The attachments of the first captures are the ones kept; one cut off is deleted by a later
        // pass once its capture has landed (`removeLanded`).
        var attachments = SmallestKept<ListedAttachment>(limit: limit) { a, b in
            a.id != b.id ? a.id < b.id : a.inbox != b.inbox ? a.inbox < b.inbox : a.name < b.name
        }
        var directoryOf: [Int: FileDescriptor] = [:]
        for (rank, inbox) in inboxes.enumerated() where !inboxes[..<rank].contains(inbox) {  // an inbox listed twice keeps its first rank
            do {
                let directory = try Inbox.open(inbox, workspace: root)
                directories.append(directory)
                directoryOf[rank] = directory
                if probeFileSystems, isMemoryFileSystem(directory) { onMemoryFileSystem = true }
                // The directory listed once, each name parsed once from its bytes (Inbox.pending
                // would parse and sort by name, then we would again): the sort below by id is the
                // same order. A capture's name is its id's spelling: no String is made of it.
                try directory.readDirectory(path: inbox) { bytes in
                    if let id = CaptureName.ulid(ofBytes: bytes) {
                        kept.offer(PendingEntry(id: id, directory: directory, inbox: rank))
                    } else if let (id, name) = listedAttachment(bytes) {
                        attachments.offer(ListedAttachment(id: id, inbox: rank, name: name))
                    }
                }
            } catch let e as Errno where e == .ENOENT {
                continue  // an inbox nobody has written to yet
            } catch let e as UnsafeComponent {
                refused.append("inbox \(inbox) not drained: \(e)")
            } catch {
                self.error = "cannot list \(inbox): \(error)"
            }
        }
        cut = kept.cut
        entries = kept.takeSorted()
        for i in entries.indices { entries[i].place = i }
        // Each entry's attachments (in name order), and the rest as orphans.
        guard attachments.count > 0 else { return }
        var byInbox = Array(repeating: [ULID: [String]](), count: inboxes.count)
        for a in attachments.takeSorted() { byInbox[a.inbox][a.id, default: []].append(a.name) }
        for e in entries where !byInbox[e.inbox].isEmpty {
            if let names = byInbox[e.inbox].removeValue(forKey: e.id) { self.inboxes.attachments[e.inbox][e.id] = names }
        }
        for (rank, left) in byInbox.enumerated() {
            guard let directory = directoryOf[rank] else { continue }
            for (id, names) in left { orphans.append(OrphanAttachments(id: id, inbox: inboxes[rank], directory: directory, names: names)) }
        }
    }
}

/// A listed name's attachment id and name when it is `<ULID>.<k>.att`. Only a name that could end
/// in ".att" becomes a String to be tested; an invalid UTF-8 one, repaired, cannot pass (U+FFFD is
/// not in the ULID alphabet).
func listedAttachment(_ bytes: UnsafeBufferPointer<UInt8>) -> (id: ULID, name: String)? {
    guard bytes.count > 26, bytes.last == UInt8(ascii: "t") else { return nil }
    let name = String(decoding: bytes, as: UTF8.self)
    return CaptureName.attachment(of: name).map { ($0.id, name) }
}

/// Attachments without their capture file: still being delivered, or left by a crash after their
/// capture landed (deleted then, once its block is known).
struct OrphanAttachments {
    var id: ULID
    var inbox: String
    var directory: FileDescriptor
    var names: [String]
}

/// The captures on their way into the op log: their files (by place in the pass's entries) and
/// the blocks they become, in two lists of one order, so the blocks go to `appendCaptures` as they
/// are, not copied one by one.
struct Landing {
    var places: [Int] = []
    /// The blocks, their strings copied from the files' bytes (or from a decoded capture's Strings).
    var list: CaptureList
    var isEmpty: Bool { places.isEmpty }

    /// Room for `capacity` captures read in `bytes` bytes.
    init(capacity: Int, bytes: Int) {
        places.reserveCapacity(capacity)
        list = CaptureList(count: capacity, bytes: bytes)
    }

    /// A capture read in place: its fields copied from its file's `bytes`, with no String made.
    mutating func append(_ place: Int, id: ULID, day: JournalDay, _ spans: CaptureSpans, from bytes: UnsafeBufferPointer<UInt8>) {
        places.append(place)
        let field = { (r: Range<Int>) in UnsafeBufferPointer(rebasing: bytes[r]) }
        let unknown = CaptureFile.unknownSource
        list.append(blockID: BlockID(capture: id), day: day, text: field(spans.text), capturedAt: field(spans.capturedAt),
                    source: spans.source.map(field) ?? UnsafeBufferPointer(start: unknown.utf8Start, count: unknown.utf8CodeUnitCount))
    }

    /// A decoded capture's block (`CapturePlace.block`), with its assets.
    mutating func append(_ place: Int, id: ULID, _ block: consuming CaptureBlock, assets: [AssetLink]) {
        places.append(place)
        var block = block
        if !assets.isEmpty { block.assets = assets }
        list.append(block, id: BlockID(capture: id))
    }
}

/// Settles one batch: the entries of `candidates` up to where it has read `options.batchBytes`
/// (`end`, the place of the first entry left for the next batch). Each stage decides about each
/// file (a `Verdict`: land, set aside, keep) and this loop alone acts on the verdicts, through
/// `Settlement`. The pass's last batch (`end == passEnd`) writes its pages before its unlinks.
private func drainBatch(
    _ candidates: ArraySlice<PendingEntry>, of inboxes: PassInboxes, passEnd: Int, workspace: Workspace, io: BatchIO, onRing: Bool,
    observer: DrainObserver, assets: AssetsDirectory, options: DrainOptions
) async -> (settle: Settlement, end: Int) {
    var settle = Settlement(observer: observer, inboxes: inboxes)

    // 1. Open and check every entry; bad ones are set aside at once (their order does not matter:
    //    they never land). A transient error stops the batch there.
    // 2. Read each one and close it (io_uring: a chunk of files open at a time, each chunk read in
    //    one submission; plain: one file at a time).
    // 3. Decode, in capture order; a second inbox's copy of an id lands with the first, unappended.
    let (files, arena, end) = openAndRead(candidates, of: inboxes, io, onRing: onRing, byteBudget: options.batchBytes, settle: &settle)
    var landing = Landing(capacity: files.count, bytes: arena.count)
    var copies: [Int] = []
    // The files come in capture order, where copies of one id stand together: a file whose id is
    // the last landed one is a copy, with no set of every id landed.
    var lastLanded: ULID? = nil
    decoding: for file in files {
        let entry = candidates[file.opened.place]
        switch settle.act(on: decode(file, from: arena, of: entry, in: inboxes), for: entry) {
        case .skip: continue
        case .stop: break decoding
        case .proceed(.inPlace(let spans, let day, let range)):
            // Nearly every file: no warning, no attachment, its day known.
            let id = entry.id
            if id == lastLanded { copies.append(entry.place); continue }
            lastLanded = id
            landing.append(entry.place, id: id, day: day, spans, from: arena.bytes(range))
        case .proceed(.decoded(let capture)):
            // The decoder's warnings are all about captured_at: captureBlock says them once, with
            // the time used instead.
            // The block first: a copy is deleted with the first of its id only if that one lands.
            let id = entry.id
            let place: CapturePlace
            switch settle.act(on: captureBlock(capture, id: id), for: entry) {
            case .skip: continue
            case .stop: break decoding
            case .proceed(let made): place = made
            }
            if id == lastLanded { copies.append(entry.place); continue }
            // Its attachments into assets/, durably, before its block can be appended; a block
            // already known (a replay, another device's drain) needs none of them.
            var links: [AssetLink] = []
            let blockID = BlockID(capture: id)
            if !capture.attachments.isEmpty, await !workspace.knownBlocks([blockID]).contains(blockID) {
                switch settle.act(on: AttachmentStage.store(capture, entry: entry, inbox: inboxes.path(of: entry), arrivedAt: file.opened.changedAt,
                                                             assets: assets, options: options), for: entry) {
                case .skip: continue
                case .stop: break decoding
                case .proceed(let stored): links = stored
                }
            }
            lastLanded = id
            if let warning = place.warning { observer.warning(inbox: inboxes.path(of: entry), name: entry.name, message: warning) }
            landing.append(entry.place, id: id, place.block(capture), assets: links)
        }
    }

    // 4. One durable append for the whole batch. Any failure keeps every file for a retry.
    guard !landing.isEmpty || !copies.isEmpty else { return (settle, end) }
    CrashPoint.hit(.beforeAppend)
    let outcomes: [AppendOutcome]
    do {
        outcomes = try await append(landing, to: workspace)
    } catch {
        // Said as what it is: this device's archive (its state directory's disk) is not the op log.
        let why = if case WorkspaceError.archive = error { "\(error)" } else { "op log append failed: \(error)" }
        settle.keep(landing.places.count + copies.count, because: why, batchEnd: end)
        return (settle, end)
    }
    let durableUsec = wallClockMicroseconds()
    CrashPoint.hit(.afterAppend)

    // 5. The pass's last batch writes its pages first: an unlink can cost a synchronous discard
    //    (160 µs on ext4 here), which a capture's line need not wait for on its way to the journal.
    if end == passEnd { await project(workspace, observer) }

    // 6. Only now may the files go, each capture file before its attachments (an attachment left
    //    by a crash between the two is deleted by a later pass: its block is known). A failed
    //    unlink leaves a file whose replay is a no-op.
    let gone = copies.isEmpty ? landing.places : landing.places + copies  // not copied when it need not be
    unlink(gone, of: candidates, in: inboxes, io, useRing: onRing, observer)
    unlinkAttachments(of: gone, in: candidates, inboxes, observer)
    settle.landed(landing, of: candidates, outcomes, copies: copies.count, durableUsec: durableUsec)
    CrashPoint.hit(.afterUnlink)
    return (settle, end)
}

/// Deletes the attachment files whose capture has landed (its block is known) but which are still
/// in the inbox: a crash between deleting a capture file and its attachments, or attachments a
/// sync tool delivered after their capture was drained elsewhere. Others are left: their capture
/// file may still be on its way.
private func removeLanded(_ orphans: [OrphanAttachments], workspace: Workspace, observer: DrainObserver) async {
    guard !orphans.isEmpty else { return }
    let known = await workspace.knownBlocks(orphans.map { BlockID(capture: $0.id) })
    for o in orphans where known.contains(BlockID(capture: o.id)) {
        for name in o.names {
            do { try o.directory.unlink(name, fullPath: Path.join(o.inbox, name)) } catch let e as Errno where e == .ENOENT {
            } catch {
                observer.warning(inbox: o.inbox, name: name, message: "its capture landed, but the attachment is not deleted: \(error)")
            }
        }
    }
}

/// Removes temp files older than 36 hours from each inbox's tmp/ (Maildir's rule), at boot and on
/// SIGHUP: a writer that died mid-capture never reported "saved", so nothing is lost.
public func sweep_stale_temps(_ inboxes: [String], workspace root: String) {
    for inbox in inboxes { Inbox.removeStaleTemps(inbox, workspace: root) }
}

/// How many final-form files wait in these inboxes right now (for STATUS= and `--once`).
public func pending_count(_ inboxes: [String], workspace root: String) -> Int {
    inboxes.reduce(0) { $0 + ((try? Inbox.pendingCount($1, workspace: root)) ?? 0) }
}

extension Array where Element == FileDescriptor {
    /// `closeAfter` for an async body (a pass keeps its inboxes' directories open throughout). It
    /// lives here, not in SystemCalls, so the writer links no concurrency runtime.
    func closeAfter<R>(_ body: () async throws -> R) async rethrows -> R {
        defer { forEach { $0.close() } }
        return try await body()
    }
}

// drain_capture_inbox: the ONLY path from an inbox to the workspace (see docs/ARCHITECTURE.md).
// Invariants: entries are settled in capture-id (= file-name) order across all inboxes; a file is
// deleted only after its op is durable in the op log; a bad file is set aside, never deleted; a
// transient error keeps the file and every file after it for the next pass, so order holds.
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
    /// Unlink drained files on io_uring (true), with plain unlinkat (false), or decide per inbox
    /// file system (nil): plain on tmpfs/ramfs, where an unlink never blocks and the io-wq hand-off
    /// only adds CPU; io_uring elsewhere, where parallel unlinks hide a synchronous discard.
    public var unlinkOnRing: Bool? = nil
    public init() {}

    /// The defaults, with `OUTL_BATCH_LIMIT=N` honoured (1 turns group commit off, for make bench).
    public static func fromEnvironment() -> DrainOptions {
        var o = DrainOptions()
        if let v = getenv("OUTL_BATCH_LIMIT"), let n = Int(String(cString: v)), n > 0 { o.batchLimit = n }
        switch getenv("OUTL_UNLINK").map({ String(cString: $0) }) {
        case "uring": o.unlinkOnRing = true
        case "plain": o.unlinkOnRing = false
        default: break
        }
        return o
    }
}

/// One pending entry: a final-form name in one of the inboxes.
struct PendingEntry {
    var inbox: String
    var name: String
    var id: ULID
    /// The inbox's directory fd (open for the whole pass) and its rank in the inbox list.
    var dirfd: Int32
    var rank: Int
    var path: String { Path.join(inbox, name) }
}

/// Drains every final-form file of `inboxes` into `workspace`: parse, append one block per capture
/// in its day's journal (group commit: one fdatasync per batch), delete the files, then project
/// the changed pages once. Safe to call at any time and to repeat: a replay is a no-op.
public func drain_capture_inbox(
    _ inboxes: [String], into workspace: Workspace, io: BatchIO,
    observer: DrainObserver, options: DrainOptions = DrainOptions()
) async -> DrainReport {
    var report = DrainReport()
    var entries: [PendingEntry] = []
    // Each inbox's directory stays open for the pass: entries are opened and unlinked relative to
    // it (openat/unlinkat), which spares the kernel a walk of the full path per file.
    var dirfds: [Int32] = []
    defer { dirfds.forEach(Sys.close) }
    let rank = Dictionary(inboxes.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    var onRing = true
    for inbox in inboxes {
        do {
            let dirfd = try Sys.open(inbox, O_RDONLY | O_DIRECTORY)
            dirfds.append(dirfd)
            if options.unlinkOnRing == nil, isMemoryFileSystem(dirfd) { onRing = false }
            // The directory listed once, each name parsed once (Inbox.pending would parse and sort
            // by name, then we would again): the sort below by (id, name) is the same order.
            for name in try Sys.readDirectory(inbox) {
                if let id = CaptureName.ulid(of: name) {
                    entries.append(PendingEntry(inbox: inbox, name: name, id: id, dirfd: dirfd, rank: rank[inbox]!))
                }
            }
        } catch let e as Errno where e == .ENOENT {
            continue  // an inbox nobody has written to yet
        } catch {
            report.transientError = "cannot list \(inbox): \(error)"
        }
    }
    if let forced = options.unlinkOnRing { onRing = forced }
    // Capture order across inboxes; the sort is stable, so a same-id copy keeps inbox order.
    // Within one inbox names are unique, so (id, inbox order, name) is a total order.
    entries.sort { a, b in
        if a.id != b.id { return a.id < b.id }
        if a.rank != b.rank { return a.rank < b.rank }
        return a.name < b.name
    }

    var start = 0
    while start < entries.count {
        let end = min(start + max(1, options.batchLimit), entries.count)
        let (batch, stoppedAt) = await drainBatch(entries[start..<end], workspace: workspace, io: io, unlinkOnRing: onRing, observer: observer)
        report += batch
        if let stoppedAt {
            report.deferred += entries.count - stoppedAt
            break
        }
        start = end
    }
    // Always: a page left stale by a failed projection or a crash (boot marks every page dirty)
    // must catch up even on a pass with nothing new; with nothing dirty this does no I/O.
    do {
        _ = try await workspace.projectDirtyPages()
    } catch {
        // The ops are durable; the Markdown catches up on the next pass.
        observer.warning(inbox: "", name: "", message: "projection deferred: \(error)")
    }
    return report
}

/// Settles one batch. Returns the report and, when a transient error stopped it, the index of the
/// first entry left for later.
private func drainBatch(
    _ entries: ArraySlice<PendingEntry>, workspace: Workspace, io: BatchIO, unlinkOnRing: Bool,
    observer: DrainObserver
) async -> (DrainReport, Int?) {
    var report = DrainReport()
    var stoppedAt: Int? = nil

    // 1. Open and check every entry; bad ones are set aside at once (their order does not matter:
    //    they never land). A transient error stops the batch there.
    var opened: [(index: Int, entry: PendingEntry, fd: Int32, size: Int)] = []
    for (i, entry) in zip(entries.indices, entries) {
        switch InboxEntry.open(at: entry.dirfd, entry.name, path: entry.path) {
        case .file(let fd, let size):
            opened.append((i, entry, fd, size))
        case .vanished:
            continue
        case .bad(let reason):
            if !reject(entry, reason, observer, &report) { stoppedAt = i }
        case .transient(let e):
            report.transientError = "\(entry.path): \(e)"
            stoppedAt = i
        }
        if stoppedAt != nil { break }
    }

    // 2. Read them all in one submission (io_uring) or one by one (plain).
    let contents = io.readFiles(opened.map(\.fd), sizes: opened.map(\.size))
    for o in opened { Sys.close(o.fd) }

    // 3. Decode; build the blocks in capture order.
    var blocks: [CaptureBlock] = []
    var settled: [(entry: PendingEntry, block: CaptureBlock)] = []
    var seen = Set<ULID>()
    var copies: [PendingEntry] = []  // same capture id in a second inbox: one block, both deleted
    decoding: for (k, o) in opened.enumerated() {
        let bytes: [UInt8]
        switch contents[k] {
        case .success(let b) where b.count > o.size:
            // The file grew after fstat (a writer not following the protocol, a sync tool writing
            // in place): read it again whole, still bounded by the limit and without following links.
            do {
                bytes = try Durable.readRegularFile(o.entry.path, limit: CaptureFile.maxFileBytes)
            } catch let e as Errno where e.code == EFBIG {
                if !reject(o.entry, "grew past the \(CaptureFile.maxFileBytes)-byte limit while being read: not read", observer, &report) {
                    stoppedAt = o.index; break decoding
                }
                continue
            } catch let e as Errno where e == .ENOENT {
                continue
            } catch {
                report.transientError = "\(o.entry.path): \(error)"
                stoppedAt = o.index
                break decoding
            }
        case .success(let b):
            bytes = b
        case .failure(let e):
            report.transientError = "\(o.entry.path): \(e)"
            stoppedAt = o.index
            break decoding
        }
        let decoded: DecodedCapture
        do {
            decoded = try CaptureFile.decode(bytes)
        } catch {
            if !reject(o.entry, "\(error)", observer, &report) { stoppedAt = o.index; break }
            continue
        }
        for w in decoded.warnings { observer.warning(inbox: o.entry.inbox, name: o.entry.name, message: w) }
        if !seen.insert(o.entry.id).inserted { copies.append(o.entry); continue }
        let (day, capturedAt) = captureDay(decoded, id: o.entry.id, o.entry, observer)
        let block = CaptureBlock(blockID: BlockID(capture: o.entry.id), day: day, text: decoded.text, capturedAt: capturedAt, source: decoded.source)
        blocks.append(block)
        settled.append((o.entry, block))
    }

    // 4. One durable append for the whole batch. Any failure keeps every file for a retry.
    guard !blocks.isEmpty || !copies.isEmpty else { return (report, stoppedAt) }
    CrashPoint.hit(.beforeAppend)
    let outcomes: [AppendOutcome]
    do {
        outcomes = blocks.isEmpty ? [] : try await workspace.appendCaptures(blocks)
    } catch {
        report.transientError = "op log append failed: \(error)"
        report.deferred += settled.count + copies.count
        return (report, stoppedAt ?? entries.startIndex + entries.count)
    }
    let durableUsec = wallClockMicroseconds()
    CrashPoint.hit(.afterAppend)

    // 5. Only now may the files go. A failed unlink leaves a file whose replay is a no-op.
    let gone = settled.map(\.entry) + copies
    let unlinked = io.unlinkAll(at: gone.map(\.dirfd), names: gone.map(\.name), useRing: unlinkOnRing) { gone[$0].path }
    for (g, r) in zip(gone, unlinked) {
        if case .failure(let e) = r, e != .ENOENT {
            observer.warning(inbox: g.inbox, name: g.name, message: "drained but not deleted: \(e)")
        }
    }
    for (s, outcome) in zip(settled, outcomes) {
        let duplicate = outcome == .alreadyPresent
        if duplicate { report.duplicates += 1 } else { report.drained += 1 }
        let capturedUsec = s.entry.id.timestampMs * 1000
        observer.drained(DrainedCapture(
            inbox: s.entry.inbox, captureID: s.entry.id.string, blockID: s.block.id, day: s.block.day.iso,
            source: s.block.source, duplicate: duplicate,
            latencyUsec: durableUsec > capturedUsec ? durableUsec - capturedUsec : 0))
    }
    report.duplicates += copies.count
    CrashPoint.hit(.afterUnlink)
    return (report, stoppedAt)
}

/// Sets an entry aside; false when even that failed transiently (the entry stays in the inbox).
private func reject(_ entry: PendingEntry, _ reason: String, _ observer: DrainObserver,
                    _ report: inout DrainReport) -> Bool {
    do {
        try Rejection.setAside(inbox: entry.inbox, name: entry.name, reason: reason)
    } catch let e as Errno where e == .ENOENT {
        return true  // it vanished meanwhile: nothing to set aside
    } catch {
        report.transientError = "cannot set aside \(entry.path): \(error)"
        return false
    }
    report.rejected += 1
    observer.rejected(inbox: entry.inbox, name: entry.name, reason: reason)
    return true
}

/// The capture's day is the calendar date in its own offset (SPEC 3.1); without a usable
/// captured_at, the ULID's time in this machine's zone, with a warning.
private func captureDay(_ d: DecodedCapture, id: ULID, _ entry: PendingEntry,
                        _ observer: DrainObserver) -> (JournalDay, String) {
    if let t = d.capturedAt, let day = JournalDay(year: t.calendarDay.year, month: t.calendarDay.month, day: t.calendarDay.day) {
        return (day, d.capturedAtRaw ?? t.rfc3339)
    }
    let local = Timestamp.local(epochMs: Int64(id.timestampMs))
    if d.capturedAtRaw == nil {
        observer.warning(inbox: entry.inbox, name: entry.name, message: "captured_at missing: using the capture id's time \(local.rfc3339)")
    } else if d.capturedAt != nil {
        observer.warning(inbox: entry.inbox, name: entry.name, message: "captured_at out of range: using the capture id's time \(local.rfc3339)")
    }
    let c = local.calendarDay
    return (JournalDay(year: c.year, month: c.month, day: c.day)!, local.rfc3339)
}

extension BlockID {
    /// A capture's block id: its ULID's 128 bits (SPEC section 4), so a replay, or a synced copy
    /// drained on another device, finds the block the first drain made.
    public init(capture id: ULID) { self.init(hi: id.high, lo: id.low) }
}

/// tmpfs or ramfs: an unlink there is pure CPU and never waits for a device.
private func isMemoryFileSystem(_ fd: Int32) -> Bool {
    let tmpfsMagic = 0x0102_1994, ramfsMagic = 0x8584_58f6
    guard let t = Sys.fileSystemType(fd) else { return false }
    return t == tmpfsMagic || t == ramfsMagic
}

/// Removes temp files older than 36 hours from each inbox's tmp/ (Maildir's rule), at boot and on
/// SIGHUP: a writer that died mid-capture never reported "saved", so nothing is lost.
public func sweep_stale_temps(_ inboxes: [String]) {
    for inbox in inboxes { Inbox.removeStaleTemps(inbox) }
}

/// How many final-form files wait in these inboxes right now (for STATUS= and `--once`).
public func pending_count(_ inboxes: [String]) -> Int {
    inboxes.reduce(0) { $0 + ((try? Inbox.pending($1).count) ?? 0) }
}

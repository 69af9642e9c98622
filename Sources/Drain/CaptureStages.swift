// CaptureStages: the drain's stages for one batch of inbox files — read, decode, make the block,
// append, unlink. The deciding ones return a `Verdict` and act on nothing; the batch I/O ones hand
// each file back with its own result, so the batch loop never pairs arrays by position.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureFormat
import SystemCalls
import Workspace

/// An opened entry with what the batch read returned for it: where its bytes are in the batch's
/// `ReadArena`.
struct ReadEntry {
    var opened: OpenedEntry
    var content: Result<Range<Int>, Errno>
}

/// The bytes of one batch's capture files, one after another in one allocation (grown by doubling
/// when a batch holds more than it was made for): a file read is a range of it, so reading a
/// batch of 4,096 files makes no allocation per file.
final class ReadArena {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        storage = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Room for `n` bytes after the ones kept, valid until the next call; `keep` what was written.
    func room(_ n: Int) -> UnsafeMutableRawBufferPointer {
        if count + n > capacity {
            let grown = max(2 * capacity, count + n)
            let new = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            new.copyMemory(from: storage, byteCount: count)
            storage.deallocate()
            storage = new
            capacity = grown
        }
        return UnsafeMutableRawBufferPointer(start: storage + count, count: n)
    }

    /// Keeps the first `n` bytes of the last room: their range.
    func keep(_ n: Int) -> Range<Int> {
        precondition(count + n <= capacity, "ReadArena: kept more than its room")
        defer { count += n }
        return count..<(count + n)
    }

    func append(_ bytes: [UInt8]) -> Range<Int> {
        let r = room(bytes.count)
        bytes.withUnsafeBytes { if let b = $0.baseAddress { r.baseAddress!.copyMemory(from: b, byteCount: bytes.count) } }
        return keep(bytes.count)
    }

    func bytes(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        precondition(r.upperBound <= count, "ReadArena: a range past what it holds")
        return UnsafeBufferPointer(start: storage.assumingMemoryBound(to: UInt8.self) + r.lowerBound, count: r.count)
    }
}

/// Opens, judges and reads the entries of a batch, in order, until the files read hold
/// `byteBudget` bytes (at least one file is read); an entry judged otherwise than "read it" is
/// acted on at once through `settle`, and a transient error ends the batch there. Answers the
/// files read and `end`, the place of the first entry not looked at (the next batch's first).
/// On io_uring the files are opened a chunk at a time (`ringChunk`) and each chunk read in one
/// submission. With plain syscalls each file is opened, read and closed before the next is
/// opened, as the C floor does: files held open at once cost the kernel more per call than the
/// same calls one file at a time (a burst of 10,000 on tmpfs in C, a batch of 4,096 opened whole
/// before it was read: 1.2x the time).
func openAndRead(_ entries: ArraySlice<PendingEntry>, of inboxes: PassInboxes, _ io: BatchIO, onRing: Bool, byteBudget: Int,
                 settle: inout Settlement) -> (files: [ReadEntry], arena: ReadArena, end: Int) {
    var read: [ReadEntry] = []
    read.reserveCapacity(entries.count)
    let arena = ReadArena(capacity: min(byteBudget, entries.count * 256))
    var bytes = 0
    if io.readsOnRing(onRing) {
        var next = entries.startIndex
        while next < entries.endIndex, bytes < byteBudget || read.isEmpty {
            var opened: [OpenedEntry] = []
            opened.reserveCapacity(min(ringChunk, entries.endIndex - next))
            var stopped = false
            // A chunk: up to ringChunk files, and no more once the budget is met.
            opening: while next < entries.endIndex, opened.count < ringChunk, bytes < byteBudget || (read.isEmpty && opened.isEmpty) {
                let entry = entries[next]
                next += 1
                switch settle.act(on: InboxEntry.open(entry, in: inboxes), for: entry) {
                case .proceed(let file): opened.append(file); bytes += file.size
                case .skip: continue
                case .stop: stopped = true; break opening
                }
            }
            // `readFiles` answers one result per descriptor, in order.
            let contents = opened.map(\.file).closeAfter {
                io.readFiles(opened.map(\.file.rawValue), sizes: opened.map(\.size), useRing: true)
            }
            for (file, content) in zip(opened, contents) { read.append(ReadEntry(opened: file, content: content.map { arena.append($0) })) }
            if stopped { break }
        }
        return (read, arena, next)
    }
    var next = entries.startIndex
    while next < entries.endIndex, bytes < byteBudget || read.isEmpty {
        let entry = entries[next]
        next += 1
        switch settle.act(on: InboxEntry.open(entry, in: inboxes), for: entry) {
        case .proceed(let file):
            let got = io.readFile(file.file.rawValue, size: file.size, into: arena.room(file.size + 1))
            read.append(ReadEntry(opened: file, content: got.map { arena.keep($0) }))
            file.file.close()
            bytes += file.size
        case .skip: continue
        case .stop: return (read, arena, next)
        }
    }
    return (read, arena, next)
}

/// How many capture files the ring path holds open at once: a whole batch (4,096) open together
/// passed the soft limit on open files systemd gives a service (1,024), so every file after the
/// 1,000th or so failed with EMFILE and waited for a later pass. A quarter of this process's soft
/// limit, at most 256 (reads enough for the ring to overlap) and at least 8.
let ringChunk: Int = {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 64 }
    return Int(min(256, max(8, limit.rlim_cur / 4)))
}()

/// The capture a read file holds, or why it is not one.
func decode(_ file: ReadEntry, from arena: ReadArena, of entry: PendingEntry, in inboxes: PassInboxes) -> Verdict<TakenCapture> {
    content(of: file, arena, entry, inboxes).then { range in
        let bytes = arena.bytes(range)
        if let spans = CaptureFile.decodeInPlace(bytes), let day = journalDay(of: spans.stamp) {
            return .land(.inPlace(spans, day: day, range: range))
        }
        do {
            return .land(.decoded(try CaptureFile.decode(bytes)))
        } catch {
            return .setAside("\(error)")
        }
    }
}

/// A capture file as the drain takes it: read in place, its fields ranges of the batch's bytes
/// (nearly every file: `CaptureFile.decodeInPlace`), or decoded to Strings.
enum TakenCapture {
    /// Its fields, its day (its captured_at's date), and where its file's bytes lie in the arena.
    case inPlace(CaptureSpans, day: JournalDay, range: Range<Int>)
    case decoded(DecodedCapture)
}

/// The journal day of a capture time: its calendar date in its own offset (SPEC 3.1); nil past
/// what a journal page can name.
func journalDay(of t: Timestamp) -> JournalDay? {
    JournalDay(year: t.calendarDay.year, month: t.calendarDay.month, day: t.calendarDay.day)
}

/// The file's bytes as the batch read them; when the file grew after fstat (a writer not following
/// the protocol, a sync tool writing in place), read again whole, still bounded by the limit and
/// without following links.
private func content(of file: ReadEntry, _ arena: ReadArena, _ entry: PendingEntry, _ inboxes: PassInboxes) -> Verdict<Range<Int>> {
    switch file.content {
    case .failure(let e):
        return .keep("\(e)")
    case .success(let range) where range.count <= file.opened.size:
        return .land(range)
    case .success:
        do {
            return .land(arena.append(try Durable.readRegularFile(entry.name, in: entry.directory, fullPath: inboxes.fullPath(of: entry),
                                                                  limit: CaptureFile.maxFileBytes)))
        } catch let e as Errno where e.code == EFBIG {
            return .setAside("grew past the \(CaptureFile.maxFileBytes)-byte limit while being read: not read")
        } catch let e as Errno where e == .ENOENT {
            return .gone
        } catch {
            return .keep("\(error)")
        }
    }
}

/// Where a capture's block lands (its day, the captured-at it keeps) and a warning when its day
/// had to come from its id; set aside when no day can be named (a journal page is named by a year
/// of four digits). The block itself is made by `CapturePlace.block` in the landing list's append,
/// so it is not copied out of a verdict first (a copy retained and released its six references).
func captureBlock(_ capture: DecodedCapture, id: ULID) -> Verdict<CapturePlace> {
    captureDay(capture, id: id).map { day, capturedAt, warning in CapturePlace(id: id, day: day, capturedAt: capturedAt, warning: warning) }
}

/// Where and when a capture lands: its day and the captured-at its block keeps.
struct CapturePlace {
    var id: ULID
    var day: JournalDay
    var capturedAt: String
    var warning: String?

    func block(_ capture: DecodedCapture) -> CaptureBlock {
        var block = CaptureBlock(blockID: BlockID(capture: id), day: day, text: capture.text,
                                 capturedAt: capturedAt, source: capture.source)
        block.page = capture.page
        return block
    }
}

/// The capture's day is the calendar date in its own offset (SPEC 3.1); without a usable
/// captured_at, the ULID's time in this machine's zone, with a warning. A ULID's 48 bits reach
/// the year 10889, past any journal day: such a capture is set aside, never trapped on.
private func captureDay(_ d: DecodedCapture, id: ULID) -> Verdict<(JournalDay, capturedAt: String, warning: String?)> {
    if let t = d.capturedAt, let day = journalDay(of: t) {
        return .land((day, d.capturedAtRaw ?? t.rfc3339, nil))
    }
    let local = Timestamp.local(epochMs: Int64(id.timestampMs))
    let c = local.calendarDay
    guard let day = JournalDay(year: c.year, month: c.month, day: c.day) else {
        let why = d.capturedAtRaw == nil ? "it has no captured_at" : "its captured_at names no journal day"
        return .setAside("no journal day for it: \(why), and the capture id's time \(local.rfc3339) is past 9999-12-31")
    }
    // One warning says both what was wrong (the decoder's words: missing, unparsable, not a string)
    // and what was used instead.
    let why = d.warnings.first ?? (d.capturedAtRaw == nil ? "captured_at missing" : "captured_at out of range")
    return .land((day, local.rfc3339, "\(why): using the capture id's time \(local.rfc3339)"))
}

/// One durable append (one fdatasync) for every landing block: one outcome per landing, in order
/// (as `appendCaptures` answers them).
func append(_ landing: Landing, to workspace: Workspace) async throws -> [AppendOutcome] {
    guard !landing.isEmpty else { return [] }
    return try await workspace.appendCaptures(landing.list)
}

/// Deletes drained files (the entries at `places`) relative to their inboxes' directories. Their
/// ops are durable, so a file that stays (any failure but ENOENT) costs only a warning: its replay
/// is a no-op. `unlinkAll` answers one result per name, in order.
/// The names are spelled into one buffer, each ending in a NUL: no String per file.
func unlink(_ places: [Int], of entries: ArraySlice<PendingEntry>, in inboxes: PassInboxes, _ io: BatchIO, useRing: Bool,
            _ observer: DrainObserver) {
    let stride = CaptureName.fileNameBytes + 1
    let names = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, places.count * stride))
    defer { names.deallocate() }
    let cNames = places.indices.map { k -> UnsafePointer<CChar> in
        let room = UnsafeMutableBufferPointer(rebasing: names[(k * stride)..<((k + 1) * stride)])
        CaptureName.spellFileName(entries[places[k]].id, into: room)
        return UnsafeRawPointer(room.baseAddress!).assumingMemoryBound(to: CChar.self)
    }
    let results = io.unlinkAll(at: places.map { entries[$0].directory.rawValue }, cNames: cNames, useRing: useRing) {
        inboxes.fullPath(of: entries[places[$0]])
    }
    for (place, result) in zip(places, results) {
        if case .failure(let e) = result, e != .ENOENT {
            observer.warning(inbox: inboxes.path(of: entries[place]), name: entries[place].name, message: "drained but not deleted: \(e)")
        }
    }
}

/// Deletes the attachment files listed with each drained capture (after the capture files).
func unlinkAttachments(of places: [Int], in entries: ArraySlice<PendingEntry>, _ inboxes: PassInboxes, _ observer: DrainObserver) {
    for place in places {
        let entry = entries[place]
        for name in inboxes.attachmentFiles(of: entry) {
            let inbox = inboxes.path(of: entry)
            do { try entry.directory.unlink(name, fullPath: Path.join(inbox, name)) } catch let e as Errno where e == .ENOENT {
            } catch {
                observer.warning(inbox: inbox, name: name, message: "drained but its attachment is not deleted: \(error)")
            }
        }
    }
}

extension BlockID {
    /// A capture's block id: its ULID's 128 bits (SPEC section 4), so a replay, or a synced copy
    /// drained on another device, finds the block the first drain made.
    public init(capture id: ULID) { self.init(hi: id.high, lo: id.low) }
}

/// tmpfs or ramfs: an unlink there is pure CPU and never waits for a device.
func isMemoryFileSystem(_ directory: FileDescriptor) -> Bool {
    let tmpfsMagic = 0x0102_1994, ramfsMagic = 0x8584_58f6
    guard let t = Sys.fileSystemType(directory.rawValue) else { return false }
    return t == tmpfsMagic || t == ramfsMagic
}

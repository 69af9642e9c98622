// JournalLog: outld's log. Under journald, one native entry per event with OUTL_* fields and a
// MESSAGE_ID per kind (explained in systemd/outld.catalog); otherwise one readable line on stderr.
// A journal entry that cannot be sent is written to stderr instead: a log line is never dropped silently.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import CSystemdShim
import Workspace

/// The MESSAGE_IDs of outld's entries: generated once with `systemd-id128 new`, never changed
/// (they are the keys of the catalog and of users' `journalctl MESSAGE_ID=` filters).
public enum MessageID: String, CaseIterable, Sendable {
    case drained = "45744b19adae440296f3c68843233201"
    case rejected = "3dee4e4d21fc41d98ea6c968785ff1c7"
    case started = "c61ef616fcb1445eaed5bee066fc0849"
    case ready = "a55458f7e6564ff8bfea5e4e519c6797"
    case stopping = "e4257acdb567406784581cc1b2a7f595"
    /// A transient error (EIO, ENOSPC, EMFILE): the capture is kept and the drain retried.
    case retrying = "2b77b075446d4a17a1e9a8ef9e6432fe"
    /// Another device's ops, delivered by a sync tool, merged into this device's workspace.
    case merged = "9c9b8d80ff6443feb261e787220db58b"
    /// Blocks that were live here deleted by another device's ops: "who deleted my line?".
    case deletedByDevice = "a1c1fe66611c46bda5351f1cc9c90d99"
    /// Another device's ops stamped too far ahead of this machine's clock to be adopted.
    case clockAhead = "1379b2ccff01446f9ca1bb70d52791f4"
    /// A page file that cannot be read or written: this page is not written, every other one is.
    case pageFailing = "98fc1f6e074c480abadbb4db6701b5e7"
    /// A failing page file written again.
    case pageRecovered = "cc76dc05994b4a25bd504c8c603aace8"
    /// Two devices changed one block's text at once: the older text kept as the block after it.
    case concurrentEdit = "22523bc7b9b248d7a62fd3c6a5214516"
    /// A block deleted on this device brought back by another device's edit made without seeing it.
    case broughtBack = "a325a032952746bf88ebd2febf63b946"
    /// A directory of outl's own (`.outl`, `.outl/ops`, ...) found as a link, a FIFO or a file, set right.
    case folderRepaired = "e57e92d80dc64c03a80e713f72b7aa77"
}

public final class JournalLog {
    public enum Mode: String, Sendable {
        /// The journal when stderr is already connected to it ($JOURNAL_STREAM names stderr's
        /// device and inode), else stderr.
        case auto
        case journal
        case stderr
    }

    /// Whether entries go to the journal (else to stderr).
    public let usesJournal: Bool
    private let stderrFD: Int32

    /// `stderrFD` is where readable lines go (2; tests pass a file).
    public init(mode: Mode, stderrFD: Int32 = 2) {
        self.stderrFD = stderrFD
        let journal: Bool
        switch mode {
        case .journal: journal = true
        case .stderr: journal = false
        case .auto: journal = JournalLog.stderrIsJournal(stderrFD)
        }
        // libsystemd is loaded here, only for the journal; without it every line goes to stderr,
        // and the first one says why.
        usesJournal = journal && CSystemdShim_load() != 0
        if journal && !usesJournal {
            let why = "cannot load libsystemd (\(String(cString: CSystemdShim_loadError()))): logging to stderr, not the journal"
            var m = why
            m.withUTF8 { writeLine(Self.line(priority: LOG_WARNING, message: $0)) }
        }
    }

    /// $JOURNAL_STREAM is "device:inode" of the stream systemd connected; it is inherited by
    /// children that may have redirected stderr, so compare it with what fd 2 really is.
    static func stderrIsJournal(_ fd: Int32) -> Bool {
        guard let v = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: v).split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    // MARK: events

    /// One capture became a block: INFO, MESSAGE_ID drained; OUTL_ATTACHMENTS when it brought files.
    /// The ids and the day are spelled straight into the line (once per capture: no String made).
    public func drained(capture: ULID, block: BlockID, day: JournalDay, source: String,
                        latencyUsec: UInt64, inbox: String, attachments: Int = 0) {
        // On stderr, the common case of a burst: the line is spelled in one room, ids and day
        // included, with no journal fields to make (a source with a line break takes the path below).
        if !usesJournal {
            let bound = 200 + source.utf8.count  // our words, ids, day and numbers: at most 175
            let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { room -> Bool in
                var w = ByteWriter(room)
                w.lit("outld: drained "); w.spelled(26) { capture.spell(into: $0) }
                w.lit(" → "); w.spelled(10) { day.spell(UInt8(ascii: "-"), into: $0) }
                w.lit(" (block "); w.id(block); w.lit(", source ")
                let sourceAt = w.count
                w.string(source)
                if w.written[sourceAt...].contains(where: { $0 == 10 || $0 == 13 }) { return false }
                Self.attachmentsAndLatency(attachments, latencyUsec, &w)
                w.byte(10)
                writeLine(UnsafeBufferPointer(w.written))
                return true
            }
            if written { return }
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 26 + 36 + 10) { room in
            capture.spell(into: UnsafeMutableBufferPointer(rebasing: room[0..<26]))
            _ = block.spell(into: UnsafeMutableBufferPointer(rebasing: room[26..<62]))
            day.spell(UInt8(ascii: "-"), into: UnsafeMutableBufferPointer(rebasing: room[62..<72]))
            let ids = UnsafeBufferPointer(room)
            drained(spelled: UnsafeBufferPointer(rebasing: ids[0..<26]), UnsafeBufferPointer(rebasing: ids[26..<62]),
                    UnsafeBufferPointer(rebasing: ids[62..<72]), source: source, latencyUsec: latencyUsec,
                    inbox: inbox, attachments: attachments)
        }
    }

    /// The same with the ids and the day already spelled.
    public func drained(captureID: String, blockID: String, day: String, source: String,
                        latencyUsec: UInt64, inbox: String, attachments: Int = 0) {
        var c = captureID, b = blockID, d = day
        c.withUTF8 { c in
            b.withUTF8 { b in
                d.withUTF8 { d in
                    drained(spelled: c, b, d, source: source, latencyUsec: latencyUsec, inbox: inbox, attachments: attachments)
                }
            }
        }
    }

    private func drained(spelled captureID: UnsafeBufferPointer<UInt8>, _ blockID: UnsafeBufferPointer<UInt8>,
                         _ day: UnsafeBufferPointer<UInt8>, source: String, latencyUsec: UInt64, inbox: String,
                         attachments: Int) {
        // Once per capture, so the message is written into room made for it (its parts' sizes
        // plus our words: at most 102 bytes), not grown and copied a part at a time.
        let bound = 128 + captureID.count + day.count + blockID.count + source.utf8.count
        let message: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { room in
            var w = ByteWriter(room)
            // On stderr only the line is needed (its prefix here, and no journal fields).
            if !usesJournal { w.lit("outld: ") }
            w.lit("drained "); w.bytes(captureID); w.lit(" → "); w.bytes(day)
            w.lit(" (block "); w.bytes(blockID); w.lit(", source ")
            let sourceAt = w.count
            w.string(source)
            Self.attachmentsAndLatency(attachments, latencyUsec, &w)
            guard usesJournal else {
                // Only the source can hold a line break (the rest is ids, a day and our words).
                let line = UnsafeBufferPointer(w.written)
                if line[sourceAt...].contains(where: { $0 == 10 || $0 == 13 }) {
                    writeLine(Self.line(priority: LOG_INFO, message: UnsafeBufferPointer(rebasing: line[7...])))
                } else {
                    w.byte(10)
                    writeLine(UnsafeBufferPointer(w.written))
                }
                return nil
            }
            return String(decoding: w.written, as: UTF8.self)
        }
        guard let message else { return }
        let text = { (b: UnsafeBufferPointer<UInt8>) in String(decoding: b, as: UTF8.self) }
        var fields = [("OUTL_CAPTURE_ID", text(captureID)), ("OUTL_BLOCK_ID", text(blockID)), ("OUTL_JOURNAL_DAY", text(day)),
                      ("OUTL_SOURCE", source), ("OUTL_LATENCY_USEC", String(latencyUsec)), ("OUTL_INBOX", inbox)]
        if attachments > 0 { fields.append(("OUTL_ATTACHMENTS", String(attachments))) }
        emit(priority: LOG_INFO, id: .drained, message: message, fields: fields)
    }

    /// One capture file was set aside in rejected/: WARNING, MESSAGE_ID rejected.
    public func rejected(captureID: String, reason: String, inbox: String) {
        emit(priority: LOG_WARNING, id: .rejected,
             message: "rejected \(captureID) in \(inbox): \(reason) (moved to rejected/)",
             fields: [("OUTL_CAPTURE_ID", captureID), ("OUTL_REASON", reason), ("OUTL_INBOX", inbox)])
    }

    /// What one device's ops did in one live merge: INFO, MESSAGE_ID merged; and, when they deleted
    /// blocks that were live here, NOTICE, MESSAGE_ID deletedByDevice, with the first few deleted
    /// blocks' ids (one OUTL_BLOCK_ID each, so `journalctl OUTL_BLOCK_ID=` finds who deleted a block)
    /// and first words, already bounded and escaped by the caller.
    public func merged(device: String, ops: Int, created: Int, edited: Int, moved: Int, deleted: Int,
                       deletedBlocks: [(id: String, firstWords: String)], pages: [String], takenAway: (count: Int, shown: [TakenAway]) = (0, [])) {
        let what = "\(created) created, \(edited) edited, \(moved) moved, \(deleted) deleted"
        let counts = [("OUTL_DEVICE", device), ("OUTL_MERGED_OPS", "\(ops)"), ("OUTL_CREATED", "\(created)"),
                      ("OUTL_EDITED", "\(edited)"), ("OUTL_MOVED", "\(moved)"), ("OUTL_DELETED", "\(deleted)")]
        emit(priority: LOG_INFO, id: .merged,
             message: "merged \(ops) op\(ops == 1 ? "" : "s") from device \(device): \(what)",
             fields: counts + [("OUTL_PAGES", pages.joined(separator: " "))])
        deletedHere(device: device, deleted: deleted, deletedBlocks: deletedBlocks)
        takenAwayHere(device: device, count: takenAway.count, shown: takenAway.shown)
    }

    /// Blocks that were live here that another device's create took off their page (an earlier stamp
    /// on another page: a forgery, or a bug): NOTICE, MESSAGE_ID deletedByDevice, like a deletion
    /// (the page lost the block), naming each and the page it went to; nothing for none.
    public func takenAwayHere(device: String, count: Int, shown: [TakenAway]) {
        guard count > 0 else { return }
        var list = shown.map { "\($0.block.id) \"\($0.block.firstWords)\" (\($0.from) → \($0.to))" }.joined(separator: ", ")
        if count > shown.count { list += " and \(count - shown.count) more" }
        emit(priority: LOG_NOTICE, id: .deletedByDevice,
             message: "device \(device) took \(count) block\(count == 1 ? "" : "s") off \(count == 1 ? "its page" : "their pages") here, "
                + "by creating \(count == 1 ? "it" : "them") again on another page with an earlier stamp: \(list)",
             fields: [("OUTL_DEVICE", device), ("OUTL_DELETED", "\(count)")]
                + shown.map { ("OUTL_BLOCK_ID", $0.block.id) } + shown.map { ("OUTL_BLOCK_TEXT", $0.block.firstWords) })
    }

    /// Blocks that were live here deleted by another device's ops (in a live merge, or while no
    /// outld ran): NOTICE, MESSAGE_ID deletedByDevice, as `merged` describes; nothing for none.
    public func deletedHere(device: String, deleted: Int, deletedBlocks: [(id: String, firstWords: String)], whileAway: Bool = false) {
        guard deleted > 0 else { return }
        var shown = deletedBlocks.map { "\($0.id) \"\($0.firstWords)\"" }.joined(separator: ", ")
        if deleted > deletedBlocks.count { shown += " and \(deleted - deletedBlocks.count) more" }
        emit(priority: LOG_NOTICE, id: .deletedByDevice,
             message: "device \(device) deleted \(deleted) block\(deleted == 1 ? "" : "s") here\(whileAway ? " while outld was not running" : ""): \(shown)",
             fields: [("OUTL_DEVICE", device), ("OUTL_DELETED", "\(deleted)")]
                + deletedBlocks.map { ("OUTL_BLOCK_ID", $0.id) } + deletedBlocks.map { ("OUTL_BLOCK_TEXT", $0.firstWords) })
    }

    /// Ops of one device stamped further ahead of this machine's clock than the bound: WARNING,
    /// MESSAGE_ID clockAhead. `stamp` is the furthest one's, `kind` and `target` its op kind and id.
    public func clockAhead(device: String, ops: Int, stamp: String, ahead: String, aheadMs: Int64,
                           kind: String, target: String, bound: String) {
        emit(priority: LOG_WARNING, id: .clockAhead,
             message: "device \(device): \(ops) op\(ops == 1 ? "" : "s") stamped up to \(ahead) ahead of this machine's clock "
                + "(furthest: \(kind) \(target) at \(stamp)); applied, but beyond the \(bound) bound, so this device's "
                + "clock does not follow them",
             fields: [("OUTL_DEVICE", device), ("OUTL_OPS", "\(ops)"), ("OUTL_HLC", stamp),
                      ("OUTL_AHEAD_MS", "\(aheadMs)"), ("OUTL_OP_KIND", kind), ("OUTL_OP_ID", target)])
    }

    /// A page file that cannot be read or written (once per page and reason): ERR, MESSAGE_ID
    /// pageFailing; written again: INFO, MESSAGE_ID pageRecovered. `path` is relative to the workspace.
    public func pageFailure(path: String, reason: String, recovered: Bool) {
        // A folder (journals, pages) that is not a directory fails for all its pages at once.
        let folder = !path.hasSuffix(".md")
        if recovered {
            emit(priority: LOG_INFO, id: .pageRecovered, message: "\(path): \(folder ? "its pages are " : "")written again", fields: [("OUTL_PAGE_FILE", path)])
        } else {
            emit(priority: LOG_ERR, id: .pageFailing,
                 message: "\(path) \(reason); \(folder ? "no page in it is" : "this page is not") written until that changes "
                    + "(every other page is, and its blocks stay in the op log)",
                 fields: [("OUTL_PAGE_FILE", path), ("OUTL_REASON", reason)])
        }
    }

    public func info(_ msg: String, id: MessageID? = nil, fields: [String: String] = [:]) {
        emit(priority: LOG_INFO, id: id, message: msg, fields: fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    public func warning(_ msg: String, id: MessageID? = nil, fields: [String: String] = [:]) {
        emit(priority: LOG_WARNING, id: id, message: msg, fields: fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    public func error(_ msg: String, id: MessageID? = nil, fields: [String: String] = [:]) {
        emit(priority: LOG_ERR, id: id, message: msg, fields: fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    // MARK: output

    /// The readable form, "outld: drained …", "outld: warning: …", "outld: error: …": one event, one
    /// line, so embedded line breaks become spaces.
    static func line(priority: Int32, message: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let tag = priority <= LOG_ERR ? "error: " : priority == LOG_WARNING ? "warning: " : ""
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 17)
        out.append(contentsOf: "outld: ".utf8)
        out.append(contentsOf: tag.utf8)
        if !message.contains(where: { $0 == 10 || $0 == 13 }) {
            out.append(contentsOf: message)
        } else {
            // A CRLF is one break, one space (as a Character it always was).
            var i = 0
            while i < message.count {
                let c = message[i]
                if c == 13 && i + 1 < message.count && message[i + 1] == 10 { i += 1 }
                out.append(c == 10 || c == 13 ? 32 : c)
                i += 1
            }
        }
        out.append(10)
        return out
    }

    /// The drained line's end: ", 2 attachments, 8.1 ms)".
    @inline(__always)
    private static func attachmentsAndLatency(_ attachments: Int, _ latencyUsec: UInt64, _ w: inout ByteWriter) {
        if attachments == 1 { w.lit(", 1 attachment") } else if attachments > 1 {
            w.lit(", "); w.decimal(Int64(attachments)); w.lit(" attachments")
        }
        w.lit(", "); duration(latencyUsec, &w); w.lit(")")
    }

    /// "0.4 ms", "12.3 ms" below a second, else "3.4 s" (at most 27 bytes).
    static func duration(_ usec: UInt64, _ w: inout ByteWriter) {
        let unit: UInt64 = usec < 1_000_000 ? 1000 : 1_000_000
        let tenth = unit / 10
        let t = usec / tenth + (usec % tenth >= tenth / 2 ? 1 : 0)  // tenths, rounded; no product to overflow
        w.decimal(Int64(t / 10)); w.byte(UInt8(ascii: ".")); w.decimal(Int64(t % 10))
        w.lit(unit == 1000 ? " ms" : " s")
    }

    private func emit(priority: Int32, id: MessageID?, message: String, fields: [(String, String)]) {
        if usesJournal && sendToJournal(priority: priority, id: id, message: message, fields: fields) { return }
        var m = message
        m.withUTF8 { writeLine(Self.line(priority: priority, message: $0)) }
    }

    /// sd_journal_sendv with one iovec per FIELD=value (values may hold any byte, newlines too).
    private func sendToJournal(priority: Int32, id: MessageID?, message: String, fields: [(String, String)]) -> Bool {
        var all: [String] = ["MESSAGE=\(message)", "PRIORITY=\(priority)", "SYSLOG_IDENTIFIER=outld"]
        if let id { all.append("MESSAGE_ID=\(id.rawValue)") }
        for (k, v) in fields where Self.isValidFieldName(k) { all.append("\(k)=\(v)") }
        let buffers = all.map { Array($0.utf8) }
        let pointers = buffers.map { b -> UnsafeMutableRawPointer in
            let p = UnsafeMutableRawPointer.allocate(byteCount: max(b.count, 1), alignment: 1)
            b.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: b.count) }
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        var iov = (0..<buffers.count).map { iovec(iov_base: pointers[$0], iov_len: buffers[$0].count) }
        return iov.withUnsafeMutableBufferPointer { CSystemdShim_journalSendv($0.baseAddress, Int32($0.count)) } >= 0
    }

    /// journald's rule: upper-case letters, digits and '_', not starting with '_' or a digit.
    static func isValidFieldName(_ k: String) -> Bool {
        guard let f = k.utf8.first, f != UInt8(ascii: "_"), !(48...57).contains(f), k.utf8.count <= 64 else { return false }
        return k.utf8.allSatisfy { (65...90).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// Log lines are not durable file I/O, so they bypass the Sys seam (fault injection counting
    /// writes must not count these). No EINTR loop: outld runs with its signals blocked (signalfd).
    /// Readable lines held back during a drain pass, written with one write(2) when it ends: a
    /// burst of 100,000 captures is 100,000 lines, and one syscall each is a fifth of the drain.
    /// Journal entries are never held (each is its own entry, sent as it happens).
    /// Unchecked for overlapping access (a check per line): only writeLine and writeBytes touch it,
    /// neither calls out while it is borrowed.
    @exclusivity(unchecked) private var held: [UInt8] = []
    private var holding = false

    /// Starts holding readable lines until `releaseLines()`.
    public func holdLines() { holding = true }

    /// Writes every held line now and stops holding.
    public func releaseLines() {
        holding = false
        if !held.isEmpty { writeBytes(held); held.removeAll(keepingCapacity: true) }
    }

    private func writeLine(_ line: [UInt8]) {
        line.withUnsafeBufferPointer { writeLine($0) }
    }

    private func writeLine(_ line: UnsafeBufferPointer<UInt8>) {
        held.append(contentsOf: line)
        if !holding || held.count >= 1 << 16 { writeBytes(held); held.removeAll(keepingCapacity: true) }
    }

    private func writeBytes(_ bytes: [UInt8]) {
        var done = 0
        // Read in place: a mutable borrow of `held` while it is still held copied its 64 KiB.
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(stderrFD, $0.baseAddress! + done, $0.count - done) }
            if n <= 0 { return }
            done += n
        }
    }
}


// FilePresence: since when each block has been in a page's file as this device knows it, so that an
// editor's buffer saved back proves which blocks it was read with. Epochs count this device's
// projections of the page. Invariant: `firstSeen` errs early and `shownSince` errs late (a record lost
// or never made only makes deletions rarer, never one more), so a buffer that holds an id first seen at
// or after the epoch since which block X has been in the file was read with X in it.

struct FilePresence: Equatable {
    /// The epoch of the newest projection recorded (a file read now is read during it).
    private(set) var epoch = 0
    /// The earliest epoch at which each id may have been in the file.
    private(set) var firstSeen: [BlockID: Int] = [:]
    /// The ids in the file as this device last wrote or read it (its keys), each with the epoch
    /// since which it has been there without a break. One table, not a set beside it: a page's
    /// first projection shows thousands of ids, each inserted once.
    private(set) var shownSince: [BlockID: Int] = [:]
    /// The ids in the file as this device last wrote or read it.
    var present: Set<BlockID> { Set(shownSince.keys) }

    /// Whether a buffer holding `held` (ids it carried in its text) was read while `id` was in the
    /// file: some held id came to the file no earlier than `id` last did.
    func wasRead(with id: BlockID, holding held: some Sequence<BlockID>) -> Bool {
        guard let since = shownSince[id] else { return false }
        return held.contains { firstSeen[$0].map { $0 >= since } ?? false }
    }

    /// Whether the file as this device last wrote or read it held `id`.
    func shows(_ id: BlockID) -> Bool { shownSince[id] != nil }

    /// Whether `ids` (each once) are exactly the ids present.
    func shows(exactly ids: [BlockID]) -> Bool {
        ids.count == shownSince.count && ids.allSatisfy { shownSince[$0] != nil }
    }

    // MARK: changes, each also spelled as the record's line that replays it

    /// The page's own file was read, holding `ids`: ids not seen before were (at the latest) in it
    /// now; blocks it lacks are no longer known to be in it. Returns the record's lines, if any.
    mutating func read(_ ids: Set<BlockID>) -> [UInt8] {
        var out: [UInt8] = []
        let new = ids.filter { firstSeen[$0] == nil }.sorted()
        if !new.isEmpty { FilePresence.line("f", epoch, new, into: &out) }
        let gone = FilePresence.absent(from: ids, shownSince)
        if !gone.isEmpty { FilePresence.line("b", nil, gone, into: &out) }
        apply(.firstSeen(epoch), new)
        apply(.gone, gone)
        return out
    }

    /// A projection showing `ids` is in the file; `fileHeld` says which of them the file held just
    /// before (all of them when the file was left as it was; nil: those `present` says). Returns the
    /// record's lines (none when `spelling` is false: a record about to be written whole spells
    /// the presence itself).
    mutating func projected(_ ids: [BlockID], fileHeld: ((BlockID) -> Bool)?, spelling: Bool = true) -> [UInt8] {
        let e = epoch + 1
        var out: [UInt8] = []
        // One lookup per id: a present id was seen (`shownSince`'s keys are within `firstSeen`'s)
        // and is shown already; the others are shown now, and one held already but never seen (in
        // the file since some time before this epoch) was first seen at e - 1.
        var earlier: [BlockID] = [], shown: [BlockID] = []
        for id in ids where shownSince[id] == nil {
            shown.append(id)
            if firstSeen[id] == nil, fileHeld?(id) == true { earlier.append(id) }
        }
        if spelling { earlier.sort(); shown.sort() }  // the order is the spelling's; applying ignores it
        if spelling, !earlier.isEmpty { FilePresence.line("f", e - 1, earlier, into: &out) }
        apply(.firstSeen(e - 1), earlier)
        // The ids (each once) that were present are ids.count - shown.count of them: when that is
        // all of them, none is gone, and no set of the ids is made.
        let gone = shownSince.count == ids.count - shown.count ? [] : FilePresence.absent(from: Set(ids), shownSince)
        if spelling { FilePresence.line("s", e, shown, into: &out) }
        apply(.shown(e), shown)
        if spelling, !gone.isEmpty { FilePresence.line("b", nil, gone, into: &out) }
        apply(.gone, gone)
        return out
    }

    /// Replays one record line (without its newline); false when it is not one of presence's.
    mutating func replay(_ line: ArraySlice<UInt8>) -> Bool {
        guard let kind = line.first else { return false }
        var words = line.dropFirst().split(separator: UInt8(ascii: " "))[...]
        func epoch() -> Int? {
            words.popFirst().flatMap { Int(String(decoding: $0, as: UTF8.self)) }.flatMap { $0 >= 0 ? $0 : nil }
        }
        let change: Change
        switch kind {
        case UInt8(ascii: "f"): guard let e = epoch() else { return false }; change = .firstSeen(e)
        case UInt8(ascii: "s"): guard let e = epoch() else { return false }; change = .shown(e)
        case UInt8(ascii: "b"): change = .gone
        default: return false
        }
        var parsed: [BlockID] = []
        for w in words {
            guard let id = BlockID(String(decoding: w, as: UTF8.self)) else { return false }
            parsed.append(id)
        }
        apply(change, parsed)
        return true
    }

    /// Every line that rebuilds this presence, for a record written whole: per epoch one line of
    /// its ids. An id shown since the epoch it was first seen needs no "f" line: its "s" line,
    /// replayed after the "f" lines, sets both (so a page projected once spells each id once).
    func spelled() -> [UInt8] {
        var out: [UInt8] = []
        var ids: [BlockID] = []
        func lines(_ kind: String, _ pairs: [(epoch: Int, id: BlockID)]) {
            var i = 0
            while i < pairs.count {
                let e = pairs[i].epoch
                ids.removeAll(keepingCapacity: true)
                while i < pairs.count, pairs[i].epoch == e { ids.append(pairs[i].id); i += 1 }
                FilePresence.line(kind, e, ids, into: &out)
            }
        }
        // Grouped by epoch; the order of ids within a line is immaterial to a replay.
        let byEpoch: ((epoch: Int, id: BlockID), (epoch: Int, id: BlockID)) -> Bool = { $0.epoch < $1.epoch }
        var shown: [(epoch: Int, id: BlockID)] = []
        shown.reserveCapacity(shownSince.count)
        for (id, e) in shownSince { shown.append((epoch: e, id: id)) }
        var seen: [(epoch: Int, id: BlockID)] = []
        for (id, e) in firstSeen where shownSince[id] != e { seen.append((epoch: e, id: id)) }
        lines("f", seen.sorted(by: byEpoch))
        lines("s", shown.sorted(by: byEpoch))
        FilePresence.line("s", epoch, [], into: &out)
        return out
    }

    /// What one record line does.
    private enum Change { case firstSeen(Int), shown(Int), gone }

    /// The ids of `shown` not in `ids`, in order.
    private static func absent(from ids: Set<BlockID>, _ shown: [BlockID: Int]) -> [BlockID] {
        shown.keys.filter { !ids.contains($0) }.sorted()
    }

    private mutating func apply(_ change: Change, _ ids: [BlockID]) {
        switch change {
        case .firstSeen(let e):
            for id in ids { firstSeen[id] = min(firstSeen[id] ?? e, e) }
        case .shown(let e):
            epoch = max(epoch, e)
            // A first projection of a big page shows thousands at once: grown once, not by doubling.
            firstSeen.reserveCapacity(firstSeen.count + ids.count)
            shownSince.reserveCapacity(shownSince.count + ids.count)
            for id in ids {
                firstSeen[id] = min(firstSeen[id] ?? e, e)
                shownSince[id] = e
            }
        case .gone:
            for id in ids { shownSince[id] = nil }
        }
    }

    private static func line(_ kind: String, _ e: Int?, _ ids: [BlockID], into out: inout [UInt8]) {
        let need = out.count + 24 + 37 * ids.count
        if out.capacity < need { out.reserveCapacity(max(need, 2 * out.capacity)) }  // growing, never exact
        out.append(contentsOf: kind.utf8)
        if let e { out.append(contentsOf: " \(e)".utf8) }
        for id in ids { out.append(UInt8(ascii: " ")); id.spell(into: &out) }
        out.append(10)
    }
}

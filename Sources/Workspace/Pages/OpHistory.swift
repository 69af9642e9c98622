// OpHistory: every state each block and preamble ever had (as hashes, stamped with the op that made it),
// and every move of each block, so the reconciler can tell a projection some device made (content an op
// produced) from a hand edit (content no op produced), and whether a file's order may be taken (it
// proves its producer had seen every move: Evidence). Built lazily by re-reading the op log; `note` keeps it current after that.
import SystemCalls

struct OpHistory {
    /// An op as the history knows it: its stamp, and its place among its actor's ops in the order they
    /// were first read (an actor's file order). Evidence compares places, not stamps: an edit stamped
    /// after a field held back from the clock (HLClock.stamp(after:)) is ahead of its actor's later ops.
    struct Noted {
        var hlc: HLC
        var ordinal: Int
    }
    struct BlockStates {
        /// The winning (least-stamped) create.
        var create: Noted?
        /// (op, hash of text+props) for the create and every update, in no particular order.
        var texts: [(Noted, UInt64)] = []
        /// Every create and every move, in no particular order: the ops that placed the block. A file's
        /// order is taken as a move only once it proves its producer had seen them all
        /// (FileDiff.movable): then its producer placed the block where this device does.
        var creates: [Noted] = []
        var moves: [Noted] = []
    }
    var blocks: [BlockID: BlockStates] = [:]
    /// The stamps of this device's ops that took another producer's page file (a create under the
    /// id the file gave, an edit the file showed): such an op proves nothing about what a file's
    /// producer had seen (Evidence), it only repeats what one file said. Device-local (PageFiles).
    var adopted: Set<HLC> = []
    var preambles: [BlockID: Set<UInt64>] = [:]
    /// Ops noted per actor so far: the next one's ordinal.
    var noted: [BlockID: Int] = [:]

    static func hash(_ text: String, _ props: [Property]) -> UInt64 {
        var h = FNV1a()
        func mix(_ s: String) {
            h.add(s.utf8)
            h.add(0xFF)   // a separator no UTF-8 byte equals
        }
        mix(text)
        for p in props { mix(p.key); mix(p.value) }
        return h.value
    }

    /// An op's state as its projection shows it (Markdown.projected), which is what files hold.
    static func projectedHash(_ op: Op) -> UInt64 {
        let p = Markdown.projected(op.text, op.props)
        return hash(p.text, p.props)
    }

    mutating func note(_ op: Op) {
        switch op.kind {
        case .createBlock, .updateBlock:
            var s = blocks[op.id] ?? BlockStates()
            // Read again (a conflict copy, a file read from its start): it keeps its first place.
            if s.texts.contains(where: { $0.0.hlc == op.hlc }) { return }
            let n = Noted(hlc: op.hlc, ordinal: noted[op.hlc.actor, default: 0])
            noted[op.hlc.actor] = n.ordinal + 1
            if op.kind == .createBlock {
                if s.create.map({ op.hlc < $0.hlc }) ?? true { s.create = n }
                s.creates.append(n)
            }
            s.texts.append((n, OpHistory.projectedHash(op)))
            blocks[op.id] = s
        case .moveBlock:
            var s = blocks[op.id] ?? BlockStates()
            if s.moves.contains(where: { $0.hlc == op.hlc }) { return }
            let n = Noted(hlc: op.hlc, ordinal: noted[op.hlc.actor, default: 0])
            noted[op.hlc.actor] = n.ordinal + 1
            s.moves.append(n)
            blocks[op.id] = s
        case .setPreamble:
            preambles[op.id, default: []].insert(OpHistory.hash(Markdown.normalizedText(op.text), []))
        default:
            break
        }
    }

    /// Reads every op file again (read-only: nothing is cut), and what this device's archive keeps of
    /// the ones that lost ops (`seen`, read-only). Only called when a page file differs from
    /// everything this device projected, so a workspace nobody syncs never pays for it.
    static func load(opsDir: String, seen: SeenOps? = nil) throws -> OpHistory {
        var h = OpHistory()
        let (files, _) = try OpLogReader.readAll(dir: opsDir, ownName: "", seen: seen, log: .silent, progress: nil)
        for f in files { for op in f { h.note(op) } }
        return h
    }

    /// Whether some op left the block with exactly this text and these properties.
    func explains(_ id: BlockID, text: String, props: [Property]) -> Bool {
        guard let s = blocks[id] else { return false }
        let want = OpHistory.hash(text, props)
        return s.texts.contains { $0.1 == want }
    }

    func explainsPreamble(_ page: BlockID, _ text: String) -> Bool {
        text.isEmpty || preambles[page]?.contains(OpHistory.hash(text, [])) == true
    }
}

/// What a page file proves its producer had seen: per actor, the furthest op in that actor's file
/// order the file's content could only come from. Every actor's ops reach a device as a prefix of its
/// op file (sync tools deliver whole files), so an op of that actor no later in it was in the
/// producer's state. File order, not stamp order: an actor's stamps need not grow along its file.
struct Evidence {
    var seen: [BlockID: Int] = [:]

    mutating func raise(_ n: OpHistory.Noted) {
        if let cur = seen[n.hlc.actor], cur >= n.ordinal { return }
        seen[n.hlc.actor] = n.ordinal
    }

    func covers(_ n: OpHistory.Noted) -> Bool {
        guard let s = seen[n.hlc.actor] else { return false }
        return s >= n.ordinal
    }

    /// A block shown in the file proves its create op; a state only one actor's ops produced proves
    /// the earliest of those ops, unless that one was adopted: the file may show the state the
    /// adopted op took from a file, and a later op that happens to produce it again proves nothing.
    mutating func take(_ id: BlockID, text: String, props: [Property], history: OpHistory) {
        guard let s = history.blocks[id] else { return }
        func counts(_ n: OpHistory.Noted) -> Bool { !history.adopted.contains(n.hlc) }
        if let c = s.create, counts(c) { raise(c) }
        let want = OpHistory.hash(text, props)
        let matches = s.texts.filter { $0.1 == want }.map(\.0)
        if let first = matches.min(by: { $0.hlc < $1.hlc }), counts(first),
           matches.allSatisfy({ $0.hlc.actor == first.hlc.actor }) {
            raise(first)
        }
    }
}

// TaskMarkers: when a capture is a task in Logseq. Rule (outl-inbox(5)): a capture whose first word is
// TODO or LATER is a task, as a person who types it means; any other marker Logseq knows (NOW I get it,
// DONE with taxes!) and a priority `[#A]` with no marker before it are text, kept from mldoc's marker
// by an invisible U+2060 WORD JOINER stored before them. Invariant: applied once, to a capture's text
// as it becomes an op (a block written in Logseq keeps its markers), and idempotent.

enum TaskMarkers {
    /// Markers a capture keeps: the two Logseq gives a new task (its TODO/DOING and LATER/NOW workflows).
    static let kept: [[UInt8]] = ["TODO", "LATER"].map { Array($0.utf8) }
    /// Every other marker of mldoc's heading parser (`lib/syntax/heading0.ml` `marker`).
    static let others: [[UInt8]] = ["DOING", "WAITING", "WAIT", "DONE", "CANCELED", "CANCELLED", "STARTED",
                                     "IN-PROGRESS", "NOW"].map { Array($0.utf8) }
    static let all = kept + others
    /// The first byte of every marker, and a priority's `[` (all ASCII): bit `b` of the pair is set
    /// for each, so asking about a byte is a shift, not a set's hashing (once per capture).
    static let firstBytes: (UInt64, UInt64) = ((all.map { $0[0] }) + [0x5B]).reduce((0, 0)) { m, b in
        precondition(b < 128, "a marker starts with an ASCII byte")
        return b < 64 ? (m.0 | 1 << UInt64(b), m.1) : (m.0, m.1 | 1 << UInt64(b - 64))
    }

    /// Whether a marker or a priority can start with `b`.
    @inline(__always) static func startsMarker(_ b: UInt8) -> Bool {
        b < 64 ? firstBytes.0 >> UInt64(b) & 1 == 1 : b < 128 && firstBytes.1 >> UInt64(b - 64) & 1 == 1
    }
    /// U+2060 WORD JOINER: not a blank to mldoc (so no marker or priority starts after it), shown as
    /// nothing by both readers and by Obsidian's source view (CodeMirror marks U+200B, not U+2060).
    static let joiner: [UInt8] = [0xE2, 0x81, 0xA0]

    /// The text a capture's block holds: `text` with a joiner where mldoc would read a marker or a
    /// priority the rule above does not keep.
    static func capturedText(_ text: String) -> String {
        // Nearly every capture starts with no marker's or priority's first letter: no copy then.
        guard let f = text.utf8.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x23 }), startsMarker(f) else { return text }
        let t = Array(text.utf8)
        guard let at = site(t) else { return text }
        return String(decoding: t[..<at] + joiner + t[at...], as: UTF8.self)
    }

    /// Where mldoc's heading parser would try the marker on the block's first line (after `- `, an
    /// optional `#`… heading size and blanks: heading0.ml `level`, then `ws *> marker`), if what
    /// stands there is a marker (followed by a space) or a priority it must not read.
    static func site(_ t: [UInt8]) -> Int? {
        var i = 0
        func blanks() { while i < t.count, t[i] == 0x20 || t[i] == 0x09 { i += 1 } }
        blanks()
        var h = i
        while h < t.count, t[h] == 0x23 { h += 1 }
        if h > i, h == t.count || t[h] == 0x20 || t[h] == 0x09 { i = h; blanks() }
        if let m = all.first(where: { startsWord($0, t, i) }) {
            return others.contains(m) ? i : nil
        }
        // `[#` + one byte + `]` (heading0.ml `priority`: `string "[#" *> any_char <* char ']'`).
        if i + 3 < t.count, t[i] == 0x5B, t[i + 1] == 0x23, t[i + 3] == 0x5D { return i }
        return nil
    }

    /// `word` at `i`, followed by a space (heading0.ml: a marker must be followed by ' ' or the end of
    /// the input; a capture's first line is always followed by its properties' line break).
    static func startsWord(_ word: [UInt8], _ t: [UInt8], _ i: Int) -> Bool {
        i + word.count < t.count && t[i + word.count] == 0x20 && t[i..<(i + word.count)].elementsEqual(word)
    }
}

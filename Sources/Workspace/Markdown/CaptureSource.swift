// CaptureSource: a capture's typed text as the Markdown source its block holds, so that Logseq (mldoc)
// and CommonMark both show what was typed: every backslash shown (doubled where a reader would take
// one away), and the task-marker rule (TaskMarkers). Invariant: applied once, as a capture becomes an
// op (replaying a capture computes the same source); a block written in Logseq is source already and
// never goes through it, so its own escapes, entities and math keep their meaning.

extension Markdown {
    /// A capture's text as its block holds it: normalized (`normalizedText`), its backslashes shown
    /// (`CaptureSource.shownAsTyped`), the task-marker rule applied (TaskMarkers).
    public static func capturedText(_ text: String) -> String {
        if CaptureSource.isSourceAsTyped(text) { return text }
        return TaskMarkers.capturedText(CaptureSource.shownAsTyped(normalizedText(text)))
    }
}

enum CaptureSource {
    /// True when all three steps of `capturedText` would give `text` back as it is (nearly every
    /// capture), found in one pass over its bytes: no byte `normalizedText` changes, none that
    /// `shownAsTyped` looks at (`\`, `&`, `<`, `[`, `#+`), and a first word no marker or priority
    /// can start. A false is only a reason to run the three steps.
    static func isSourceAsTyped(_ text: String) -> Bool {
        var text = text
        return text.withUTF8(isSourceAsTyped)
    }

    /// The same over a text's UTF-8 bytes (a capture's, read in place).
    static func isSourceAsTyped(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var afterHash = false, first: UInt8? = nil
        for c in b {
            if c < SP {
                if c != TAB && c != LF { return false }
            } else if c == DEL || c == C1LEAD || c == BS || c == AMP || c == LT || c == LBRACK || (afterHash && c == PLUS) {
                return false
            }
            afterHash = c == HASH
            if first == nil, c != SP, c != TAB, c != HASH { first = c }
        }
        return first.map { !TaskMarkers.startsMarker($0) } ?? true
    }

    /// `text` as source both readers show as typed, outside code and math both read as such:
    /// * each backslash run doubled where a reader would take one away (`doubles`): `C:\\Users`,
    ///   `\\pi`, `\\\\server`; `1\2` and `é\é` stay. A `\begin{` opening a line is left to render's
    ///   opener escape;
    /// * a `#+BEGIN_…` block and a LaTeX environment, which mldoc alone reads (CommonMark shows their
    ///   lines), never close: an invisible U+2060 goes after `#+END_` and after `\end{`, so render
    ///   escapes their openers and both readers show every line as typed;
    /// * an entity reference CommonMark would decode and mldoc shows as text (`&amp;`, `&#38;`) gets
    ///   a backslash before its `&`, so both show it as typed;
    /// * a date in `<…>` or `[…]` (`<2026-12-05 Sat>`), which mldoc reads as a timestamp (with
    ///   `SCHEDULED:` or `DEADLINE:` before it, the block's schedule), gets an invisible U+2060 after
    ///   its bracket, so both show it as text.
    static func shownAsTyped(_ text: String) -> String {
        let b = text.utf8
        // Nothing to do (most captures): no backslash, `&`, `<`, `[`, and no `#+` (a `#tag` is none).
        var work = false, afterHash = false
        for c in b {
            if c == BS || c == AMP || c == LT || c == LBRACK || (afterHash && c == PLUS) { work = true; break }
            afterHash = c == HASH
        }
        guard work else { return text }
        var out: [UInt8] = []
        let bytes = Array(b)
        let lines = bytes.split(separator: LF, omittingEmptySubsequences: false)
        // A code block render writes whole (a fence both close, `$$` math, raw HTML) is code to both;
        // a `#+BEGIN_` block or a LaTeX environment is Logseq's alone, and is text here.
        var whole = Escapes.plan(lines, hasMeta: true).inRegion
        var n = 0
        while n < lines.count {
            let r = lines[n][Escapes.afterIndent(lines[n])...]
            if whole[n], n == 0 || !whole[n - 1], Escapes.hasPrefixCI(r, "#+begin_") || Escapes.hasPrefixCI(r, "\\begin{") {
                while n < lines.count, whole[n] { whole[n] = false; n += 1 }
            } else {
                n += 1
            }
        }
        for (n, l) in lines.enumerated() {
            if n > 0 { out.append(LF) }
            if whole[n] { out.append(contentsOf: l); continue }
            var code = SpanCursor(codeSpans(l)), math = SpanCursor(mathSpans(l))
            let a = Escapes.afterIndent(l)
            var i = l.startIndex
            // `#+END_NAME` never closes a block (render then escapes its opener and this line).
            if Escapes.hasPrefixCI(l[a...], "#+end_") {
                out.append(contentsOf: l[i..<(a + 6)]); out.append(contentsOf: TaskMarkers.joiner); i = a + 6
            }
            while i < l.endIndex {
                if code.contains(i) || math.contains(i) { out.append(l[i]); i += 1; continue }
                switch l[i] {
                case BS:
                    var e = i
                    while e < l.endIndex, l[e] == BS { e += 1 }
                    let k = e - i
                    let opener = i == a && Escapes.hasPrefixCI(l[e...], "begin{")
                    out.append(contentsOf: repeatElement(BS, count: !opener && doubles(l, run: k, before: e) ? 2 * k : k))
                    i = e
                    // `\end{NAME}` never closes an environment (mldoc finds it anywhere in the text).
                    if Escapes.hasPrefixCI(l[e...], "end{") {
                        out.append(contentsOf: l[e..<(e + 4)]); out.append(contentsOf: TaskMarkers.joiner); i = e + 4
                    }
                case AMP:
                    if entityReference(l, at: i) { out.append(BS) }
                    out.append(AMP); i += 1
                case LT, LBRACK:
                    out.append(l[i])
                    if isoDate(l, at: i + 1) { out.append(contentsOf: TaskMarkers.joiner) }
                    i += 1
                default:
                    out.append(l[i]); i += 1
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `&name;`, `&#digits;` or `&#xhex;` at `i` (CommonMark §2.5; a name not in HTML's list is left
    /// as text by CommonMark, and one backslash more there costs nothing).
    static func entityReference(_ l: Line, at i: Int) -> Bool {
        var j = i + 1
        if j < l.endIndex, l[j] == HASH {
            j += 1
            if j < l.endIndex, l[j] | 0x20 == UInt8(ascii: "x") { j += 1 }
        }
        let start = j
        while j < l.endIndex, j - start < 32, Escapes.isASCIILetter(l[j]) || Escapes.isDigit(l[j]) { j += 1 }
        return j > start && j < l.endIndex && l[j] == UInt8(ascii: ";")
    }

    /// `YYYY-MM-DD` at `i` (mldoc `timestamp`'s date).
    static func isoDate(_ l: Line, at i: Int) -> Bool {
        guard i + 10 <= l.endIndex else { return false }
        return l[i + 4] == DASH && l[i + 7] == DASH && [0, 1, 2, 3, 5, 6, 8, 9].allSatisfy { Escapes.isDigit(l[i + $0]) }
    }

    /// Whether a run of `run` backslashes ending before `before` is written doubled: when a reader
    /// would take one of them away. Both read `\\` as one backslash and `\` + ASCII punctuation as
    /// the punctuation (CommonMark §2.4; mldoc `md_escape_chars`); mldoc drops a backslash before a
    /// letter (`inline.ml` `entity`: `\pi` is π, `C:\Users` reads `C:Users`), CommonMark reads one
    /// at a line's end as a hard break when a line follows (§6.7), as the block's property lines or
    /// the next line of text always may. A lone backslash before anything else (a digit, a space, a
    /// non-ASCII letter) both show as it is.
    static func doubles(_ l: Line, run: Int, before e: Int) -> Bool {
        if run >= 2 { return true }
        guard e < l.endIndex else { return true }
        let c = l[e]
        return c < 0x80 && (isASCIIPunct(c) || Escapes.isASCIILetter(c))
    }

    @inline(__always) static func isASCIIPunct(_ c: UInt8) -> Bool {
        (33...47).contains(c) || (58...64).contains(c) || (91...96).contains(c) || (123...126).contains(c)
    }

    /// Where backslashes are code to both readers, so literal: inside an inline code span of
    /// CommonMark's (§6.1: a run of n backticks to the next run of exactly n) that is inside one of
    /// mldoc's too (`inline.ml` `md_code`: one backtick to the next backtick, or, when that would be
    /// empty, two to the next two). Where only one reader sees code, a backslash there is doubled.
    static func codeSpans(_ l: Line) -> [Range<Int>] {
        guard l.contains(TICK) else { return [] }
        // Both lists are sorted and disjoint: one merge, linear in the spans (a line of 64 KiB can
        // hold 20,000 of each).
        let cm = cmCodeSpans(l), ml = mldocCodeSpans(l)
        var out: [Range<Int>] = []
        var x = 0, y = 0
        while x < cm.count, y < ml.count {
            let a = cm[x], b = ml[y]
            if a.overlaps(b) { out.append(max(a.lowerBound, b.lowerBound)..<min(a.upperBound, b.upperBound)) }
            if a.upperBound <= b.upperBound { x += 1 } else { y += 1 }
        }
        return out
    }

    /// Whether offsets, asked in increasing order, fall in sorted disjoint ranges: constant time a
    /// question, where `contains(where:)` over the ranges would be quadratic on a line of spans.
    struct SpanCursor {
        let spans: [Range<Int>]
        var k = 0
        init(_ spans: [Range<Int>]) { self.spans = spans }
        mutating func contains(_ i: Int) -> Bool {
            while k < spans.count, spans[k].upperBound <= i { k += 1 }
            return k < spans.count && spans[k].contains(i)
        }
    }

    static func cmCodeSpans(_ l: Line) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var i = l.startIndex
        func run(_ at: Int) -> Int { var e = at; while e < l.endIndex, l[e] == TICK { e += 1 }; return e }
        while i < l.endIndex {
            guard l[i] == TICK else { i += 1; continue }
            let e = run(i), n = e - i
            var j = e, close: Int? = nil
            while j < l.endIndex {
                guard l[j] == TICK else { j += 1; continue }
                let f = run(j)
                if f - j == n { close = f; break }
                j = f
            }
            if let c = close { out.append(i..<c); i = c } else { i = e }
        }
        return out
    }

    static func mldocCodeSpans(_ l: Line) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var i = l.startIndex
        while i < l.endIndex {
            guard l[i] == TICK else { i += 1; continue }
            if i + 1 < l.endIndex, l[i + 1] != TICK {
                if let j = l[(i + 1)...].firstIndex(of: TICK) { out.append(i..<(j + 1)); i = j + 1 } else { i += 1 }
                continue
            }
            var j = i + 3, close: Int? = nil
            while j + 1 < l.endIndex {
                if l[j] == TICK, l[j + 1] == TICK { close = j + 2; break }
                j += 1
            }
            if let c = close { out.append(i..<c); i = c } else { i += 1 }
        }
        return out
    }


    /// TeX math, whose backslashes are commands to Logseq and Obsidian (cmark shows it as text):
    /// `$$…$$`, or `$…$` with no blank after the opening `$` and no blank, `(`, `[` or `{` before the
    /// closing one (mldoc `inline.ml` `latex_fragment`), on one line.
    static func mathSpans(_ l: Line) -> [Range<Int>] {
        guard l.contains(DOLLAR) else { return [] }
        var out: [Range<Int>] = []
        var i = l.startIndex
        while i < l.endIndex {
            guard l[i] == DOLLAR, i + 1 < l.endIndex else { i += 1; continue }
            let display = l[i + 1] == DOLLAR
            let start = i + (display ? 2 : 1)
            guard display || (l[start] != SP && l[start] != TAB) else { i += 1; continue }
            guard let end = l[start...].firstIndex(of: DOLLAR), end > start else { i += 1; continue }
            if display {
                guard end + 1 < l.endIndex, l[end + 1] == DOLLAR else { i += 1; continue }
                out.append(i..<(end + 2)); i = end + 2
            } else {
                guard ![SP, TAB, UInt8(ascii: "("), LBRACK, UInt8(ascii: "{")].contains(l[end - 1]) else { i += 1; continue }
                out.append(i..<(end + 1)); i = end + 1
            }
        }
        return out
    }
}

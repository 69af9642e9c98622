// CaptureSource: a capture's typed text as the Markdown source its block holds, so that Logseq (mldoc)
// and CommonMark both show what was typed: every backslash shown (doubled where a reader would take
// one away), and the task-marker rule (TaskMarkers). Invariant: applied once, as a capture becomes an
// op (replaying a capture computes the same source); a block written in Logseq is source already and
// never goes through it, so its own escapes, entities and math keep their meaning.

extension Markdown {
    /// A capture's text as its block holds it: normalized (`normalizedText`), its backslashes shown
    /// (`CaptureSource.showingBackslashes`), the task-marker rule applied (TaskMarkers).
    public static func capturedText(_ text: String) -> String {
        TaskMarkers.capturedText(CaptureSource.showingBackslashes(normalizedText(text)))
    }
}

enum CaptureSource {
    /// `text` with each backslash run outside code both readers read as code doubled where a reader
    /// would take one away (`doubles`), so both show every backslash typed: `C:\\Users`, `\\pi`,
    /// `\\\\server`; `1\2` and `é\é` stay as they are.
    static func showingBackslashes(_ text: String) -> String {
        guard text.utf8.contains(BS) else { return text }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        let lines = bytes.split(separator: LF, omittingEmptySubsequences: false)
        // A code block render writes whole (a fence both close, `$$` math, raw HTML) is code to both.
        let whole = Escapes.plan(lines, hasMeta: true).inRegion
        for (n, l) in lines.enumerated() {
            if n > 0 { out.append(LF) }
            if whole[n] { out.append(contentsOf: l); continue }
            let code = codeSpans(l) + mathSpans(l)
            var i = l.startIndex
            while i < l.endIndex {
                guard l[i] == BS, !code.contains(where: { $0.contains(i) }) else { out.append(l[i]); i += 1; continue }
                var e = i
                while e < l.endIndex, l[e] == BS { e += 1 }
                let k = e - i
                out.append(contentsOf: repeatElement(BS, count: doubles(l, run: k, before: e) ? 2 * k : k))
                i = e
            }
        }
        return String(decoding: out, as: UTF8.self)
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
        let cm = cmCodeSpans(l), ml = mldocCodeSpans(l)
        var out: [Range<Int>] = []
        for a in cm { for b in ml where a.overlaps(b) { out.append(max(a.lowerBound, b.lowerBound)..<min(a.upperBound, b.upperBound)) } }
        return out
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

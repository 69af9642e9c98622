// BlockPlan: per block, which regions are written whole, which openers are escaped and where the
// properties go; and the preamble's one escape. Invariant: a region is kept whole only when both
// readers see the same region and no escape inside it is lost.

extension Escapes {
    // MARK: the block's plan: code blocks, fences to escape, where the properties go

    /// A fence CommonMark opens the same way (§4.5): at most 3 spaces, 3+ of one character, and for
    /// backticks no backtick after them. Returns the fence length.
    static func cmOpener(_ l: Line) -> Int? {
        var i = l.startIndex
        while i < l.endIndex, l[i] == SP { i += 1 }
        guard i - l.startIndex <= 3, let c = startsFence(l[i...]) else { return nil }
        var e = i
        while e < l.endIndex, l[e] == c { e += 1 }
        if c == TICK, l[e...].contains(TICK) { return nil }
        return e - i
    }

    static func cmCloses(_ opener: Line, _ l: Line, length: Int) -> Bool {
        var o = opener.startIndex
        while opener[o] == SP { o += 1 }
        let c = opener[o]
        var i = l.startIndex
        while i < l.endIndex, l[i] == SP { i += 1 }
        guard i - l.startIndex <= 3 else { return false }
        var e = i
        while e < l.endIndex, l[e] == c { e += 1 }
        return e - i >= length && l[e...].allSatisfy(isBlank)
    }

    /// Whether the construct the first line opens would take in the property lines placed after it:
    /// a quote or callout (CommonMark continues it lazily over them; mldoc's quote runs to a blank
    /// line or an `id:: ` line), a GFM table (its rows go on to a blank line; mldoc reads the header,
    /// then the properties, then another table), an HTML block (to a blank line in CommonMark).
    /// Then the properties follow the whole text after one empty line, which ends each of these in
    /// both readers; mldoc still reads them as the block's properties (verified with mldoc bedae990).
    static func absorbsFollowingLines(_ lines: [Line]) -> Bool {
        let r = lines[0][afterIndent(lines[0])...]
        if r.first == GT || startsHTMLBlock(r) { return true }
        return lines.count > 1 && r.contains(PIPE) && isDelimiterRow(lines[1])
    }

    /// Lines after which mldoc is inside a list, quote or footnote that swallows the lines below it
    /// (`lists0.ml` `content_parser`, `block0.ml` `md_blockquote`, `footnote.ml`).
    static func startsRun(_ l: Line, first: Bool) -> Bool {
        let r = l[afterIndent(l)...]
        if r.first == GT { return true }
        if first { return false }
        if isListMarker(r) || isLinkDefinition(r) { return true }
        var d = r.startIndex
        while d < r.endIndex, isDigit(r[d]) { d += 1 }
        return d > r.startIndex && d < r.endIndex && r[d] == DOT && blankOrEnd(r, d + 1)
    }

    // MARK: the preamble: written as it is, but a region it opens and does not close would swallow
    // the blocks below it (a later line may close it): such an opener is escaped like a text's.

    /// Per line: front matter or inside a region the preamble closes (written as it is).
    static func preambleRaw(_ lines: [Line]) -> [Bool] {
        var raw = [Bool](repeating: false, count: lines.count)
        var i = 0
        if let f = lines.first, Markdown.trimmed(f).elementsEqual("---".utf8),
           let end = lines.indices.dropFirst().first(where: { Markdown.trimmed(lines[$0]).elementsEqual("---".utf8) }) {
            for x in 0...end { raw[x] = true }
            i = end + 1
        }
        let regions = Regions(lines)
        while i < lines.count {
            if let c = regions.close(lines[i], at: i) {
                for x in i...c.line { raw[x] = true }
                i = c.line + 1
            } else {
                i += 1
            }
        }
        return raw
    }

    /// The preamble's one site: a run before a region opener or a drawer line at the line's start.
    static func preambleSite(_ l: Line) -> Site? {
        let a = afterIndent(l)
        let ra = runEnd(l, from: a)
        let r = l[ra...]
        if opensRegion(r) || isDrawerLine(r) { return Site(at: a, run: ra - a, kind: .opener) }
        if ra > a, hasPrefixCI(r, "begin{") { return Site(at: a, run: ra - a, kind: .latex) }
        return nil
    }

    static func escapePreamble(_ l: Line, into out: inout [UInt8]) {
        guard let s = preambleSite(l) else { out.append(contentsOf: l); return }
        out.append(contentsOf: l[..<s.at])
        out.append(BS)
        out.append(contentsOf: l[s.at...])
    }

    static func unescapePreamble(_ l: Line, into out: inout [UInt8]) {
        guard let s = preambleSite(l), s.run >= (s.kind == .latex ? 2 : 1) else { out.append(contentsOf: l); return }
        out.append(contentsOf: l[..<s.at])
        out.append(contentsOf: l[(s.at + 1)...])
    }

    /// Whether a line reads differently as text than as code: a site that escapes, or a backslash
    /// run a reader takes from (CaptureSource.doubles) outside inline code.
    static func needsEscape(_ l: Line) -> Bool {
        if sites(l, first: false).contains(where: { escapes($0, escapeOpener: false) }) { return true }
        guard l.contains(BS) else { return false }
        var code = CaptureSource.SpanCursor(CaptureSource.codeSpans(l))
        var i = l.startIndex
        while i < l.endIndex {
            guard l[i] == BS, !code.contains(i) else { i += 1; continue }
            let e = runEnd(l, from: i)
            if CaptureSource.doubles(l, run: e - i, before: e) { return true }
            i = e
        }
        return false
    }

    static func plan(_ lines: [Line], hasMeta: Bool) -> Plan {
        let n = lines.count
        var p = Plan(inRegion: [Bool](repeating: false, count: n), escapeOpener: [Bool](repeating: false, count: n))
        let regions = Regions(lines)
        var inRun = false
        var i = 0
        while i < n {
            let l = lines[i]
            // A drawer in a text is escaped, never kept (SPEC 2.2); code regions may be kept.
            if let c = regions.close(l, at: i), c.kind == .code {
                // Left whole only when both tools read the same region and no escape is lost:
                // CommonMark must close a fence on the same line (§4.5); the closing line must end
                // there (mldoc reads on after it); on the first line no `:: ` may hide in it.
                var ok = true
                if startsFence(l[afterIndent(l)...]) != nil {
                    ok = cmOpener(l).map { cmCloses(l, lines[c.line], length: $0) } ?? false
                } else if c.line > i {
                    // CommonMark reads no region here but lines, and a fence among them would be
                    // its code block, maybe swallowing the properties: none may open one.
                    ok = !lines[(i + 1)...c.line].contains { startsFence($0[afterIndent($0)...]) != nil }
                }
                let tail = lines[c.line][c.after...]
                if ok, !tail.allSatisfy(isBlank) {
                    ok = !needsEscape(tail) && !opensRegion(tail[afterIndent(tail)...])
                }
                if ok, i == 0 { ok = !sites(l, first: true).contains { $0.kind == .property } }
                // Inside a list or quote mldoc reads the opener as text, but may read a later line
                // of it, past the run, as an opener of its own that swallows the blocks below: a
                // region there is never kept whole (its opener and closer are escaped as text).
                if ok, inRun { ok = false }
                if ok {
                    for x in i...c.line { p.inRegion[x] = true }
                    if i == 0 { p.metaAfter = c.line }
                    i = c.line + 1
                    continue
                }
            }
            p.escapeOpener[i] = true   // only read where the line has an opener site
            if !inRun { inRun = startsRun(l, first: i == 0) }
            i += 1
        }
        if hasMeta && absorbsFollowingLines(lines) {
            p.metaAfter = n - 1
            p.blankBeforeMeta = true
        }
        return p
    }
}

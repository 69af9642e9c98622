// EscapeSites: where render puts a backslash and parse takes one away. Invariant: a site's place and
// predicate do not depend on the length of its backslash run, so the same sites are found on a text
// line and on its escaped form.

extension Escapes {
    // MARK: sites

    static func runEnd(_ l: Line, from i: Int) -> Int {
        var j = i
        while j < l.endIndex, l[j] == BS { j += 1 }
        return j
    }

    /// Every escape site of a line (see the type's comment), found the same way on a text line and
    /// on its escaped form: a site's place and predicate do not depend on the length of its run.
    static func sites(_ l: Line, first: Bool) -> [Site] {
        var out: [Site] = []
        let a = afterIndent(l)
        let ra = runEnd(l, from: a)
        let r = l[ra...]
        if isBullet(r) || (!first && isHeading(r)) || isDirective(r) || isDrawerLine(r)
            || (first && (isListMarker(r) || isLinkDefinition(r) || isDashRule(r))) || (!first && isSetextUnderline(r)) {
            out.append(Site(at: a, run: ra - a, kind: .lineStart))
        } else if opensRegion(r) {
            out.append(Site(at: a, run: ra - a, kind: .opener))
        }
        if first, a < l.endIndex, isDigit(l[a]) {
            var d = a
            while d < l.endIndex, isDigit(l[d]) { d += 1 }
            let e = runEnd(l, from: d)
            if d - a <= 9, e < l.endIndex, l[e] == DOT || l[e] == RPAREN, blankOrEnd(l, e + 1) {
                out.append(Site(at: d, run: e - d, kind: .ordered))
            }
        }
        // C: the key runs from the line start to the first colon.
        var k = a
        while k < l.endIndex, isKeyByte(l[k]) { k += 1 }
        if k > a, k < l.endIndex, l[k] == COLON {
            let e = runEnd(l, from: k + 1)
            if e < l.endIndex, l[e] == COLON, e + 1 == l.endIndex || l[e + 1] == SP || l[(e + 1)...].allSatisfy(isBlank) {
                out.append(Site(at: k + 1, run: e - k - 1, kind: .property))
            }
        }
        if first {
            var p = l.startIndex
            while p < l.endIndex {
                if l[p] == COLON {
                    let e = runEnd(l, from: p + 1)
                    if e + 1 < l.endIndex, l[e] == COLON, l[e + 1] == SP, !out.contains(where: { $0.at == p + 1 }) {
                        out.append(Site(at: p + 1, run: e - p - 1, kind: .property))
                    }
                }
                p += 1
            }
        }
        return out
    }

    /// Whether render puts a backslash at this site. An opener is escaped when its region is not
    /// left whole (`escapeOpener`), and always once a person's backslash stands there.
    @inline(__always)
    static func escapes(_ s: Site, escapeOpener: Bool) -> Bool {
        switch s.kind {
        case .opener: return s.run > 0 || escapeOpener
        default: return true
        }
    }

    /// Writes `l` with render's escapes: each backslash run outside code spans doubled where a
    /// reader would take one away (`doubles`), and one backslash more at each site that escapes.
    static func escape(_ l: Line, first: Bool, escapeOpener: Bool, notLast: Bool, into out: inout [UInt8]) {
        let at = sites(l, first: first).filter { escapes($0, escapeOpener: escapeOpener) }.map(\.at)
        if at.isEmpty && !l.contains(BS) { out.append(contentsOf: l); return }
        let code = codeSpans(l)
        var i = l.startIndex
        while i < l.endIndex {
            if at.contains(i) {
                // A site (in code too: its construct is read at the line's start): the run doubled
                // and one more, so parse finds an odd run there.
                let e = runEnd(l, from: i)
                out.append(contentsOf: repeatElement(BS, count: 2 * (e - i) + 1))
                if e == i { out.append(l[i]); i += 1 } else { i = e }
                continue
            }
            guard l[i] == BS, !code.contains(where: { $0.contains(i) }) else { out.append(l[i]); i += 1; continue }
            let e = runEnd(l, from: i)
            let k = e - i
            out.append(contentsOf: repeatElement(BS, count: doubles(l, run: k, before: e, notLast: notLast) ? 2 * k : k))
            i = e
        }
    }

    /// Writes `l` with render's escapes undone: a run at a site loses the site's backslash and half of
    /// the rest; any other run outside code spans is halved. An odd run no render writes (another
    /// tool's `\*`) keeps its odd backslash, so no character a person typed is lost.
    static func unescape(_ l: Line, first: Bool, notLast: Bool, into out: inout [UInt8]) {
        if !l.contains(BS) { out.append(contentsOf: l); return }
        let at = sites(l, first: first).map(\.at)
        let code = codeSpans(l)
        var i = l.startIndex
        while i < l.endIndex {
            let site = at.contains(i)
            guard l[i] == BS, site || !code.contains(where: { $0.contains(i) }) else { out.append(l[i]); i += 1; continue }
            let e = runEnd(l, from: i)
            let m = e - i
            let k: Int
            if site || m % 2 == 0 { k = m / 2 }
            else if m == 1 && !doubles(l, run: 1, before: e, notLast: notLast) { k = 1 }
            else { k = (m + 1) / 2 }
            out.append(contentsOf: repeatElement(BS, count: k))
            i = e
        }
    }

    /// Whether a run of `run` backslashes ending before `before` is written doubled: when a reader
    /// would take one of them away. Both read `\\` as one backslash and `\` + ASCII punctuation as
    /// the punctuation (CommonMark §2.4; mldoc `md_escape_chars`); mldoc drops a backslash before a
    /// letter (`inline.ml` `entity`: `\pi` is π, `C:\Users` reads `C:Users`), CommonMark reads one
    /// before a line break as a hard break (§6.7). A lone backslash before anything else (a digit, a
    /// space, a non-ASCII letter, the block's last line end) both show as it is.
    static func doubles(_ l: Line, run: Int, before e: Int, notLast: Bool) -> Bool {
        if run >= 2 { return true }
        guard e < l.endIndex else { return notLast }
        let c = l[e]
        return c < 0x80 && (isASCIIPunct(c) || isASCIILetter(c))
    }

    @inline(__always) static func isASCIIPunct(_ c: UInt8) -> Bool {
        (33...47).contains(c) || (58...64).contains(c) || (91...96).contains(c) || (123...126).contains(c)
    }

    /// Where backslashes are code to both readers, so literal (no escape applies): inside an inline
    /// code span of CommonMark's (§6.1: a run of n backticks to the next run of exactly n) that is
    /// inside one of mldoc's too (`inline.ml` `md_code`: one backtick to the next backtick, or, when
    /// that would be empty, two to the next two). Where only one reader sees code the other's
    /// reading wins (a backslash there is escaped as text). Found from backticks alone, so a text
    /// line and its escaped form have the same code.
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

    /// Whether a line needs anything of render: a site that escapes, or a backslash run it doubles.
    static func needsEscape(_ l: Line, notLast: Bool = true) -> Bool {
        if sites(l, first: false).contains(where: { escapes($0, escapeOpener: false) }) { return true }
        guard l.contains(BS) else { return false }
        let code = codeSpans(l)
        var i = l.startIndex
        while i < l.endIndex {
            guard l[i] == BS, !code.contains(where: { $0.contains(i) }) else { i += 1; continue }
            let e = runEnd(l, from: i)
            if doubles(l, run: e - i, before: e, notLast: notLast) { return true }
            i = e
        }
        return false
    }
}

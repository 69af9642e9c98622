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
            || (first && (isListMarker(r) || isLinkDefinition(r) || isDashRule(r))) || (!first && isSetextUnderline(r))
            || hasPrefixCI(r, "#+end_") {
            out.append(Site(at: a, run: ra - a, kind: .lineStart))
        } else if opensRegion(r) {
            out.append(Site(at: a, run: ra - a, kind: .opener))
        } else if ra > a, hasPrefixCI(r, "begin{") {
            // `\begin{`: the opener is a backslash itself; escaped it is `\\begin{`.
            out.append(Site(at: a, run: ra - a, kind: .latex))
        }
        if first, a < l.endIndex, isDigit(l[a]) {
            var d = a
            while d < l.endIndex, isDigit(l[d]) { d += 1 }
            let e = runEnd(l, from: d)
            if d - a <= 9, e < l.endIndex, l[e] == DOT || l[e] == RPAREN, blankOrEnd(l, e + 1) {
                out.append(Site(at: d, run: e - d, kind: .ordered))
            }
        }
        // C: the key runs from the line start to the first colon; when a site above owns the line's
        // leading backslash run (a drawer line's `\:a:`), from after it, so the key is the same on
        // both forms. Otherwise the run is part of the key, as mldoc reads it (`\\:: v`).
        let keyStart = out.contains { $0.at == a } ? ra : a
        var k = keyStart
        while k < l.endIndex, isKeyByte(l[k]) { k += 1 }
        if k > keyStart, k < l.endIndex, l[k] == COLON {
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
        case .latex: return s.run > 1 || escapeOpener
        default: return true
        }
    }

    /// Writes `l` with render's escapes.
    static func escape(_ l: Line, first: Bool, escapeOpener: Bool, into out: inout [UInt8]) {
        var at: [Int] = []
        for s in sites(l, first: first) where escapes(s, escapeOpener: escapeOpener) {
            at.append(s.at)
        }
        copy(l, at: at, addingBackslashes: true, into: &out)
    }

    /// Writes `l` with render's escapes undone: one backslash from each site's run.
    static func unescape(_ l: Line, first: Bool, into out: inout [UInt8]) {
        var at: [Int] = []
        for s in sites(l, first: first) where s.run >= (s.kind == .latex ? 2 : 1) {
            at.append(s.at)
        }
        copy(l, at: at, addingBackslashes: false, into: &out)
    }

    /// Writes `l` with a backslash added before each offset in `at`, or the one at it left out.
    static func copy(_ l: Line, at: [Int], addingBackslashes: Bool, into out: inout [UInt8]) {
        if at.isEmpty { out.append(contentsOf: l); return }
        var i = l.startIndex
        for p in at.sorted() {
            out.append(contentsOf: l[i..<p])
            if addingBackslashes {
                out.append(BS)
                i = p
            } else {
                i = p + 1
            }
        }
        out.append(contentsOf: l[i...])
    }

}

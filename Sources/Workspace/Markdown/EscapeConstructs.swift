// EscapeConstructs: the constructs mldoc and CommonMark open at a line's start, each recognized from
// the construct's first byte, shared by the escape sites, the block plan and parse.

extension Escapes {
    // MARK: constructs (each given the line from the construct's first byte)

    static func isBullet(_ r: Line) -> Bool {
        r.first == DASH && blankOrEnd(r, r.startIndex + 1)
    }

    static func isHeading(_ r: Line) -> Bool {
        var i = r.startIndex
        while i < r.endIndex, r[i] == HASH { i += 1 }
        return i > r.startIndex && blankOrEnd(r, i)
    }

    static func hasPrefixCI(_ r: Line, _ p: String) -> Bool {
        var i = r.startIndex
        for c in p.utf8 {
            guard i < r.endIndex else { return false }
            let b = r[i] >= 65 && r[i] <= 90 ? r[i] + 32 : r[i]
            if b != c { return false }
            i += 1
        }
        return true
    }

    /// `#+NAME:` as mldoc's Directive (NAME up to the colon, not `BEGIN_…`) or its `#+NAME:` property
    /// (NAME without blanks, straight before the colon) reads it.
    static func isDirective(_ r: Line) -> Bool {
        guard r.count >= 3, r[r.startIndex] == HASH, r[r.startIndex + 1] == PLUS else { return false }
        let name = r.startIndex + 2
        guard let colon = r[name...].firstIndex(of: COLON), colon > name else { return false }
        if !hasPrefixCI(r[name...], "begin_") { return true }
        return !r[name..<colon].contains(where: isBlank)
    }

    /// `:NAME:` then only blanks (a drawer line; mldoc wants it alone on its line, one more escape
    /// costs nothing), NAME not only backslashes: `::` escaped as a property (`:\:`) must not become
    /// a drawer line on its escaped form. Such a NAME opens no drawer that could close either: every
    /// `:END:` of a text is escaped.
    static func isDrawerLine(_ r: Line) -> Bool {
        guard let end = drawerEnd(r), r[(r.startIndex + 1)..<(end - 1)].contains(where: { $0 != BS }) else { return false }
        return r[end...].allSatisfy(isBlank)
    }

    /// Index after `:NAME:` at the start of `r` (NAME: no colon, no space, not empty).
    static func drawerEnd(_ r: Line) -> Int? {
        guard r.first == COLON else { return nil }
        var i = r.startIndex + 1
        while i < r.endIndex, r[i] != COLON, r[i] != SP { i += 1 }
        guard i < r.endIndex, r[i] == COLON, i > r.startIndex + 1 else { return nil }
        return i + 1
    }

    /// mldoc's drawer opening line exactly: blanks, `:NAME:`, end of line (`drawer.ml` `drawer_name`).
    static func drawerOpener(_ l: Line) -> Bool {
        let r = l[afterIndent(l)...]
        return drawerEnd(r) == r.endIndex
    }

    static func isDrawerEnd(_ l: Line) -> Bool {
        let t = Markdown.trimmed(l)
        return t.count == 5 && hasPrefixCI(t, ":end:")
    }

    static func startsFence(_ r: Line) -> UInt8? {
        guard r.count >= 3, let c = r.first, c == TICK || c == TILDE,
              r[r.startIndex + 1] == c, r[r.startIndex + 2] == c else { return nil }
        return c
    }

    static func hasPrefix(_ r: Line, _ p: String) -> Bool {
        r.count >= p.utf8.count && zip(r, p.utf8).allSatisfy { $0 == $1 }
    }

    static func matches(_ l: Line, at j: Int, _ p: [UInt8], caseless: Bool) -> Bool {
        for (n, c) in p.enumerated() {
            var b = l[j + n]
            if caseless, b >= 65, b <= 90 { b += 32 }
            var q = c
            if caseless, q >= 65, q <= 90 { q += 32 }
            if b != q { return false }
        }
        return true
    }

    /// NAME of `\begin{NAME}` (latex_env.ml `env_name_options_parser`, any case).
    static func latexName(_ r: Line) -> Line? {
        guard r.first == BS, hasPrefixCI(r.dropFirst(), "begin{") else { return nil }
        let s = r.startIndex + 7
        guard let e = r[s...].firstIndex(of: RBRACE), e > s else { return nil }
        return r[s..<e]
    }

    /// The tag of a line starting `<tag` that raw_html.ml knows (the tag runs to a blank or `>`).
    static func htmlTag(_ r: Line) -> Line? {
        guard r.first == LT else { return nil }
        let s = r.startIndex + 1
        var e = s
        while e < r.endIndex, !isBlank(r[e]), r[e] != GT { e += 1 }
        guard e > s, e - s <= 10 else { return nil }
        let tag = String(decoding: r[s..<e], as: UTF8.self).lowercased()
        return htmlTags.contains(tag) ? r[s..<e] : nil
    }

    /// HTML element names, a superset of mldoc's `known_tags`: an extra name costs one escape.
    static let htmlTags: Set<String> = [
        "a", "abbr", "acronym", "address", "applet", "area", "article", "aside", "audio", "b", "base",
        "basefont", "bdi", "bdo", "big", "blink", "blockquote", "body", "br", "button", "canvas",
        "caption", "center", "cite", "code", "col", "colgroup", "data", "datalist", "dd", "del",
        "details", "dfn", "dialog", "dir", "div", "dl", "dt", "em", "embed", "fieldset", "figcaption",
        "figure", "font", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6",
        "head", "header", "hgroup", "hr", "html", "i", "iframe", "img", "input", "ins", "kbd", "keygen",
        "label", "legend", "li", "link", "main", "map", "mark", "marquee", "math", "menu", "menuitem",
        "meta", "meter", "nav", "noframes", "noscript", "object", "ol", "optgroup", "option", "output",
        "p", "param", "picture", "pre", "progress", "q", "rp", "rt", "ruby", "s", "samp", "script",
        "search", "section", "select", "slot", "small", "source", "span", "strike", "strong", "style",
        "sub", "summary", "sup", "svg", "table", "tbody", "td", "template", "textarea", "tfoot", "th",
        "thead", "time", "title", "tr", "track", "tt", "u", "ul", "var", "video", "wbr",
    ]

    /// A line start that may open a region (Regions): fence, `#+BEGIN_`, `$$`, `<`.
    static func opensRegion(_ r: Line) -> Bool {
        startsFence(r) != nil || beginName(Markdown.trimmed(r)) != nil || hasPrefix(r, "$$")
            || hasPrefix(r, "<?") || hasPrefix(r, "<!") || htmlTag(r) != nil
    }

    /// The NAME of a `#+BEGIN_NAME` line (`block0.ml` `block_name_options_parser`), unless mldoc reads
    /// the line as a `#+NAME:` property first.
    static func beginName(_ r: Line) -> Line? {
        guard hasPrefixCI(r, "#+begin_"), !isDirective(r) else { return nil }
        let s = r.startIndex + 8
        var e = s
        while e < r.endIndex, !isBlank(r[e]) { e += 1 }
        return e > s ? r[s..<e] : nil
    }

    static func isEndOf(_ name: Line, _ t: Line) -> Bool {
        guard hasPrefixCI(t, "#+end_"), t.count >= 6 + name.count else { return false }
        return hasPrefixCI(t[(t.startIndex + 6)...], String(decoding: name, as: UTF8.self).lowercased())
    }

    /// Dashes and blanks only, two dashes or more: after the bullet's `- ` CommonMark reads the
    /// whole line as a thematic break, which wins over the list item (§4.1), and the block is gone.
    static func isDashRule(_ r: Line) -> Bool {
        r.allSatisfy { $0 == DASH || isBlank($0) } && r.lazy.filter { $0 == DASH }.count >= 2
    }

    /// `=`s only or `-`s only (no blank between), then blanks: on a line that follows a paragraph
    /// line CommonMark reads a setext underline (§4.3), which makes the lines above it, the block's
    /// properties among them, one heading; mldoc shows `=`s as text and `-`s as a rule.
    static func isSetextUnderline(_ r: Line) -> Bool {
        guard let c = r.first, c == EQ || c == DASH else { return false }
        let run = r.prefix { $0 == c }
        return r[run.endIndex...].allSatisfy(isBlank)
    }

    /// A GFM table's delimiter row (§4.10): cells of `-`s with optional `:` at either end, split by
    /// `|`, at least one `|`.
    static func isDelimiterRow(_ l: Line) -> Bool {
        let t = Markdown.trimmed(l)
        guard t.contains(PIPE) else { return false }
        var cells = t.split(separator: PIPE, omittingEmptySubsequences: false)
        if t.first == PIPE { cells.removeFirst() }
        if t.last == PIPE, !cells.isEmpty { cells.removeLast() }
        return !cells.isEmpty && cells.allSatisfy { cell in
            var c = Markdown.trimmed(cell)
            if c.first == COLON { c = c.dropFirst() }
            if c.last == COLON { c = c.dropLast() }
            return !c.isEmpty && c.allSatisfy { $0 == DASH }
        }
    }

    /// A line CommonMark starts an HTML block with (§4.6), told apart well enough: a tag of type 1
    /// or 6 by name, a comment, `<?`, `<!`, or a lone complete tag (type 7). Such a block runs to a
    /// blank line (types 6 and 7), so the property lines after it would be inside it.
    static func startsHTMLBlock(_ r: Line) -> Bool {
        guard r.first == LT, r.count > 1 else { return false }
        var i = r.startIndex + 1
        if r[i] == 0x21 || r[i] == 0x3F { return true }   // <! <?
        if r[i] == SLASH { i += 1 }
        let name = r[i...].prefix { isASCIILetter($0) || isDigit($0) || $0 == DASH }
        guard let f = name.first, isASCIILetter(f) else { return false }
        let lower = String(decoding: name.map { $0 | 0x20 }, as: UTF8.self)
        let after = name.endIndex
        if htmlBlockNames.contains(lower) {
            return after == r.endIndex || isBlank(r[after]) || r[after] == GT || r[after...].starts(with: [SLASH, GT])
        }
        // Type 7: the tag alone on its line.
        let t = Markdown.trimmed(r)
        return t.last == GT && !t.dropFirst().contains(LT)
    }

    /// CommonMark's HTML block tag names, types 1 and 6 (§4.6).
    static let htmlBlockNames: Set<String> = [
        "script", "pre", "style", "textarea",
        "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col",
        "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr",
        "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav", "noframes", "ol",
        "optgroup", "option", "p", "param", "search", "section", "summary", "table", "tbody", "td", "tfoot",
        "th", "thead", "title", "tr", "track", "ul",
    ]

    @inline(__always) static func isASCIILetter(_ c: UInt8) -> Bool { (c | 0x20) >= 97 && (c | 0x20) <= 122 }

    static func isListMarker(_ r: Line) -> Bool {
        guard let c = r.first, c == STAR || c == PLUS else { return false }
        return blankOrEnd(r, r.startIndex + 1)
    }

    /// `[label]:` (a CommonMark link reference definition, or mldoc's `[^label]:` footnote).
    static func isLinkDefinition(_ r: Line) -> Bool {
        guard r.first == LBRACK else { return false }
        var i = r.startIndex + 1
        while i < r.endIndex, r[i] != RBRACK, r[i] != LBRACK { i += 1 }
        return i > r.startIndex + 1 && i + 1 < r.endIndex && r[i] == RBRACK && r[i + 1] == COLON
    }

    /// A property line as mldoc reads one: blanks, key, `::`, then a space or only blanks.
    static func isPropertyLine(_ l: Line) -> Bool { propertyColons(l) != nil }

    /// (first colon, second colon) of a property line.
    static func propertyColons(_ l: Line) -> (Int, Int)? {
        let s = afterIndent(l)
        var i = s
        while i < l.endIndex, isKeyByte(l[i]) { i += 1 }
        guard i > s, i + 1 < l.endIndex, l[i] == COLON, l[i + 1] == COLON else { return nil }
        let after = i + 2
        guard after == l.endIndex || l[after] == SP || l[after...].allSatisfy(isBlank) else { return nil }
        return (i, i + 1)
    }

    static func property(_ l: Line) -> (String, String)? {
        guard let (c, _) = propertyColons(l) else { return nil }
        let key = String(decoding: l[afterIndent(l)..<c], as: UTF8.self)
        let v = c + 2
        if v < l.endIndex, l[v] == SP, !l[v...].allSatisfy(isBlank) {
            return (key, String(decoding: l[(v + 1)...], as: UTF8.self))
        }
        return (key, "")
    }

}

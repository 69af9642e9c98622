// Regions: the multi-line constructs mldoc reads whole (code, math, HTML, drawers), found once per
// block or preamble. Invariant: a region closes where mldoc closes it, across blocks.

/// The regions mldoc reads whole, whatever lines they hold (a bullet inside is not a block): a fenced
/// code block (`lib/syntax/block0.ml` `fenced_code_block`: ``` or ~~~, to the first line starting
/// with ``` or ~~~), a `#+BEGIN_NAME` block (to `#+END_NAME`), `$$` display math (to the next `$$`),
/// a LaTeX environment (`lib/syntax/latex_env.ml`: `\begin{name}` to `\end{name}`, or to the end
/// of the page when it never closes), raw HTML (`lib/syntax/raw_html.ml`: a known tag to its closing
/// tag, `<!--` to `-->`, `<!` to `>`, `<?` to `?>`), and a drawer (`lib/syntax/drawer.ml`: `:NAME:`
/// to `:END:`). Each is tried where a line starts, after its blanks, and closes wherever its closer
/// comes, across blocks: a region left open in one block swallows the blocks below it.
struct Regions {
    enum Kind { case code, drawer }
    let lines: [Line]
    /// nextFence[k]: the first line at or after k whose trimmed text starts with ``` or ~~~.
    let nextFence: [Int]
    /// nextEnd[k]: the first line at or after k whose trimmed text is `:END:` (any case).
    let nextEnd: [Int]

    init(_ lines: [Line]) {
        self.lines = lines
        var f = [Int](repeating: lines.count, count: lines.count + 1)
        var e = f
        for k in stride(from: lines.count - 1, through: 0, by: -1) {
            let t = Markdown.trimmed(lines[k])
            f[k] = Escapes.startsFence(t) != nil ? k : f[k + 1]
            e[k] = Escapes.isDrawerEnd(t) ? k : e[k + 1]
        }
        nextFence = f; nextEnd = e
    }

    /// Where the region that line k opens ends: (line, kind, index after the closer in that line),
    /// or nil when the line opens none or it never closes. `content` is line k (a block's first line
    /// without its bullet).
    func close(_ content: Line, at k: Int) -> (line: Int, kind: Kind, after: Int)? {
        let r = content[Escapes.afterIndent(content)...]
        guard let first = r.first, first == TICK || first == TILDE || first == HASH
                || first == DOLLAR || first == LT || first == BS || first == COLON,
              !Escapes.isPropertyLine(content) else { return nil }
        if Escapes.startsFence(r) != nil {
            let c = nextFence[k + 1]
            return c < lines.count ? (c, .code, lines[c].endIndex) : nil
        }
        if Escapes.drawerOpener(content) {
            let c = nextEnd[k + 1]
            return c < lines.count ? (c, .drawer, lines[c].endIndex) : nil
        }
        if let name = Escapes.beginName(Markdown.trimmed(r)) {
            var c = k + 1
            while c < lines.count, !Escapes.isEndOf(name, Markdown.trimmed(lines[c])) { c += 1 }
            return c < lines.count ? (c, .code, lines[c].endIndex) : nil
        }
        if Escapes.hasPrefix(r, "$$") {
            return find(Array("$$".utf8), from: (k, r.startIndex + 2)).map { ($0.0, .code, $0.1) }
        }
        if let name = Escapes.latexName(r) {
            // One that never closes runs to the end of the page in mldoc (latex_env.ml): render
            // escapes it, and parse does not let a page's blocks vanish into it.
            return find(Array("\\end{".utf8) + Array(name) + [RBRACE], from: (k, r.startIndex), caseless: true)
                .map { ($0.0, .code, $0.1) }
        }
        if first == LT { return html(r, at: k).map { ($0.0, .code, $0.1) } }
        return nil
    }

    /// raw_html.ml: `<?` to `?>`, `<!--` to `-->`, `<![CDATA[` to `]]`, `<!` to `>`, a known tag to
    /// its closing tag (nested ones counted) or else to the next `/>`.
    func html(_ r: Line, at k: Int) -> (Int, Int)? {
        let s = r.startIndex
        func from(_ n: Int) -> (Int, Int) { (k, s + n) }
        if Escapes.hasPrefix(r, "<?") { return find(Array("?>".utf8), from: from(2)) }
        if Escapes.hasPrefix(r, "<!--") { return find(Array("-->".utf8), from: from(4)) }
        if Escapes.hasPrefix(r, "<![CDATA[") { return find(Array("]]".utf8), from: from(9)) }
        if Escapes.hasPrefix(r, "<!") { return find([GT], from: from(2)) }
        guard let tag = Escapes.htmlTag(r) else { return nil }
        let open = [LT] + Array(tag), close = Array("</".utf8) + Array(tag) + [GT]
        var level = 1
        var at = from(1 + tag.count)
        while let hit = find(close, from: at, caseless: true) {
            level += count(open + [GT], between: at, and: (hit.0, hit.1 - close.count))
                + count(open + [SP], between: at, and: (hit.0, hit.1 - close.count)) - 1
            if level <= 0 { return hit }
            at = hit
        }
        return find(Array("/>".utf8), from: from(1 + tag.count))
    }

    /// The first occurrence of `p` at or after (line, index): (its line, the index after it).
    func find(_ p: [UInt8], from: (Int, Int), caseless: Bool = false) -> (Int, Int)? {
        var (k, i) = from
        while k < lines.count {
            let l = lines[k]
            var j = max(i, l.startIndex)
            while j + p.count <= l.endIndex {
                if Escapes.matches(l, at: j, p, caseless: caseless) { return (k, j + p.count) }
                j += 1
            }
            k += 1
            if k < lines.count { i = lines[k].startIndex }
        }
        return nil
    }

    func count(_ p: [UInt8], between a: (Int, Int), and b: (Int, Int)) -> Int {
        var n = 0
        var at = a
        while let hit = find(p, from: at, caseless: true), hit.0 < b.0 || (hit.0 == b.0 && hit.1 <= b.1) {
            n += 1
            at = hit
        }
        return n
    }
}

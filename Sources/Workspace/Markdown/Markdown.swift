// Markdown: the projection's one Markdown module, pages written (render) and read (parse) in the
// dialect of SPEC 2.2: "- " bullets, two spaces per level, continuation lines two more, `key:: value`
// properties after a block's first line. Invariants, each tested (MarkdownTests, conformance tests):
// * parse(render(p)) == p for every page whose texts are normalized (`normalizedText`) and whose
//   property keys are keys: render's escapes (the `Escapes` rule set below) are the only change it
//   makes to a text, and parse undoes exactly them, so a person's own backslashes survive;
// * a text renders as exactly one block whose only properties are its own, in Logseq (mldoc) and in
//   CommonMark (Obsidian), and reads as it was captured;
// * no CR and no C0 control other than tab and LF is ever written (`normalizedText`).
public struct MDBlock: Equatable, Sendable {
    public var id: BlockID?
    public var text: String
    /// `key:: value` properties in file order; a Logseq drawer (`:LOGBOOK:` … `:END:`) found in a
    /// page is kept here as the property `:LOGBOOK:` whose value is its lines, so it stays a drawer.
    public var props: [Property]
    public var children: [MDBlock]
    public init(id: BlockID?, text: String, props: [Property] = [], children: [MDBlock] = []) {
        self.id = id; self.text = text; self.props = props; self.children = children
    }
}

public struct MDPage: Equatable, Sendable {
    /// Lines before the first block (page properties, YAML front matter), kept verbatim.
    public var preamble: String
    public var blocks: [MDBlock]
    public init(preamble: String = "", blocks: [MDBlock] = []) { self.preamble = preamble; self.blocks = blocks }
}

typealias Line = ArraySlice<UInt8>

private let LF: UInt8 = 10, CR: UInt8 = 13, SP: UInt8 = 32, TAB: UInt8 = 9, BS: UInt8 = 92
private let COLON: UInt8 = 58, DASH: UInt8 = 45, HASH: UInt8 = 35, PLUS: UInt8 = 43, STAR: UInt8 = 42
private let TICK: UInt8 = 96, TILDE: UInt8 = 126, GT: UInt8 = 62, LBRACK: UInt8 = 91, RBRACK: UInt8 = 93
private let DOT: UInt8 = 46, RPAREN: UInt8 = 41, DOLLAR: UInt8 = 36, LT: UInt8 = 60, RBRACE: UInt8 = 125
/// U+FFFD, what a C0 control in a text becomes (a visible mark of "something unprintable was here").
private let REPLACEMENT: [UInt8] = [0xEF, 0xBF, 0xBD]

public enum Markdown {
    // MARK: normalization (SPEC 2.2: no CR, no control character reaches a page)

    /// The text as a page holds it: CRLF and lone CR become LF on every line, and every C0 control
    /// other than tab and LF becomes U+FFFD. Render applies it to whatever an op carries, so an op
    /// with a NUL never puts one in a file; the drain's texts are stored already normalized.
    public static func normalizedText(_ s: String) -> String {
        if !s.utf8.contains(where: { $0 < SP && $0 != TAB && $0 != LF }) { return s }
        var out: [UInt8] = []
        normalize(Array(s.utf8)[...], newline: LF, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A block's text and properties as a projected page holds them (what parse reads back from
    /// render): the text normalized, a property value on one line, a key without blank or colon.
    /// The reconciler compares a model's state in this form with a file's, so an op that carried a
    /// CR or a control is not mistaken for an edit on a device that reads its projection.
    public static func projected(_ text: String, _ props: [Property]) -> (text: String, props: [Property]) {
        (normalizedText(text), props.map { p in
            var k: [UInt8] = [], v: [UInt8] = []
            normalize(Array(p.key.utf8)[...], newline: UInt8(ascii: "_"), into: &k)
            for (i, c) in k.enumerated() where !Escapes.isKeyByte(c) { k[i] = UInt8(ascii: "_") }
            if isDrawerKey(p.key) { return Property(p.key, normalizedText(p.value)) }
            normalize(Array(p.value.utf8)[...], newline: SP, into: &v)
            if v.allSatisfy(Escapes.isBlank) { v = [] }
            return Property(k.isEmpty ? "_" : String(decoding: k, as: UTF8.self), String(decoding: v, as: UTF8.self))
        })
    }

    /// Appends `s` normalized; line breaks (LF, CRLF, CR) are written as `newline`.
    static func normalize(_ s: Line, newline: UInt8, into out: inout [UInt8]) {
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == CR {
                out.append(newline)
                if i + 1 < s.endIndex, s[i + 1] == LF { i += 1 }
            } else if c == LF {
                out.append(newline)
            } else if c < SP && c != TAB {
                out.append(contentsOf: REPLACEMENT)
            } else {
                out.append(c)
            }
            i += 1
        }
    }

    // MARK: render

    public static func render(_ page: MDPage) -> [UInt8] {
        var out: [UInt8] = []
        renderPreamble(page.preamble, into: &out)
        // An explicit stack, not recursion: any depth of nesting renders, on any thread's stack.
        var stack: [(MDBlock, Int)] = page.blocks.reversed().map { ($0, 0) }
        while let (b, depth) = stack.popLast() {
            render(b, depth: depth, &out)
            for c in b.children.reversed() { stack.append((c, depth + 1)) }
        }
        return out
    }

    /// The lines before the first block.
    static func renderPreamble(_ preamble: String, into out: inout [UInt8]) {
        guard !preamble.isEmpty else { return }
        var pre: [UInt8] = []
        normalize(Array(preamble.utf8)[...], newline: LF, into: &pre)
        let lines = pre.split(separator: LF, omittingEmptySubsequences: false)
        let raw = Escapes.preambleRaw(lines)
        for (k, l) in lines.enumerated() {
            if raw[k] { out.append(contentsOf: l) } else { Escapes.escapePreamble(l, into: &out) }
            out.append(LF)
        }
    }

    /// The block's own lines (its children are the caller's); they depend on its id, text,
    /// properties and depth alone (PageRenderer relies on it).
    static func render(_ b: MDBlock, depth: Int, _ out: inout [UInt8]) {
        guard isPlain(b.text) else { return renderEscaped(b, depth: depth, &out) }
        pad(depth, &out)
        out.append(DASH); out.append(SP)
        out.append(contentsOf: b.text.utf8)
        out.append(LF)
        meta(b, depth: depth, idFirst: false, &out)
    }

    /// Nearly every capture is one plain line, in which no escape site can be: nothing special at
    /// its start (so no construct and no region opens there), no control byte (so one line), no
    /// backslash (no run, no trailing one) and no `::` (a colon makes a site only as part of one:
    /// a property's `key::` or a first line's `:: `). Such a text is written as it is, without the
    /// plan; `renderEscaped` writes the same bytes for it (MarkdownTests holds them to that).
    static func isPlain(_ text: String) -> Bool {
        let plain: Bool? = text.utf8.withContiguousStorageIfAvailable { t in
            guard let f = t.first, !Escapes.special(f) else { return false }
            var colon = false
            for c in t {
                if c < SP || c == BS || (colon && c == COLON) { return false }
                colon = c == COLON
            }
            return true
        }
        return plain == true
    }

    /// The block's lines through the plan: escapes, regions kept whole, where the properties go.
    static func renderEscaped(_ b: MDBlock, depth: Int, _ out: inout [UInt8]) {
        var text: [UInt8] = []
        normalize(Array(b.text.utf8)[...], newline: LF, into: &text)
        let lines = text.split(separator: LF, omittingEmptySubsequences: false)
        let hasMeta = b.id != nil || !b.props.isEmpty
        let plan = Escapes.plan(lines, hasMeta: hasMeta)
        for (k, line) in lines.enumerated() {
            pad(depth, &out)
            if k == 0 {
                out.append(DASH)
                if !line.isEmpty { out.append(SP) }
            } else {
                out.append(SP); out.append(SP)
            }
            if plan.inRegion[k] {
                out.append(contentsOf: line)
            } else {
                Escapes.escape(line, first: k == 0, escapeOpener: plan.escapeOpener[k],
                               notLast: k < lines.count - 1 || hasMeta && k == plan.metaAfter, into: &out)
            }
            out.append(LF)
            if hasMeta && k == plan.metaAfter { meta(b, depth: depth, idFirst: plan.idFirst, &out) }
        }
    }

    /// The block's properties, its id and its drawers, each line indented as a continuation line.
    static func meta(_ b: MDBlock, depth: Int, idFirst: Bool, _ out: inout [UInt8]) {
        func id() {
            guard let id = b.id else { return }
            pad(depth + 1, &out)
            out.append(contentsOf: "id:: ".utf8)
            id.spell(into: &out)
            out.append(LF)
        }
        if idFirst { id() }
        for p in b.props where !isDrawerKey(p.key) {
            pad(depth + 1, &out)
            // A key is what mldoc reads as one: no blank, no colon (markdown_property.ml).
            var key: [UInt8] = []
            normalize(Array(p.key.utf8)[...], newline: UInt8(ascii: "_"), into: &key)
            if key.isEmpty { key = [UInt8(ascii: "_")] }
            for (i, c) in key.enumerated() where !Escapes.isKeyByte(c) { key[i] = UInt8(ascii: "_") }
            out.append(contentsOf: key)
            out.append(contentsOf: ":: ".utf8)
            // A property value is one line by nature: line breaks become spaces (the op keeps them).
            normalize(Array(p.value.utf8)[...], newline: SP, into: &out)
            out.append(LF)
        }
        if !idFirst { id() }
        for p in b.props where isDrawerKey(p.key) {
            pad(depth + 1, &out)
            out.append(contentsOf: p.key.utf8)
            out.append(LF)
            if !p.value.isEmpty {
                var v: [UInt8] = []
                normalize(Array(p.value.utf8)[...], newline: LF, into: &v)
                for l in v.split(separator: LF, omittingEmptySubsequences: false) {
                    pad(depth + 1, &out)
                    out.append(contentsOf: l)
                    out.append(LF)
                }
            }
            pad(depth + 1, &out)
            out.append(contentsOf: ":END:".utf8)
            out.append(LF)
        }
    }

    @inline(__always)
    static func pad(_ depth: Int, _ out: inout [UInt8]) {
        for _ in 0..<depth { out.append(SP); out.append(SP) }
    }

    /// `:NAME:`, the key a Logseq drawer is kept under (NAME: no colon, blank or control).
    static func isDrawerKey(_ key: String) -> Bool {
        let k = Array(key.utf8)
        return Escapes.drawerEnd(k[...]) == k.count && !k.contains { $0 < SP }
    }

    // MARK: parse

    final class Node {
        let col: Int
        var lines: [Line]        // the first line's content, then continuation lines de-indented
        var region: [UInt8] = [] // per line: 0 text, 1 inside a code region, 2 inside a drawer
        var pendingBlank = 0
        var children: [Node] = []
        init(col: Int, first: Line) { self.col = col; lines = [first] }
    }

    /// Reads any outline a person, Logseq or Obsidian may have written; never fails, never drops a
    /// line. Block structure follows mldoc: a bullet or heading line outside a code block or drawer
    /// starts a block at its indentation (a tab counts two columns, so Logseq's tab style reads as
    /// the same tree); everything else continues the block above it.
    public static func parse(_ input: [UInt8]) -> MDPage {
        var bytes: [UInt8] = []
        normalizeNewlines(input, into: &bytes)
        var lines = bytes.split(separator: LF, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        let regions = Regions(lines)

        var preamble: [Line] = []
        var preambleRaw: [Bool] = []    // inside the front matter or a region: as written
        var roots: [Node] = []
        var stack: [Node] = []
        var regionEnd = -1       // the last line of the code block or drawer a line opened
        var regionKind: UInt8 = 0
        var k = 0
        // YAML front matter (Obsidian's properties), read whole: its list items are not blocks.
        if let first = lines.first, trimmed(first).elementsEqual("---".utf8),
           let end = lines.indices.dropFirst().first(where: { trimmed(lines[$0]).elementsEqual("---".utf8) }) {
            preamble = Array(lines[0...end])
            preambleRaw = [Bool](repeating: true, count: end + 1)
            k = end + 1
        }
        while k < lines.count {
            let line = lines[k]
            var i = line.startIndex, col = 0
            while i < line.endIndex, line[i] == SP || line[i] == TAB { col += line[i] == TAB ? 2 : 1; i += 1 }
            let rest = line[i...]
            if k > regionEnd {
                let bullet = Escapes.isBullet(rest)
                // A heading line is a block in mldoc; before the first block it is one only when
                // properties follow it (Logseq writes a first heading block without its bullet).
                let heading = !bullet && Escapes.isHeading(rest)
                    && (!stack.isEmpty || (k + 1 < lines.count && Escapes.isPropertyLine(lines[k + 1])))
                if bullet || heading {
                    let first = bullet ? rest.dropFirst(rest.count >= 2 ? 2 : 1) : rest
                    let node = Node(col: col, first: first)
                    while let top = stack.last, top.col >= col { stack.removeLast() }
                    if let parent = stack.last { parent.children.append(node) } else { roots.append(node) }
                    stack.append(node)
                    (regionEnd, regionKind) = opened(regions.close(first, at: k))
                    node.region.append(regionEnd >= k ? regionKind : 0)
                    k += 1
                    continue
                }
            }
            guard let cur = stack.last else {
                if k > regionEnd { (regionEnd, regionKind) = opened(regions.close(rest, at: k)) }
                preamble.append(line)
                preambleRaw.append(k <= regionEnd)
                k += 1
                continue
            }
            if line.isEmpty && k > regionEnd { cur.pendingBlank += 1; k += 1; continue }
            // Strip the block's continuation indent (col + 2 columns), no more.
            var j = line.startIndex, c = 0
            while j < line.endIndex, c < cur.col + 2, line[j] == SP || line[j] == TAB {
                c += line[j] == TAB ? 2 : 1; j += 1
            }
            let content = line[j...]
            var kind: UInt8 = k <= regionEnd ? regionKind : 0
            if k > regionEnd {
                (regionEnd, regionKind) = opened(regions.close(content, at: k))
                if regionEnd >= k { kind = regionKind }
            }
            for _ in 0..<cur.pendingBlank { cur.lines.append([]); cur.region.append(kind) }
            cur.pendingBlank = 0
            cur.lines.append(content)
            cur.region.append(kind)
            k += 1
        }
        while preamble.last?.allSatisfy({ $0 == SP || $0 == TAB }) == true { preamble.removeLast() }
        var pre: [UInt8] = []
        for (n, l) in preamble.enumerated() {
            if n > 0 { pre.append(LF) }
            if preambleRaw[n] { pre.append(contentsOf: l) } else { Escapes.unescapePreamble(l, into: &pre) }
        }
        return MDPage(preamble: String(decoding: pre, as: UTF8.self), blocks: blocks(roots))
    }

    /// The parsed blocks of these nodes, children first, with an explicit stack: any depth of nesting
    /// parses, on any thread's stack. The nodes let go of their children as they are read, so the
    /// node tree is not freed recursively either.
    static func blocks(_ roots: [Node]) -> [MDBlock] {
        var frames: [(node: Node?, kids: [Node], next: Int, done: [MDBlock])] = [(nil, roots, 0, [])]
        while true {
            let top = frames.count - 1
            let i = frames[top].next
            if i < frames[top].kids.count {
                frames[top].next = i + 1
                let n = frames[top].kids[i]
                let kids = n.children
                n.children = []
                frames.append((n, kids, 0, []))
                continue
            }
            let f = frames.removeLast()
            guard let n = f.node else { return f.done }
            frames[frames.count - 1].done.append(block(n, children: f.done))
        }
    }

    /// (last line, 1 code / 2 drawer) of a region, or (-1, 0).
    static func opened(_ c: (line: Int, kind: Regions.Kind, after: Int)?) -> (Int, UInt8) {
        guard let c else { return (-1, 0) }
        return (c.line, c.kind == .drawer ? 2 : 1)
    }

    /// One parsed block: its first property group (wherever it stands, as Logseq reads it), its
    /// drawers, and the rest as text with render's escapes undone.
    static func block(_ n: Node, children: [MDBlock]) -> MDBlock {
        let lines = n.lines
        // The first run of property lines outside code and drawers is the block's properties.
        var group = 0..<0
        var s = 0
        while s < lines.count {
            if n.region[s] == 0, Escapes.isPropertyLine(lines[s]) {
                var e = s
                while e < lines.count, n.region[e] == 0, Escapes.isPropertyLine(lines[e]) { e += 1 }
                group = s..<e
                break
            }
            s += 1
        }
        var id: BlockID? = nil
        var props: [Property] = []
        for l in lines[group] {
            guard let (key, value) = Escapes.property(l) else { continue }
            // The first valid `id::` is the block's id; another names no block (Logseq reads one
            // too) and goes; one that is no id is kept as the property it is.
            if key == "id", let v = BlockID(value.trimmingSpaces) {
                if id == nil { id = v }
                continue
            }
            props.append(Property(key, value))
        }
        // Drawers (the lines of a region of kind 2, `:NAME:` to `:END:`) are kept as properties.
        var inDrawer = Set<Int>()
        var d = 0
        while d < lines.count {
            guard n.region[d] == 2, Escapes.drawerOpener(lines[d]) else { d += 1; continue }
            var e = d + 1
            while e < lines.count, n.region[e] == 2, !Escapes.isDrawerEnd(lines[e]) { e += 1 }
            let last = min(e, lines.count - 1)
            var value: [UInt8] = []
            for x in (d + 1)..<max(d + 1, min(e, lines.count)) {
                if x > d + 1 { value.append(LF) }
                value.append(contentsOf: lines[x])
            }
            props.append(Property(String(decoding: trimmed(lines[d]), as: UTF8.self),
                                  String(decoding: value, as: UTF8.self)))
            for x in d...last { inDrawer.insert(x) }
            d = last + 1
        }
        var text: [UInt8] = []
        var t = 0
        for (x, l) in lines.enumerated() where !group.contains(x) && !inDrawer.contains(x) {
            if t > 0 { text.append(LF) }
            if n.region[x] == 1 {
                text.append(contentsOf: l)
            } else {
                Escapes.unescape(l, first: t == 0, notLast: x < lines.count - 1, into: &text)
            }
            t += 1
        }
        return MDBlock(id: id, text: String(decoding: text, as: UTF8.self), props: props, children: children)
    }

    static func normalizeNewlines(_ input: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(input.count)
        var i = 0
        while i < input.count {
            let c = input[i]
            if c == CR {
                out.append(LF)
                if i + 1 < input.count, input[i + 1] == LF { i += 1 }
            } else {
                out.append(c)
            }
            i += 1
        }
    }

    static func trimmed(_ l: Line) -> Line {
        var s = l.startIndex, e = l.endIndex
        while s < e, l[s] == SP || l[s] == TAB { s += 1 }
        while e > s, l[e - 1] == SP || l[e - 1] == TAB { e -= 1 }
        return l[s..<e]
    }
}

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

/// The escaping rule set, written once (SPEC 2.2). A text line that Logseq's parser (mldoc) or
/// CommonMark would read as a new block or as the block's metadata gets one backslash right before
/// the ASCII punctuation that opens the construct, never before a letter or a space. Both read
/// `\` + ASCII punctuation as that character: CommonMark 0.31 §2.4 (backslash escapes), mldoc
/// `lib/parsers.ml` `md_escape_chars` with `lib/syntax/type_op.ml` `unescaped_md_string`. mldoc tries
/// every physical line against its block parsers (`lib/mldoc_parser.ml` `parsers`: Directive, Drawer,
/// Heading, … before Paragraph), whatever its indentation and whichever block it stands in.
///
/// Sites, each a run of k >= 0 backslashes at a fixed place whose predicate does not depend on k; an
/// escape makes the run k + 1 (so a person's own backslashes there survive) and parse takes one away:
/// * A, line start (after the line's own blanks), any line:
///   `-` + blank or end: a block (mldoc `lib/syntax/heading0.ml` `level`; CommonMark §5.2 list item);
///   `#+NAME:`: a directive, hoisted into the page's properties (`lib/syntax/directive.ml`; Logseq
///   `graph_parser/mldoc.cljc` `collect-page-properties`), or a property (`lib/syntax/drawer.ml`
///   `parse2`); `:NAME:` alone: a drawer (`drawer.ml` `drawer_name`; `:PROPERTIES:` likewise);
///   a region opener (Regions: ``` ~~~ `#+BEGIN_` `$$` `\begin{` raw HTML) whose region is not
///   kept whole (see `plan`): escaped so neither tool opens it, since an open one swallows the
///   blocks below it. Later lines only: `#`… + blank or end, a heading block
///   (`lib/syntax/markdown_level.ml`; CommonMark §4.2); a first-line heading is its author's
///   heading block and stays. First line only, where CommonMark reads structure inside the list
///   item and mldoc reads the block's title text (heading0.ml `title`): `*`/`+` + blank (§5.2),
///   `[label]:` (§4.7 link reference definition, shown as nothing; mldoc `lib/syntax/footnote.ml`
///   swallows the lines below), dashes only (`- ---` is a thematic break, not an item, §4.1).
/// * B, first line only: `1.`/`1)` + blank, CommonMark's ordered list (escaped `1\.`).
/// * C, any line: `key::` + space or end, key without blank or colon, a property line wherever it
///   stands (`lib/syntax/markdown_property.ml`; Logseq `graph_parser/block.cljs` `extract-blocks`
///   takes the first property group after the bullet line): escaped `key:\: value`.
/// * D, first line only: every `::` + space, escaped `:\: ` (Logseq's file writer makes a page's
///   first block its page properties when its first line contains ":: ", `frontend/common/file/
///   core.cljs` `transform-content`).
/// * E, every line of the block but its last: a trailing backslash run gets one more, so CommonMark
///   does not read it as a hard line break (§6.7) and drop it (mldoc shows it: Markdown has no hard
///   break in `lib/syntax/inline.ml`). Parse takes one away only from two or more, so a single
///   trailing backslash another tool wrote stays.
/// A code region (a fence, `#+BEGIN_…`, `$$`, `\begin{…}`, raw HTML) is written as it is, nothing
/// escaped, when both tools read it the same way (for a fence: CommonMark §4.5 closes it on the same
/// line mldoc does, same character, at least as long, indented at most 3) and mldoc is not inside a
/// list, quote or footnote that swallows the opener (`lib/syntax/lists0.ml`, `block0.ml`
/// `md_blockquote`) while a line inside needs an escape. Properties go after the first line, or
/// after the region the first line opens; after a first-line quote `id::` comes first, since
/// mldoc's quote ends at an `id:: ` line (`md_blockquote`) and would swallow the others.
enum Escapes {
    enum Kind { case lineStart, opener, latex, ordered, property, trailing }
    struct Site { var at: Int; var run: Int; var kind: Kind }

    struct Plan {
        var inRegion: [Bool]
        var escapeOpener: [Bool]
        var metaAfter = 0
        var idFirst = false
    }

    @inline(__always) static func isBlank(_ c: UInt8) -> Bool { c == SP || c == TAB }
    /// A first byte some construct starts with (or a blank before one): not the plain path.
    @inline(__always) static func special(_ c: UInt8) -> Bool {
        c == SP || c == TAB || c == DASH || c == HASH || c == COLON || c == TICK || c == TILDE || c == STAR
            || c == PLUS || c == LBRACK || c == DOLLAR || c == LT || c == BS || c == GT || isDigit(c)
    }
    /// A byte of a property key (mldoc `markdown_property.ml`: not a colon, not white space).
    @inline(__always) static func isKeyByte(_ c: UInt8) -> Bool { c != COLON && c != SP && c != TAB && c != LF && c != CR }
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    static func afterIndent(_ l: Line) -> Int {
        var i = l.startIndex
        while i < l.endIndex, isBlank(l[i]) { i += 1 }
        return i
    }

    /// True when `l[i]` is the end of the line or a blank.
    @inline(__always) static func blankOrEnd(_ l: Line, _ i: Int) -> Bool { i >= l.endIndex || isBlank(l[i]) }

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
    /// costs nothing).
    static func isDrawerLine(_ r: Line) -> Bool {
        guard let end = drawerEnd(r) else { return false }
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

    // MARK: sites

    static func runEnd(_ l: Line, from i: Int) -> Int {
        var j = i
        while j < l.endIndex, l[j] == BS { j += 1 }
        return j
    }

    /// Every escape site of a line (see the type's comment), found the same way on a text line and
    /// on its escaped form: a site's place and predicate do not depend on the length of its run.
    static func sites(_ l: Line, first: Bool, notLast: Bool) -> [Site] {
        var out: [Site] = []
        let a = afterIndent(l)
        let ra = runEnd(l, from: a)
        let r = l[ra...]
        if isBullet(r) || (!first && isHeading(r)) || isDirective(r) || isDrawerLine(r)
            || (first && (isListMarker(r) || isLinkDefinition(r) || isDashRule(r))) {
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
        if notLast, l.last == BS {
            var s = l.endIndex
            while s > l.startIndex, l[s - 1] == BS { s -= 1 }
            out.append(Site(at: s, run: l.endIndex - s, kind: .trailing))
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
    static func escape(_ l: Line, first: Bool, escapeOpener: Bool, notLast: Bool, into out: inout [UInt8]) {
        var at: [Int] = []
        for s in sites(l, first: first, notLast: notLast) where escapes(s, escapeOpener: escapeOpener) {
            at.append(s.at)
        }
        copy(l, at: at, addingBackslashes: true, into: &out)
    }

    /// Writes `l` with render's escapes undone: one backslash from each site's run.
    static func unescape(_ l: Line, first: Bool, notLast: Bool, into out: inout [UInt8]) {
        var at: [Int] = []
        for s in sites(l, first: first, notLast: notLast) where s.run >= (s.kind == .trailing || s.kind == .latex ? 2 : 1) {
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

    static func needsEscape(_ l: Line, notLast: Bool = true) -> Bool {
        sites(l, first: false, notLast: notLast).contains { escapes($0, escapeOpener: false) }
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
                // there (mldoc reads on after it); on the first line no `:: ` may hide in it; where
                // mldoc may not see it (inside a list or quote) nothing in it may need an escape.
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
                    ok = !needsEscape(tail, notLast: false) && !opensRegion(tail[afterIndent(tail)...])
                }
                if ok, tail.last == BS, c.line < n - 1 || hasMeta && i == 0 { ok = false }
                if ok, i == 0 { ok = !sites(l, first: true, notLast: false).contains { $0.kind == .property } }
                if ok, inRun { ok = !lines[i...c.line].contains { needsEscape($0, notLast: true) } }
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
        p.idFirst = hasMeta && p.metaAfter == 0 && lines[0][afterIndent(lines[0])...].first == GT
        return p
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\r" { s.removeLast() }
        return String(s)
    }
}

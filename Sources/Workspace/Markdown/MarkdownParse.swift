// MarkdownParse: any outline a person, Logseq or Obsidian wrote, read into blocks. Invariants: it
// never fails and never drops a line but the leftover properties of a block whose bullet line was
// deleted (they end in another block's id::), no block has a key twice, and it undoes exactly
// render's escapes (EscapeSites).

extension Markdown {
    // MARK: parse

    final class Node {
        let col: Int
        var lines: [Line]        // the first line's content, then continuation lines de-indented
        var region: [UInt8] = [] // per line: 0 text, 1 inside a code region, 2 inside a drawer
        var empty: [Bool] = []   // per line: an empty line of the file (render's line before the properties)
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
                    node.empty.append(false)
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
            for _ in 0..<cur.pendingBlank { cur.lines.append([]); cur.region.append(kind); cur.empty.append(true) }
            cur.pendingBlank = 0
            cur.lines.append(content)
            cur.region.append(kind)
            cur.empty.append(false)
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
        // Render's empty line before properties that follow the whole text (Escapes.absorbsFollowingLines).
        let renderBlank = group.lowerBound >= 2 && n.empty[group.lowerBound - 1] ? group.lowerBound - 1 : -1
        var id: BlockID? = nil
        var props: [Property] = []
        // Property lines after the block's id:: that end in another id:: are what is left of a block
        // whose bullet line a person deleted (`dd` in vim on `- text` alone): render writes a block's
        // id:: last, so they never join the block above; they go, and that block with them.
        var leftover: [(String, String)] = []
        for l in lines[group] {
            guard let (key, value) = Escapes.property(l) else { continue }
            if key == "id", let v = BlockID(value.trimmingSpaces) {
                if id == nil { id = v } else if v != id { leftover.removeAll() }
                continue
            }
            if id == nil { props.append(Property(key, value)) } else { leftover.append((key, value)) }
        }
        // What follows the id:: and names no other block is the block's own (another writer may put
        // properties after it). A key given twice is the last one given, as Logseq reads it.
        for (key, value) in leftover { props.append(Property(key, value)) }
        props = Markdown.lastOfEachKey(props)
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
        for (x, l) in lines.enumerated() where !group.contains(x) && !inDrawer.contains(x) && x != renderBlank {
            if t > 0 { text.append(LF) }
            if n.region[x] == 1 {
                text.append(contentsOf: l)
            } else {
                Escapes.unescape(l, first: t == 0, into: &text)
            }
            t += 1
        }
        return MDBlock(id: id, text: String(decoding: text, as: UTF8.self), props: props, children: children)
    }

    /// `props` with each key once, holding the last value given for it, where it first stood.
    static func lastOfEachKey(_ props: [Property]) -> [Property] {
        var at: [String: Int] = [:]
        var out: [Property] = []
        for p in props {
            if let i = at[p.key] { out[i] = p } else { at[p.key] = out.count; out.append(p) }
        }
        return out
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

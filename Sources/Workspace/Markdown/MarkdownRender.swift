// MarkdownRender: a page's bytes from its blocks. Invariant: a block's lines depend on its id, text,
// properties and depth alone (PageRenderer reuses them), and parse reads back exactly what it wrote.

extension Markdown {
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
        appendBytes(of: b.text, &out)
        out.append(LF)
        meta(b, depth: depth, &out)
    }

    /// A String's bytes with one copy from its storage (a bridged one through a copy first).
    @inline(__always)
    static func appendBytes(of s: String, _ out: inout [UInt8]) {
        if s.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: s.utf8) }
    }

    @inline(__always)
    static func appendASCII(_ s: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// Nearly every capture is one plain line, in which no escape site can be: nothing special at
    /// its start (so no construct and no region opens there), no control byte (so one line), no
    /// backslash (no run), no DEL or C1 lead byte (nothing to replace) and no `::` (a colon makes a site only as part of one:
    /// a property's `key::` or a first line's `:: `). Such a text is written as it is, without the
    /// plan; `renderEscaped` writes the same bytes for it (MarkdownTests holds them to that).
    static func isPlain(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { isPlain($0) } == true
    }

    @inline(__always)
    static func isPlain(_ t: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let f = t.first, !Escapes.special(f) else { return false }
        var colon = false
        for c in t {
            if c < SP || c == BS || c == DEL || c == C1LEAD || (colon && c == COLON) { return false }
            colon = c == COLON
        }
        return true
    }

    /// A key `appendKey` writes as it is: not empty, no byte mldoc refuses in a key, none to normalize
    /// (and so no drawer's `:NAME:` either).
    @inline(__always)
    static func isPlainKey(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        !b.isEmpty && !b.contains(where: { !Escapes.isKeyByte($0) || needsNormalizing($0) })
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
                Escapes.escape(line, first: k == 0, escapeOpener: plan.escapeOpener[k], into: &out)
            }
            out.append(LF)
            if hasMeta && k == plan.metaAfter {
                // Empty, not indented: parse tells it from a person's empty line, which is indented.
                if plan.blankBeforeMeta { out.append(LF) }
                meta(b, depth: depth, &out)
            }
        }
    }

    /// The block's properties, its id and its drawers, each line indented as a continuation line.
    static func meta(_ b: MDBlock, depth: Int, _ out: inout [UInt8]) {
        func id() {
            guard let id = b.id else { return }
            pad(depth + 1, &out)
            appendASCII("id:: ", &out)
            id.spell(into: &out)
            out.append(LF)
        }
        for p in b.props where !isDrawerKey(p.key) {
            pad(depth + 1, &out)
            appendKey(p.key, &out)
            appendASCII(":: ", &out)
            // A property value is one line by nature: line breaks become spaces (the op keeps them).
            appendNormalized(p.value, newline: SP, &out)
            out.append(LF)
        }
        id()
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
            appendASCII(":END:", &out)
            out.append(LF)
        }
    }

    /// A key as mldoc reads one: no blank, no colon (markdown_property.ml), never empty. Nearly every
    /// key is such already and goes in with one copy.
    static func appendKey(_ key: String, _ out: inout [UInt8]) {
        let done = key.utf8.withContiguousStorageIfAvailable { b -> Bool in
            guard isPlainKey(b) else { return false }
            out.append(contentsOf: b)
            return true
        }
        if done == true { return }
        var bytes: [UInt8] = []
        normalize(Array(key.utf8)[...], newline: UInt8(ascii: "_"), into: &bytes)
        if bytes.isEmpty { bytes = [UInt8(ascii: "_")] }
        for (i, c) in bytes.enumerated() where !Escapes.isKeyByte(c) { bytes[i] = UInt8(ascii: "_") }
        out.append(contentsOf: bytes)
    }

    /// `normalize`, with one copy for a string in which nothing needs it (nearly every one).
    static func appendNormalized(_ s: String, newline: UInt8, _ out: inout [UInt8]) {
        let done = s.utf8.withContiguousStorageIfAvailable { b -> Bool in
            guard !b.contains(where: needsNormalizing) else { return false }
            out.append(contentsOf: b)
            return true
        }
        if done != true { normalize(Array(s.utf8)[...], newline: newline, into: &out) }
    }

    /// A byte `normalize` may change: a line break, a control but TAB, DEL, or a C1 lead byte.
    @inline(__always)
    static func needsNormalizing(_ c: UInt8) -> Bool { (c < SP && c != TAB) || c == DEL || c == C1LEAD }

    @inline(__always)
    static func pad(_ depth: Int, _ out: inout [UInt8]) {
        for _ in 0..<depth { out.append(SP); out.append(SP) }
    }

    /// `:NAME:`, the key a Logseq drawer is kept under (NAME: no colon, blank or control).
    static func isDrawerKey(_ key: String) -> Bool {
        guard key.utf8.first == COLON else { return false }  // the common case, without a copy
        let k = Array(key.utf8)
        return Escapes.drawerEnd(k[...]) == k.count && !k.contains { $0 < SP }
    }

}

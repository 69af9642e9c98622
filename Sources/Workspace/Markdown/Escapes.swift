// Escapes: the escape rule set and the bytes it tests, in one place for render and parse alike.

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
/// * F, later lines: `=`s only or `-`s only, a setext underline in CommonMark (§4.3) that would make
///   the lines above it, properties included, one heading: escaped `\===`, `\---`.
/// * G, any line: `#+END_…` outside a block kept whole (mldoc reads it as a tag `#+END_…`).
/// A code region (a fence, `#+BEGIN_…`, `$$`, `\begin{…}`, raw HTML) is written as it is, nothing
/// escaped, when both tools read it the same way (for a fence: CommonMark §4.5 closes it on the same
/// line mldoc does, same character, at least as long, indented at most 3) and mldoc is not inside a
/// list, quote or footnote that swallows the opener (`lib/syntax/lists0.ml`, `block0.ml`
/// `md_blockquote`) while a line inside needs an escape. Properties go after the first line, or
/// after the region the first line opens, or, when the first line opens a quote, a GFM table or an
/// HTML block (which would take them in: `absorbsFollowingLines`), after the whole text and one
/// empty line.
enum Escapes {
    enum Kind { case lineStart, opener, latex, ordered, property }
    struct Site { var at: Int; var run: Int; var kind: Kind }

    struct Plan {
        var inRegion: [Bool]
        var escapeOpener: [Bool]
        var metaAfter = 0
        /// An empty line before the properties: they follow the whole text (see `plan`).
        var blankBeforeMeta = false
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

}

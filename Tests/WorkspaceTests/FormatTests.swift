// The op-log line format and its checksum, the calendar and the page file names.
import Foundation
import JSONText
import SystemCalls
import Testing
@testable import Workspace

@Test func crc32c_matches_the_known_vectors() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
    #expect(CRC32C.checksum([]) == 0)
}

@Test func op_lines_round_trip_through_the_byte_parser() {
    let actor = BlockID.random()
    var op = Op(hlc: HLC(wall: 1_796_206_489_801, counter: 7, actor: actor), kind: .createBlock, id: BlockID.random())
    op.page = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 2)!)
    op.pos = "0mx5yytop0001i"
    op.text = "quote \" backslash \\ newline \n tab \t cr \r nul \u{0} bell \u{7} emoji 🧪 ünï"
    op.props = [Property("captured-at", "2026-12-01T23:58:07.120-05:00"), Property("source", "c\"li")]
    let line = OpEncoder.line(op)
    #expect(line.last == 10)
    let parsed = line.dropLast().withUnsafeBufferPointer { OpParser.parse($0) }
    #expect(parsed?.text == op.text)
    #expect(parsed?.props == op.props)
    #expect(parsed?.hlc == op.hlc)
    #expect(parsed?.page == op.page)
    #expect(parsed?.pos == op.pos)
    #expect(parsed?.kind == .createBlock)
    #expect(parsed?.parent == nil)
}

/// A JSON string is escaped as the byte-by-byte rule says wherever the byte that needs it stands:
/// every byte value at every place of strings of 1 to 24 bytes (so in each lane of the eight-byte
/// scan and in the tail after it), with the other bytes plain; and an op line with escapes is
/// parsed back to its text.
@Test func every_byte_is_escaped_or_not_by_the_rule_at_every_place_of_the_word_scan() {
    func expected(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [34]
        for c in b {
            switch c {
            case 34: out += [92, 34]
            case 92: out += [92, 92]
            case 10: out += [92, UInt8(ascii: "n")]
            case 13: out += [92, UInt8(ascii: "r")]
            case 9: out += [92, UInt8(ascii: "t")]
            case 0..<32: out += Array(String(format: "\\u%04x", Int(c)).utf8)
            default: out.append(c)
            }
        }
        return out + [34]
    }
    for length in 1...24 {
        for place in 0..<length {
            for value in 0...255 {
                var b = [UInt8](repeating: UInt8(ascii: "a") + UInt8(place % 26), count: length)
                b[place] = UInt8(value)
                let got = [UInt8](unsafeUninitializedCapacity: 6 * length + 2) { room, n in
                    var w = ByteWriter(room)
                    b.withUnsafeBufferPointer { OpEncoder.escaped($0, &w) }
                    n = w.count
                }
                #expect(got == expected(b), "byte \(value) at \(place) of \(length)")
            }
        }
    }
    #expect(JSONWord.anyQuoteBackslashOrControl(0x6161_6161_6161_6161) == false)
    // Two escapes in one word, and a string whose only escape is its last byte.
    let s = "ab\"c\\defgh\n"
    var op = Op(hlc: HLC(wall: HLC.minWall, counter: 0, actor: BlockID.random()), kind: .createBlock, id: BlockID.random())
    op.page = BlockID.random(); op.pos = "0"; op.text = s
    let parsed = OpEncoder.line(op).dropLast().withUnsafeBufferPointer { OpParser.parse($0) }
    #expect(parsed?.text == s)
}

/// The encoder writes into room reckoned from the op before it starts: an op of every kind whose
/// every string byte needs the longest escape (\u00XX), with the largest numbers, still fits it
/// (the writer traps rather than write past it) and reads back as it was.
@Test func op_lines_of_every_kind_fit_the_room_made_for_their_longest_escapes() {
    let controls = String(decoding: (0..<3000).map { UInt8($0 % 31 + 1) }, as: UTF8.self)
    for kind in [OpKind.createPage, .createBlock, .updateBlock, .moveBlock, .setPreamble, .deleteBlock] {
        // The reader takes walls of the one range (HLC.maxWall); the longest wall is encoded (and
        // must fit) all the same.
        var op = Op(hlc: HLC(wall: Int64.min, counter: UInt32.max, actor: BlockID.random()), kind: kind, id: BlockID.random())
        op.page = BlockID.random()
        op.parent = BlockID.random()
        op.pos = controls
        op.text = controls + controls
        op.props = (0..<20).map { _ in Property(controls, controls) }
        #expect(OpEncoder.line(op).last == 10)
        op.hlc.wall = HLC.maxWall
        let line = OpEncoder.line(op)
        let parsed = line.dropLast().withUnsafeBufferPointer { OpParser.parse($0) }
        #expect(parsed?.kind == kind && parsed?.hlc == op.hlc && parsed?.id == op.id)
        if kind == .createBlock || kind == .updateBlock { #expect(parsed?.text == op.text && parsed?.props == op.props) }
    }
}

/// A batch is written in place, each line after the one before in one room (OpLogWriter.append),
/// with what its ops share spelled once (OpEncoder.Spelled): every line, its checksum included, is
/// the line the op makes alone, whether its actor, page and wall time repeat the op's before it
/// or not.
@Test func ops_encoded_back_to_back_in_one_room_are_each_their_own_line() {
    let actors = [BlockID.random(), BlockID.random()], pages = [BlockID.random(), BlockID.random(), BlockID.random()]
    let ops: [Op] = (0..<40).map { n in
        let wall = 1_796_206_489_801 + Int64(n / 3) * (n % 7 == 0 ? 1_000_000_007 : 1)
        var op = Op(hlc: HLC(wall: wall, counter: UInt32(n), actor: actors[n / 11 % 2]), kind: n % 9 == 4 ? .createPage : .createBlock,
                    id: BlockID.random())
        op.page = pages[n / 4 % 3]
        op.pos = "0mx5yytop000\(n)"
        op.text = String(repeating: "é\"", count: n % 5 * 7)
        op.props = [Property("source", "cli \(n)")]
        return op
    }
    let room = 1 + ops.reduce(0) { $0 + OpEncoder.bound($1) }
    let batch = [UInt8](unsafeUninitializedCapacity: room) { buf, n in
        var w = ByteWriter(buf)
        w.byte(10)  // a newline first, as after a torn line
        var spelled = OpEncoder.Spelled()
        for op in ops { OpEncoder.encode(op, &w, &spelled) }
        n = w.count
    }
    #expect(batch == [10] + ops.flatMap { OpEncoder.line($0) })
    // And each line reads back as its op.
    let lines = batch.dropFirst().split(separator: 10)
    #expect(lines.count == ops.count)
    for (line, op) in zip(lines, ops) {
        let parsed = Array(line).withUnsafeBufferPointer { OpParser.parse($0) }
        #expect(parsed?.hlc == op.hlc && parsed?.id == op.id && parsed?.kind == op.kind)
        if op.kind == .createBlock { #expect(parsed?.page == op.page) }
    }
}

/// A capture's create is spelled and applied from its batch's bytes (CaptureOpView), in a batch with
/// page creates between its captures: every line is the one its Op (`asOp`) makes, in the same
/// order, and a model it is applied to holds what the Ops make it hold.
@Test func a_captures_create_is_the_line_and_the_change_its_op_makes() {
    let actor = BlockID.random()
    let texts = ["plain", "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7}", "emoji 🧪 ünï", "", String(repeating: "long ", count: 40)]
    var batch = CaptureBatch()
    var ops: [Op] = []
    for n in 0..<30 {
        let page = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 1 + n / 10)!)
        if n % 10 == 0 {
            var p = Op(hlc: HLC(wall: 1_796_206_489_801, counter: UInt32(2 * n), actor: actor), kind: .createPage, id: page)
            p.pageKind = .journal
            p.text = JournalDay(year: 2026, month: 12, day: 1 + n / 10)!.iso
            batch.pageCreates.append((before: batch.creates.count, op: p))
            ops.append(p)
        }
        let hlc = HLC(wall: 1_796_206_489_801 + Int64(n), counter: UInt32(2 * n + 1), actor: actor), id = BlockID.random()
        // Each field where a batch holds it: the list's bytes first, then what the batch spelled.
        let text = batch.append(texts[n % texts.count]), at = batch.append("2026-12-0\(1 + n / 10)T23:58:07.120-05:00")
        let source = batch.append(n % 4 == 0 ? "c\"li \(n)" : "cli"), pos = batch.append("0mx5yytop\(1000 + n)i")
        batch.appendCapture(hlc: hlc, id: id, page: page, pos: pos, text: text, capturedAt: at, source: source)
        var op = Op(hlc: hlc, kind: .createBlock, id: id)
        op.page = page; op.pos = "0mx5yytop\(1000 + n)i"; op.text = texts[n % texts.count]
        op.props = [Property("captured-at", "2026-12-0\(1 + n / 10)T23:58:07.120-05:00"), Property("source", n % 4 == 0 ? "c\"li \(n)" : "cli")]
        ops.append(op)
    }
    var inOrder: [Op] = []
    batch.inOrder(capture: { inOrder.append($1.asOp()) }, page: { inOrder.append($0) })
    #expect(inOrder.count == ops.count && batch.count == ops.count)
    #expect(inOrder.map(\.hlc) == ops.map(\.hlc))
    for (a, b) in zip(inOrder, ops) { #expect(a.text == b.text && a.pos == b.pos && a.props == b.props && a.page == b.page) }
    // The lines, back to back in one room as OpLogWriter writes them, within the batch's bound.
    let lines = [UInt8](unsafeUninitializedCapacity: batch.bound) { buf, n in
        var w = ByteWriter(buf)
        var spelled = OpEncoder.Spelled()
        batch.inOrder(capture: { OpEncoder.encode($1, &w, &spelled) }, page: { OpEncoder.encode($0, &w, &spelled) })
        n = w.count
    }
    #expect(String(decoding: lines, as: UTF8.self) == String(decoding: ops.flatMap { OpEncoder.line($0) }, as: UTF8.self))
    // Applied: the same blocks, with the same text, properties and position, and the same greatest
    // top-level position on each page.
    var viaCaptures = Model(), viaOps = Model()
    batch.inOrder(capture: { _ = viaCaptures.change($1) }, page: { viaCaptures.apply($0) })
    for op in ops { viaOps.apply(op) }
    for op in ops where op.kind == .createBlock {
        let a = viaCaptures.blocks[op.id], b = viaOps.blocks[op.id]
        #expect(a != nil && a?.text == b?.text && a?.props == b?.props && a?.pos == b?.pos && a?.page == b?.page)
    }
    for p in batch.pageCreates {
        #expect(viaCaptures.renderDigest(of: p.op.id) == viaOps.renderDigest(of: p.op.id))
        #expect(viaCaptures.pages[p.op.id]?.maxTopPos == viaOps.pages[p.op.id]?.maxTopPos && viaOps.pages[p.op.id]?.maxTopPos != "")
    }
}

/// A line as another writer may spell it, with its CRC.
func checkedLine(_ json: String) -> [UInt8] {
    let body = Array(json.utf8)
    let crc = CRC32C.checksum(body)
    let hex = String(crc, radix: 16)
    return Array((String(repeating: "0", count: 8 - hex.count) + hex + " ").utf8) + body
}

@Test func the_op_log_reader_reads_escapes_leniently_where_the_capture_format_refuses() {
    let a = BlockID.random(), id = BlockID.random(), page = BlockID.random()
    func text(_ t: String) -> String? {
        let line = checkedLine(#"{"k":"cb","w":1796000000000,"c":0,"a":"\#(a)","id":"\#(id)","pg":"\#(page)","pa":"","pos":"a","t":"\#(t)"}"#)
        return line.withUnsafeBufferPointer { OpParser.parse($0) }.map(\.text)
    }
    #expect(text(#"plain"#) == "plain")
    #expect(text(#"\u00e9\n\/\"\\"#) == "é\n/\"\\")
    // An escape RFC 8259 lacks stands for its byte; a lone surrogate for U+FFFD.
    #expect(text(#"x\qy"#) == "xqy")
    #expect(text(#"x\ud800y"#) == "x\u{FFFD}y")
    // A \u escape without four hex digits makes the line invalid.
    #expect(text(#"x\u12G4"#) == nil)
}

/// The reader finds a string's end eight bytes at a time: a quote or a backslash at every offset in
/// and around a word, one after another, or at a string's very end, reads back as it was written.
@Test func strings_read_back_wherever_their_quotes_and_escapes_fall_in_a_word() {
    let actor = BlockID.random()
    for length in 0..<26 {
        for at in 0..<max(1, length) {
            for special in ["\"", "\\", "\\\"", "\"\\"] {
                var chars = Array(repeating: "a", count: length)
                if length > 0 { chars[at] = special }
                var op = Op(hlc: HLC(wall: HLC.minWall, counter: 0, actor: actor), kind: .createBlock, id: BlockID.random())
                op.page = BlockID.random()
                op.pos = chars.joined()
                op.text = chars.joined() + "é" + chars.joined()
                op.props = [Property(chars.joined(), chars.reversed().joined())]
                let parsed = OpEncoder.line(op).dropLast().withUnsafeBufferPointer { OpParser.parse($0) }
                #expect(parsed?.text == op.text && parsed?.pos == op.pos && parsed?.props == op.props, "\(length) \(at) \(special)")
            }
        }
    }
}

/// Keys are matched by their bytes as written: one spelled with an escape, or longer than any known
/// key, is an unknown member and skipped; an unterminated one makes the line invalid.
@Test func keys_are_known_by_their_written_bytes() {
    let a = BlockID.random(), id = BlockID.random(), page = BlockID.random()
    func parse(_ extra: String) -> Op? {
        checkedLine(#"{"k":"cb","w":1796000000000,"c":0,"a":"\#(a)","id":"\#(id)","pg":"\#(page)",\#(extra)"t":"x"}"#)
            .withUnsafeBufferPointer { OpParser.parse($0) }
    }
    #expect(parse("")?.text == "x")
    #expect(parse(#""\u0074":"y","#)?.text == "x", "an escaped spelling of t is another key")
    #expect(parse(#""tt":"y","ttt":"z","tttt":"w","\"":"v","":"u","#)?.text == "x")
    #expect(parse(#""t\"":"y","#)?.text == "x")
    #expect(parse(#"  "pos" : "p" , "#)?.pos == "p")
    #expect(parse(#""t"#) == nil)
}

/// A line's actor and page ids are compared with the last ones read before they are parsed: bytes
/// that were never an id (36 zero bytes, as a fresh comparison holds) are still no id.
@Test func an_id_of_zero_bytes_is_no_id_even_before_any_id_was_read() {
    let id = BlockID.random(), page = BlockID.random(), good = BlockID.random()
    func line(actor: [UInt8], page pg: [UInt8]) -> [UInt8] {
        let body = Array(#"{"k":"cb","w":1796000000000,"c":0,"a":""#.utf8) + actor + Array(#"","id":"\#(id)","pg":""#.utf8) + pg
            + Array(#"","pa":"","pos":"a","t":"x"}"#.utf8)
        let crc = String(CRC32C.checksum(body), radix: 16)
        return Array((String(repeating: "0", count: 8 - crc.count) + crc + " ").utf8) + body
    }
    let zeros = [UInt8](repeating: 0, count: 36), spelled = Array(good.description.utf8), pageBytes = Array(page.description.utf8)
    for l in [line(actor: zeros, page: pageBytes), line(actor: spelled, page: zeros)] {
        var scratch = ParseScratch()
        #expect(l.withUnsafeBufferPointer { OpParser.parseRaw($0, &scratch) } == nil)
    }
    // The same scratch line after line: a good id is kept, and a zero one after it is still refused.
    var scratch = ParseScratch()
    let first = line(actor: spelled, page: pageBytes)
    #expect(first.withUnsafeBufferPointer { OpParser.parseRaw($0, &scratch) }?.hlc.actor == good)
    #expect(first.withUnsafeBufferPointer { OpParser.parseRaw($0, &scratch) }?.page == page)
    #expect(line(actor: zeros, page: pageBytes).withUnsafeBufferPointer { OpParser.parseRaw($0, &scratch) } == nil)
}

@Test func a_flipped_bit_fails_the_line_check() {
    var op = Op(hlc: HLC(wall: HLC.minWall, counter: 0, actor: BlockID.random()), kind: .deleteBlock, id: BlockID.random())
    op.text = ""
    var line = Array(OpEncoder.line(op).dropLast())
    line[30] ^= 0x01
    #expect(line.withUnsafeBufferPointer { OpParser.parse($0) } == nil)
    #expect([UInt8](repeating: 0, count: 200).withUnsafeBufferPointer { OpParser.parse($0) } == nil)
}

@Test func journal_day_validates_the_calendar() {
    #expect(JournalDay(year: 2026, month: 2, day: 29) == nil)
    #expect(JournalDay(year: 2028, month: 2, day: 29) != nil)
    #expect(JournalDay(year: 2026, month: 13, day: 1) == nil)
    #expect(JournalDay(year: 2026, month: 12, day: 2)!.fileStem == "2026_12_02")
    #expect(JournalDay(year: 2026, month: 12, day: 2)!.iso == "2026-12-02")
    #expect(JournalDay(year: 2026, month: 12, day: 31)!.next == JournalDay(year: 2027, month: 1, day: 1))
}

@Test func same_day_gets_the_same_page_id_everywhere() {
    let d = JournalDay(year: 2026, month: 12, day: 2)!
    #expect(BlockID.journalPage(d) == BlockID.journalPage(JournalDay(parsing: "2026_12_02")!))
    #expect(BlockID.journalPage(d) != BlockID.journalPage(d.next))
}

@Test func page_file_names_are_safe_and_reversible() {
    for name in ["a/b", "..", ".hidden", "100% done", "what? <x>|*:\"\\", "ünï 🧪", "tab\there"] {
        let enc = PageFileName.encode(name)
        #expect(!enc.contains("/") && !enc.hasPrefix(".") && !enc.contains(":") && !enc.contains("\t"))
        #expect(PageFileName.decode(enc) == name)
    }
}

@Test func position_keys_always_fit_between() {
    var keys = ["0mx5yytop0001i", "0mx5yytp20000i"]
    for _ in 0..<200 {
        let k = PositionKey.between(keys[0], keys[1])
        #expect(keys[0] < k && k < keys[1])
        keys[1] = k
    }
    let after = PositionKey.between("zzz", nil)
    #expect(after > "zzz")
    #expect(PositionKey.between(nil, "0001") < "0001")
}

@Test func hardware_and_table_crc32c_agree_on_every_length_and_alignment() {
    var bytes: [UInt8] = []
    var x: UInt32 = 0x1234_5678
    for _ in 0..<600 { x = x &* 1_664_525 &+ 1_013_904_223; bytes.append(UInt8(truncatingIfNeeded: x >> 24)) }
    bytes.withUnsafeBytes { all in
        for start in 0..<9 {
            for len in 0..<(all.count - start) where len < 80 || len % 37 == 0 {
                let b = UnsafeRawBufferPointer(rebasing: all[start..<(start + len)])
                #expect(CRC32C.checksum(b) == CRC32C.software(b))
                #expect(CRC32C.checksum(b, seed: 0xDEAD_BEEF) == CRC32C.software(b, seed: 0xDEAD_BEEF))
            }
        }
    }
}

/// ByteWriter.decimal spells a number as String(v) does, two digits at a time: every digit count,
/// each side of a power of ten, both ends of Int64.
@Test func decimal_spells_every_number_as_the_standard_library_does() {
    var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, 101, Int64.max, Int64.min, Int64.min + 1, 1_796_206_489_801]
    var p: Int64 = 1
    for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -p, -(p - 1)] }
    values += (0..<2000).map { _ in Int64.random(in: Int64.min...Int64.max) }
    for v in values {
        let got = [UInt8](unsafeUninitializedCapacity: 20) { room, n in
            var w = ByteWriter(room)
            w.decimal(v)
            n = w.count
        }
        #expect(String(decoding: got, as: UTF8.self) == String(v))
    }
}

/// A day is spelled with four digits of year and two of month and day, zero-padded, from the
/// first year a journal page can name to the last: both separators.
@Test func journal_days_spell_zero_padded_in_both_separators() {
    for year in [1, 9, 10, 99, 100, 101, 999, 1000, 1999, 2000, 2026, 9999] {
        for month in 1...12 {
            for day in 1...Gregorian.daysIn(month: month, year: year) {
                let d = JournalDay(year: year, month: month, day: day)!
                #expect(d.iso == String(format: "%04d-%02d-%02d", year, month, day))
                #expect(d.fileStem == String(format: "%04d_%02d_%02d", year, month, day))
            }
        }
    }
}

// OpParser: reads one op-log line straight from bytes (no Foundation, no Strings on the boot path: texts
// stay byte ranges of the line, or of a scratch when escaped). Returns nil for any line that is torn,
// garbage or fails its CRC; unknown fields are skipped and an unknown kind yields `.unknown`, so a newer
// build's ops never stop an older boot. What a string escape stands for is JSONEscape's.
import JSONText

/// A parsed string: a range of the JSON line, or of the scratch when it had escapes.
struct RawText {
    var start: Int
    var count: Int
    var inScratch: Bool
    static let empty = RawText(start: 0, count: 0, inScratch: false)
}

/// An id's 36 spelled bytes, as five words, and its value: the last one a field held. Until one is
/// kept (`kept` false) no bytes match it, thirty-six zero bytes included.
struct SpelledID {
    var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0, w4: UInt32 = 0
    var id = BlockID(hi: 0, lo: 0)
    var kept = false
}

/// Decoded escaped strings and the property list of the line being parsed; reused line after line.
struct ParseScratch {
    var bytes: [UInt8] = []
    /// key, value, key, value...
    var props: [RawText] = []
    /// The last actor (0) and page (1) ids read: line after line of a file mostly repeat them, and
    /// 36 bytes compared cost less than 36 bytes parsed.
    var lastIDs = (SpelledID(), SpelledID())
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        props.removeAll(keepingCapacity: true)
    }
}

/// An op whose texts are still bytes of its line: what the boot applies without making Strings.
struct RawOp {
    var hlc = HLC(wall: 0, counter: 0, actor: BlockID(hi: 0, lo: 0))
    var kind = OpKind.unknown
    var id = BlockID(hi: 0, lo: 0)
    var page = BlockID(hi: 0, lo: 0)
    var parent: BlockID? = nil
    var pos = RawText.empty
    var text = RawText.empty
    var hasProps = false
    var pageKind = PageKind.journal
    /// updateBlock: the stamp of the text its editor saw (Op.base), when the line names one.
    var base: HLC? = nil
}

public enum OpParser {
    public static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Op? {
        var scratch = ParseScratch()
        guard let raw = parseRaw(line, &scratch) else { return nil }
        let json = UnsafeBufferPointer(rebasing: line[9...])
        return scratch.bytes.withUnsafeBufferPointer { sb in
            scratch.props.withUnsafeBufferPointer { pp in RawOpView(raw: raw, json: json, scratch: sb, props: pp).op() }
        }
    }

    /// Checks the CRC and parses; strings stay in `line` (after the 9-byte CRC prefix) or `scratch`.
    static func parseRaw(_ line: UnsafeBufferPointer<UInt8>, _ scratch: inout ParseScratch) -> RawOp? {
        guard line.count > 11, line[8] == 32, let base = line.baseAddress else { return nil }
        var crc: UInt32 = 0
        for i in 0..<8 {
            guard let v = BlockID.hexValue(line[i]) else { return nil }
            crc = crc << 4 | UInt32(v)
        }
        let json = UnsafeBufferPointer(start: base + 9, count: line.count - 9)
        guard CRC32C.checksum(UnsafeRawBufferPointer(json)) == crc else { return nil }
        scratch.reset()
        return withUnsafeMutablePointer(to: &scratch) { sp in
            var r = Reader(b: json, scratch: sp)
            return r.op()
        }
    }

    struct Reader {
        let b: UnsafeBufferPointer<UInt8>
        let scratchPointer: UnsafeMutablePointer<ParseScratch>
        var i = 0

        init(b: UnsafeBufferPointer<UInt8>, scratch: UnsafeMutablePointer<ParseScratch>) {
            self.b = b
            self.scratchPointer = scratch
        }

        var scratch: ParseScratch {
            @inline(__always) _read { yield scratchPointer.pointee }
            @inline(__always) nonmutating _modify { yield &scratchPointer.pointee }
        }

        @inline(__always) mutating func skipSpace() {
            while i < b.count, b[i] == 32 || b[i] == 9 || b[i] == 13 || b[i] == 10 { i += 1 }
        }

        @inline(__always) mutating func expect(_ c: UInt8) -> Bool {
            skipSpace()
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }

        /// The raw bytes of a string (without quotes) and whether it holds escapes.
        mutating func rawString() -> (Range<Int>, Bool)? {
            skipSpace()
            guard i < b.count, b[i] == 34, let p = b.baseAddress else { return nil }
            let start = i + 1, n = b.count
            var j = start
            var escaped = false
            // Eight bytes at a time: the lowest flagged byte of the zero-byte test is exactly the first
            // quote or backslash (flags above a true zero may be false, never below), so its place is
            // its trailing zero count, without a byte loop.
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while j + 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self))
                let q = w ^ (ones &* 34), e = w ^ (ones &* 92)
                let found = ((q &- ones) & ~q | (e &- ones) & ~e) & highs
                if found == 0 { j += 8; continue }
                j += found.trailingZeroBitCount >> 3
                if p[j] == 34 { i = j + 1; return (start..<j, escaped) }
                escaped = true
                j += 2
            }
            while j < n {
                let c = p[j]
                if c == 34 { i = j + 1; return (start..<j, escaped) }
                if c == 92 { escaped = true; j += 2; continue }
                j += 1
            }
            i = n
            return nil
        }

        /// A string's bytes: a range of the line when it has no escapes, else decoded into the scratch.
        mutating func text() -> RawText? {
            guard let (r, escaped) = rawString() else { return nil }
            if !escaped { return RawText(start: r.lowerBound, count: r.count, inScratch: false) }
            let at = scratch.bytes.count
            guard Reader.unescape(UnsafeBufferPointer(rebasing: b[r]), into: &scratch.bytes) else { return nil }
            return RawText(start: at, count: scratch.bytes.count - at, inScratch: true)
        }

        /// Decodes an escaped string's bytes. Lenient where the capture format is strict (the line's
        /// CRC already vouches for it): an escape RFC 8259 lacks stands for its byte, and a lone
        /// surrogate (our encoder writes none) for U+FFFD.
        static func unescape(_ slice: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
            var j = 0
            while j < slice.count {
                let c = slice[j]
                if c != 92 { out.append(c); j += 1; continue }
                let (decoded, next) = JSONEscape.decode(slice, at: j)
                switch decoded {
                case .byte(let e), .unknown(let e): out.append(e)
                case .unit(let v): out.append(contentsOf: UTF8.encode(Unicode.Scalar(v) ?? "\u{FFFD}")!)
                case .unterminated, .shortUnicode, .badHexDigit: return false
                }
                j = next
            }
            return true
        }

        mutating func integer() -> Int64? {
            skipSpace()
            var neg = false
            if i < b.count, b[i] == 45 { neg = true; i += 1 }
            let start = i
            var v: Int64 = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                v = v &* 10 &+ Int64(b[i] - 48)
                i += 1
            }
            guard i > start, i - start <= 18 else { return nil }
            return neg ? -v : v
        }

        /// An id, or none (an empty string); `last` names where the same field's last id is kept
        /// (ParseScratch.lastIDs), -1 for none.
        mutating func id(_ last: Int = -1) -> BlockID?? {
            skipSpace()
            // The common spelling: 36 plain bytes then the closing quote (no escapes possible in a valid id).
            if i + 37 < b.count, b[i] == 34, b[i + 37] == 34, let p = b.baseAddress {
                if last >= 0 {
                    let r = UnsafeRawPointer(p + i + 1)
                    let w0 = r.loadUnaligned(as: UInt64.self), w1 = r.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    let w2 = r.loadUnaligned(fromByteOffset: 16, as: UInt64.self), w3 = r.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                    let w4 = r.loadUnaligned(fromByteOffset: 32, as: UInt32.self)
                    let seen = last == 0 ? scratchPointer.pointee.lastIDs.0 : scratchPointer.pointee.lastIDs.1
                    if seen.kept, seen.w0 == w0, seen.w1 == w1, seen.w2 == w2, seen.w3 == w3, seen.w4 == w4 {
                        i += 38
                        return .some(seen.id)
                    }
                    if let v = BlockID.parse(UnsafeBufferPointer(rebasing: b[(i + 1)..<(i + 37)])) {
                        let spelled = SpelledID(w0: w0, w1: w1, w2: w2, w3: w3, w4: w4, id: v, kept: true)
                        if last == 0 { scratchPointer.pointee.lastIDs.0 = spelled } else { scratchPointer.pointee.lastIDs.1 = spelled }
                        i += 38
                        return .some(v)
                    }
                } else if let v = BlockID.parse(UnsafeBufferPointer(rebasing: b[(i + 1)..<(i + 37)])) {
                    i += 38
                    return .some(v)
                }
            }
            guard let (r, _) = rawString() else { return nil }
            if r.isEmpty { return .some(nil) }
            guard let v = BlockID.parse(UnsafeBufferPointer(rebasing: b[r])) else { return nil }
            return .some(v)
        }

        /// Skips any JSON value (for fields a newer build added).
        mutating func skipValue() -> Bool {
            skipSpace()
            guard i < b.count else { return false }
            switch b[i] {
            case 34: return rawString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while i < b.count {
                    let c = b[i]
                    if c == 34 { guard rawString() != nil else { return false }; continue }
                    if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
                    if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    }
                    i += 1
                }
                return false
            default:
                while i < b.count, b[i] != UInt8(ascii: ","), b[i] != UInt8(ascii: "}") { i += 1 }
                return true
            }
        }

        /// The property object's strings go to scratch.props as key, value pairs.
        mutating func props() -> Bool {
            guard expect(UInt8(ascii: "{")) else { return false }
            scratch.props.removeAll(keepingCapacity: true)
            if expect(UInt8(ascii: "}")) { return true }
            while true {
                guard let k = text(), expect(UInt8(ascii: ":")), let v = text() else { return false }
                scratch.props.append(k)
                scratch.props.append(v)
                if expect(UInt8(ascii: ",")) { continue }
                return expect(UInt8(ascii: "}"))
            }
        }

        /// A key of up to three bytes as one number (length in the top byte): one compare per known key.
        @inline(__always) func keyCode(_ r: Range<Int>) -> UInt32 {
            guard r.count <= 3 else { return 0 }
            var v = UInt32(r.count) << 24
            for k in 0..<r.count { v |= UInt32(b[r.lowerBound + k]) << UInt32(16 - 8 * k) }
            return v
        }

        /// A member's key as `keyCode` spells it (0 for a key it cannot), read where it starts: a key
        /// of one to three plain bytes without a scan, any other through `rawString`.
        @inline(__always) mutating func key() -> UInt32? {
            skipSpace()
            if i + 5 <= b.count, b[i] == 34 {
                let c1 = b[i + 1], c2 = b[i + 2], c3 = b[i + 3]
                if c1 != 92 && c1 != 34 {
                    if c2 == 34 { i += 3; return 1 << 24 | UInt32(c1) << 16 }
                    if c2 != 92 {
                        if c3 == 34 { i += 4; return 2 << 24 | UInt32(c1) << 16 | UInt32(c2) << 8 }
                        if c3 != 92 && b[i + 4] == 34 { i += 5; return 3 << 24 | UInt32(c1) << 16 | UInt32(c2) << 8 | UInt32(c3) }
                    }
                }
            }
            guard let (k, _) = rawString() else { return nil }
            return keyCode(k)
        }

        @inline(__always) static func code(_ a: Unicode.Scalar, _ b: Unicode.Scalar? = nil, _ c: Unicode.Scalar? = nil) -> UInt32 {
            var v = UInt32(1) << 24 | a.value << 16
            if let b { v += 1 << 24; v |= b.value << 8 }
            if let c { v += 1 << 24; v |= c.value }
            return v
        }

        mutating func op() -> RawOp? {
            guard expect(UInt8(ascii: "{")) else { return nil }
            var kind: OpKind? = nil
            var wall: Int64? = nil, counter: Int64? = nil
            var actor: BlockID? = nil, opID: BlockID? = nil
            var baseWall: Int64? = nil, baseCounter: Int64? = nil, baseActor: BlockID? = nil
            var parsed = RawOp()
            var hasPage = false
            while true {
                guard let key = key(), expect(UInt8(ascii: ":")) else { return nil }
                if key == Reader.code("k") {
                    guard let (r, _) = rawString() else { return nil }
                    if r.count == 2 {
                        let a = b[r.lowerBound], c = b[r.lowerBound + 1]
                        switch (a, c) {
                        case (99, 112): kind = .createPage      // cp
                        case (99, 98): kind = .createBlock      // cb
                        case (117, 98): kind = .updateBlock     // ub
                        case (109, 98): kind = .moveBlock       // mb
                        case (100, 98): kind = .deleteBlock     // db
                        case (112, 112): kind = .setPreamble    // pp
                        default: kind = .unknown
                        }
                    } else {
                        kind = .unknown
                    }
                } else if key == Reader.code("w") {
                    wall = integer()
                } else if key == Reader.code("c") {
                    counter = integer()
                } else if key == Reader.code("a") {
                    guard let v = id(0), let v2 = v else { return nil }
                    actor = v2
                } else if key == Reader.code("i", "d") {
                    guard let v = id(), let v2 = v else { return nil }
                    opID = v2
                } else if key == Reader.code("p", "g") {
                    guard let v = id(1), let v2 = v else { return nil }
                    parsed.page = v2; hasPage = true
                } else if key == Reader.code("p", "a") {
                    guard let v = id() else { return nil }
                    parsed.parent = v
                } else if key == Reader.code("p", "o", "s") {
                    guard let v = text() else { return nil }
                    parsed.pos = v
                } else if key == Reader.code("t") {
                    guard let v = text() else { return nil }
                    parsed.text = v
                } else if key == Reader.code("p", "k") {
                    guard let v = text() else { return nil }
                    let j = v.count == 1 && (v.inScratch ? scratch.bytes[v.start] : b[v.start]) == UInt8(ascii: "j")
                    parsed.pageKind = j ? .journal : .named
                } else if key == Reader.code("p", "r") {
                    guard props() else { return nil }
                    parsed.hasProps = true
                } else if key == Reader.code("b", "w") {
                    guard let v = integer() else { return nil }
                    baseWall = v
                } else if key == Reader.code("b", "c") {
                    guard let v = integer() else { return nil }
                    baseCounter = v
                } else if key == Reader.code("b", "a") {
                    guard let v = id(), let v2 = v else { return nil }
                    baseActor = v2
                } else {
                    guard skipValue() else { return nil }
                }
                if expect(UInt8(ascii: ",")) { continue }
                guard expect(UInt8(ascii: "}")) else { return nil }
                break
            }
            guard let kind, let wall, HLC.inRange(wall: wall), let counter, counter >= 0, counter <= Int64(UInt32.max),
                  let actor else { return nil }
            parsed.kind = kind
            parsed.hlc = HLC(wall: wall, counter: UInt32(counter), actor: actor)
            // A base outside the range, or half named, names no version: the op is kept without it.
            if let w = baseWall, HLC.inRange(wall: w), let c = baseCounter, c >= 0, c <= Int64(UInt32.max), let a = baseActor {
                parsed.base = HLC(wall: w, counter: UInt32(c), actor: a)
            }
            if kind != .unknown {
                guard let opID else { return nil }
                parsed.id = opID
                if kind == .createBlock && !hasPage { return nil }
            } else if let opID {
                parsed.id = opID
            }
            return parsed
        }
    }
}

/// A RawOp with the buffers its texts point into: valid only while the line and scratch are.
struct RawOpView {
    let raw: RawOp
    let json: UnsafeBufferPointer<UInt8>
    let scratch: UnsafeBufferPointer<UInt8>
    /// key, value, key, value... (the scratch's list: no array to retain per op)
    let props: UnsafeBufferPointer<RawText>

    var hlc: HLC { raw.hlc }

    @inline(__always) func bytes(_ t: RawText) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: (t.inScratch ? scratch : json)[t.start..<(t.start + t.count)])
    }

    @inline(__always) func string(_ t: RawText) -> String { String(decoding: bytes(t), as: UTF8.self) }

    /// The same op with Strings (tests, and any caller outside the boot's hot path).
    func op() -> Op {
        var full = Op(hlc: raw.hlc, kind: raw.kind, id: raw.id)
        full.page = raw.page
        full.parent = raw.parent
        full.pos = string(raw.pos)
        full.text = string(raw.text)
        full.pageKind = raw.pageKind
        full.base = raw.base
        var k = 0
        while k + 1 < props.count { full.props.append(Property(string(props[k]), string(props[k + 1]))); k += 2 }
        return full
    }
}

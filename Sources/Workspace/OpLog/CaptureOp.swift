// CaptureOp: a capture's createBlock, stamped, its strings spans of its batch's bytes (CaptureBatch,
// which begins as the CaptureList's bytes): no Op, no list of properties and no String is made per
// capture, and copying one retains nothing. Invariant: read through its view, it is the op `asOp()`
// gives, so its line (OpEncoder) and what applying it does (Model) are that Op's.

struct CaptureOp {
    let hlc: HLC
    let id: BlockID
    let page: BlockID
    /// Where its pos, its text (`Markdown.captureSource`), captured-at and source lie in the batch's bytes.
    let pos: Range<Int>, text: Range<Int>, capturedAt: Range<Int>, source: Range<Int>

    static let capturedAtKey = CaptureRecord.capturedAtKey
    static let sourceKey = CaptureRecord.sourceKey

    @inline(__always) static func bytes(_ s: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }
}

/// A CaptureOp with its batch's bytes: what the encoder and the model read. Valid only while the
/// batch's bytes are borrowed (`CaptureBatch.inOrder`, `CaptureBatch.view`).
struct CaptureOpView {
    let op: CaptureOp
    let bytes: UnsafeBufferPointer<UInt8>
    /// Whether applying it raises its page's `maxTopPos` (as an Op's create does): false when its
    /// batch raises each page once, with the greatest pos of its captures there (`appendThenApply`).
    var raisesMaxTopPos = true

    init(_ op: CaptureOp, _ bytes: UnsafeBufferPointer<UInt8>) { self.op = op; self.bytes = bytes }

    @inline(__always) func span(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[r]) }
    var pos: UnsafeBufferPointer<UInt8> { span(op.pos) }
    var text: UnsafeBufferPointer<UInt8> { span(op.text) }
}

extension CaptureOpView: OpFields, OpLineFields {
    var kind: OpKind { .createBlock }
    var base: HLC? { nil }
    var hlc: HLC { op.hlc }
    var id: BlockID { op.id }
    var page: BlockID { op.page }
    var parent: BlockID? { nil }
    var pageKind: PageKind { .journal }
    var textString: String { String(decoding: text, as: UTF8.self) }
    var posString: String { String(decoding: pos, as: UTF8.self) }

    func asOp() -> Op {
        var o = Op(hlc: op.hlc, kind: .createBlock, id: op.id)
        o.page = op.page; o.pos = posString; o.text = textString
        o.props = [Property("\(CaptureOp.capturedAtKey)", String(decoding: span(op.capturedAt), as: UTF8.self)),
                   Property("\(CaptureOp.sourceKey)", String(decoding: span(op.source), as: UTF8.self))]
        return o
    }

    @inline(__always)
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(text) }
    @inline(__always)
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(pos) }

    @inline(__always)
    func forEachProperty(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        body(CaptureOp.bytes(CaptureOp.capturedAtKey), span(op.capturedAt))
        body(CaptureOp.bytes(CaptureOp.sourceKey), span(op.source))
    }

    var stringBytes: Int {
        op.pos.count + op.text.count + CaptureOp.capturedAtKey.utf8CodeUnitCount + op.capturedAt.count
            + CaptureOp.sourceKey.utf8CodeUnitCount + op.source.count + 12
    }

    @inline(__always)
    func storeContent(in t: inout BlockTable) -> UInt64 {
        let at = t.appendBytes(text)
        forEachProperty { k, v in t.appendProperty(key: t.keys.id(k), value: v) }
        t.arena.append(0)
        return at
    }
}

/// One call's ops, in the order they are appended and applied: its captures' creates, each new
/// page's create before the first capture on it.
struct CaptureBatch {
    private(set) var creates: [CaptureOp] = []
    /// The creates' strings: the CaptureList's bytes, then what the batch spelled (positions, a
    /// text `Markdown.captureSource` changed).
    private(set) var bytes: [UInt8]
    /// Page creates, each with the index in `creates` it comes before.
    var pageCreates: [(before: Int, op: Op)] = []

    init(bytes: [UInt8] = [], captures: Int = 0) {
        self.bytes = bytes
        creates.reserveCapacity(captures)
        self.bytes.reserveCapacity(bytes.count + 16 * captures)
    }

    var count: Int { creates.count + pageCreates.count }

    /// Appends `b` to the batch's bytes; returns where they lie.
    mutating func append(_ b: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: b)
        return start..<bytes.count
    }

    mutating func append(_ s: String) -> Range<Int> {
        var s = s
        return s.withUTF8 { append($0) }
    }

    mutating func appendCapture(hlc: HLC, id: BlockID, page: BlockID, pos: Range<Int>, text: Range<Int>, capturedAt: Range<Int>,
                                source: Range<Int>) {
        creates.append(CaptureOp(hlc: hlc, id: id, page: page, pos: pos, text: text, capturedAt: capturedAt, source: source))
    }

    /// Hands `body` the bytes at `r`.
    func withBytes<R>(_ r: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[r])) }
    }

    /// The most bytes the batch's lines can take (OpEncoder.bound of each).
    var bound: Int {
        var n = 0
        inOrder(capture: { _, c in n += OpEncoder.bound(c) }, page: { n += OpEncoder.bound($0) })
        return n
    }

    /// Each op in order: a capture's create as its index and view, a page's create as an Op (the
    /// few page creates' copies retain their Strings; a capture's view retains nothing).
    @inline(__always)
    func inOrder(capture: (Int, CaptureOpView) throws -> Void, page: (Op) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { b in
            try creates.withUnsafeBufferPointer { c in
                var p = 0
                for k in c.indices {
                    while p < pageCreates.count, pageCreates[p].before == k { try page(pageCreates[p].op); p += 1 }
                    try capture(k, CaptureOpView(c[k], b))
                }
                while p < pageCreates.count { try page(pageCreates[p].op); p += 1 }
            }
        }
    }

    /// Capture `k`'s view.
    func view<R>(_ k: Int, _ body: (CaptureOpView) -> R) -> R {
        bytes.withUnsafeBufferPointer { body(CaptureOpView(creates[k], $0)) }
    }
}

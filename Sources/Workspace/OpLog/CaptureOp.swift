// CaptureOp: a capture's createBlock, stamped, read from the capture's own Strings: no Op and no list
// of properties is made per capture (a burst made and freed one of each per capture). Invariant: it is
// the op `asOp()` gives, so its line (OpEncoder) and what applying it does (Model) are that Op's.

struct CaptureOp {
    let hlc: HLC
    let id: BlockID
    let page: BlockID
    let pos: String
    /// The block's source (`Markdown.captureSource`), and the two properties every capture keeps.
    let text: String
    let capturedAt: String
    let source: String

    static let capturedAtKey: StaticString = "captured-at"
    static let sourceKey: StaticString = "source"
}

extension CaptureOp: OpFields, OpLineFields {
    var kind: OpKind { .createBlock }
    var parent: BlockID? { nil }
    var pageKind: PageKind { .journal }
    var textString: String { text }
    var posString: String { pos }

    func asOp() -> Op {
        var op = Op(hlc: hlc, kind: .createBlock, id: id)
        op.page = page; op.pos = pos; op.text = text
        op.props = [Property("\(CaptureOp.capturedAtKey)", capturedAt), Property("\(CaptureOp.sourceKey)", source)]
        return op
    }

    @inline(__always)
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { OpEncoder.bytes(of: text, body) }
    @inline(__always)
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { OpEncoder.bytes(of: pos, body) }

    @inline(__always)
    func forEachProperty(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        OpEncoder.bytes(of: capturedAt) { body(CaptureOp.bytes(CaptureOp.capturedAtKey), $0) }
        OpEncoder.bytes(of: source) { body(CaptureOp.bytes(CaptureOp.sourceKey), $0) }
    }

    var stringBytes: Int {
        text.utf8.count + pos.utf8.count + CaptureOp.capturedAtKey.utf8CodeUnitCount + capturedAt.utf8.count
            + CaptureOp.sourceKey.utf8CodeUnitCount + source.utf8.count + 12
    }

    @inline(__always)
    func storeContent(in t: inout BlockTable) -> UInt64 {
        let at = withText { t.appendBytes($0) }
        forEachProperty { k, v in t.appendProperty(key: t.keys.id(k), value: v) }
        t.arena.append(0)
        return at
    }

    @inline(__always) static func bytes(_ s: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }
}

/// One call's ops, in the order they are appended and applied: its captures' creates, each new
/// page's create before the first capture on it.
struct CaptureBatch {
    var creates: [CaptureOp] = []
    /// Page creates, each with the index in `creates` it comes before.
    var pageCreates: [(before: Int, op: Op)] = []

    var count: Int { creates.count + pageCreates.count }

    /// The most bytes the batch's lines can take (OpEncoder.bound of each).
    var bound: Int {
        var n = 0
        for p in pageCreates { n += OpEncoder.bound(p.op) }
        creates.withUnsafeBufferPointer { for k in $0.indices { n += OpEncoder.bound($0[k]) } }
        return n
    }

    /// Each op in order, as an index: `k >= 0` is `creates[k]`, `k < 0` is `pageCreates[-1 - k].op`
    /// (read in place by the caller: an op handed to a closure was copied, its Strings retained).
    @inline(__always)
    func inOrder(_ body: (Int) throws -> Void) rethrows {
        var p = 0
        for k in creates.indices {
            while p < pageCreates.count, pageCreates[p].before == k { try body(-1 - p); p += 1 }
            try body(k)
        }
        while p < pageCreates.count { try body(-1 - p); p += 1 }
    }
}

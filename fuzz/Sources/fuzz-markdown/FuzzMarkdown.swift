// fuzz-markdown: libFuzzer target over the Workspace Markdown parser, which reads pages any editor
// (or a sync tool) left on disk. Invariants: any bytes parse without crashing or hanging, and after
// one projection the page is a fixed point: p2 = parse(render(parse(x))) gives parse(render(p2)) == p2,
// so re-projecting a page never churns. The stricter parse(render(parse(x))) == parse(x) does NOT
// hold: a bare CR in a property value or after the preamble is normalised by the first render
// (inputs in corpus/fuzz-markdown/regress-cr-*; see docs/TESTING-FAULTS.md).
import Workspace

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMarkdown(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let p2 = Markdown.parse(Markdown.render(Markdown.parse(bytes)))
    let p3 = Markdown.parse(Markdown.render(p2))
    precondition(p3 == p2, "projection is not a fixed point\nonce:  \(p2)\ntwice: \(p3)")
    return 0
}

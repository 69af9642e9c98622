// FuzzRegressionTests: every crasher the fuzz targets found, replayed as a plain test so it stays
// fixed. Inputs are kept as bytes (fuzz/corpus/<target>/ holds the same files for the fuzzer).
import SystemCalls
import Testing

@Suite struct FuzzRegressionTests {
    /// fuzz-path, crash-5e7f0d91: U+0617 (a combining mark) right after "/" fused with the slash
    /// into one Character, so Character-based splitting lost the separator.
    @Test func path_helpers_split_on_the_slash_byte_even_before_a_combining_mark() {
        let name = "\u{0617}x"
        #expect(Path.lastComponent(Path.join("/base", name)) == name)
        #expect(Path.parent(of: "/base/" + name) == "/base")
        #expect(Path.parent(of: "/a/\u{0301}b/") == "/a")
        let crasher = String(decoding: [0xD8, 0x97, 0x2F, 0x2F, 0xD7, 0xD0, 0xD0, 0xD0] + Array(repeating: UInt8(0x2F), count: 10), as: UTF8.self)
        let first = String(crasher.utf8.split(separator: UInt8(ascii: "/")).first.map { String(decoding: $0, as: UTF8.self) } ?? "x")
        #expect(Path.lastComponent(Path.join("/base", first)) == first)
    }
}

import Workspace

@Suite struct MarkdownFuzzRegressionTests {
    /// fuzz-markdown (fuzz/known/fuzz-markdown-*-trailing-cr): every projection dropped one
    /// trailing CR from the preamble or a block, so the page was never a fixed point.
    @Test func a_preamble_ending_in_carriage_returns_is_a_fixed_point_after_one_projection() {
        let bytes: [UInt8] = [0x2D] + [UInt8](repeating: 0, count: 109) + [0x0D, 0x0D, 0x0D]
        let p2 = Markdown.parse(Markdown.render(Markdown.parse(bytes)))
        #expect(Markdown.parse(Markdown.render(p2)) == p2)
        let block: [UInt8] = [0x2D, 0x20, 0x62, 0x75, 0x69, 0x33, 0x44, 0x2D, 0x33, 0x44, 0x2D, 0x59, 0x35, 0x61, 0x33, 0xE9, 0x7E, 0x8D, 0x0D, 0x0D, 0x0D, 0x0A]  // fuzz/known/fuzz-markdown-block-trailing-cr
        let b2 = Markdown.parse(Markdown.render(Markdown.parse(block)))
        #expect(Markdown.parse(Markdown.render(b2)) == b2)
    }

    /// fuzz-markdown regress-cr-in-property-value / regress-cr-after-preamble: the first render
    /// normalises a bare CR, so only the second projection is a fixed point; it must be.
    @Test func a_bare_cr_is_normalised_by_the_first_projection_and_then_stable() {
        for text in ["- a\n  k:: \ry\n", "--\r\r"] {
            let p2 = Markdown.parse(Markdown.render(Markdown.parse(Array(text.utf8))))
            #expect(Markdown.parse(Markdown.render(p2)) == p2, "\(text.debugDescription)")
        }
    }
}

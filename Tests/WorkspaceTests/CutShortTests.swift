// CutShortTests: the content rule that tells a page file cut short from an edit: a strict prefix of
// a projection that ends inside a line is cut short; one that ends at a line's end (a person deleting
// the last blocks, their nested blocks, or a block's last lines) is not, nor is anything no prefix.
import Testing
@testable import Workspace

@Suite struct CutShortTests {
    let projection = Array("""
        - buy oat milk
          source:: cli
          id:: 01a252f9-12dc-787e-a8c5-7f1fb8de77e2
        - call the plumber
          - ask about the boiler
        - done

        """.utf8)

    func cut(_ n: Int) -> [UInt8] { Array(projection.prefix(n)) }
    func at(_ s: String, after: Bool = true) -> Int {
        let text = String(decoding: projection, as: UTF8.self)
        let r = text.range(of: s)!
        return text.utf8.distance(from: text.startIndex, to: after ? r.upperBound : r.lowerBound)
    }

    @Test func a_prefix_ending_inside_a_block_is_cut_short() {
        for n in [at("- buy oat"), at("source:: "), at("source:: c"), at("- call the plumber\n", after: true) - 3] {
            #expect(CutShort.isCutShort(cut(n), of: [projection]), "\(String(decoding: cut(n), as: UTF8.self))")
        }
    }

    @Test func a_file_ending_at_a_lines_end_is_never_cut_short() {
        for n in [at("- call the plumber", after: false), at("  - ask", after: false), at("- done", after: false), at("source:: cli\n"),
                  projection.count, projection.count - 1, 0] {
            #expect(!CutShort.isCutShort(cut(n), of: [projection]), "\(String(decoding: cut(n), as: UTF8.self))")
        }
        // An edit is no prefix: changed words, or lines added.
        #expect(!CutShort.isCutShort(Array("- buy oat mylk".utf8), of: [projection]))
        #expect(!CutShort.isCutShort(projection + Array("- more\n".utf8), of: [projection]))
    }
}

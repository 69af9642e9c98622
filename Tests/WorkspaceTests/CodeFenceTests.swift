// Code fences inside a block: written as the person wrote them (no backslash on list-like lines), read
// back as one block, and still safe when a fence never closes.
import Testing
@testable import Workspace

@Test func fenced_code_in_a_block_is_written_without_escapes() {
    let text = "a diff:\n```diff\n- removed line\n+ added line\n* star\n```\n- after the fence"
    let id = BlockID.random()
    let page = MDPage(blocks: [MDBlock(id: id, text: text, children: [MDBlock(id: BlockID.random(), text: "child")])])
    let out = String(decoding: Markdown.render(page), as: UTF8.self)
    #expect(out.contains("\n  - removed line\n  + added line\n  * star\n  ```\n  \\- after the fence\n"), "\(out)")
    let back = Markdown.parse(Array(out.utf8))
    #expect(back == page)
}

@Test func a_fence_opening_the_block_or_left_open_round_trips() {
    let pages = [
        MDPage(blocks: [MDBlock(id: BlockID.random(), text: "```yaml\n- a: 1\nkey:: not a property\n\\path\n```",
                                props: [Property("source", "cli")])]),
        MDPage(blocks: [MDBlock(id: BlockID.random(), text: "```\n- never closed",
                                children: [MDBlock(id: BlockID.random(), text: "x\n```")])]),
    ]
    for p in pages {
        let bytes = Markdown.render(p)
        #expect(Markdown.parse(bytes) == p, "\(String(decoding: bytes, as: UTF8.self))")
    }
    // The unclosed fence keeps its escape, so the child stays a child.
    #expect(String(decoding: Markdown.render(pages[1]), as: UTF8.self).contains("  \\- never closed\n"))
}

@Test func a_hand_written_code_block_with_list_lines_stays_one_block() {
    let file = "- notes\n  ```\n  - item one\n  - item two\n  ```\n- next block\n"
    let p = Markdown.parse(Array(file.utf8))
    #expect(p.blocks.map(\.text) == ["notes\n```\n- item one\n- item two\n```", "next block"])
}

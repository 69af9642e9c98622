// "A share becomes one line": outl:// link parsing (percent-decoding, `+`, bad escapes) and the
// single rule that folds text, url and title into one Markdown line.
import Testing
@testable import CaptureFormat

@Test func title_and_url_become_a_markdown_link() {
    #expect(ShareLink.line(text: nil, url: "https://example.com", title: "Example") == "[Example](https://example.com)")
}

@Test func text_and_url_become_text_space_url() {
    #expect(ShareLink.line(text: "read this", url: "https://example.com", title: nil) == "read this https://example.com")
    #expect(ShareLink.line(text: "read", url: "https://e.x", title: "E") == "read [E](https://e.x)")
}

@Test func single_parts_and_blanks() {
    #expect(ShareLink.line(text: "just text", url: nil, title: nil) == "just text")
    #expect(ShareLink.line(text: nil, url: "https://e.x", title: " ") == "https://e.x")
    #expect(ShareLink.line(text: "x", url: nil, title: "T") == "T: x")
    #expect(ShareLink.line(text: " ", url: "", title: nil) == nil)
}

@Test func a_share_is_one_line_and_cannot_break_its_markdown() {
    #expect(ShareLink.line(text: "two\nlines", url: nil, title: nil) == "two lines")
    #expect(ShareLink.line(text: nil, url: "https://e.x/a (b)", title: "a [b]\n c")
            == #"[a \[b\] c](https://e.x/a%20%28b%29)"#)
}

@Test func parses_outl_capture_links_with_percent_and_plus() throws {
    let p = try ShareLink.parse(uri: "outl://capture?text=buy+oat%20milk&url=https%3A%2F%2Fe.x%2F%3Fq%3D1&title=%E2%9C%93+done&x=ignored#frag")
    #expect(p.text == "buy oat milk")
    #expect(p.url == "https://e.x/?q=1")
    #expect(p.title == "✓ done")
    let q = try ShareLink.parse(uri: "OUTL://capture/?text=hi")
    #expect(q.text == "hi" && q.url == nil && q.title == nil)
}

@Test func bad_links_are_errors() {
    for bad in ["https://capture?text=x", "outl:capture?text=x", "outl://open?text=x",
                "outl://capture?text=%zz", "outl://capture?text=%4", "outl://capture?text=%ff",
                "outl://capture?text=a&text=b"] {
        #expect(throws: ShareLinkError.self, "\(bad)") { try ShareLink.parse(uri: bad) }
    }
}

@Test func a_source_parameter_is_kept_and_a_fragment_ends_the_link() throws {
    let p = try ShareLink.parse(uri: "outl://capture?source=phone+share&text=hi")
    #expect(p.source == "phone share" && p.text == "hi")
    #expect(try ShareLink.parse(uri: "outl://capture?text=hi").source == nil)
    // An unencoded `#` starts the link's own fragment: what follows is not read.
    let cut = try ShareLink.parse(uri: "outl://capture?url=https://e.x/a#part&title=T")
    #expect(cut.url == "https://e.x/a" && cut.title == nil)
    let kept = try ShareLink.parse(uri: "outl://capture?url=https%3A%2F%2Fe.x%2Fa%23part&title=T")
    #expect(kept.url == "https://e.x/a#part" && kept.title == "T")
}

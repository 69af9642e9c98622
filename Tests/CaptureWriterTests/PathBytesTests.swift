// Paths are compared and split as the kernel reads them, byte for byte: a combining mark after
// "/" is still a slash, and two spellings of "é" are two names, never one.
import Testing
import OutlConfig
import SystemCalls

@Test func components_below_a_root_are_found_by_bytes() {
    #expect(DirectoryWalk.components(of: "/in", below: "/in") == [])
    #expect(DirectoryWalk.components(of: "/in/", below: "/in") == [])
    #expect(DirectoryWalk.components(of: "/in/tmp", below: "/in") == ["tmp"])
    #expect(DirectoryWalk.components(of: "/in/tmp", below: "/in/") == ["tmp"])
    #expect(DirectoryWalk.components(of: "/in//a/./b/", below: "/in") == ["a", "b"])
    #expect(DirectoryWalk.components(of: "/in/.a/..b/...", below: "/in") == [".a", "..b", "..."])
    #expect(DirectoryWalk.components(of: "/a/b", below: "/") == ["a", "b"])
    // Outside the root, or leaving it by `..`: nil.
    #expect(DirectoryWalk.components(of: "/inbox", below: "/in") == nil)
    #expect(DirectoryWalk.components(of: "/i", below: "/in") == nil)
    #expect(DirectoryWalk.components(of: "/in/a/../b", below: "/in") == nil)
    #expect(DirectoryWalk.components(of: "/in/..", below: "/in") == nil)
    // A combining acute after the root's slash: one Character with it, still a component by bytes.
    #expect(DirectoryWalk.components(of: "/in/\u{301}x", below: "/in") == ["\u{301}x"])
    // NFC and NFD "é" are equal Strings but different names on disk: not the same root.
    #expect(DirectoryWalk.components(of: "/caf\u{E9}/x", below: "/cafe\u{301}") == nil)
    #expect(DirectoryWalk.components(of: "/cafe\u{301}", below: "/caf\u{E9}") == nil)
    #expect(DirectoryWalk.components(of: "/cafe\u{301}/x", below: "/cafe\u{301}") == ["x"])
}

@Test func a_tilde_is_expanded_only_before_a_slash_byte() {
    #expect(Path.expandTilde("~", home: "/h") == "/h")
    #expect(Path.expandTilde("~/", home: "/h") == "/h/")
    #expect(Path.expandTilde("~/notes", home: "/h") == "/h/notes")
    #expect(Path.expandTilde("~/\u{301}x", home: "/h") == "/h/\u{301}x")
    #expect(Path.expandTilde("~bob/notes", home: "/h") == "~bob/notes")
    #expect(Path.expandTilde("/~/x", home: "/h") == "/~/x")
    #expect(Path.expandTilde("", home: "/h") == "")
    // The writer resolves a combining mark after "~/" as a path in the home, not as ~user.
    let c = try? OutlConfig.writeTarget(workspace: nil, inboxes: ["~/\u{301}in"], environment: { $0 == "HOME" ? "/h" : nil })
    #expect(c?.inbox == "/h/\u{301}in")
}

// A capture's attachments as Logseq and Obsidian read them: the page outld writes for a caption with
// two attachments, and for an image alone, is held to Fixtures/asset-links.md, the page mldoc
// (bedae990, tools/mldoc) read into Fixtures/asset-links.mldoc.json: each link's label is the
// attachment's name (a backquote shown as an apostrophe) and its target ../assets/FILE; and the real
// cmark-gfm shows the image as an <img> with that alt text and the file as a link with that text.
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite struct AssetLinkReaderTests {
    static let names = ["Screen shot (1).PNG", "notes_v2 [draft] *final* <x> & $y #z \\w `q`.pdf", "a.png"]
    static let files = ["Screen_shot_1_1764930672000_0a1b2c3d.png", "notes_v2_draft_final_x_y_z_w_q_1764930672000_0a1b2c3d.pdf",
                        "a_1764930672001_0a1b2c3d.png"]

    static func fixture(_ name: String) throws -> String {
        var url = URL(fileURLWithPath: #filePath)
        url.deleteLastPathComponent()
        url.appendPathComponent("Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func page() async throws -> String {
        let t = TestWorkspace()
        let ws = try t.open()
        var one = capture("look at [this] and C:\\Users", id: "019aef30-0000-7000-8000-000000000001")
        one.assets = [AssetLink(label: names[0], file: files[0]), AssetLink(label: names[1], file: files[1])]
        var two = capture("", id: "019aef30-0000-7000-8000-000000000002")
        two.assets = [AssetLink(label: names[2], file: files[2])]
        _ = try await ws.appendCaptures([one, two])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        return readText(t.journal(day1)) ?? ""
    }

    @Test func the_page_is_the_one_mldoc_read() async throws {
        #expect(try await Self.page() == (try Self.fixture("asset-links.md")))
    }

    /// mldoc's Link nodes, in page order: (label as shown, url).
    func mldocLinks(_ node: Any, into out: inout [(String, String)]) {
        if let a = node as? [Any] {
            if a.count == 2, a[0] as? String == "Link", let l = a[1] as? [String: Any] {
                let url = (l["url"] as? [Any])?.last as? String ?? ""
                let label = (l["label"] as? [[Any]] ?? []).map { ($0.last as? String) ?? "?" }.joined()
                out.append((label, url))
                return
            }
            for x in a { mldocLinks(x, into: &out) }
        } else if let d = node as? [String: Any] {
            for (_, v) in d { mldocLinks(v, into: &out) }
        }
    }

    @Test func logseq_shows_each_attachment_by_its_name_and_opens_its_asset() throws {
        let json = try JSONSerialization.jsonObject(with: Data(try Self.fixture("asset-links.mldoc.json").utf8))
        var links: [(String, String)] = []
        mldocLinks(json, into: &links)
        #expect(links.map(\.0) == Self.names.map { $0.replacingOccurrences(of: "`", with: "'") })
        #expect(links.map(\.1) == Self.files.map { "../assets/" + $0 })
    }

    @Test(.enabled(if: cmarkGFMPath != nil, "needs cmark-gfm (Debian: cmark-gfm)"))
    func obsidian_shows_the_image_and_links_the_file() async throws {
        let page = try await Self.page()
        let r = try run(cmarkGFMPath!, ["-t", "xml"] + gfmExtensions, stdin: Array(page.utf8))
        let tree = XNode.parse(r.stdout)
        let images = tree.all("image"), links = tree.all("link")
        #expect(images.map { $0.attrs["destination"] ?? "" } == ["../assets/" + Self.files[0], "../assets/" + Self.files[2]])
        #expect(images.map { $0.allText().trimmingCharacters(in: .whitespacesAndNewlines) } == [Self.names[0], Self.names[2]])
        #expect(links.map { $0.attrs["destination"] ?? "" } == ["../assets/" + Self.files[1]])
        #expect(links.map { $0.allText().trimmingCharacters(in: .whitespacesAndNewlines) } == [Self.names[1].replacingOccurrences(of: "`", with: "'")])
    }
}

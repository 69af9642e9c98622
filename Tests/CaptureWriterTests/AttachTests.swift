// outl-capture --attach and --screenshot with the real binary: attachments delivered into the inbox
// before the capture file that names them (name, size, SHA-256), standard input with --name, the
// size limit of outld.conf, every refusal with its status and nothing left behind, the listing and
// the JSON receipt; screenshots by OUTL_SCREENSHOT and by the real import and maim on an Xvfb.
import Foundation
import Testing
import CaptureFormat
import SystemCalls
import TestSupport

private let haveShooters = ["/usr/bin/Xvfb", "/usr/bin/import", "/usr/bin/maim"].allSatisfy { (p: String) in access(p, X_OK) == 0 }

private func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

/// Everything in the inbox but tmp/, and whether tmp/ is empty: "nothing saved" leaves neither.
private func leftovers(_ s: Sandbox) -> [String] {
    listDir(s.inbox).filter { $0 != "tmp" } + listDir(s.inbox + "/tmp").map { "tmp/" + $0 }
}

@Suite(.serialized) struct AttachTests {
    @Test func attach_delivers_the_file_before_the_capture_that_names_it() throws {
        let s = Sandbox()
        let photo = s.dir.sub("Beach day.JPG")
        let content = (0..<70_000).map { UInt8($0 % 253) }
        try Data(content).write(to: URL(fileURLWithPath: photo))
        let r = try s.capture(["--attach", photo, "at the beach"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "Saved for \(receiptDayToday()) with 1 attachment; \(s.noOutld)\n")
        let f = try captures(in: s.inbox)
        #expect(f.count == 1)
        let c = f[0].capture
        let id = CaptureName.ulid(of: f[0].name)!
        #expect(c.text == "at the beach" && c.source == "cli")
        #expect(c.attachments == [Attachment(file: CaptureName.attachmentFileName(for: id, index: 1), name: "Beach day.JPG",
                                             size: content.count, sha256: SHA256.hex(content))])
        #expect(bytes(s.inbox + "/" + c.attachments[0].file) == content)
        #expect(mode(of: s.inbox + "/" + c.attachments[0].file) == 0o600)
        #expect(listDir(s.inbox + "/tmp").isEmpty)
    }

    @Test func attach_reads_standard_input_under_the_name_given_and_needs_no_text() throws {
        let s = Sandbox()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 1, 2, 3]
        let r = try s.capture(["--attach", "-", "--name", "plot.png", "--json"], stdin: png)
        #expect(r.status == 0, "\(r.stderr)")
        let c = try captures(in: s.inbox)[0].capture
        #expect(c.text == "" && c.attachments.map(\.name) == ["plot.png"] && c.attachments[0].size == 7)
        let doc = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let listed = doc["attachments"] as! [[String: Any]]
        #expect(listed.count == 1 && listed[0]["name"] as? String == "plot.png" && listed[0]["size"] as? Int == 7)
        #expect(listed[0]["sha256"] as? String == SHA256.hex(png))
        // The listing counts it.
        let l = try s.capture(["--list"])
        #expect(l.stdout.contains("(+1 attachment)"), "\(l.stdout)")
        let lj = try JSONSerialization.jsonObject(with: Data(try s.capture(["--list", "--json"]).stdout.utf8)) as! [String: Any]
        let waiting = (lj["waiting"] as! [[String: Any]])[0]
        #expect((waiting["attachments"] as! [[String: Any]]).map { $0["name"] as? String } == ["plot.png"])
    }

    @Test func each_refusal_says_why_with_its_status_and_saves_nothing() throws {
        let s = Sandbox()
        let small = s.dir.sub("small.txt")
        try writeText(small, "small")
        let big = s.dir.sub("big.bin")
        try Data(count: 5000).write(to: URL(fileURLWithPath: big))
        let cases: [(args: [String], stdin: [UInt8]?, conf: String?, status: Int32, says: String)] = [
            (["--attach", s.dir.sub("missing.png"), "x"], nil, nil, 66, "--attach \(s.dir.sub("missing.png")): cannot open: No such file or directory; nothing saved"),
            (["--attach", s.dir.path, "x"], nil, nil, 66, "is a directory, not a file; nothing saved"),
            (["--attach", small, "--attach", big, "x"], nil, "attachment-limit = 4K\n", 65,
             "--attach \(big): 5000 bytes is over the attachment limit of 4 KiB (attachment-limit in outld.conf); nothing saved"),
            (["--attach", "-", "--name", "big.bin"], [UInt8](repeating: 1, count: 5000), "attachment-limit = 4K\n", 65,
             "--attach - (standard input): over the attachment limit of 4 KiB"),
            (["--attach", "-", "x"], [1], nil, 64, "--attach - needs --name NAME"),
            (["--name", "a.png", "x"], nil, nil, 64, "--name names the attachment read with --attach -"),
            (["--attach", "-", "--name", "a", "-"], [1], nil, 64, "standard input is either the text (-) or an attachment"),
            (["--attach", "-", "--name", "a/b.png"], [1], nil, 64, "--name has a slash"),
            (["--attach", small, "x"], nil, "attachment-limit = lots\n", 78, "attachment-limit is a size from 1 to 16G"),
            (["--list", "--attach", small], nil, nil, 64, "--list takes no"),
        ]
        for c in cases {
            try? FileManager.default.removeItem(atPath: s.home + "/.config/outl/outld.conf")
            if let conf = c.conf { try writeText(s.home + "/.config/outl/outld.conf", conf) }
            let r = try s.capture(c.args, stdin: c.stdin)
            #expect(r.status == c.status && r.stderr.contains(c.says), "\(c.args): \(r.status) \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(c.args)")
            #expect(leftovers(s).isEmpty, "\(c.args) left \(leftovers(s))")
        }
        // A file name with a control character in it is refused, with the way around it.
        let odd = s.dir.sub("two\nlines.txt")
        try writeText(odd, "x")
        let r = try s.capture(["--attach", odd, "x"])
        #expect(r.status == 65 && r.stderr.contains("give the bytes with --attach - --name NAME"), "\(r.stderr)")
        #expect(leftovers(s).isEmpty)
    }

    @Test func screenshot_runs_OUTL_SCREENSHOT_into_a_file_of_its_own() throws {
        let s = Sandbox()
        let r = try s.capture(["--screenshot", "what I saw"],
                              env: ["OUTL_SCREENSHOT": #"printf 'not really a png' > "$OUTL_SCREENSHOT_FILE""#])
        #expect(r.status == 0, "\(r.stderr)")
        let c = try captures(in: s.inbox)[0].capture
        #expect(c.attachments.count == 1 && c.attachments[0].name.hasPrefix("Screenshot ") && c.attachments[0].name.hasSuffix(".png"))
        #expect(bytes(s.inbox + "/" + c.attachments[0].file) == Array("not really a png".utf8))
        // A failing or empty screenshot saves nothing, and says why (69).
        for cmd in ["echo cancelled >&2; exit 1", "true"] {
            let bad = try s.capture(["--screenshot", "x"], env: ["OUTL_SCREENSHOT": cmd])
            #expect(bad.status == 69 && bad.stderr.contains("--screenshot: OUTL_SCREENSHOT"), "\(cmd): \(bad.stderr)")
            #expect(listDir(s.inbox).filter { $0 != "tmp" }.count == 2 && listDir(s.inbox + "/tmp").isEmpty)
        }
        // With no display and no program: 69, naming what to install.
        let none = try s.capture(["--screenshot"], env: ["PATH": s.dir.sub("empty-bin"), "DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(none.status == 69 && none.stderr.contains("no screenshot program"), "\(none.stderr)")
    }

    @Test func screenshot_with_a_prompt_cancelled_saves_nothing() throws {
        let s = Sandbox()
        let r = try s.capture(["--screenshot", "--prompt"],
                              env: ["OUTL_SCREENSHOT": #"printf png > "$OUTL_SCREENSHOT_FILE""#, "OUTL_PROMPT": "exit 1"])
        #expect(r.status == 0 && r.stderr.contains("cancelled; nothing saved"), "\(r.stderr)")
        #expect(leftovers(s).isEmpty, "\(leftovers(s))")
    }
}

@Suite(.serialized, .enabled(if: haveShooters, "needs Xvfb, ImageMagick's import and maim (Debian: xvfb imagemagick maim)"))
struct ScreenshotTests {
    /// A PNG's width and height from its IHDR chunk.
    func pngSize(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count > 24, b[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { return nil }
        func be(_ i: Int) -> Int { b[i..<i + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be(16), be(20))
    }

    @Test(arguments: ["import", "maim"])
    func screenshot_captures_the_screen_with_the_real_tool(_ tool: String) throws {
        let x: XServer
        do { x = try XServer() } catch { try Test.cancel("Xvfb cannot start here: \(error)") }
        let s = Sandbox()
        let bin = s.dir.sub("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/" + tool, withDestinationPath: "/usr/bin/" + tool)
        let r = try s.capture(["--screenshot", "the screen"], env: x.env.merging(["PATH": bin]) { $1 })
        #expect(r.status == 0, "\(tool): \(r.stderr)")
        let c = try captures(in: s.inbox)[0].capture
        let image = bytes(s.inbox + "/" + c.attachments[0].file)
        #expect(pngSize(image).map { $0 == (320, 200) } == true, "\(tool) wrote \(image.prefix(16))")
        #expect(SHA256.hex(image) == c.attachments[0].sha256)
        #expect(listDir(s.inbox + "/tmp").isEmpty)
    }
}

/// The receipt's day for a capture made now, in UTC (the sandbox's TZ).
private func receiptDayToday() -> String {
    let f = DateFormatter()
    f.timeZone = TimeZone(identifier: "UTC")
    f.locale = Locale(identifier: "en_US_POSIX")
    f.dateFormat = "EEE d MMM"
    return f.string(from: Date())
}

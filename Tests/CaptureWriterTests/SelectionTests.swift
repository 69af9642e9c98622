// `--selection` and `--clipboard` with the real tools: an Xvfb X server of its own, the selection
// set by real xclip/xsel, read back through outl-capture. Where Xvfb or xclip is not installed the
// tests are skipped (shown as skipped, with the reason); where Xvfb cannot start they are cancelled
// with its error. The error paths that need no X server always run.
import Foundation
import Testing
import CaptureFormat
import SystemCalls
import TestSupport

private let haveXTools = ["/usr/bin/Xvfb", "/usr/bin/xclip", "/usr/bin/xsel"].allSatisfy { (p: String) in access(p, X_OK) == 0 }

/// An Xvfb on a display number it picks itself (-displayfd), stopped on release.
final class XServer {
    let process = Process()
    let display: String

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "320x200x24"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Xvfb writes the display number once it accepts clients; wait for that line (bounded).
        final class Box: @unchecked Sendable { var line = "" }
        let box = Box()
        let ready = DispatchSemaphore(value: 0)
        let handle = out.fileHandleForReading
        Thread.detachNewThread {
            var got = Data()
            while !got.contains(0x0A) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                got.append(chunk)
            }
            box.line = String(decoding: got, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            ready.signal()
        }
        if ready.wait(timeout: .now() + 20) == .timedOut || Int(box.line) == nil {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let why = String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
            throw XServerError(description: "Xvfb did not start (exit \(process.terminationStatus)): \(why.prefix(300))")
        }
        display = ":" + box.line
    }

    /// The tools serving a selection, in the foreground, killed before the server.
    private var owners: [Process] = []

    /// SIGKILL: the test process runs with most signals blocked, a mask its children inherit.
    deinit {
        for p in owners + [process] where p.isRunning { kill(p.processIdentifier, SIGKILL) }
        for p in owners + [process] { p.waitUntilExit() }
        let n = display.dropFirst()
        unlink("/tmp/.X\(n)-lock")
        unlink("/tmp/.X11-unix/X\(n)")
    }

    var env: [String: String] { ["DISPLAY": display, "WAYLAND_DISPLAY": ""] }

    /// Makes `text` the content of `selection` (primary, clipboard), owned by `tool` running in the
    /// foreground (a backgrounded one would keep Foundation's child-watch socket open and hang
    /// every later wait); returns once reading it back gives the text.
    func own(_ selection: String, _ text: String, with tool: String = "xclip") throws {
        let t = TempDir("xsel-text")
        try writeText(t.sub("text"), text)
        var why = ""
        for _ in 0..<3 {  // an owner that died (a busy machine, a server not quite ready) is started again
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
            p.arguments = tool == "xclip" ? ["-quiet", "-selection", selection, "-in", t.sub("text")]
                                          : ["--nodetach", "--" + selection, "--input"]
            p.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": display]) { $1 }
            p.standardInput = tool == "xclip" ? FileHandle.nullDevice : FileHandle(forReadingAtPath: t.sub("text"))
            p.standardOutput = FileHandle.nullDevice
            FileManager.default.createFile(atPath: t.sub("errors"), contents: nil)
            p.standardError = FileHandle(forWritingAtPath: t.sub("errors"))
            try p.run()
            owners.append(p)
            let end = Date().addingTimeInterval(30)
            while Date() < end && p.isRunning {
                let back = try run("/usr/bin/xsel", ["--output", "--" + selection], env: env)
                if back.stdout == text { return }
                why = "xsel read back \(back.stdout.debugDescription) (\(back.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))"
                usleep(50_000)
            }
            if p.isRunning { break }
            p.waitUntilExit()
            why = "\(tool) exited \(p.terminationStatus): \(readText(t.sub("errors")) ?? "")"
        }
        throw XServerError(description: "\(tool) did not come to own the \(selection) selection: \(why)")
    }
}

struct XServerError: Error, CustomStringConvertible { let description: String }

/// A bin directory with links to exactly `tools` (so the writer sees only those).
private func binWith(_ s: Sandbox, _ name: String, _ tools: [String]) throws -> String {
    let bin = s.dir.sub(name)
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    for t in tools { try FileManager.default.createSymbolicLink(atPath: bin + "/" + t, withDestinationPath: "/usr/bin/" + t) }
    return bin
}

@Suite(.serialized, .enabled(if: haveXTools, "needs Xvfb, xclip and xsel (Debian: xvfb xclip xsel)"))
struct SelectionTests {
    func server() throws -> XServer {
        do {
            return try XServer()
        } catch {
            try Test.cancel("Xvfb cannot start here: \(error)")
        }
    }

    @Test func selection_captures_the_primary_selection_through_xclip() throws {
        let x = try server()
        let s = Sandbox()
        try x.own("primary", "  selected in a browser\nsecond line ✓\n")
        let r = try s.capture(["--selection"], env: x.env.merging(["PATH": try binWith(s, "bin", ["xclip"])]) { $1 })
        #expect(r.status == 0, "\(r.stderr)")
        let f = try captures(in: s.inbox)
        #expect(f.map(\.capture.text) == ["selected in a browser\nsecond line ✓"])
        #expect(f.first?.capture.source == "selection")
    }

    @Test func clipboard_is_read_with_xsel_when_xclip_is_missing() throws {
        let x = try server()
        let s = Sandbox()
        try x.own("clipboard", "copied with ctrl-c", with: "xsel")
        let r = try s.capture(["--clipboard", "--source", "copied"], env: x.env.merging(["PATH": try binWith(s, "bin", ["xsel"])]) { $1 })
        #expect(r.status == 0, "\(r.stderr)")
        let f = try captures(in: s.inbox)
        #expect(f.map(\.capture.text) == ["copied with ctrl-c"] && f.first?.capture.source == "copied")
    }

    @Test func prompt_offers_the_selection_as_the_dialogs_initial_text() throws {
        let x = try server()
        let s = Sandbox()
        try x.own("primary", "a quote\nworth keeping")
        let bin = try binWith(s, "bin", ["xclip"])
        try writeText(bin + "/zenity", "#!/bin/sh\nfor a; do case $a in --entry-text=*) printf '%s (edited)\\n' \"${a#--entry-text=}\";; esac; done\n")
        chmod(bin + "/zenity", 0o755)
        #expect(try s.capture(["--prompt", "--selection"], env: x.env.merging(["PATH": bin]) { $1 }).status == 0)
        // $OUTL_PROMPT gets it as $OUTL_PROMPT_TEXT.
        let custom = #"printf '%s!' "$OUTL_PROMPT_TEXT""#
        #expect(try s.capture(["--prompt", "--selection"], env: x.env.merging(["PATH": bin, "OUTL_PROMPT": custom]) { $1 }).status == 0)
        let f = try captures(in: s.inbox)
        #expect(f.map(\.capture.text) == ["a quote worth keeping (edited)", "a quote worth keeping!"])
        #expect(f.allSatisfy { $0.capture.source == "hotkey" })
    }

    @Test func nothing_selected_saves_nothing() throws {
        let x = try server()
        let s = Sandbox()
        // xsel prints nothing for an unowned selection; xclip fails and says the target is not
        // available: either way nothing is selected, the documented 64.
        for (tool, kind) in [("xsel", "--clipboard"), ("xclip", "--clipboard"), ("xsel", "--selection"), ("xclip", "--selection")] {
            let r = try s.capture([kind], env: x.env.merging(["PATH": try binWith(s, "\(tool)\(kind)", [tool])]) { $1 })
            let name = kind == "--clipboard" ? "clipboard" : "primary selection"
            #expect(r.status == 64 && r.stderr == "outl-capture: the \(name) is empty; nothing saved\n", "\(tool) \(kind): \(r.stderr)")
        }
        #expect(try captures(in: s.inbox).isEmpty)
    }
}

@Test func selection_without_a_session_or_a_tool_is_69() throws {
    let s = Sandbox()
    let noSession = try s.capture(["--selection"], env: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
    #expect(noSession.status == 69)
    #expect(noSession.stderr == "outl-capture: --selection needs a desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set\n")
    let noTool = try s.capture(["--clipboard"], env: ["DISPLAY": ":99", "WAYLAND_DISPLAY": "wayland-9", "PATH": s.dir.sub("empty")])
    #expect(noTool.status == 69)
    #expect(noTool.stderr == "outl-capture: --clipboard: no clipboard program found (install wl-paste (wl-clipboard) or xclip or xsel)\n",
            "\(noTool.stderr)")
    #expect(try s.capture(["--selection", "--clipboard"]).status == 64)
    #expect(try s.capture(["--selection", "text"]).status == 64)
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func a_tool_that_fails_for_another_reason_is_69_with_its_words() throws {
    let s = Sandbox()
    let bin = s.dir.sub("bin")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    try writeText(bin + "/xclip", "#!/bin/sh\necho \"Error: Can't open display: :9\" >&2\nexit 1\n")
    chmod(bin + "/xclip", 0o755)
    let r = try s.capture(["--selection"], env: ["WAYLAND_DISPLAY": "", "DISPLAY": ":9", "PATH": bin])
    #expect(r.status == 69)
    #expect(r.stderr == "outl-capture: --selection: xclip could not read the primary selection (exit 1: Error: Can't open display: :9); nothing saved\n", "\(r.stderr)")
    try writeText(bin + "/xclip", "#!/bin/sh\necho 'Nothing is copied' >&2\nexit 1\n")  // as wl-paste says it
    #expect(try s.capture(["--selection"], env: ["WAYLAND_DISPLAY": "", "DISPLAY": ":9", "PATH": bin]).status == 64)
}

@Test func wl_paste_is_preferred_on_wayland() throws {
    let s = Sandbox()
    let bin = s.dir.sub("bin")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    for tool in ["wl-paste", "xclip"] {
        try writeText(bin + "/" + tool, "#!/bin/sh\nprintf '%s' \"${0##*/} $*\"\n")
        chmod(bin + "/" + tool, 0o755)
    }
    #expect(try s.capture(["--selection"], env: ["WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "PATH": bin + ":/bin"]).status == 0)
    #expect(try s.capture(["--clipboard"], env: ["WAYLAND_DISPLAY": "", "DISPLAY": ":0", "PATH": bin + ":/bin"]).status == 0)
    #expect(try captures(in: s.inbox).map(\.capture.text)
            == ["wl-paste --no-newline --type text --primary", "xclip -out -selection clipboard -target UTF8_STRING"])
}

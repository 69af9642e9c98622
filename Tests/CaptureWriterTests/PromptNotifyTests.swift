// --prompt and --notify with real child processes: $OUTL_PROMPT, the fallback order over fake
// dialog programs on $PATH, cancel saving nothing, and the receipt sent only after a save.
import Foundation
import Testing
import CaptureFormat
import TestSupport

/// A directory of fake programs, each a shell script printing `<name> <args>` (or running `body`).
private func fakeBin(_ s: Sandbox, _ scripts: [String: String]) throws -> String {
    let bin = s.dir.sub("bin")
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    for (name, body) in scripts {
        try writeText(bin + "/" + name, "#!/bin/sh\n" + body + "\n")
        chmod(bin + "/" + name, 0o755)
    }
    return bin
}

@Test func outl_prompt_supplies_the_line_with_source_hotkey() throws {
    let s = Sandbox()
    let r = try s.capture(["--prompt"], env: ["OUTL_PROMPT": "printf 'from the dialog\\n'"])
    #expect(r.status == 0, "\(r.stderr)")
    let f = try captures(in: s.inbox)
    #expect(f.map(\.capture.text) == ["from the dialog"])
    #expect(f.first?.capture.source == "hotkey")
}

@Test func cancelling_the_prompt_saves_nothing_and_exits_0() throws {
    let s = Sandbox()
    #expect(try s.capture(["--prompt"], env: ["OUTL_PROMPT": "exit 1"]).status == 0)
    #expect(try s.capture(["--prompt"], env: ["OUTL_PROMPT": "true"]).status == 0)  // empty line
    #expect(try captures(in: s.inbox).isEmpty)
}

@Test func prompt_falls_back_in_the_documented_order() throws {
    let s = Sandbox()
    let echo = #"echo "${0##*/} $*""#
    let bin = try fakeBin(s, ["dmenu": echo, "fuzzel": echo, "rofi": echo, "kdialog": echo])
    #expect(try s.capture(["--prompt"], env: ["PATH": bin]).status == 0)
    try FileManager.default.removeItem(atPath: bin + "/kdialog")
    #expect(try s.capture(["--prompt"], env: ["PATH": bin]).status == 0)
    try FileManager.default.removeItem(atPath: bin + "/rofi")
    try FileManager.default.removeItem(atPath: bin + "/fuzzel")
    #expect(try s.capture(["--prompt"], env: ["PATH": bin]).status == 0)
    let texts = try captures(in: s.inbox).map(\.capture.text)
    #expect(texts == ["kdialog --title outl --inputbox Capture a line:", "rofi -dmenu -p capture", "dmenu -p capture"])
}

@Test func prompt_without_any_dialog_program_exits_69() throws {
    let s = Sandbox()
    let r = try s.capture(["--prompt"], env: ["PATH": s.dir.sub("empty")])
    #expect(r.status == 69)
    #expect(r.stderr.contains("OUTL_PROMPT"))
}

@Test func notify_sends_the_receipt_only_after_a_save() throws {
    let s = Sandbox()
    let log = s.dir.sub("notified")
    let bin = try fakeBin(s, ["notify-send": "printf '%s|' \"$@\" >> '\(log)'"])
    let path = bin + ":/usr/bin:/bin"
    #expect(try s.capture(["--notify", "hello"], env: ["PATH": path]).status == 0)
    #expect(readText(log) == "--app-name=outl|--|Saved; lands in outl|hello|")
    try FileManager.default.removeItem(atPath: log)
    try writeText(s.dir.sub("file"), "")
    #expect(try s.capture(["--notify", "--inbox", s.dir.sub("file/x"), "hello"], env: ["PATH": path]).status == 73)
    // No receipt for what was not saved: the one notice is the failure, sent as critical.
    let sent = readText(log) ?? ""
    #expect(!sent.contains("Saved"), "\(sent)")
    #expect(sent.hasPrefix("-u|critical|--app-name=outl|--|outl-capture: nothing saved|cannot create inbox "), "\(sent)")
}

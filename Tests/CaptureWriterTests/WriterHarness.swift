// Shared helpers for the writer tests: run the real `outl-capture` against a private HOME, and
// read back what it left in an inbox.
import Foundation
import CaptureFormat
import TestSupport

let writer = binPath("outl-capture")

/// A sandbox with its own HOME (so no real config is read) and a workspace inside it.
final class Sandbox {
    let dir = TempDir("outl-writer")
    var home: String { dir.sub("home") }
    var workspace: String { dir.sub("ws") }
    var inbox: String { workspace + "/.outl/captures" }
    /// The receipt's second half when no outld holds this workspace (none runs in these tests).
    var noOutld: String { "no outld is running for \(workspace): start outld (or run outld --once) to move it into your journal" }

    /// The workspace exists, as outld made it on its first start (the writer never creates one).
    init() {
        try? FileManager.default.createDirectory(atPath: dir.sub("home/.config/outl"), withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
    }

    var baseEnv: [String: String] {
        ["HOME": home, "XDG_CONFIG_HOME": home + "/.config", "OUTL_WORKSPACE": workspace, "TZ": "UTC"]
    }

    @discardableResult
    func capture(_ args: [String], env: [String: String] = [:], stdin: [UInt8]? = nil) throws -> ProcessResult {
        try run(writer, args, env: baseEnv.merging(env) { $1 }, stdin: stdin)
    }
}

/// Final-form files of `dir`, decoded, in name order.
func captures(in dir: String) throws -> [(name: String, capture: DecodedCapture)] {
    try listDir(dir).filter(CaptureName.isFinal).map { name in
        let bytes = [UInt8](FileManager.default.contents(atPath: dir + "/" + name) ?? Data())
        return (name, try CaptureFile.decode(bytes))
    }
}

func mode(of path: String) -> mode_t {
    var st = stat()
    return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
}

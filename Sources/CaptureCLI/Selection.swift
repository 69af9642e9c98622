// Selection: `--selection` (the primary selection: what was just highlighted) and `--clipboard`
// (what was copied), read through the desktop's own tool: wl-paste on Wayland, else xclip or xsel
// on X11, the first one installed. We never talk to a display server ourselves.
import CaptureFormat
import SystemCalls

enum Selection {
    /// The readers to try, in order, for the session the environment describes.
    static func readers(_ kind: SelectionKind, environment: (String) -> String?) -> [[String]] {
        var out: [[String]] = []
        let primary = kind == .primary
        if environment("WAYLAND_DISPLAY") != nil {
            out.append(["wl-paste", "--no-newline", "--type", "text"] + (primary ? ["--primary"] : []))
        }
        if environment("DISPLAY") != nil {
            out.append(["xclip", "-out", "-selection", primary ? "primary" : "clipboard", "-target", "UTF8_STRING"])
            out.append(["xsel", "--output", primary ? "--primary" : "--clipboard"])
        }
        return out
    }

    /// How the tools say that nothing is selected or copied, which is no failure of theirs: xclip
    /// ("Error: target STRING not available"), wl-paste ("Nothing is copied", "No selection").
    /// xsel prints nothing and exits 0.
    static func saysNothingIsSelected(_ complaint: String) -> Bool {
        let c = complaint.lowercased()
        return (c.contains("target") && c.contains("not available")) || c.contains("nothing is copied")
            || c.contains("no selection")
    }

    /// The selected text, as the tool gave it (checked to be UTF-8 and not blank).
    static func read(_ kind: SelectionKind, environment: (String) -> String?) throws -> String {
        let candidates = readers(kind, environment: environment)
        guard !candidates.isEmpty else {
            throw Failure(ExitStatus.unavailable,
                          "\(kind.rawValue) needs a desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set")
        }
        let path = environment("PATH")
        guard let (exe, argv) = candidates.lazy.compactMap({ c in ChildProcess.find(c[0], path: path).map { ($0, c) } }).first else {
            let tools = candidates.map { $0[0] == "wl-paste" ? "wl-paste (wl-clipboard)" : $0[0] }.joined(separator: " or ")
            throw Failure(ExitStatus.unavailable, "\(kind.rawValue): no clipboard program found (install \(tools))")
        }
        let tool = argv[0]
        guard let r = ChildProcess.run([exe] + argv.dropFirst(), captureOutput: true, limit: CaptureFile.maxFileBytes + 1) else {
            throw Failure(ExitStatus.unavailable, "\(kind.rawValue): cannot start \(exe)")
        }
        if r.status != 0, r.status != 126, r.status != 127, let said = r.complaint, saysNothingIsSelected(said) {
            throw Failure(ExitStatus.usage, "the \(kind.name) is empty; nothing saved")
        }
        if r.status != 0 {
            let why = r.status == 126 || r.status == 127 ? "cannot be run" : "could not read the \(kind.name)"
            throw Failure(ExitStatus.unavailable,
                          "\(kind.rawValue): \(tool) \(why) (exit \(r.status)\(r.complaint.map { ": \($0)" } ?? "")); nothing saved")
        }
        if r.output.count > CaptureFile.maxFileBytes {
            throw Failure(ExitStatus.dataError, "the \(kind.name) is over 1 MiB; nothing saved")
        }
        if let bad = UTF8Check.firstInvalidOffset(r.output) {
            throw Failure(ExitStatus.dataError, "the \(kind.name) is not UTF-8 text (byte \(bad)); nothing saved")
        }
        let text = String(decoding: r.output, as: UTF8.self)
        if CaptureFile.trimWhitespace(text).isEmpty {
            throw Failure(ExitStatus.usage, "the \(kind.name) is empty; nothing saved")
        }
        return text
    }
}

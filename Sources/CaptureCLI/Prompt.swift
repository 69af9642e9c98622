// Prompt: `--prompt` asks for one line in a small dialog, for a desktop hotkey. $OUTL_PROMPT (a
// shell command printing the line) wins; else the first installed of the known dialogs is used.

enum PromptResult: Equatable {
    case line(String)
    case cancelled
    case noProgram
}

enum Prompt {
    /// Fallback order (SPEC section 5), each with the arguments that make it ask for free text.
    static let programs: [[String]] = [
        ["zenity", "--entry", "--title=outl", "--text=Capture a line:"],
        ["kdialog", "--title", "outl", "--inputbox", "Capture a line:"],
        ["rofi", "-dmenu", "-p", "capture"],
        ["wofi", "--dmenu", "--prompt", "capture"],
        ["fuzzel", "--dmenu", "--prompt", "capture: "],
        ["dmenu", "-p", "capture"],
    ]

    static func ask(environment: (String) -> String?) -> PromptResult {
        var argv: [String]
        if let custom = environment("OUTL_PROMPT") {
            argv = ["/bin/sh", "-c", custom]
        } else {
            let path = environment("PATH")
            guard let found = programs.lazy.compactMap({ p in
                ChildProcess.find(p[0], path: path).map { [$0] + p.dropFirst() }
            }).first else { return .noProgram }
            argv = found
        }
        // A dialog closed or escaped exits non-zero: that is a cancel, never an error.
        guard let r = ChildProcess.run(argv, captureOutput: true), r.status == 0 else { return .cancelled }
        var bytes = r.output
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        if bytes.isEmpty { return .cancelled }
        return .line(String(decoding: bytes, as: UTF8.self))
    }
}

enum Notify {
    /// The receipt: called only after the capture is durable. Absent notify-send is not an error.
    static func saved(preview: String, environment: (String) -> String?) {
        guard let exe = ChildProcess.find("notify-send", path: environment("PATH")) else { return }
        _ = ChildProcess.run([exe, "--app-name=outl", "Saved; lands in outl", preview], captureOutput: false)
    }
}

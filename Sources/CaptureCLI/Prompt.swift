// Prompt: `--prompt` asks for one line in a small dialog, for a desktop hotkey. $OUTL_PROMPT (a
// shell command printing the line) wins; else the first installed of the known dialogs is used.
// A dialog closed or escaped is a cancel; a command that cannot run (126, 127) or a dialog that
// cannot reach the display is an error.

enum PromptResult: Equatable {
    case line(String)
    case cancelled
}

enum Prompt {
    /// Fallback order (SPEC section 5), each with the arguments that make it ask for free text, and
    /// how it is given an initial text (nil: as the one choice on its stdin).
    static let programs: [(argv: [String], initial: ((String) -> [String])?)] = [
        (["zenity", "--entry", "--title=outl", "--text=Capture a line:"], { ["--entry-text=\($0)"] }),
        (["kdialog", "--title", "outl", "--inputbox", "Capture a line:"], { [$0] }),
        (["rofi", "-dmenu", "-p", "capture"], { ["-filter", $0] }),
        (["wofi", "--dmenu", "--prompt", "capture"], { ["--search", $0] }),
        (["fuzzel", "--dmenu", "--prompt", "capture: "], { ["--search", $0] }),
        (["dmenu", "-p", "capture"], nil),
    ]

    static let names = "zenity, kdialog, rofi, wofi, fuzzel or dmenu"

    /// How GTK, Qt, rofi, dmenu and the Wayland pickers say they have no display to show on.
    static func saysNoDisplay(_ complaint: String) -> Bool {
        let c = complaint.lowercased()
        return ["cannot open display", "can't open display", "could not connect to display", "failed to open display",
                "unable to open display", "failed to connect to wayland", "cannot connect to wayland",
                "could not connect to wayland"].contains { c.contains($0) }
    }

    /// Shows the dialog, with `initial` (one line) already typed when given. $OUTL_PROMPT gets it
    /// as $OUTL_PROMPT_TEXT.
    static func ask(initial: String?, environment: (String) -> String?) throws -> PromptResult {
        var argv: [String]
        var input: [UInt8]? = nil
        var extraEnv: [String] = []
        let custom = environment("OUTL_PROMPT")
        if let custom {
            argv = ["/bin/sh", "-c", custom]
            if let initial { extraEnv.append("OUTL_PROMPT_TEXT=\(initial)") }
        } else {
            let path = environment("PATH")
            guard let (found, p) = programs.lazy.compactMap({ p in ChildProcess.find(p.argv[0], path: path).map { ($0, p) } }).first else {
                throw Failure(ExitStatus.unavailable, "--prompt: no dialog program found (install \(names), or set OUTL_PROMPT)")
            }
            argv = [found] + p.argv.dropFirst()
            if let initial {
                if let extra = p.initial { argv += extra(initial) } else { input = Array((initial + "\n").utf8) }
            }
        }
        guard let r = ChildProcess.run(argv, input: input, captureOutput: true, environment: extraEnv) else {
            throw Failure(ExitStatus.unavailable, "--prompt: cannot start \(argv[0])")
        }
        if r.status == 126 || r.status == 127 {
            let what = custom.map { "OUTL_PROMPT (\($0))" } ?? argv[0]
            throw Failure(ExitStatus.unavailable,
                          "--prompt: \(what) cannot be run (exit \(r.status)\(r.complaint.map { ": \($0)" } ?? ""))")
        }
        // A dialog that could not reach the display exits as a closed one does (zenity: 1), so
        // what it said tells them apart: a hotkey with a stale DISPLAY must not look cancelled.
        if r.status != 0, let said = r.complaint, Prompt.saysNoDisplay(said) {
            let what = custom.map { "OUTL_PROMPT (\($0))" } ?? argv[0]
            throw Failure(ExitStatus.unavailable, "--prompt: \(what) cannot reach the display (\(said)); nothing saved")
        }
        // Any other non-zero exit is the dialog closed or escaped: a cancel, never an error.
        guard r.status == 0 else { return .cancelled }
        var bytes = r.output
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        if bytes.isEmpty { return .cancelled }
        guard let line = String(validating: bytes, as: UTF8.self) else {
            throw Failure(ExitStatus.dataError, "--prompt: the dialog's answer is not UTF-8; nothing saved")
        }
        return .line(line)
    }
}

/// Desktop notices through notify-send. Its options end at `--`: a body that starts with `-` (a
/// capture of "-5 degrees", a message about `--at`) is text, not an option that makes it fail.
enum Notify {
    /// The receipt: called only after the capture is durable. Absent notify-send is not an error.
    static func saved(preview: String, environment: (String) -> String?) {
        guard let exe = ChildProcess.find("notify-send", path: environment("PATH")) else { return }
        _ = ChildProcess.run([exe, "--app-name=outl", "--", "Saved; lands in outl", preview], captureOutput: false)
    }

    /// A failure seen from a hotkey, which has no terminal: the same line, as a critical notice.
    static func failed(_ message: String, environment: (String) -> String?) {
        guard let exe = ChildProcess.find("notify-send", path: environment("PATH")) else { return }
        _ = ChildProcess.run([exe, "-u", "critical", "--app-name=outl", "--", "outl-capture: nothing saved", message],
                             captureOutput: false)
    }
}

// CaptureMain: the writer from arguments to a durable file. Nothing is printed as saved until
// Inbox.deliver returned (rename and directory fsync done); the receipt notification comes after.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import CaptureInbox
import SystemCalls

public let captureVersion = "0.1.0"

/// Runs `outl-capture` with `args` (without the program name); returns the exit status.
public func captureMain(_ args: [String], environment: (String) -> String? = Path.environment) -> Int32 {
    let o: Options
    do {
        o = try Arguments.parse(args)
    } catch {
        return Out.fail(ExitStatus.usage, "\(error) (see outl-capture --help)")
    }
    if o.help { Out.stdout(Arguments.usage); return ExitStatus.ok }
    if o.version { Out.stdout("outl-capture \(captureVersion)\n"); return ExitStatus.ok }
    if o.list {
        do {
            return ListCommand.run(try InboxConfig.resolve(workspace: o.workspace, inboxes: o.inboxes,
                                                           environment: environment))
        } catch {
            return Out.fail(ExitStatus.config, "\(error)")
        }
    }

    // 1. The text and its default source.
    var raw: String
    var source = o.source ?? "cli"
    if let uri = o.uri {
        do {
            let parts = try ShareLink.parse(uri: uri)
            guard let line = ShareLink.line(text: parts.text, url: parts.url, title: parts.title) else {
                return Out.fail(ExitStatus.dataError, "--uri: the link has no text, url or title")
            }
            raw = line
        } catch {
            return Out.fail(ExitStatus.dataError, "--uri: \(error)")
        }
        source = o.source ?? "share"
    } else if o.prompt {
        switch Prompt.ask(environment: environment) {
        case .noProgram:
            return Out.fail(ExitStatus.unavailable,
                            "--prompt: no dialog program found (install zenity, kdialog, rofi, wofi, fuzzel or dmenu, or set OUTL_PROMPT)")
        case .cancelled:
            if !o.quiet { Out.stderr("outl-capture: cancelled; nothing saved\n") }
            return ExitStatus.ok
        case .line(let l):
            raw = l
        }
        source = o.source ?? "hotkey"
    } else if !o.words.isEmpty {
        raw = o.words.joined(separator: " ")
    } else if o.readStdin || isatty(0) == 0 {
        switch StdinText.read() {
        case .success(let s): raw = s
        case .failure(let e): return Out.fail(ExitStatus.dataError, e.description)
        }
    } else {
        return Out.fail(ExitStatus.usage, "nothing to capture: give TEXT, - (standard input), --prompt or --uri")
    }

    let text = CaptureFile.trimWhitespace(raw)
    if text.isEmpty { return Out.fail(ExitStatus.usage, "empty text; nothing saved") }
    if text.utf8.count > CaptureFile.maxTextBytes {
        return Out.fail(ExitStatus.dataError, "text is over 64 KiB (\(text.utf8.count) bytes); nothing saved")
    }

    // 2. When: --at as given (canonicalised), else now in the local zone. The ULID carries the same ms.
    let stamp: Timestamp
    if let at = o.at {
        guard let t = Timestamp(rfc3339: at) else {
            return Out.fail(ExitStatus.dataError, "--at: not an RFC 3339 time with an offset: \(at)")
        }
        guard t.epochMilliseconds >= 0, UInt64(t.epochMilliseconds) <= ULID.maxTimestampMs else {
            return Out.fail(ExitStatus.dataError, "--at: out of range (1970 to 10889): \(at)")
        }
        stamp = t
    } else {
        stamp = Timestamp.local(epochMs: Int64(ULIDGenerator.nowMs()))
    }

    // 3. Where: an explicit inbox needs no config file, so a broken config cannot block it.
    let inbox: String
    if let first = o.inboxes.first {
        inbox = first
    } else if o.workspace == nil, let env = environment("OUTL_CAPTURE_INBOX") {
        inbox = env
    } else {
        do {
            inbox = try InboxConfig.resolve(workspace: o.workspace, inboxes: [], environment: environment).writeInbox
        } catch {
            return Out.fail(ExitStatus.config, "\(error)")
        }
    }

    // 4. The Maildir delivery.
    var gen = ULIDGenerator()
    let id = gen.next(nowMs: UInt64(stamp.epochMilliseconds))
    let bytes = CaptureFile.encode(Capture(text: text, capturedAt: stamp.rfc3339, source: source))
    do {
        try Inbox.ensure(inbox)
    } catch {
        return Out.fail(ExitStatus.cantCreate, "cannot create inbox \(inbox): \(error); nothing saved")
    }
    do {
        _ = try Inbox.deliver(bytes, id: id, to: inbox)
    } catch {
        return Out.fail(ExitStatus.ioError, "cannot save to \(inbox): \(error); nothing saved")
    }

    // 5. Durable: now, and only now, say so.
    Out.stdout(id.string + "\n")
    if !o.quiet {
        Out.stderr("Saved; lands in the journal for \(stamp.dayString) when outld drains it\n")
    }
    if o.notify { Notify.saved(preview: CaptureFile.oneLine(text, max: 60), environment: environment) }
    return ExitStatus.ok
}

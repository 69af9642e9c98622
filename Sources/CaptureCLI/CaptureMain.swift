// CaptureMain: the writer from arguments to a durable file. Everything that can be checked is
// checked before the text is asked for (a hotkey's dialog never opens for a capture that cannot be
// saved); nothing is printed as saved until Inbox.deliver returned (rename and directory fsync
// done); the receipt notification comes after. Every failure is a `Failure`, printed in one place.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import CaptureInbox
import OutlConfig
import SystemCalls

public let captureVersion = "0.1.0"

/// Runs `outl-capture` with the arguments as the kernel gave them (`argv[1..<argc]`): an argument
/// that is not UTF-8 is refused as standard input is, never decoded with replacements. The bytes
/// are checked where they lie, so a capture's process makes no array of arrays (an element type
/// the runtime has no ready metadata for, which it would build by demangling its name).
public func captureMain(argc: Int32, argv: UnsafePointer<UnsafeMutablePointer<CChar>?>,
                        environment: @escaping (String) -> String? = Path.environment) -> Int32 {
    func bytes(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        guard let p = argv[i] else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    }
    var args: [String] = []
    args.reserveCapacity(max(Int(argc) - 1, 0))
    for i in 1..<max(Int(argc), 1) where argv[i] != nil {
        let a = bytes(i)
        // Our own check, not String(validating:): that generic path looks a witness up by
        // mangled name, which brings the runtime's demangler into every capture's process.
        if let bad = UTF8Check.firstInvalidOffset(a) {
            let hotkey = Arguments.wantsDesktopNotice((1..<Int(argc)).map { String(decoding: bytes($0), as: UTF8.self) })
            return report(Failure(ExitStatus.dataError, "argument \(i) is not UTF-8 (byte \(bad)); nothing saved"),
                          notify: hotkey, environment: environment)
        }
        args.append(String(decoding: a, as: UTF8.self))
    }
    return captureMain(args, environment: environment)
}

/// Runs `outl-capture` with `args` (without the program name); returns the exit status.
public func captureMain(_ args: [String], environment: @escaping (String) -> String? = Path.environment) -> Int32 {
    do {
        return try Writer.run(args, environment: environment)
    } catch let f as Failure {
        return report(f, notify: Arguments.wantsDesktopNotice(args), environment: environment)
    } catch {
        return report(Failure(ExitStatus.software, "\(error)"), notify: Arguments.wantsDesktopNotice(args), environment: environment)
    }
}

/// The one place a failure is shown: one line on stderr, and for a hotkey a critical notification.
func report(_ f: Failure, notify: Bool, environment: (String) -> String?) -> Int32 {
    Out.say(f.message)
    if notify { Notify.failed(f.message, environment: environment) }
    return f.status
}

enum Writer {
    static func run(_ args: [String], environment: @escaping (String) -> String?) throws -> Int32 {
        let o: Options
        do {
            o = try Arguments.parse(args)
        } catch {
            throw Failure(ExitStatus.usage, "\(error) (see outl-capture --help)")
        }
        if o.help { Out.stdout(Arguments.usage); return ExitStatus.ok }
        if o.version { Out.stdout("outl-capture \(captureVersion)\n"); return ExitStatus.ok }
        if o.list {
            let config = try configured { try OutlConfig.resolve(workspace: o.workspace, inboxes: o.inboxes, environment: environment) }
            return try ListCommand.run(config, home: environment("HOME"), json: o.json)
        }
        let plan = try Plan.make(o, environment: environment)
        // Attachments before the text (AttachmentSources): the inbox is opened for them now.
        let inbox = o.attaches ? try openInbox(plan) : nil
        defer { inbox?.close() }
        var staged: [StagedAttachment] = []
        if let inbox {
            staged = try AttachmentSources.stage(o, limit: plan.attachmentLimit, stamp: { localNow(environment: environment).rfc3339 },
                                                 inbox: inbox, at: plan.inbox, environment: environment)
        }
        var saved = false
        defer { if !saved, let inbox { AttachmentDelivery.discard(staged, inbox: inbox, at: plan.inbox) } }
        guard let input = try readInput(o, environment: environment) else {
            if !o.quiet { Out.say("cancelled; nothing saved") }
            return ExitStatus.ok
        }
        let text = try checked(input.text, captionOnly: !staged.isEmpty)
        let source = try checkedSource(o.source ?? input.source ?? plan.defaultSource)
        // The page, each origin named in its own error: the flag, the link, outld.conf (exit 78).
        // The first one given wins, even when it names the journal (`--page ""` over outld.conf).
        let page: String?
        if let p = o.page { page = try checkedPage(p, from: "--page") }
        else if let p = input.page { page = try checkedPage(p, from: "--uri: page") }
        else if let p = plan.defaultPage { page = try checkedPage(p, from: "outld.conf: page", status: ExitStatus.config) }
        else { page = nil }
        let stamp = plan.at ?? localNow(environment: environment)
        let (id, file, attachments) = try save(text: text, source: source, page: page, stamp: stamp, plan: plan, open: inbox, staged: staged)
        saved = true
        // Durable: now, and only now, say so.
        if o.json {
            // The day it lands on: the date of its time in that time's own offset (the format's rule).
            let day = String(stamp.rfc3339.prefix(10))
            Out.stdout(String(decoding: JSONValue.object([
                ("id", .string(id.string)), ("day", .string(day)), ("page", page.map(JSONValue.string) ?? .null),
                ("file", .string(file)),
                ("captured_at", .string(stamp.rfc3339)), ("source", .string(source)),
                ("attachments", .array(attachments.map { a in
                    .object([("file", .string(Path.join(plan.inbox, a.file))), ("name", .string(a.name)),
                             ("size", JSONValue.int(a.size)), ("sha256", .string(a.sha256))])
                })),
            ]).encoded(), as: UTF8.self))
        } else {
            Out.stdout(id.string + "\n")
        }
        if !o.quiet {
            let target = page.map { "\"\($0)\"" } ?? receiptDay(stamp)
            let carried = attachments.isEmpty ? "" : attachments.count == 1 ? " with 1 attachment" : " with \(attachments.count) attachments"
            Out.stderr("Saved for \(target)\(carried); \(whatHappensNext(plan.workspace, page: page))\n")
        }
        if o.notify {
            let preview = text.isEmpty ? attachments.map(\.name).joined(separator: ", ") : text
            Notify.saved(preview: CaptureFile.oneLine(preview, max: 60), environment: environment)
        }
        return ExitStatus.ok
    }

    /// What is settled before the text is read: where it goes, when it was made (with --at).
    struct Plan {
        var inbox: String
        /// The root whose inbox `inbox` is (nil for a device-local one): nothing below it is followed.
        var workspace: String?
        var at: Timestamp?
        var defaultSource: String
        /// `page =` of outld.conf.
        var defaultPage: String?
        /// The largest attachment delivered: `attachment-limit =` of outld.conf, else the default.
        var attachmentLimit = CaptureFile.defaultAttachmentLimit

        static func make(_ o: Options, environment: @escaping (String) -> String?) throws -> Plan {
            if let s = o.source { _ = try checkedSource(s) }
            if let p = o.page { _ = try checkedPage(p, from: "--page") }
            var at: Timestamp? = nil
            if let raw = o.at {
                if Timestamp(rfc3339: raw) == nil, let w = TimeZoneCheck.warning(environment: environment) {
                    Out.say("warning: \(w)")  // a time without an offset is read in $TZ
                }
                at = try AtTime.parse(raw, nowMs: Int64(ULIDGenerator.nowMs()), future: o.future)
            }
            let target = try configured {
                try OutlConfig.writeTarget(workspace: o.workspace, inboxes: o.inboxes, environment: environment)
            }
            if let ws = target.workspace, let origin = target.origin { try requireDirectory(ws, origin: origin) }
            let source = o.prompt ? "hotkey" : o.uri != nil ? "share" : o.selection.map { $0 == .primary ? "selection" : "clipboard" } ?? "cli"
            return Plan(inbox: target.inbox, workspace: target.workspace, at: at, defaultSource: source, defaultPage: target.page,
                        attachmentLimit: target.attachmentLimit ?? CaptureFile.defaultAttachmentLimit)
        }
    }

    /// The text and, for a link with `source=` or `page=`, those; nil when a dialog was cancelled.
    static func readInput(_ o: Options, environment: (String) -> String?) throws -> (text: String, source: String?, page: String?)? {
        if let uri = o.uri {
            let parts: (text: String?, url: String?, title: String?, source: String?)
            do {
                parts = try ShareLink.parse(uri: uri)
            } catch {
                throw Failure(ExitStatus.dataError, "--uri: \(error)")
            }
            guard let line = ShareLink.line(text: parts.text, url: parts.url, title: parts.title) else {
                throw Failure(ExitStatus.dataError, "--uri: the link has no text, url or title")
            }
            let page: String?
            do { page = try ShareLink.page(uri: uri) } catch { throw Failure(ExitStatus.dataError, "--uri: \(error)") }
            return (line, parts.source.flatMap { $0.isEmpty ? nil : $0 }, page)
        }
        let selected = try o.selection.map { try Selection.read($0, environment: environment) }
        if o.prompt {
            let initial = selected.map { CaptureFile.oneLine(CaptureFile.trimWhitespace($0), max: 4096) }
            switch try Prompt.ask(initial: initial, environment: environment) {
            case .cancelled: return nil
            case .line(let l): return (l, nil, nil)
            }
        }
        if let selected { return (selected, nil, nil) }
        if !o.words.isEmpty {
            // Not joined(separator:): its generic requirements are checked at run time, on every capture.
            var text = o.words[0]
            for w in o.words.dropFirst() { text += " "; text += w }
            return (text, nil, nil)
        }
        // With attachments the caption is optional, and standard input is read only when `-` says so.
        if o.attaches && !o.readStdin { return ("", nil, nil) }
        if o.readStdin || isatty(0) == 0 { return (try StdinText.read(), nil, nil) }
        throw Failure(ExitStatus.usage, "nothing to capture: give TEXT, - (standard input), --prompt, --selection or --uri")
    }

    /// The capture's text by the format's one rule (CaptureFile.checkedText), CR LF read as LF;
    /// with attachments (`captionOnly`) an empty text is no caption.
    static func checked(_ raw: String, captionOnly: Bool = false) throws -> String {
        do {
            return try CaptureFile.checkedText(raw)
        } catch CaptureFormatError.textEmpty where captionOnly {
            return ""
        } catch CaptureFormatError.textEmpty {
            throw Failure(ExitStatus.usage, "empty text (nothing visible in it); nothing saved")
        } catch CaptureFormatError.textTooLong(let n) {
            throw Failure(ExitStatus.dataError, "text is over 64 KiB (\(n) bytes); nothing saved")
        } catch {
            throw Failure(ExitStatus.dataError, "\(error); nothing saved")
        }
    }

    /// The page a capture names, as the format stores it (nil: the journal), or `status` with the
    /// setting it came from.
    static func checkedPage(_ p: String, from origin: String, status: Int32 = ExitStatus.dataError) throws -> String? {
        do {
            return try CaptureFile.checkedPage(p)
        } catch {
            throw Failure(status, "\(origin): \(error); nothing saved")
        }
    }

    static func checkedSource(_ s: String) throws -> String {
        do {
            try CaptureFile.checkSource(s)
            return s
        } catch {
            throw Failure(ExitStatus.dataError, "--source: \(error); nothing saved")
        }
    }

    /// Now in the local zone, after saying once if $TZ names no zone (glibc then uses UTC).
    static func localNow(environment: (String) -> String?) -> Timestamp {
        if let w = TimeZoneCheck.warning(environment: environment) { Out.say("warning: \(w)") }
        return Timestamp.local(epochMs: Int64(ULIDGenerator.nowMs()))
    }

    /// The workspace must already be one, wherever its path came from: only outld creates a
    /// workspace, so a typo (in a flag, $OUTL_WORKSPACE or outld.conf) never becomes a directory.
    /// The inbox inside an existing workspace is made by whichever side needs it first.
    static func requireDirectory(_ dir: String, origin: OutlConfig.Origin) throws {
        let st: stat
        do { st = try Sys.statFollowingLinks(dir) } catch let e as Errno {
            if e == .ENOENT || e == .ENOTDIR {
                throw Failure(ExitStatus.cantCreate, OutlConfig.missingWorkspace(dir, origin: origin) + "; nothing saved")
            }
            throw Failure(ExitStatus.of(e, otherwise: ExitStatus.cantCreate), "cannot reach the workspace \(dir): \(e); nothing saved")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw Failure(ExitStatus.cantCreate, "the workspace \(dir) (from \(origin.rawValue)) is not a directory; nothing saved")
        }
    }

    /// The inbox, made if missing and opened for delivery, or the Failure that says why not.
    static func openInbox(_ plan: Plan) throws -> FileDescriptor {
        do {
            return try Inbox.openForDelivery(plan.inbox, workspace: plan.workspace)
        } catch let e as UnsafeComponent {
            throw Failure(ExitStatus.cantCreate, "refused: \(e); nothing saved")
        } catch {
            throw Failure(ExitStatus.of(error, otherwise: ExitStatus.cantCreate), "cannot create inbox \(plan.inbox): \(error); nothing saved")
        }
    }

    /// The Maildir delivery: the staged attachments published under their final names (inbox
    /// fsync'd), then the capture file naming them. Returns the capture id, its file and its
    /// attachments once all of it is durable; on failure the published attachments are taken back.
    static func save(text: String, source: String, page: String?, stamp: Timestamp, plan: Plan,
                     open: FileDescriptor?, staged: [StagedAttachment]) throws -> (ULID, String, [Attachment]) {
        var gen = ULIDGenerator()
        let id = gen.next(nowMs: UInt64(stamp.epochMilliseconds))
        let dir = try open ?? openInbox(plan)
        defer { if open == nil { dir.close() } }
        let attachments: [Attachment]
        do {
            attachments = try AttachmentDelivery.publish(staged, id: id, inbox: dir, at: plan.inbox)
        } catch {
            throw Failure(ExitStatus.of(error, otherwise: ExitStatus.ioError), "cannot save attachments to \(plan.inbox): \(error); nothing saved")
        }
        let bytes = CaptureFile.encode(Capture(text: text, capturedAt: stamp.rfc3339, source: source, page: page, attachments: attachments))
        do {
            return (id, try Inbox.deliver(bytes, id: id, to: dir, at: plan.inbox), attachments)
        } catch {
            AttachmentDelivery.discard([], published: attachments, inbox: dir, at: plan.inbox)
            throw Failure(ExitStatus.of(error, otherwise: ExitStatus.ioError), "cannot save to \(plan.inbox): \(error); nothing saved")
        }
    }

    /// The receipt's second half: whether an outld serves the workspace, read from /proc/locks
    /// without touching its lock (it holds an exclusive flock on the workspace directory). For an
    /// inbox outside a workspace (a device's own, drained by whichever outld lists it) nothing can
    /// be known, and the usual promise is said.
    static func whatHappensNext(_ workspace: String?, page: String? = nil) -> String {
        let usual = page == nil ? "lands in your journal when outld drains it" : "lands there when outld drains it"
        guard let root = workspace, let st = try? Sys.statFollowingLinks(root) else { return usual }
        switch LockProbe.holder(st) {
        case .unknown:
            return usual  // no /proc/locks to read: nothing is claimed either way
        case .none:
            return "no outld is running for \(root): start outld (or run outld --once) to move it into your journal"
        case .pid(let pid):
            if LockProbe.isStopped(pid) { return "outld (pid \(pid)) is stopped: it lands in your journal once outld continues" }
            return usual
        }
    }

    /// "Wed 2 Dec", with the year when it is not this year's.
    static func receiptDay(_ t: Timestamp) -> String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let thisYear = Timestamp.local(epochMs: Int64(ULIDGenerator.nowMs())).year
        return "\(days[t.weekday]) \(t.day) \(months[t.month - 1])" + (t.year == thisYear ? "" : " \(t.year)")
    }

    /// A configuration error, with the status its origin calls for (64 flag, 78 file or variable).
    static func configured<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as ConfigError {
            throw Failure(e.exitStatus, e.description)
        }
    }
}

// Arguments: the writer's command line (SPEC section 5). Parsing only; no I/O, so every usage
// error is found before anything touches the disk or a dialog opens.

/// Which X11/Wayland selection `--selection` and `--clipboard` read.
public enum SelectionKind: String, Equatable, Sendable {
    case primary = "--selection"
    case clipboard = "--clipboard"

    var name: String { self == .primary ? "primary selection" : "clipboard" }
}

public struct Options: Equatable {
    public var words: [String] = []
    public var readStdin = false
    public var source: String?
    /// --page: the page the capture goes to ("" or today: the journal).
    public var page: String?
    public var at: String?
    /// --future: an --at more than a year ahead is meant.
    public var future = false
    public var workspace: String?
    public var inboxes: [String] = []
    public var quiet = false
    public var notify = false
    public var prompt = false
    public var uri: String?
    public var selection: SelectionKind?
    /// --attach FILE, in order (`-`: standard input, named by --name).
    public var attachments: [String] = []
    /// --name: the name of the attachment read from standard input.
    public var attachmentName: String?
    /// --screenshot: a screenshot is the last attachment.
    public var screenshot = false
    /// Any attachment at all: the text may then be left out.
    public var attaches: Bool { !attachments.isEmpty || screenshot }
    public var list = false
    /// The receipt, or the --list listing, as one JSON document on stdout.
    public var json = false
    public var help = false
    public var version = false
}

public struct UsageError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}

public enum Arguments {
    /// The options that take a value. A switch, not a Set: a Set<String> is the first generic type the
    /// writer would make at run time (demangled, its Hashable conformance looked up), for every capture.
    static func takesValue(_ name: String) -> Bool {
        switch name {
        case "--source", "--page", "--at", "--workspace", "--inbox", "--uri", "--attach", "--name": return true
        default: return false
        }
    }

    public static func parse(_ args: [String]) throws -> Options {
        var o = Options()
        var i = 0
        var onlyWords = false
        var dashes = 0  // words that are `-` before any `--`
        while i < args.count {
            let a = args[i]
            i += 1
            // Bytes, not Characters: an option is ASCII, and a Character walk costs every capture's
            // process the pages of the grapheme-breaking code.
            let u = a.utf8
            if onlyWords || a == "-" || u.first != UInt8(ascii: "-") {
                if a == "-" && !onlyWords { dashes += 1 }
                o.words.append(a)
                continue
            }
            if a == "--" { onlyWords = true; continue }
            var name = a, inline: String?
            if u.starts(with: "--".utf8), let eq = u.firstIndex(of: UInt8(ascii: "=")) {
                name = String(decoding: u[..<eq], as: UTF8.self)
                inline = String(decoding: u[u.index(after: eq)...], as: UTF8.self)
            }
            if takesValue(name) {
                let v: String
                if let inline { v = inline } else {
                    guard i < args.count else { throw UsageError("\(name) needs a value") }
                    v = args[i]; i += 1
                }
                switch name {
                case "--source":
                    guard !v.isEmpty else { throw UsageError("--source needs a non-empty name") }
                    o.source = v
                case "--page": o.page = v
                case "--at": o.at = v
                case "--workspace": o.workspace = v
                case "--inbox": o.inboxes.append(v)
                case "--attach":
                    guard !v.isEmpty else { throw UsageError("--attach needs a file (or - for standard input)") }
                    o.attachments.append(v)
                case "--name": o.attachmentName = v
                default: o.uri = v
                }
                continue
            }
            if inline != nil { throw UsageError("\(name) takes no value") }
            switch name {
            case "-q", "--quiet": o.quiet = true
            case "--notify": o.notify = true
            case "--future": o.future = true
            case "--prompt": o.prompt = true
            case "--list": o.list = true
            case "--screenshot": o.screenshot = true
            case "--json": o.json = true
            case "--selection", "--clipboard":
                let kind = SelectionKind(rawValue: name)!
                if let other = o.selection, other != kind { throw UsageError("give --selection or --clipboard, not both") }
                o.selection = kind
            case "-h", "--help": o.help = true
            case "-V", "--version": o.version = true
            default: throw UsageError("unknown option \(a)")
            }
        }
        // `-` is standard input only as the one word: in `meeting 3 - 4pm` it is text.
        if o.words == ["-"] && dashes == 1 { o.words = []; o.readStdin = true }
        if o.help || o.version { return o }
        let inputs = (o.words.isEmpty ? 0 : 1) + (o.readStdin ? 1 : 0) + (o.uri == nil ? 0 : 1)
            + (o.list ? 1 : 0) + (o.selection == nil ? 0 : 1)
        if inputs > 1 || (o.prompt && inputs - (o.selection == nil ? 0 : 1) > 0) {
            throw UsageError("give only one of TEXT, -, --prompt, --uri, --list, --selection, --clipboard"
                             + " (--prompt may add --selection or --clipboard)")
        }
        if o.list && (o.at != nil || o.source != nil || o.page != nil || o.attaches) {
            throw UsageError("--list takes no --at, --source, --page, --attach or --screenshot")
        }
        let fromStdin = o.attachments.filter { $0 == "-" }.count
        if fromStdin > 1 { throw UsageError("--attach - may be given once (standard input is read once)") }
        if fromStdin == 1 && o.readStdin { throw UsageError("standard input is either the text (-) or an attachment (--attach -), not both") }
        if fromStdin == 1 && o.attachmentName == nil { throw UsageError("--attach - needs --name NAME (the attachment's file name)") }
        if fromStdin == 0 && o.attachmentName != nil { throw UsageError("--name names the attachment read with --attach -") }
        if o.attachments.count + (o.screenshot ? 1 : 0) > 64 { throw UsageError("at most 64 attachments") }
        return o
    }

    /// Whether a failure should also be a desktop notification: a hotkey has no terminal. Read
    /// from the raw words, so even a usage error of a hotkey's command line is seen.
    static func wantsDesktopNotice(_ args: [String]) -> Bool {
        for a in args {
            if a == "--" { return false }
            if a == "--prompt" || a == "--notify" { return true }
        }
        return false
    }

    public static let usage = """
    usage: outl-capture [options] [--] TEXT...
           outl-capture [options] -
           outl-capture --prompt [--selection | --clipboard] [options]
           outl-capture --selection | --clipboard [options]
           outl-capture --uri 'outl://capture?text=…&url=…&title=…&source=…&page=…' [options]
           outl-capture --attach FILE [--attach FILE]... [--screenshot] [options] [TEXT...]
           outl-capture --list [--json] [--workspace DIR] [--inbox DIR]...
    options: --page NAME  --source NAME  --at TIME  --future  --workspace DIR  --inbox DIR  --quiet
             --notify  --json  --help  --version  --attach FILE  --name NAME  --screenshot
    TIME is RFC 3339 with an offset, a local YYYY-MM-DD[ HH:MM[:SS]] (a date alone: that day at
    this time of day), today or yesterday; more than a year ahead needs --future.
    Saves one line into the outl capture inbox; outld moves it into the journal of its day, or to
    the end of the page --page names (else the link's page=, else `page =` in outld.conf; today:
    the journal), created if missing. Prints the capture's id; with --json, {"id", "day", "page",
    "file", "captured_at", "source"} instead.
    TEXT is the words joined by spaces; - alone (or a pipe) reads standard input; after --, words
    that start with - are text. --selection reads the primary selection, --clipboard the clipboard
    (wl-paste, xclip or xsel); with --prompt it is the dialog's initial text.
    --attach FILE carries a file (--attach - with --name NAME: standard input) and --screenshot a
    screenshot (OUTL_SCREENSHOT, else grim, maim, scrot or import), each at most 256 MiB (else
    `attachment-limit =` in outld.conf); the text, then optional, is their caption. outld copies
    them into assets/ and links them from the block.
    The workspace is --workspace, else $OUTL_WORKSPACE, else `workspace =` in
    ~/.config/outl/outld.conf, else ~/outl. See outl-capture(1).

    """
}

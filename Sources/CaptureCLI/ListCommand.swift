// ListCommand: `--list` shows the captures still waiting in every inbox outld drains, oldest
// first. It only reads: an inbox inside the workspace is opened without following any link below the
// workspace's root (a linked one is refused), files without following symlinks or blocking on FIFOs.
// What it prints came from files anyone may have written, so control characters are shown escaped,
// never sent to the terminal.
import CaptureFormat
import CaptureInbox
import OutlConfig
import SystemCalls

enum ListCommand {
    /// One line per capture: `ID  TIME  SOURCE  TEXT`, with the inbox after SOURCE when several
    /// inboxes are listed, the page in brackets and `(+N attachments)` when it has them. "nothing waiting" on stderr when there is nothing; then, on stderr, how
    /// many each inbox has set aside in rejected/ and the newest reason.
    static func run(_ config: OutlConfig, home: String?, json: Bool = false) throws -> Int32 {
        var rows: [(name: String, dir: String, fd: FileDescriptor)] = []
        var open: [FileDescriptor] = []
        var asides: [String] = []
        var asideDocs: [JSONValue] = []
        defer { open.closeAfter {} }
        for dir in config.drainedInboxes {
            do {
                let fd = try Inbox.open(dir, workspace: config.workspaceRoot)
                open.append(fd)
                for n in try Inbox.pending(fd, at: dir) { rows.append((n, dir, fd)) }
                // What the drain set aside no longer waits, but must not vanish from view.
                let aside = Inbox.setAside(fd, at: dir)
                asideDocs.append(.object([("inbox", .string(dir)), ("count", .int(aside.count)),
                                          ("newest_reason", .nullable(aside.newestReason))]))
                if aside.count > 0 {
                    asides.append("\(aside.count) set aside in \(visible(abbreviated(dir, home: home)))/rejected/; newest: "
                                  + visible(CaptureFile.oneLine(aside.newestReason ?? "(no reason readable)", max: 160)))
                }
            } catch let e as Errno where e == .ENOENT {
                continue  // an inbox nobody has written to yet
            } catch let e as UnsafeComponent {
                throw Failure(ExitStatus.cantCreate, "refused: \(e)")
            } catch {
                throw Failure(ExitStatus.of(error, otherwise: ExitStatus.ioError), "cannot list \(dir): \(error)")
            }
        }
        rows.sort { $0.name < $1.name }
        if json { return listJSON(rows, setAside: asideDocs) }
        defer { for a in asides { Out.say(a) } }
        if rows.isEmpty {
            Out.say("nothing waiting")
            return ExitStatus.ok
        }
        let several = config.drainedInboxes.count > 1
        var out = ""
        for r in rows {
            let id = CaptureName.captureID(of: r.name) ?? r.name
            let inbox = several ? "  " + visible(abbreviated(r.dir, home: home)) : ""
            switch decoded(r) {
            case nil: continue  // drained while we listed
            case .success(let c)?:
                let at = c.capturedAt?.rfc3339 ?? c.capturedAtRaw ?? "-"
                let page = c.page.map { "  [\(visible(CaptureFile.oneLine($0, max: 40)))]" } ?? ""
                let n = c.attachments.count
                let files = n == 0 ? "" : "  (+\(n) attachment\(n == 1 ? "" : "s"))"
                out += "\(id)  \(visible(at))  \(visible(c.source))\(inbox)\(page)\(files)  \(visible(CaptureFile.oneLine(c.text, max: 60)))\n"
            case .failure(let error)?:
                out += "\(id)  -  -\(inbox)  (will be rejected: \(visible("\(error)")))\n"
            }
            if out.utf8.count > 1 << 16 { Out.stdout(out); out = "" }
        }
        Out.stdout(out)
        return ExitStatus.ok
    }

    /// The listing as one JSON document: {"waiting": [...], "set_aside": [...]}, oldest first, each
    /// capture with its id, file, inbox, time, source, page (null: the journal), whole text and
    /// attachments ({file, name, size, sha256}), or the reason the drain will
    /// set it aside (`problem`); strings as the files held them (JSON escapes every control).
    static func listJSON(_ rows: [(name: String, dir: String, fd: FileDescriptor)], setAside: [JSONValue]) -> Int32 {
        var waiting: [JSONValue] = []
        for r in rows {
            var doc: [(key: String, value: JSONValue)] = [("id", .string(CaptureName.captureID(of: r.name) ?? r.name)),
                                                          ("file", .string(Path.join(r.dir, r.name))), ("inbox", .string(r.dir))]
            switch decoded(r) {
            case nil: continue  // drained while we listed
            case .success(let c)?:
                doc += [("captured_at", .nullable(c.capturedAt?.rfc3339 ?? c.capturedAtRaw)), ("source", .string(c.source)),
                        ("page", .nullable(c.page)), ("text", .string(c.text)),
                        ("attachments", .array(c.attachments.map { a in
                            .object([("file", .string(Path.join(r.dir, a.file))), ("name", .string(a.name)),
                                     ("size", .int(a.size)), ("sha256", .string(a.sha256))])
                        })), ("problem", .null)]
            case .failure(let error)?:
                doc += [("captured_at", .null), ("source", .null), ("page", .null), ("text", .null), ("attachments", .array([])),
                        ("problem", .string("\(error)"))]
            }
            waiting.append(.object(doc))
        }
        Out.stdout(String(decoding: JSONValue.object([("waiting", .array(waiting)), ("set_aside", .array(setAside))]).encoded(),
                          as: UTF8.self))
        return ExitStatus.ok
    }

    /// A waiting capture read as the drain reads it: its fields, or why the drain will set it aside;
    /// nil when it is gone (drained while we listed).
    static func decoded(_ r: (name: String, dir: String, fd: FileDescriptor)) -> Result<DecodedCapture, Error>? {
        do {
            let bytes = try Durable.readRegularFile(r.name, in: r.fd, fullPath: Path.join(r.dir, r.name), limit: CaptureFile.maxFileBytes)
            return .success(try CaptureFile.decode(bytes))
        } catch let e as Errno where e == .ENOENT {
            return nil
        } catch {
            return .failure(error)
        }
    }

    /// `s` with every control character (C0, DEL, C1) written as `\x1B` / `\u0085`, so a listing
    /// cannot move the cursor, change colours or ring the bell.
    static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            if isControl(u) {
                let hex = String(u.value, radix: 16, uppercase: true)
                out += u.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u00" + hex
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (0x7F...0x9F).contains(u.value) }

    /// `~/…` for a directory under $HOME, as a person would write it.
    static func abbreviated(_ dir: String, home: String?) -> String {
        guard let home, home != "/", dir.hasPrefix(home + "/") else { return dir }
        return "~" + dir.dropFirst(home.count)
    }
}

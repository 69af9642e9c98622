// ListCommand: `--list` shows the captures still waiting in every inbox outld drains, oldest
// first. It only reads: files are opened without following symlinks or blocking on FIFOs.
import CaptureFormat
import CaptureInbox
import SystemCalls

enum ListCommand {
    static func run(_ config: InboxConfig) -> Int32 {
        var rows: [(name: String, dir: String)] = []
        for dir in config.drainedInboxes {
            do {
                for n in try Inbox.pending(dir) { rows.append((n, dir)) }
            } catch {
                return Out.fail(ExitStatus.ioError, "cannot list \(dir): \(error)")
            }
        }
        rows.sort { $0.name < $1.name }
        var out = ""
        for r in rows {
            let id = String(r.name.prefix(26))
            do {
                let bytes = try Durable.readRegularFile(Path.join(r.dir, r.name), limit: CaptureFile.maxFileBytes)
                let c = try CaptureFile.decode(bytes)
                let at = c.capturedAt?.rfc3339 ?? c.capturedAtRaw ?? "-"
                out += "\(id)  \(at)  \(c.source)  \(CaptureFile.oneLine(c.text, max: 60))\n"
            } catch let e as Errno where e == .ENOENT {
                continue  // drained while we listed
            } catch {
                out += "\(id)  -  -  (will be rejected: \(error))\n"
            }
            if out.utf8.count > 1 << 16 { Out.stdout(out); out = "" }
        }
        Out.stdout(out)
        return ExitStatus.ok
    }
}

// AttachmentSources: what --attach and --screenshot name, staged in the inbox before the text is
// asked for, so a file that cannot be read, or is over the limit, fails before any dialog opens and a
// screenshot shows the screen as it was when the hotkey was pressed. Every failure is a Failure with
// the attachment named; what was staged before it is removed.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import CaptureInbox
import SystemCalls

enum AttachmentSources {
    /// Stages every attachment of `o` into the open inbox, in the order given, the screenshot last.
    static func stage(_ o: Options, limit: Int, stamp: () -> String, inbox: FileDescriptor, at dir: String,
                      environment: (String) -> String?) throws -> [StagedAttachment] {
        var staged: [StagedAttachment] = []
        do {
            for (i, path) in o.attachments.enumerated() {
                staged.append(try stageOne(path, name: o.attachmentName, index: i + 1, limit: limit, inbox: inbox, at: dir))
            }
            if o.screenshot {
                let index = staged.count + 1
                staged.append(try Screenshot.take(environment: environment) { fd in
                    try staging("--screenshot", limit: limit) {
                        try AttachmentDelivery.stage(from: fd, name: Screenshot.name(stamp()), limit: limit, inbox: inbox, at: dir, index: index)
                    }
                })
            }
        } catch {
            AttachmentDelivery.discard(staged, inbox: inbox, at: dir)
            throw error
        }
        return staged
    }

    /// One --attach: standard input for `-` (named by --name), else the file as the user spelled it
    /// (a link they name is followed, as cp does; a directory is refused), named by its last component.
    static func stageOne(_ path: String, name: String?, index: Int, limit: Int, inbox: FileDescriptor, at dir: String) throws -> StagedAttachment {
        let what = path == "-" ? "--attach - (standard input)" : "--attach \(path)"
        let display = try checkedName(path == "-" ? name ?? "" : Path.lastComponent(path), what: what, fromFlag: path == "-")
        if path == "-" {
            return try staging(what, limit: limit) { try AttachmentDelivery.stage(from: 0, name: display, limit: limit, inbox: inbox, at: dir, index: index) }
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = Errno.current
            let status = e == .ENOENT || e == .ENOTDIR ? ExitStatus.noInput : ExitStatus.of(e, otherwise: ExitStatus.noInput)
            throw Failure(status, "\(what): cannot open: \(e); nothing saved")
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0 {
            if st.st_mode & S_IFMT == S_IFDIR { throw Failure(ExitStatus.noInput, "\(what): is a directory, not a file; nothing saved") }
            if st.st_mode & S_IFMT == S_IFREG, Int(st.st_size) > limit {
                throw Failure(ExitStatus.dataError, "\(what): \(AttachmentSizes.spelled(Int(st.st_size))) is over the attachment limit of \(AttachmentSizes.spelled(limit)) (attachment-limit in outld.conf); nothing saved")
            }
        }
        return try staging(what, limit: limit) { try AttachmentDelivery.stage(from: fd, name: display, limit: limit, inbox: inbox, at: dir, index: index) }
    }

    /// An attachment's name by the format's rule, or a Failure saying how to give another.
    static func checkedName(_ raw: String, what: String, fromFlag: Bool) throws -> String {
        do {
            return try CaptureFile.checkedAttachmentName(raw, index: 1)
        } catch CaptureFormatError.badAttachment(_, let why) {
            let hint = fromFlag ? "" : " (give the bytes with --attach - --name NAME)"
            throw Failure(fromFlag ? ExitStatus.usage : ExitStatus.dataError, "\(what): \(fromFlag ? "--name" : "its file") \(why.hasPrefix("name ") ? String(why.dropFirst(5)) : why)\(hint); nothing saved")
        }
    }

    /// Runs a stage and words its failure with the attachment's origin and the status it calls for.
    static func staging(_ what: String, limit: Int, _ body: () throws -> StagedAttachment) throws -> StagedAttachment {
        do {
            return try body()
        } catch let e as AttachmentError {
            switch e {
            case .overLimit:
                throw Failure(ExitStatus.dataError, "\(what): over the attachment limit of \(AttachmentSizes.spelled(limit)) (attachment-limit in outld.conf); nothing saved")
            case .read(let errno):
                throw Failure(ExitStatus.of(errno, otherwise: ExitStatus.ioError), "\(what): \(e); nothing saved")
            case .write(let errno):
                throw Failure(ExitStatus.of(errno, otherwise: ExitStatus.ioError), "\(what): \(e); nothing saved")
            }
        } catch let f as Failure {
            throw f
        } catch {
            throw Failure(ExitStatus.of(error, otherwise: ExitStatus.ioError), "\(what): cannot stage it in the inbox: \(error); nothing saved")
        }
    }
}

// AttachmentDelivery: a capture's files into its inbox, before the capture file that names them.
// Invariants: each file is staged in tmp/ (written, hashed as written, fsync'd), then all are renamed
// to `<ULID>.<k>.att` and the inbox is fsync'd once, and only then may the capture file be
// delivered; a failure at any step removes every temp and every name this capture published, so
// what is left can never be half a capture (a drain acts only on a capture file, which comes last).
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import SystemCalls

/// An attachment written to the inbox's tmp/ and fsync'd, with what was hashed as it was written.
public struct StagedAttachment: Equatable, Sendable {
    public var tempName: String
    public var name: String
    public var size: Int
    public var sha256: String
}

/// Why an attachment could not be staged.
public enum AttachmentError: Error, CustomStringConvertible {
    /// More bytes than the limit: nothing of it is kept.
    case overLimit(limit: Int)
    case read(Errno)
    case write(Errno)

    public var description: String {
        switch self {
        case .overLimit(let l): return "over the attachment limit of \(AttachmentSizes.spelled(l))"
        case .read(let e): return "cannot read it: \(e)"
        case .write(let e): return "cannot write it to the inbox: \(e)"
        }
    }
}

public enum AttachmentSizes {
    /// 268435456 as "256 MiB", 1000 as "1000 bytes": how limits and sizes are said to a person.
    public static func spelled(_ n: Int) -> String {
        for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] where n >= 1 << shift && n % (1 << shift) == 0 {
            return "\(n >> shift) \(unit)"
        }
        return "\(n) bytes"
    }
}

public enum AttachmentDelivery {
    /// Copies what `source` gives (a file, a pipe, standard input), at most `limit` bytes, into a
    /// new temp file of `inbox`'s tmp/, hashing it; fsyncs it. The temp is removed on any failure.
    public static func stage(from source: Int32, name: String, limit: Int, inbox: FileDescriptor, at dir: String,
                             index: Int) throws -> StagedAttachment {
        let tmpPath = Path.join(dir, Inbox.tempDirName)
        let tmp = try DirectoryWalk.open(tmpPath, beneath: dir, from: inbox)
        return try tmp.closeAfter {
            let tempName = "\(getpid()).\(index).\(String(Sys.random128().0, radix: 16)).att.tmp"
            let temp = Path.join(tmpPath, tempName)
            let file = try tmp.openat(tempName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600, fullPath: temp)
            do {
                let (size, hash) = try file.closeAfter { () throws -> (Int, String) in
                    let copied = try copy(from: source, to: file.rawValue, limit: limit)
                    if copied.bytes > limit { throw AttachmentError.overLimit(limit: limit) }
                    do { try Sys.fsync(file.rawValue) } catch let e as Errno { throw AttachmentError.write(e) }
                    return copied
                }
                return StagedAttachment(tempName: tempName, name: name, size: size, sha256: hash)
            } catch {
                try? tmp.unlink(tempName, fullPath: temp)
                throw error
            }
        }
    }

    /// Reads `source` to its end in 1 MiB pieces, hashing each and writing it to `target` when
    /// given: what the writer delivers and the drain copies into assets/ (or only checks) are hashed
    /// by this one loop. It stops once more than `limit` bytes were read (`bytes` then says so, and
    /// its hash is of no use); a failed read or write is `AttachmentError.read` or `.write`.
    public static func copy(from source: Int32, to target: Int32?, limit: Int) throws -> (bytes: Int, sha256: String) {
        var hash = SHA256()
        var total = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while total <= limit {
            let n: Int
            do { n = try Sys.read(source, into: buffer) } catch let e as Errno { throw AttachmentError.read(e) }
            if n == 0 { break }
            total += n
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hash.update(piece)
            if let target {
                do { try Sys.writeAll(target, piece) } catch let e as Errno { throw AttachmentError.write(e) }
            }
        }
        return (total, hash.hexDigest())
    }

    /// Renames every staged temp to its final name for capture `id`, then fsyncs the inbox once:
    /// after this returns, a capture file naming them may be delivered. On failure every name
    /// published here is taken back and every temp removed.
    public static func publish(_ staged: [StagedAttachment], id: ULID, inbox: FileDescriptor, at dir: String) throws -> [Attachment] {
        guard !staged.isEmpty else { return [] }
        let tmpPath = Path.join(dir, Inbox.tempDirName)
        let tmp: FileDescriptor
        do { tmp = try DirectoryWalk.open(tmpPath, beneath: dir, from: inbox) } catch {
            discard(staged, inbox: inbox, at: dir)
            throw error
        }
        return try tmp.closeAfter {
            var published: [Attachment] = []
            do {
                for (i, s) in staged.enumerated() {
                    let file = CaptureName.attachmentFileName(for: id, index: i + 1)
                    try tmp.rename(s.tempName, to: file, in: inbox, fullPaths: (Path.join(tmpPath, s.tempName), Path.join(dir, file)))
                    published.append(Attachment(file: file, name: s.name, size: s.size, sha256: s.sha256))
                }
                try inbox.sync()
            } catch {
                for a in published { try? inbox.unlink(a.file, fullPath: Path.join(dir, a.file)) }
                discard(staged, inbox: inbox, at: dir)
                throw error
            }
            return published
        }
    }

    /// Removes what a capture that will not be saved left: its staged temps and, given, the
    /// attachment names it published (the capture file naming them never came).
    public static func discard(_ staged: [StagedAttachment], published: [Attachment] = [], inbox: FileDescriptor, at dir: String) {
        let tmpPath = Path.join(dir, Inbox.tempDirName)
        if let tmp = try? DirectoryWalk.open(tmpPath, beneath: dir, from: inbox) {
            tmp.closeAfter { for s in staged { try? tmp.unlink(s.tempName, fullPath: Path.join(tmpPath, s.tempName)) } }
        }
        for a in published { try? inbox.unlink(a.file, fullPath: Path.join(dir, a.file)) }
    }
}

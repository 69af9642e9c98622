// FileStamp: who a file is and when it last changed, as one descriptor's fstat gave it; a name
// that still holds the stamp read holds the bytes read (no writer changes a file without its ctime).
#if canImport(Glibc)
import Glibc
#endif

/// A file's stamp: who it is (device, inode) and when it last changed (size, mtime, ctime in ns).
/// A sync tool replaces a file by rename (another inode); an editor's write changes mtime and ctime.
public struct FileStamp: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNs: Int64
    public var ctimeNs: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, mtimeNs: Int64, ctimeNs: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.mtimeNs = mtimeNs; self.ctimeNs = ctimeNs
    }

    public init(_ st: stat) {
        self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                  mtimeNs: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                  ctimeNs: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec))
    }
}

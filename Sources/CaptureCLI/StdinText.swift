// StdinText: the text of `outl-capture -`. Reads to end of input, at most 1 MiB, and refuses
// invalid UTF-8 rather than storing replacement characters the user never typed.
import CaptureFormat
import SystemCalls

enum StdinText {
    static func read() throws -> String {
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            do {
                n = try buf.withUnsafeMutableBytes { try Sys.read(0, into: $0) }
            } catch {
                throw Failure(ExitStatus.of(error, otherwise: ExitStatus.ioError), "cannot read standard input: \(error)")
            }
            if n == 0 { break }
            bytes.append(contentsOf: buf[0..<n])
            if bytes.count > CaptureFile.maxFileBytes {
                throw Failure(ExitStatus.dataError, "standard input is over 1 MiB; nothing saved")
            }
        }
        if let bad = UTF8Check.firstInvalidOffset(bytes) {
            throw Failure(ExitStatus.dataError, "standard input is not UTF-8 (byte \(bad)); nothing saved")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// StdinText: the text of `outl-capture -`. Reads to end of input, at most 1 MiB, and refuses
// invalid UTF-8 rather than storing replacement characters the user never typed.
import CaptureFormat
import SystemCalls

struct InputError: Error, CustomStringConvertible {
    let description: String
}

enum StdinText {
    static func read() -> Result<String, InputError> {
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            do {
                n = try buf.withUnsafeMutableBytes { try Sys.read(0, into: $0) }
            } catch {
                return .failure(InputError(description: "cannot read standard input: \(error)"))
            }
            if n == 0 { break }
            bytes.append(contentsOf: buf[0..<n])
            if bytes.count > CaptureFile.maxFileBytes {
                return .failure(InputError(description: "standard input is over 1 MiB; nothing saved"))
            }
        }
        if let bad = UTF8Check.firstInvalidOffset(bytes) {
            return .failure(InputError(description: "standard input is not UTF-8 (byte \(bad)); nothing saved"))
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}

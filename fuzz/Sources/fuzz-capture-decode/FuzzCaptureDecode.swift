// fuzz-capture-decode: libFuzzer target over the inbox file decoder, which reads what any program
// on the machine (or a sync peer) dropped. Invariants: any bytes either decode or throw; none crash
// or hang; and a file the drain reads in place (`decodeInPlace`) decodes to exactly the fields it
// read, with no warning, page or attachment. run.sh builds it only once `CaptureFile.decode` exists
// in Sources/CaptureFormat.
import CaptureFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaptureDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoded = try? CaptureFile.decode(bytes)
    if let spans = bytes.withUnsafeBufferPointer({ CaptureFile.decodeInPlace($0) }) {
        let field = { (r: Range<Int>) in String(decoding: bytes[r], as: UTF8.self) }
        guard let d = decoded, d.text == field(spans.text), d.capturedAtRaw == field(spans.capturedAt), d.capturedAt == spans.stamp,
              d.source == spans.source.map(field) ?? "\(CaptureFile.unknownSource)", d.warnings.isEmpty, d.page == nil,
              d.attachments.isEmpty
        else { fatalError("decodeInPlace read a file otherwise than decode: \(String(decoding: bytes, as: UTF8.self).debugDescription)") }
    }
    return 0
}

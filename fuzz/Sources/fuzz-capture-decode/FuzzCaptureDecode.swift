// fuzz-capture-decode: libFuzzer target over the inbox file decoder, which reads what any program
// on the machine (or a sync peer) dropped. Invariant: any bytes either decode or throw; none crash
// or hang. run.sh builds it only once `CaptureFile.decode` exists in Sources/CaptureFormat.
import CaptureFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaptureDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? CaptureFile.decode(bytes)
    return 0
}

// outl-capture: the tiny writer. All of it lives in CaptureCLI so tests can drive it in-process.
// SIGPIPE is ignored so a closed stdout after a save cannot turn success into a signal death.
// The arguments are handed over as bytes: one that is not UTF-8 is refused, never repaired.
import CaptureCLI
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
var rawArguments: [[UInt8]] = []
for i in 1..<Int(CommandLine.argc) {
    guard let p = CommandLine.unsafeArgv[i] else { continue }
    rawArguments.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))))
}
exit(captureMain(rawArguments: rawArguments))

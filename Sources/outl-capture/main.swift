// outl-capture: the tiny writer. All of it lives in CaptureCLI so tests can drive it in-process.
import CaptureCLI
#if canImport(Glibc)
import Glibc
#endif

exit(captureMain(Array(CommandLine.arguments.dropFirst())))

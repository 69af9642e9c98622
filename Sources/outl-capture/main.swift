// outl-capture: the tiny writer. All of it lives in CaptureCLI so tests can drive it in-process.
// SIGPIPE is ignored so a closed stdout after a save cannot turn success into a signal death.
// The arguments are handed over as bytes: one that is not UTF-8 is refused, never repaired.
import CaptureCLI
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
exit(captureMain(argc: CommandLine.argc, argv: CommandLine.unsafeArgv))

// swift-tools-version:6.0
// outl's capture path for Linux. The target graph is the architecture:
//   JSONText      (the one decoder of JSON string escapes, for the format and the op log; Foundation-free)
//   CaptureFormat (the one owner of the inbox file format, Foundation-free)
//   SystemCalls   (the one seam where code meets the kernel)
//   MainExecutor  (the one thread outld's async work runs on; the writer links no concurrency runtime)
//   OutlConfig    (the one resolution of workspace, inboxes and state dir, and outld.conf)
//   CaptureInbox  (Maildir delivery and scanning of one inbox) -> outl-capture (the tiny writer)
//   Workspace     (op log, HLC, pages, Markdown projection, reconciler) -> outl (inspection CLI)
//   Drain         (drain_capture_inbox: the only path from an inbox to the workspace)
//   Daemon        (event loop, signals, systemd, journal) -> outld
//   C shims       (CInotifyShim, CURingShim, CCRC32C, CSHA256, CSystemdShim) and the system library CLiburing
import PackageDescription

// A capture's process spends its start on page faults, each mapping a 64 KiB window of code
// (bench/writer.sh). So the writer's modules reach type metadata through accessor functions, not by
// mangled name (resolved through the runtime's demangler, whose pages the first array made would
// fault in), and put each function in a section of its own, which the writer's link lays out in
// the order Sources/outl-capture/hot.order lists: the code one capture runs, side by side.
let writerCodegen: [SwiftSetting] = [.unsafeFlags([
    "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors", "-Xfrontend", "-function-sections",
])]

// outld's modules reach type metadata through accessor functions too: by mangled name, the first
// use of each generic type ran the runtime's demangler (an empty `outld --once`: 3.47M -> 3.04M
// instructions; a 10,000-capture burst: 179.1M -> 178.3M). No section ordering: a burst's code
// faults are a few dozen, its heap's are the rest.
let daemonCodegen: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])]

let package = Package(
    name: "outl",
    products: [
        .executable(name: "outl-capture", targets: ["outl-capture"]),
        .executable(name: "outld", targets: ["outld"]),
        .executable(name: "outl", targets: ["outl"]),
    ],
    targets: [
        // The format and the seam: no Foundation, so the writer stays tiny.
        .target(name: "SystemCalls", swiftSettings: writerCodegen),
        // Apart from SystemCalls: a linked executor would bring the concurrency runtime and
        // libdispatch, and their start-up work, into every capture's process.
        .target(name: "MainExecutor", swiftSettings: daemonCodegen),
        .target(name: "JSONText", swiftSettings: writerCodegen),
        .target(name: "CaptureFormat", dependencies: ["SystemCalls", "JSONText", "CSHA256"], swiftSettings: writerCodegen),
        .target(name: "OutlConfig", dependencies: ["SystemCalls"], swiftSettings: writerCodegen),
        .target(name: "CaptureInbox", dependencies: ["CaptureFormat", "SystemCalls"], swiftSettings: writerCodegen),
        .target(name: "CaptureCLI", dependencies: ["CaptureInbox", "CaptureFormat", "OutlConfig", "SystemCalls"], swiftSettings: writerCodegen),
        // Fully static (Swift runtime and glibc): no dynamic loader work at start-up, so the
        // writer runs within 1.5x of the C reference (bench/writer.sh). The order file is gold's
        // (Swift's linker here); a name it lists that no longer exists is passed over.
        .executableTarget(
            name: "outl-capture", dependencies: ["CaptureCLI"], exclude: ["hot.order"], swiftSettings: writerCodegen,
            linkerSettings: [.unsafeFlags([
                "-static-executable",
                "-Xlinker", "--section-ordering-file=\(Context.packageDirectory)/Sources/outl-capture/hot.order",
            ])]),

        // The workspace and its inspection CLI.
        .target(name: "Workspace", dependencies: ["SystemCalls", "CCRC32C", "JSONText"], swiftSettings: daemonCodegen),
        // The Swift runtime linked in (-static-stdlib), as in outld: installed, they load nothing
        // from the toolchain's directory, only Debian's libraries (Tests/integration/no-toolchain.sh).
        .executableTarget(name: "outl", dependencies: ["Workspace", "Drain", "OutlConfig", "CaptureFormat", "SystemCalls", "MainExecutor"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"])]),

        // C shims and system libraries.
        .systemLibrary(name: "CLiburing", pkgConfig: "liburing", providers: [.apt(["liburing-dev"])]),
        .target(name: "CInotifyShim"),
        // libsystemd by dlopen when outld first talks to systemd or the journal (libsystemd-dev's
        // headers at build time; Debian's libsystemd0 at run time, named in the package's Depends).
        .target(name: "CSystemdShim"),
        // SHA-256 of attachments; optimized even in debug builds, where tests hash 256 MiB.
        .target(name: "CSHA256", cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "CCRC32C"),  // SSE4.2 crc32 for the op log, with a portable fallback in Workspace
        .target(name: "CURingShim", dependencies: ["CLiburing"]),
        .target(name: "BatchIO", dependencies: ["CURingShim", "SystemCalls"], swiftSettings: daemonCodegen),

        // The drain and the daemon.
        .target(name: "Drain", dependencies: ["Workspace", "CaptureInbox", "CaptureFormat", "SystemCalls", "BatchIO"], swiftSettings: daemonCodegen),
        .target(name: "Daemon", dependencies: [
            "Drain", "Workspace", "CaptureInbox", "CaptureFormat", "OutlConfig", "SystemCalls", "BatchIO", "CInotifyShim", "CSystemdShim",
        ], swiftSettings: daemonCodegen),
        .executableTarget(name: "outld", dependencies: ["Daemon", "OutlConfig", "SystemCalls", "MainExecutor"], swiftSettings: daemonCodegen,
                          linkerSettings: [.unsafeFlags(["-static-stdlib"])]),

        // Tests. TestSupport runs real processes on real temporary directories.
        .target(name: "TestSupport", dependencies: ["SystemCalls"], path: "Tests/TestSupport"),
        .testTarget(name: "CaptureFormatTests", dependencies: ["CaptureFormat", "TestSupport"]),
        .testTarget(name: "CaptureWriterTests", dependencies: ["CaptureInbox", "CaptureCLI", "CaptureFormat", "OutlConfig", "SystemCalls", "TestSupport"]),
        .testTarget(name: "WorkspaceTests", dependencies: ["Workspace", "JSONText", "SystemCalls", "TestSupport"],
                    exclude: ["Fixtures"]),  // read from the source tree by path (LogseqRulesTests)
        .testTarget(name: "DrainTests", dependencies: ["Drain", "Workspace", "CaptureInbox", "CaptureFormat", "SystemCalls", "BatchIO", "TestSupport"]),
        .testTarget(name: "OutldTests", dependencies: ["BatchIO", "CaptureFormat", "SystemCalls", "TestSupport"]),
        .testTarget(name: "DaemonTests", dependencies: ["Daemon", "CInotifyShim", "BatchIO", "SystemCalls", "CaptureFormat", "Workspace", "TestSupport"]),
        .testTarget(name: "FaultTests", dependencies: [
            "SystemCalls", "TestSupport", "CaptureFormat", "CaptureInbox", "Drain", "Workspace", "BatchIO",
        ]),
    ],
    swiftLanguageModes: [.v5]
)

// swift-tools-version:6.0
// Fuzz targets for outl, built apart from the main package so `-sanitize=fuzzer` never touches it.
// The library sources are symlinked from ../Sources; each fuzz target is one executable whose
// entry point is libFuzzer's LLVMFuzzerTestOneInput. Build and run with `fuzz/run.sh SECONDS`.
import PackageDescription

let fuzzFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "outl-fuzz",
    targets: [
        .target(name: "SystemCalls"),
        .target(name: "JSONText"),
        .target(name: "CSHA256", cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "CaptureFormat", dependencies: ["SystemCalls", "JSONText", "CSHA256"]),
        .target(name: "CCRC32C"),
        // -enable-testing: fuzz-oplog reaches the op-log reader's internals (@testable import).
        .target(name: "Workspace", dependencies: ["SystemCalls", "CCRC32C", "JSONText"],
                swiftSettings: [.unsafeFlags(["-enable-testing"])]),
        // Proves the pipeline on pure code that exists now.
        .executableTarget(name: "fuzz-path", dependencies: ["SystemCalls"], swiftSettings: fuzzFlags),
        // The capture decoder: built by run.sh only once CaptureFile.decode exists.
        .executableTarget(name: "fuzz-capture-decode", dependencies: ["CaptureFormat", "SystemCalls"], swiftSettings: fuzzFlags),
        // The Markdown page parser and its render round trip.
        .executableTarget(name: "fuzz-markdown", dependencies: ["Workspace"], swiftSettings: fuzzFlags),
        // The op-log line reader (OpFileCursor, LineScan, OpParser) on arbitrary files.
        .executableTarget(name: "fuzz-oplog", dependencies: ["Workspace", "SystemCalls"], swiftSettings: fuzzFlags),
    ],
    swiftLanguageModes: [.v5]
)

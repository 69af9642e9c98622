// Many writers at once and writers killed mid-delivery: every final-form file parses, ids never
// collide, and a finished writer leaves no temp behind.
import Foundation
import Testing
import CaptureFormat
import TestSupport

/// $OUTL_STRESS_CAPTURES overrides the per-process count (the issue asks for 1,000).
private let perProcess = Int(ProcessInfo.processInfo.environment["OUTL_STRESS_CAPTURES"] ?? "") ?? 1000

@Test func eight_concurrent_writers_make_distinct_parseable_files() throws {
    let s = Sandbox()
    let script = #"i=0; while [ $i -lt "$N" ]; do i=$((i+1)); "$W" --quiet --inbox "$D" "writer $K capture $i" >/dev/null || exit 1; done"#
    var procs: [Process] = []
    for k in 0..<8 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        p.environment = ["W": writer, "D": s.inbox, "K": String(k), "N": String(perProcess), "HOME": s.home, "PATH": "/usr/bin:/bin"]
        try p.run()
        procs.append(p)
    }
    for p in procs { p.waitUntilExit(); #expect(p.terminationStatus == 0) }
    let files = try captures(in: s.inbox)
    #expect(files.count == 8 * perProcess)
    #expect(Set(files.map(\.capture.text)).count == 8 * perProcess)
    #expect(Set(files.map(\.name)).count == 8 * perProcess)
    #expect(listDir(s.inbox + "/tmp").isEmpty)
    #expect(listDir(s.inbox).count == 8 * perProcess + 1)  // + tmp/
}

@Test func writers_killed_at_random_points_never_leave_a_bad_final_file() throws {
    let s = Sandbox()
    var rng = SystemRandomNumberGenerator()
    let big = String(repeating: "0123456789abcdef", count: 4000)  // 64,000 bytes: a longer write
    let tmp = s.inbox + "/tmp"
    var midDelivery = 0  // kills that landed after the temp was made and before its rename
    for i in 0..<150 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: writer)
        p.arguments = ["--quiet", "--inbox", s.inbox, "\(i) " + big]
        p.environment = ["HOME": s.home]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let temps = listDir(tmp).count
        try p.run()
        if i % 2 == 0 {
            // Anywhere in the writer's life, start-up included.
            usleep(UInt32.random(in: 0...20_000, using: &rng))
        } else {
            // Inside the delivery: once its temp exists, a little later (or at once).
            while p.isRunning && listDir(tmp).count == temps {}
            usleep(UInt32.random(in: 0...500, using: &rng))
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        if p.terminationReason == .uncaughtSignal && listDir(tmp).count > temps { midDelivery += 1 }
    }
    // The test proves something only if some kills did land mid-write.
    #expect(midDelivery > 0, "no kill landed between the temp's creation and its rename")
    var parsed = 0
    for name in listDir(s.inbox) where CaptureName.isFinal(name) {
        let bytes = [UInt8](FileManager.default.contents(atPath: s.inbox + "/" + name) ?? Data())
        let c = try CaptureFile.decode(bytes)
        #expect(c.text.hasSuffix(big))
        parsed += 1
    }
    // Leftover temps are allowed (removeStaleTemps collects them); non-final names are never read.
    let stray = listDir(s.inbox).filter { !CaptureName.isFinal($0) && $0 != "tmp" }
    #expect(stray.isEmpty)
    print("killed writers: \(parsed) of 150 finished, \(midDelivery) killed mid-delivery, \(listDir(tmp).count) temps left")
}

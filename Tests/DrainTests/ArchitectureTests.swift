// ArchitectureTests: the invariants of docs/ARCHITECTURE.md that the package graph can prove.
// Reads the real graph with `swift package dump-package`, so a new dependency edge is caught.
import Foundation
import Testing
import TestSupport

struct ArchitectureTests {
    func packageGraph() throws -> [String: [String]] {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let swift = ProcessInfo.processInfo.environment["SWIFT_EXEC_FOR_TESTS"] ?? "/opt/swift/usr/bin/swift"
        // A scratch path of its own: `swift test` holds the lock on .build while this runs.
        let scratch = TempDir("dump-package")
        let r = try run(swift, ["package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"])
        #expect(r.status == 0, "dump-package failed: \(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        var graph: [String: [String]] = [:]
        for t in json["targets"] as! [[String: Any]] {
            let name = t["name"] as! String
            let deps = (t["dependencies"] as? [[String: Any]] ?? []).compactMap { d -> String? in
                for key in ["byName", "target", "product"] {
                    if let arr = d[key] as? [Any], let first = arr.first as? String { return first }
                }
                return nil
            }
            graph[name] = deps
        }
        return graph
    }

    func closure(of target: String, in graph: [String: [String]]) -> Set<String> {
        var seen = Set<String>(), stack = [target]
        while let t = stack.popLast() {
            for d in graph[t] ?? [] where seen.insert(d).inserted { stack.append(d) }
        }
        return seen
    }

    @Test func writer_target_does_not_depend_on_the_workspace() throws {
        let graph = try packageGraph()
        let deps = closure(of: "outl-capture", in: graph)
        #expect(!deps.isEmpty)
        for forbidden in ["Workspace", "Drain", "Daemon", "BatchIO", "CLibsystemd", "CLiburing"] {
            #expect(!deps.contains(forbidden), "outl-capture must not depend on \(forbidden)")
        }
    }

    @Test func only_the_drain_module_joins_inboxes_and_the_workspace() throws {
        let graph = try packageGraph()
        // Any library that sees both the inbox and the workspace must do so through Drain.
        for (target, _) in graph where !target.hasSuffix("Tests") && target != "Drain" && target != "TestSupport" {
            let deps = closure(of: target, in: graph)
            if deps.contains("CaptureInbox") && deps.contains("Workspace") {
                #expect(deps.contains("Drain"), "\(target) reaches the inbox and the workspace without going through Drain")
            }
        }
    }
}

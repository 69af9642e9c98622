// ArchitectureTests: the invariants of docs/ARCHITECTURE.md that the package graph can prove.
// Reads the real graph with `swift package dump-package` and the real `import` lines of Sources/,
// so a new dependency edge is caught whether it is declared or only imported.
import Foundation
import Testing
import TestSupport

struct ArchitectureTests {
    var root: URL {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        return root
    }

    func packageGraph() throws -> [String: [String]] {
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

    /// Each module under Sources/ with the package modules its Swift files import.
    func importGraph(modules: Set<String>) throws -> [String: [String]] {
        let sources = root.appendingPathComponent("Sources")
        let fm = FileManager.default
        let importLine = try Regex(#"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#)
        var graph: [String: [String]] = [:]
        for module in try fm.contentsOfDirectory(atPath: sources.path) where modules.contains(module) {
            var imported = Set<String>()
            let dir = sources.appendingPathComponent(module)
            for case let file as String in fm.enumerator(atPath: dir.path)! where file.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    if let m = try importLine.firstMatch(in: String(line)), let name = m.output[1].substring {
                        if modules.contains(String(name)) { imported.insert(String(name)) }
                    }
                }
            }
            graph[module] = imported.sorted()
        }
        return graph
    }

    /// The declared graph with every imported edge added: what the code really depends on.
    func realGraph() throws -> (declared: [String: [String]], imported: [String: [String]], union: [String: [String]]) {
        let declared = try packageGraph()
        let imported = try importGraph(modules: Set(declared.keys))
        #expect(imported["Drain"]?.contains("Workspace") == true, "the import reader found no import at all")
        var union = declared
        for (m, deps) in imported { union[m] = Array(Set(union[m] ?? []).union(deps)) }
        return (declared, imported, union)
    }

    func closure(of target: String, in graph: [String: [String]]) -> Set<String> {
        var seen = Set<String>(), stack = [target]
        while let t = stack.popLast() {
            for d in graph[t] ?? [] where seen.insert(d).inserted { stack.append(d) }
        }
        return seen
    }

    @Test func every_import_of_a_package_module_is_a_declared_dependency() throws {
        let (declared, imported, _) = try realGraph()
        for (module, deps) in imported {
            for d in deps where !(declared[module] ?? []).contains(d) {
                Issue.record("Sources/\(module) imports \(d), which Package.swift does not list among its dependencies")
            }
        }
    }

    @Test func writer_target_does_not_depend_on_the_workspace() throws {
        let graph = try realGraph().union
        let deps = closure(of: "outl-capture", in: graph)
        #expect(!deps.isEmpty)
        for forbidden in ["Workspace", "Drain", "Daemon", "BatchIO", "CSystemdShim", "CLiburing"] {
            #expect(!deps.contains(forbidden), "outl-capture must not depend on \(forbidden)")
        }
    }

    @Test func only_the_drain_module_joins_inboxes_and_the_workspace() throws {
        let graph = try realGraph().union
        // Any library that sees both the inbox and the workspace must do so through Drain.
        for (target, _) in graph where !target.hasSuffix("Tests") && target != "Drain" && target != "TestSupport" {
            let deps = closure(of: target, in: graph)
            if deps.contains("CaptureInbox") && deps.contains("Workspace") {
                #expect(deps.contains("Drain"), "\(target) reaches the inbox and the workspace without going through Drain")
            }
        }
    }

    /// docs/ARCHITECTURE.md's module list: one line per module under Sources/, naming exactly the
    /// dependencies Package.swift declares, so the document cannot drift from the graph.
    @Test func architecture_doc_names_every_module_and_what_it_uses() throws {
        let declared = try packageGraph()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let entry = try Regex(#"^- `([A-Za-z0-9_-]+)` \(uses ([^)]*)\): \S"#)
        var documented: [String: Set<String>] = [:]
        for line in doc.split(separator: "\n") {
            guard let m = try entry.firstMatch(in: String(line)),
                  let name = m.output[1].substring, let uses = m.output[2].substring else { continue }
            #expect(documented[String(name)] == nil, "docs/ARCHITECTURE.md lists \(name) twice")
            documented[String(name)] = uses == "nothing" ? [] : Set(uses.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
        }
        let modules = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
        #expect(modules.count > 10, "read no modules under Sources/")
        for module in modules {
            guard let uses = documented[module] else {
                Issue.record("docs/ARCHITECTURE.md has no line for Sources/\(module)")
                continue
            }
            #expect(uses == Set(declared[module] ?? []),
                    "docs/ARCHITECTURE.md says \(module) uses \(uses.sorted()); Package.swift says \((declared[module] ?? []).sorted())")
        }
        for name in documented.keys where !modules.contains(name) {
            Issue.record("docs/ARCHITECTURE.md lists \(name), which is not a module under Sources/")
        }
    }
    /// The workspace module's layers are folders the document names, so a newcomer finds each by name
    /// and no file sits loose beside them but the top: the core, its boot, the actor, device state.
    @Test func workspace_layers_are_folders_the_architecture_doc_names() throws {
        let doc = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let dir = root.appendingPathComponent("Sources/Workspace")
        var folders: [String] = []
        var loose: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path, isDirectory: &isDir)
            if isDir.boolValue { folders.append(name) } else { loose.append(name) }
        }
        #expect(Set(folders).isSuperset(of: ["OpLog", "Model", "Markdown", "Pages"]), "Sources/Workspace has \(folders.sorted())")
        for f in folders { #expect(doc.contains("`\(f)/`"), "docs/ARCHITECTURE.md does not name Sources/Workspace/\(f)/") }
        #expect(Set(loose).isSubset(of: ["Workspace.swift", "WorkspaceCore.swift", "WorkspaceBoot.swift", "DeviceState.swift"]),
                "files outside the layers of Sources/Workspace: \(loose.sorted())")
    }
}

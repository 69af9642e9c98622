// The comparison point for bench/boot.sh: decode the same op log line by line with Foundation's
// JSONDecoder (after the CRC prefix), as a naive boot would. Prints ops/s on one line.
import Foundation

struct Props: Decodable {}
struct Line: Decodable {
    var k: String; var w: Int64; var c: Int64; var a: String; var id: String
    var pg: String?; var pa: String?; var pos: String?; var t: String?; var pr: [String: String]?
}

let path = CommandLine.arguments[1]
let data = try Data(contentsOf: URL(fileURLWithPath: path))
let start = Date()
let decoder = JSONDecoder()
var n = 0
var blocks: [String: Line] = [:]
data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
    var s = 0
    let b = raw.bindMemory(to: UInt8.self)
    for i in 0..<b.count where b[i] == 10 {
        if i - s > 9, let line = try? decoder.decode(Line.self, from: Data(b[(s + 9)..<i])) {
            if line.k == "cb" { blocks[line.id] = line }
            n += 1
        }
        s = i + 1
    }
}
let secs = Date().timeIntervalSince(start)
print("jsondecoder ops=\(n) seconds=\(secs) ops_per_second=\(Int(Double(n) / secs))")

// SameBytes: whether two page-sized byte arrays are equal, by memcmp. A pass compares a page's
// bytes with its file and its last projection several times; Array's own == goes element by element.
#if canImport(Glibc)
import Glibc
#endif

func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
}

func sameBytes(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case let (x?, y?): return sameBytes(x, y)
    default: return false
    }
}

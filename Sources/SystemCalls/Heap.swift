// Heap: how much freed memory glibc's malloc keeps at the top of the heap, and giving it back.
// glibc returns a freed top past 128 KiB to the kernel at once, so work done in rounds (a burst's
// batches) faults the same pages in again each round; a pad keeps them, a trim returns them.
#if canImport(Glibc)
import Glibc
#endif

// Not exported by the Glibc module (malloc.h): the header's declarations, and M_TOP_PAD's value.
@_silgen_name("mallopt") private func c_mallopt(_ param: Int32, _ value: Int32) -> Int32
@_silgen_name("malloc_trim") private func c_malloc_trim(_ pad: Int) -> Int32
private let M_TOP_PAD: Int32 = -2

public enum Heap {
    /// Keep up to `bytes` of freed memory at the heap's top (M_TOP_PAD) instead of returning it.
    public static func keepFreedTop(bytes: Int) {
        _ = c_mallopt(M_TOP_PAD, Int32(clamping: bytes))
    }

    /// Return every whole free page of the heap to the kernel now (malloc_trim(0)).
    public static func returnFreed() {
        _ = c_malloc_trim(0)
    }
}

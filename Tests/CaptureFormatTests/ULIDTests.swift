// ULID properties: known vectors, spelling round trip, sort order = time order, and a million
// ids from one generator strictly increasing (hence unique).
import Testing
@testable import CaptureFormat

@Test func known_vectors_decode_to_the_right_time() throws {
    // Vectors from the ULID specification's examples.
    let a = try #require(ULID(string: "01ARYZ6S41TSV4RRFFQ69G5FAV"))
    #expect(a.timestampMs == 1_469_918_176_385)
    let b = try #require(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FAV"))
    #expect(b.timestampMs == 1_469_922_850_259)
    #expect(ULID(string: "00000000000000000000000000")!.timestampMs == 0)
    let max = try #require(ULID(string: "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"))
    #expect(max.timestampMs == ULID.maxTimestampMs)
}

@Test func only_the_canonical_spelling_parses() {
    #expect(ULID(string: "01arz3ndektsv4rrffq69g5fav") == nil)  // lower case
    #expect(ULID(string: "8ZZZZZZZZZZZZZZZZZZZZZZZZZ") == nil)  // overflows 128 bits
    #expect(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FA") == nil)   // 25 chars
    #expect(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FAVV") == nil) // 27 chars
    #expect(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FAI") == nil)  // I is not Crockford
    #expect(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FAU") == nil)  // U neither
}

@Test func string_spelling_round_trips() {
    var rng = SeededRandom(state: 42)
    for _ in 0..<2000 {
        let id = ULID(timestampMs: UInt64.random(in: 0...ULID.maxTimestampMs, using: &rng),
                      randomHigh: UInt16.random(in: 0...UInt16.max, using: &rng), randomLow: rng.next())
        #expect(ULID(string: id.string) == id)
        #expect(id.string.utf8.count == 26)
    }
}

@Test func sort_order_of_names_equals_time_order() {
    var gen = ULIDGenerator()
    var rng = SeededRandom(state: 7)
    var ids: [ULID] = []
    for _ in 0..<2000 {
        var g = ULIDGenerator()  // fresh generators: no monotonic help, only the time bits
        ids.append(g.next(nowMs: UInt64.random(in: 0...4_000_000_000_000, using: &rng)))
    }
    ids.append(gen.next(nowMs: 5))
    let byName = ids.sorted { $0.string < $1.string }
    for (x, y) in zip(byName, byName.dropFirst()) { #expect(x.timestampMs <= y.timestampMs) }
    #expect(byName == ids.sorted())
}

@Test func a_million_ids_from_one_generator_strictly_increase() {
    var gen = ULIDGenerator()
    var prev = gen.next()
    var failures = 0
    for _ in 0..<1_000_000 {
        let id = gen.next()
        if !(prev < id) { failures += 1 }
        prev = id
    }
    #expect(failures == 0)
}

@Test func same_millisecond_and_clock_steps_back_increment_the_random_part() {
    var gen = ULIDGenerator()
    let a = gen.next(nowMs: 1000)
    let b = gen.next(nowMs: 1000)
    let c = gen.next(nowMs: 999)  // the clock went back: still after b
    #expect(b.timestampMs == 1000 && b.low == a.low &+ 1 || b.high == a.high + 1)
    #expect(a < b && b < c)
    #expect(c.timestampMs == 1000)
    let d = gen.next(nowMs: 2000)
    #expect(d.timestampMs == 2000)
}

@Test func random_part_overflow_moves_to_the_next_millisecond() {
    let full = ULID(timestampMs: 10, randomHigh: .max, randomLow: .max)
    let next = ULIDGenerator.increment(full)
    #expect(next.timestampMs == 11 && next > full)
}

/// Capture names reach the drain through a synced inbox: ULIDs crafted so that a fixed mix of
/// high ^ low repeats (here all with high == low) still hash apart, keyed per process.
@Test func ulids_crafted_to_collide_hash_apart() {
    let ids = (0..<4096).map { k in ULID(high: UInt64(k) << 16, low: UInt64(k) << 16) }
    #expect(Set(ids.map { $0._rawHashValue(seed: 0) }).count == ids.count)
    #expect(Set(ids).count == ids.count)
}

/// `spell` and the parse read each 64-bit half on its own; both must equal base32 of the whole
/// 128-bit number, taken here five bits at a time with a 128-bit shift: random ids, the ends of
/// each half, and every single bit set alone (so each bit lands in its one character).
@Test func spelling_and_parsing_match_base32_of_the_128_bit_number() {
    let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    func reference(_ hi: UInt64, _ lo: UInt64) -> String {
        var hi = hi, lo = lo, out = [UInt8](repeating: 0, count: 26)
        for i in stride(from: 25, through: 0, by: -1) {
            out[i] = alphabet[Int(lo & 31)]
            lo = lo >> 5 | hi << 59
            hi >>= 5
        }
        return String(decoding: out, as: UTF8.self)
    }
    var rng = SeededRandom(state: 9)
    var pairs: [(UInt64, UInt64)] = [(0, 0), (.max, .max), (.max, 0), (0, .max), (1, 0), (0, 1 << 63)]
    for b in 0..<64 { pairs += [(1 << UInt64(b), 0), (0, 1 << UInt64(b))] }
    for _ in 0..<2000 { pairs.append((rng.next(), rng.next())) }
    for (hi, lo) in pairs {
        let id = ULID(high: hi, low: lo)
        #expect(id.string == reference(hi, lo), "\(hi) \(lo)")
        let back = ULID(string: reference(hi, lo))
        #expect(back?.high == hi && back?.low == lo)
    }
    // One byte outside the alphabet, at every place, is refused.
    for place in 0..<26 {
        var b = Array(reference(rng.next() >> 3, rng.next()).utf8)
        b[place] = UInt8(ascii: "U")
        #expect(ULID(string: String(decoding: b, as: UTF8.self)) == nil)
    }
}

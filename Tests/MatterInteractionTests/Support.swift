import MatterTLV
import MatterTLVFuzz

/// Bytes from a hex string with optional spaces.
func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// A seeded generator (MatterTLVFuzz's SplitMix64), so every random test run is repeatable.
struct SeededGenerator: RandomNumberGenerator {
    var inner: SplitMix64
    init(seed: UInt64) { inner = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { inner.next() }
}

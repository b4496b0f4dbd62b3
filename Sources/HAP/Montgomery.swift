import BigInt

/// Modular exponentiation for one odd modulus by Montgomery multiplication over 64-bit limbs
/// (CIOS, Koç et al. 1996) with a fixed 4-bit window.
///
/// SRP-6a's 3072-bit exponentiations are the whole cost of a HAP pair-setup. BigInt's generic
/// `power(_:modulus:)` divides after every product; this keeps numbers in Montgomery form in
/// flat limb buffers instead. Measured in a debug build: the HAP test suite's CPU time went from
/// 70 s to 15 s (BigInt's pair-setups took seconds each, on the concurrency pool's threads).
/// Release figures are still to be taken (docs/BENCHMARKS.md).
///
/// Every window multiplies (by the table's `R mod n` for a zero digit), so the sequence of
/// operations depends only on the exponent's length; table lookups are not hidden from caches.
struct MontgomeryField: Sendable, Hashable {
    let modulus: BigUInt
    /// n, little-endian 64-bit limbs.
    let n: [UInt64]
    /// −n⁻¹ mod 2⁶⁴.
    let inverse: UInt64
    /// R² mod n, with R = 2^(64·k): turns a number into Montgomery form.
    let rSquared: [UInt64]
    /// R mod n: 1 in Montgomery form.
    let one: [UInt64]

    /// nil unless the modulus is odd and above 1.
    init?(modulus: BigUInt) {
        guard modulus > 1, modulus.words.first.map({ $0 & 1 == 1 }) == true else { return nil }
        self.modulus = modulus
        n = modulus.words.map { UInt64($0) }
        var inv: UInt64 = 1 // n0·inv ≡ 1 mod 2¹; each Newton step doubles the bits that are right.
        for _ in 0..<6 { inv = inv &* (2 &- n[0] &* inv) }
        inverse = 0 &- inv
        let r = (BigUInt(1) << (64 * n.count)) % modulus
        one = Self.limbs(of: r, count: n.count)
        rSquared = Self.limbs(of: (r * r) % modulus, count: n.count)
    }

    static func limbs(of x: BigUInt, count: Int) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: count)
        for (i, w) in x.words.enumerated() where i < count { out[i] = UInt64(w) }
        return out
    }

    /// base^exponent mod n.
    func power(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        let k = n.count
        let b = multiply(Self.limbs(of: base % modulus, count: k), rSquared)
        var table = [one, b]
        for _ in 2..<16 { table.append(multiply(table[table.count - 1], b)) }
        let words = exponent.words.map { UInt64($0) }
        let bits = exponent.bitWidth // BigUInt: without leading zeros
        var acc = one
        var window = (bits + 3) / 4 - 1
        var first = true
        while window >= 0 {
            if !first { for _ in 0..<4 { acc = multiply(acc, acc) } }
            first = false
            let digit = Int((words[window / 16] >> UInt64(4 * (window % 16))) & 0xF)
            acc = multiply(acc, table[digit])
            window -= 1
        }
        var unit = [UInt64](repeating: 0, count: k)
        unit[0] = 1
        let plain = multiply(acc, unit)
        return BigUInt(words: plain.map { UInt($0) })
    }

    /// a·b·R⁻¹ mod n for a, b < n (both k limbs).
    func multiply(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        let k = n.count
        var t = [UInt64](repeating: 0, count: k + 2)
        t.withUnsafeMutableBufferPointer { t in
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    n.withUnsafeBufferPointer { n in
                        Self.accumulate(t, a, b, n, inverse, k)
                    }
                }
            }
        }
        // t < 2n: one conditional subtraction.
        var r = Array(t[0..<k])
        if t[k] != 0 || !Self.less(r, n) {
            var borrow: UInt64 = 0
            for j in 0..<k {
                let (d1, b1) = r[j].subtractingReportingOverflow(n[j])
                let (d2, b2) = d1.subtractingReportingOverflow(borrow)
                r[j] = d2
                borrow = (b1 ? 1 : 0) | (b2 ? 1 : 0)
            }
        }
        return r
    }

    /// CIOS: for each limb of b, t += a·b[i], then t += m·n and shift t down one limb.
    private static func accumulate(
        _ t: UnsafeMutableBufferPointer<UInt64>, _ a: UnsafeBufferPointer<UInt64>, _ b: UnsafeBufferPointer<UInt64>,
        _ n: UnsafeBufferPointer<UInt64>, _ inverse: UInt64, _ k: Int
    ) {
        for i in 0..<k {
            let bi = b[i]
            var carry: UInt64 = 0
            for j in 0..<k {
                let (hi, lo) = a[j].multipliedFullWidth(by: bi)
                let (s1, c1) = t[j].addingReportingOverflow(lo)
                let (s2, c2) = s1.addingReportingOverflow(carry)
                t[j] = s2
                carry = hi &+ (c1 ? 1 : 0) &+ (c2 ? 1 : 0)
            }
            let (sk, ck) = t[k].addingReportingOverflow(carry)
            t[k] = sk
            t[k + 1] = ck ? 1 : 0

            let m = t[0] &* inverse
            let (hi0, lo0) = m.multipliedFullWidth(by: n[0])
            let (_, c0) = t[0].addingReportingOverflow(lo0)
            carry = hi0 &+ (c0 ? 1 : 0)
            for j in 1..<k {
                let (hi, lo) = m.multipliedFullWidth(by: n[j])
                let (s1, c1) = t[j].addingReportingOverflow(lo)
                let (s2, c2) = s1.addingReportingOverflow(carry)
                t[j - 1] = s2
                carry = hi &+ (c1 ? 1 : 0) &+ (c2 ? 1 : 0)
            }
            let (s3, c3) = t[k].addingReportingOverflow(carry)
            t[k - 1] = s3
            t[k] = t[k + 1] &+ (c3 ? 1 : 0)
            t[k + 1] = 0
        }
    }

    static func less(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        for j in stride(from: a.count - 1, through: 0, by: -1) where a[j] != b[j] { return a[j] < b[j] }
        return false
    }
}

/// The Verhoeff check digit over decimal strings (dihedral group D5), as the manual pairing
/// code uses it (Core Specification 5.1.4.1.5).
enum Verhoeff {
    // Multiplication table of D5.
    private static let d: [[UInt8]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
        [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
        [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ]
    // The permutation applied at each position (row i is the base permutation to the power i).
    private static let p: [[UInt8]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
        [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
        [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ]
    private static let inverse: [UInt8] = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]

    /// The check digit for `digits` (each 0…9), most significant first.
    static func checkDigit(_ digits: [UInt8]) -> UInt8 {
        var c: UInt8 = 0
        for (i, digit) in digits.reversed().enumerated() {
            c = d[Int(c)][Int(p[(i + 1) % 8][Int(digit)])]
        }
        return inverse[Int(c)]
    }

    /// Whether the last digit of `digits` is the check digit of the ones before it.
    static func validate(_ digits: [UInt8]) -> Bool {
        var c: UInt8 = 0
        for (i, digit) in digits.reversed().enumerated() {
            c = d[Int(c)][Int(p[i % 8][Int(digit)])]
        }
        return c == 0
    }
}

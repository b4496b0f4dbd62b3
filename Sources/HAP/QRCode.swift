/// A QR code (ISO/IEC 18004) for short text such as the `X-HM://` setup URI: byte mode,
/// versions 1–10 (up to 271 bytes at level L), the four error-correction levels, the mask
/// with the lowest penalty. Pure Swift, no I/O; ``rows`` is what the API sends (the web page
/// draws it as SVG, `hearth` with half blocks: `WireHAPBridge.terminalQR`).
///
/// ```swift
/// let qr = try QRCode("X-HM://0023ISYWYO4M9", level: .medium)
/// print(qr.rows.joined(separator: "\n"))
/// ```
public struct QRCode: Sendable, Hashable {
    public enum Level: Int, Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The two format bits (ISO/IEC 18004 table 12: L 01, M 00, Q 11, H 10).
        var formatBits: Int { [1, 0, 3, 2][rawValue] }
    }

    public enum Failure: Error, Equatable { case tooLong(bytes: Int, max: Int) }

    public let version: Int
    public let level: Level
    public let mask: Int
    /// Modules per side (`17 + 4 × version`), without the quiet zone.
    public let size: Int
    /// `modules[row][column]`, true = dark.
    public let modules: [[Bool]]

    /// Encodes `text`'s UTF-8 in the smallest version that holds it at `level`.
    public init(_ text: String, level: Level = .medium) throws(Failure) {
        let data = Array(text.utf8)
        guard let version = (1...Self.maxVersion).first(where: { Self.capacityBits($0, level) >= Self.neededBits(data.count, $0) }) else {
            throw .tooLong(bytes: data.count, max: (Self.capacityBits(Self.maxVersion, level) - Self.neededBits(0, Self.maxVersion)) / 8)
        }
        self.version = version
        self.level = level
        size = 17 + 4 * version
        var grid = Grid(size: size)
        grid.drawFunctionPatterns(version: version)
        let codewords = Self.interleaved(Self.dataCodewords(data, version: version, level: level), version: version, level: level)
        grid.place(codewords)
        // The mask with the lowest penalty (ISO/IEC 18004 7.8.3).
        var best: (penalty: Int, mask: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var g = grid
            g.apply(mask: mask)
            g.drawFormat(level: level, mask: mask)
            let p = g.penalty()
            if best == nil || p < best!.penalty { best = (p, mask, g.modules) }
        }
        mask = best!.mask
        modules = best!.modules
    }

    /// One string per row, "1" dark and "0" light, without the quiet zone.
    public var rows: [String] { modules.map { String($0.map { $0 ? "1" : "0" }) } }

    // MARK: - Codewords

    static let maxVersion = 10

    /// Per version (1…10) and level (L, M, Q, H): error-correction codewords per block and the
    /// blocks as (count, data codewords) groups (ISO/IEC 18004 table 9).
    static let blocks: [[(ec: Int, groups: [(count: Int, data: Int)])]] = [
        [(7, [(1, 19)]), (10, [(1, 16)]), (13, [(1, 13)]), (17, [(1, 9)])],
        [(10, [(1, 34)]), (16, [(1, 28)]), (22, [(1, 22)]), (28, [(1, 16)])],
        [(15, [(1, 55)]), (26, [(1, 44)]), (18, [(2, 17)]), (22, [(2, 13)])],
        [(20, [(1, 80)]), (18, [(2, 32)]), (26, [(2, 24)]), (16, [(4, 9)])],
        [(26, [(1, 108)]), (24, [(2, 43)]), (18, [(2, 15), (2, 16)]), (22, [(2, 11), (2, 12)])],
        [(18, [(2, 68)]), (16, [(4, 27)]), (24, [(4, 19)]), (28, [(4, 15)])],
        [(20, [(2, 78)]), (18, [(4, 31)]), (18, [(2, 14), (4, 15)]), (26, [(4, 13), (1, 14)])],
        [(24, [(2, 97)]), (22, [(2, 38), (2, 39)]), (22, [(4, 18), (2, 19)]), (26, [(4, 14), (2, 15)])],
        [(30, [(2, 116)]), (22, [(3, 36), (2, 37)]), (20, [(4, 16), (4, 17)]), (24, [(4, 12), (4, 13)])],
        [(18, [(2, 68), (2, 69)]), (26, [(4, 43), (1, 44)]), (24, [(6, 19), (2, 20)]), (28, [(6, 15), (2, 16)])],
    ]

    static func capacityBits(_ version: Int, _ level: Level) -> Int {
        blocks[version - 1][level.rawValue].groups.reduce(0) { $0 + $1.count * $1.data } * 8
    }

    /// Mode (4 bits), count (8 bits up to version 9, else 16) and the bytes.
    static func neededBits(_ count: Int, _ version: Int) -> Int { 4 + (version <= 9 ? 8 : 16) + 8 * count }

    static func dataCodewords(_ data: [UInt8], version: Int, level: Level) -> [UInt8] {
        var bits: [Bool] = []
        func put(_ value: Int, _ n: Int) { for i in stride(from: n - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) } }
        put(0b0100, 4)  // byte mode
        put(data.count, version <= 9 ? 8 : 16)
        for b in data { put(Int(b), 8) }
        let capacity = capacityBits(version, level)
        put(0, min(4, capacity - bits.count))  // terminator
        while bits.count % 8 != 0 { bits.append(false) }
        var out: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { i in bits[i..<i + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        var pad: UInt8 = 0xEC
        while out.count * 8 < capacity {
            out.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return out
    }

    /// Splits into blocks, adds each block's Reed–Solomon codewords, interleaves (7.6).
    static func interleaved(_ data: [UInt8], version: Int, level: Level) -> [UInt8] {
        let spec = blocks[version - 1][level.rawValue]
        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for group in spec.groups {
            for _ in 0..<group.count {
                dataBlocks.append(Array(data[offset..<offset + group.data]))
                offset += group.data
            }
        }
        let divisor = ReedSolomon.generator(degree: spec.ec)
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder($0, divisor) }
        var out: [UInt8] = []
        for i in 0..<(dataBlocks.map(\.count).max() ?? 0) {
            for b in dataBlocks where i < b.count { out.append(b[i]) }
        }
        for i in 0..<spec.ec {
            for b in ecBlocks { out.append(b[i]) }
        }
        return out
    }

    /// Reed–Solomon over GF(2⁸) with the polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D).
    enum ReedSolomon {
        static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
            var (x, y, r) = (Int(a), Int(b), 0)
            while y != 0 {
                if y & 1 == 1 { r ^= x }
                x <<= 1
                if x & 0x100 != 0 { x ^= 0x11D }
                y >>= 1
            }
            return UInt8(r)
        }

        /// (x − α⁰)(x − α¹)…(x − α^(degree−1)), its coefficients after the leading 1, highest first.
        static func generator(degree: Int) -> [UInt8] {
            var poly = [UInt8](repeating: 0, count: degree)
            poly[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for j in 0..<degree {
                    poly[j] = multiply(poly[j], root)
                    if j + 1 < degree { poly[j] ^= poly[j + 1] }
                }
                root = multiply(root, 2)
            }
            return poly
        }

        /// The remainder of data(x)·x^degree divided by the generator: the EC codewords.
        static func remainder(_ data: [UInt8], _ generator: [UInt8]) -> [UInt8] {
            var r = [UInt8](repeating: 0, count: generator.count)
            for b in data {
                let factor = b ^ r[0]
                r.removeFirst()
                r.append(0)
                for i in r.indices { r[i] ^= multiply(generator[i], factor) }
            }
            return r
        }
    }

    // MARK: - The symbol

    struct Grid {
        let size: Int
        var modules: [[Bool]]
        /// Finder, separator, timing, alignment, format and version modules: never data, never masked.
        var reserved: [[Bool]]

        init(size: Int) {
            self.size = size
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            reserved = modules
        }

        mutating func set(_ row: Int, _ col: Int, _ dark: Bool) {
            modules[row][col] = dark
            reserved[row][col] = true
        }

        /// Alignment pattern centres (annex E), versions 2…10.
        static func alignment(_ version: Int) -> [Int] {
            guard version >= 2 else { return [] }
            let last = 4 * version + 10
            return version < 7 ? [6, last] : [6, (6 + last) / 2, last]
        }

        mutating func drawFunctionPatterns(version: Int) {
            // Timing patterns (row and column 6).
            for i in 0..<size {
                set(6, i, i % 2 == 0)
                set(i, 6, i % 2 == 0)
            }
            // Finder patterns with their separators.
            for (r, c) in [(3, 3), (3, size - 4), (size - 4, 3)] {
                for dr in -4...4 {
                    for dc in -4...4 {
                        let (y, x) = (r + dr, c + dc)
                        guard y >= 0, y < size, x >= 0, x < size else { continue }
                        let d = max(abs(dr), abs(dc))
                        set(y, x, d != 2 && d != 4)
                    }
                }
            }
            // Alignment patterns, except where the finders are.
            let centres = Self.alignment(version)
            for (i, r) in centres.enumerated() {
                for (j, c) in centres.enumerated() {
                    let first = 0, last = centres.count - 1
                    if (i == first && j == first) || (i == first && j == last) || (i == last && j == first) { continue }
                    for dr in -2...2 {
                        for dc in -2...2 { set(r + dr, c + dc, max(abs(dr), abs(dc)) != 1) }
                    }
                }
            }
            // Reserve the format areas (drawn per mask) and the dark module.
            drawFormat(level: .medium, mask: 0)
            // Version information (versions ≥ 7): 6 bits and a BCH(18,6) remainder.
            if version >= 7 {
                var rem = version
                for _ in 0..<12 { rem = (rem << 1) ^ ((rem >> 11) * 0x1F25) }
                let bits = version << 12 | rem
                for i in 0..<18 {
                    let dark = (bits >> i) & 1 == 1
                    let (a, b) = (size - 11 + i % 3, i / 3)
                    set(a, b, dark)
                    set(b, a, dark)
                }
            }
        }

        /// The 15 format bits (level, mask, BCH(15,5), XOR 0x5412) in both copies, and the dark module.
        mutating func drawFormat(level: Level, mask: Int) {
            let data = level.formatBits << 3 | mask
            var rem = data
            for _ in 0..<10 { rem = (rem << 1) ^ ((rem >> 9) * 0x537) }
            let bits = (data << 10 | rem) ^ 0x5412
            func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
            // Around the top-left finder: bits 0–7 down column 8, bits 8–14 along row 8.
            for i in 0...5 { set(i, 8, bit(i)) }
            set(7, 8, bit(6))
            set(8, 8, bit(7))
            set(8, 7, bit(8))
            for i in 9..<15 { set(8, 14 - i, bit(i)) }
            // The second copy: bits 0–7 along row 8 from the right, bits 8–14 up column 8 from the bottom.
            for i in 0..<8 { set(8, size - 1 - i, bit(i)) }
            for i in 8..<15 { set(size - 15 + i, 8, bit(i)) }
            set(size - 8, 8, true)
        }

        /// The codewords' bits, most significant first, in two-column zigzags from the bottom right.
        mutating func place(_ codewords: [UInt8]) {
            let total = codewords.count * 8
            var i = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upward = (right + 1) & 2 == 0
                for v in 0..<size {
                    let row = upward ? size - 1 - v : v
                    for col in [right, right - 1] where !reserved[row][col] {
                        // Remainder bits past the codewords stay light.
                        if i < total { modules[row][col] = (codewords[i >> 3] >> (7 - (i & 7))) & 1 == 1 }
                        i += 1
                    }
                }
                right -= 2
            }
        }

        static func masked(_ mask: Int, _ r: Int, _ c: Int) -> Bool {
            switch mask {
            case 0: (r + c) % 2 == 0
            case 1: r % 2 == 0
            case 2: c % 3 == 0
            case 3: (r + c) % 3 == 0
            case 4: (r / 2 + c / 3) % 2 == 0
            case 5: (r * c) % 2 + (r * c) % 3 == 0
            case 6: ((r * c) % 2 + (r * c) % 3) % 2 == 0
            default: ((r + c) % 2 + (r * c) % 3) % 2 == 0
            }
        }

        mutating func apply(mask: Int) {
            for r in 0..<size {
                for c in 0..<size where !reserved[r][c] && Self.masked(mask, r, c) { modules[r][c].toggle() }
            }
        }

        /// The penalty of 7.8.3: runs of five or more, 2×2 blocks, finder-like patterns, and the
        /// dark share's distance from half.
        func penalty() -> Int {
            var total = 0
            let lines = (0..<size).map { r in modules[r] } + (0..<size).map { c in (0..<size).map { modules[$0][c] } }
            let finderLike: [[Bool]] = [
                [true, false, true, true, true, false, true, false, false, false, false],
                [false, false, false, false, true, false, true, true, true, false, true],
            ]
            for line in lines {
                var run = 1
                for i in 1..<size {
                    if line[i] == line[i - 1] {
                        run += 1
                    } else {
                        if run >= 5 { total += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { total += run - 2 }
                if size >= 11 {
                    for i in 0...(size - 11) where finderLike.contains(where: { $0.elementsEqual(line[i..<i + 11]) }) { total += 40 }
                }
            }
            for r in 0..<size - 1 {
                for c in 0..<size - 1 {
                    let m = modules[r][c]
                    if m == modules[r][c + 1], m == modules[r + 1][c], m == modules[r + 1][c + 1] { total += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let percent = dark * 100 / (size * size)
            total += abs(percent - 50) / 5 * 10
            return total
        }
    }
}

public import MatterTLV

/// A property and mutation fuzzer for the Matter TLV decoder, deterministic for a seed.
///
/// Each iteration makes one input: a random valid element's encoding (and checks that it
/// decodes back to the same encoding), a mutation of one (bit flips, byte changes, inserted
/// or deleted runs, truncation, splices, deep nesting, huge lengths) or plain random bytes.
/// Every input must either decode or be refused with a `TLVError`; whatever decodes must
/// re-encode to bytes that decode to the same encoding again. Nothing may take longer than
/// `slowLimit`.
public struct TLVFuzzer {
    /// What a run found.
    public struct Report: Sendable, CustomStringConvertible {
        public var inputs = 0
        public var decoded = 0
        public var refused = 0
        public var failures: [String] = []
        public var slowest: Duration = .zero
        public var refusals: [String: Int] = [:]

        public var description: String {
            let reasons = refusals.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "inputs=\(inputs) decoded=\(decoded) refused=\(refused) failures=\(failures.count) slowest=\(slowest) [\(reasons)]"
        }
    }

    private var rng: SplitMix64
    private var corpus: [[UInt8]] = []
    private let limits: TLVLimits
    private let slowLimit: Duration

    public init(seed: UInt64, limits: TLVLimits = TLVLimits(maxDepth: 16, maxInputLength: 4096, maxStringLength: 1024),
                slowLimit: Duration = .milliseconds(250)) {
        rng = SplitMix64(seed: seed)
        self.limits = limits
        self.slowLimit = slowLimit
    }

    /// Runs `count` inputs; stops early after 20 failures.
    public mutating func run(count: Int, progress: ((Report) -> Void)? = nil) -> Report {
        var report = Report()
        let clock = ContinuousClock()
        for i in 0..<count {
            let input = makeInput()
            let start = clock.now
            check(input, &report)
            let took = clock.now - start
            if took > report.slowest { report.slowest = took }
            if took > slowLimit {
                report.failures.append("input of \(input.count) bytes took \(took): \(hex(input.prefix(64)))")
            }
            report.inputs += 1
            if report.failures.count >= 20 { break }
            if let progress, i > 0, i % 100_000 == 0 { progress(report) }
        }
        return report
    }

    private func check(_ input: [UInt8], _ report: inout Report) {
        let element: TLVElement
        do {
            element = try TLVElement(decoding: input, limits: limits)
        } catch {
            report.refused += 1
            report.refusals[error.code.description, default: 0] += 1
            return
        }
        report.decoded += 1
        do {
            let again = try element.encoded()
            let back = try TLVElement(decoding: again, limits: TLVLimits(maxDepth: limits.maxDepth, maxInputLength: 1 << 20, maxStringLength: 1 << 20))
            if try back.encoded() != again {
                report.failures.append("re-encoding is not stable for \(hex(input.prefix(64)))")
            }
        } catch {
            report.failures.append("decoded input does not round-trip (\(error)): \(hex(input.prefix(64)))")
        }
    }

    // MARK: Inputs

    private mutating func makeInput() -> [UInt8] {
        let roll = rng.next(100)
        if roll < 30 || corpus.isEmpty {
            let element = randomElement(depth: 0, tag: randomTag(), parent: nil)
            let bytes = (try? element.encoded()) ?? []
            if corpus.count < 512 { corpus.append(bytes) } else { corpus[Int(rng.next(512))] = bytes }
            return bytes
        } else if roll < 90 {
            return mutate(corpus[Int(rng.next(UInt64(corpus.count)))])
        } else if roll < 95 {
            return deepNesting()
        } else {
            return (0..<Int(rng.next(64))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
    }

    private mutating func mutate(_ original: [UInt8]) -> [UInt8] {
        var b = original
        for _ in 0..<(1 + Int(rng.next(4))) {
            let op = rng.next(8)
            switch op {
            case 0 where !b.isEmpty:
                let i = Int(rng.next(UInt64(b.count))); b[i] ^= UInt8(1) << UInt8(rng.next(8))
            case 1 where !b.isEmpty:
                let i = Int(rng.next(UInt64(b.count))); b[i] = interesting()
            case 2:
                let i = Int(rng.next(UInt64(b.count + 1)))
                b.insert(contentsOf: (0..<(1 + Int(rng.next(8)))).map { _ in interesting() }, at: i)
            case 3 where !b.isEmpty:
                let i = Int(rng.next(UInt64(b.count))); let n = min(b.count - i, 1 + Int(rng.next(8)))
                b.removeSubrange(i..<i + n)
            case 4 where !b.isEmpty:
                b.removeLast(Int(rng.next(UInt64(b.count))))
            case 5:
                let other = corpus[Int(rng.next(UInt64(corpus.count)))]
                let cut = Int(rng.next(UInt64(b.count + 1)))
                let from = Int(rng.next(UInt64(other.count + 1)))
                b = Array(b[..<cut]) + Array(other[from...])
            case 6 where !b.isEmpty:
                // a length or integer field set to a huge value
                let i = Int(rng.next(UInt64(b.count)))
                for j in i..<min(b.count, i + 8) { b[j] = 0xFF }
            default:
                if !b.isEmpty { let i = Int(rng.next(UInt64(b.count))); b[i] = UInt8(truncatingIfNeeded: rng.next()) }
            }
        }
        return b
    }

    private mutating func deepNesting() -> [UInt8] {
        let depth = Int(rng.next(64))
        let opener: UInt8 = [0x15, 0x16, 0x17][Int(rng.next(3))]
        var b: [UInt8] = []
        for i in 0..<depth { b.append(opener == 0x15 && i > 0 ? 0x35 : opener); if opener == 0x15 && i > 0 { b.append(UInt8(i & 0xFF)) } }
        b.append(contentsOf: repeatElement(0x18, count: Int(rng.next(UInt64(depth + 2)))))
        return b
    }

    private mutating func interesting() -> UInt8 {
        let values: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x15, 0x16, 0x17, 0x18, 0x0C, 0x10, 0x13, 0x1F, 0xE4, 0x35]
        return rng.next(2) == 0 ? values[Int(rng.next(UInt64(values.count)))] : UInt8(truncatingIfNeeded: rng.next())
    }

    private mutating func randomTag() -> TLVTag {
        switch rng.next(8) {
        case 0, 1: return .anonymous
        case 2, 3: return .context(UInt8(truncatingIfNeeded: rng.next()))
        case 4: return .commonProfile(rng.next(2) == 0 ? UInt32(rng.next(0x10000)) : UInt32(truncatingIfNeeded: rng.next()))
        case 5: return .implicitProfile(rng.next(2) == 0 ? UInt32(rng.next(0x10000)) : UInt32(truncatingIfNeeded: rng.next()))
        default:
            return .fullyQualified(vendorID: UInt16(truncatingIfNeeded: rng.next()), profile: UInt16(truncatingIfNeeded: rng.next()),
                                   tag: rng.next(2) == 0 ? UInt32(rng.next(0x10000)) : UInt32(truncatingIfNeeded: rng.next()))
        }
    }

    private mutating func randomElement(depth: Int, tag: TLVTag, parent: TLVContainerKind?) -> TLVElement {
        let kind = rng.next(depth < 4 ? 14 : 11)
        switch kind {
        case 0: return TLVElement(tag, .signed(Int64(bitPattern: randomWidthValue())))
        case 1: return TLVElement(tag, .unsigned(randomWidthValue()))
        case 2: return TLVElement(tag, .bool(rng.next(2) == 0))
        case 3: return TLVElement(tag, .float(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))))
        case 4: return TLVElement(tag, .double(Double(bitPattern: rng.next())))
        case 5:
            let scalars = (0..<Int(rng.next(12))).compactMap { _ in Unicode.Scalar(UInt32(rng.next(2) == 0 ? rng.next(128) : rng.next(0x11000))) }
            return TLVElement(tag, .utf8(String(String.UnicodeScalarView(scalars))))
        case 6, 7: return TLVElement(tag, .bytes((0..<Int(rng.next(rng.next(8) == 0 ? 300 : 16))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        case 8, 9, 10: return TLVElement(tag, .null)
        default:
            let n = Int(rng.next(6))
            switch kind {
            case 11:
                var seen = Set<TLVTag>()
                var members: [TLVElement] = []
                for _ in 0..<n {
                    var t = randomTag()
                    if t.isAnonymous { t = .context(UInt8(truncatingIfNeeded: rng.next())) }
                    guard seen.insert(t).inserted else { continue }
                    members.append(randomElement(depth: depth + 1, tag: t, parent: .structure))
                }
                return TLVElement(tag, .structure(members))
            case 12:
                return TLVElement(tag, .array((0..<n).map { _ in randomElement(depth: depth + 1, tag: .anonymous, parent: .array) }))
            default:
                return TLVElement(tag, .list((0..<n).map { _ in randomElement(depth: depth + 1, tag: randomTag(), parent: .list) }))
            }
        }
    }

    private mutating func randomWidthValue() -> UInt64 {
        switch rng.next(4) {
        case 0: return rng.next(0x100)
        case 1: return rng.next(0x10000)
        case 2: return rng.next(0x1_0000_0000)
        default: return rng.next()
        }
    }

    private func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}

/// SplitMix64: a small, fast, seedable generator (deterministic runs).
public struct SplitMix64: Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform-enough value below `bound` (bound > 0).
    public mutating func next(_ bound: UInt64) -> UInt64 { bound == 0 ? 0 : next() % bound }
}

@testable import HAP
import Testing

/// The HAP HTTP/1.1 request parser and the encrypted framing: properties over generated
/// requests, and fuzz with random and mutated bytes (every case replayable from its seed).
@Suite struct HTTPMessageTests {
    static let methods = ["GET", "PUT", "POST"]
    static let targets = ["/accessories", "/characteristics?id=1.2,2.9&ev=1", "/pair-setup", "/pairings", "/prepare", "/identify", "/x?=", "/y?a=&=b&&c"]

    static func request(_ rng: inout SeededRandom) -> (HTTPRequest, [UInt8]) {
        let method = methods.randomElement(using: &rng)!
        let target = targets.randomElement(using: &rng)!
        let body = (0..<[0, 1, 3, 200, 1500].randomElement(using: &rng)!).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var headers: [(String, String)] = [("Host", "hearth.local")]
        if Bool.random(using: &rng) { headers.append(("Content-Type", "application/hap+json")) }
        headers.append(("Content-Length", "\(body.count)"))
        let wire = "\(method) \(target) HTTP/1.1\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return (HTTPRequest(method: method, target: target, headers: headers, body: body), Array(wire.utf8) + body)
    }

    /// Property: pipelined requests, delivered in chunks of any size, parse back one by one,
    /// equal to what was sent, and leave nothing behind.
    @Test(arguments: [1, 2, 3]) func pipelinedRequests_inAnyChunks_parseBack(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        for _ in 0..<200 {
            var sent: [HTTPRequest] = []
            var wire: [UInt8] = []
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let (r, bytes) = Self.request(&rng)
                sent.append(r)
                wire += bytes
            }
            var buffer: [UInt8] = []
            var parsed: [HTTPRequest] = []
            var offset = 0
            while offset < wire.count {
                let n = min(wire.count - offset, Int.random(in: 1...700, using: &rng))
                buffer += wire[offset..<(offset + n)]
                offset += n
                while let r = try HTTPRequest.parse(&buffer) { parsed.append(r) }
            }
            #expect(parsed == sent)
            #expect(buffer.isEmpty)
        }
    }

    /// Property: the query of any target splits into its items; an empty key or value is kept
    /// empty (`?=` once trapped on an empty split).
    @Test func query_emptyKeysAndValues() {
        let r = HTTPRequest(method: "GET", target: "/y?a=&=b&&c&id=1.9%2C2.3", headers: [], body: [])
        #expect(r.query == ["a": "", "": "b", "c": "", "id": "1.9,2.3"])
        #expect(HTTPRequest(method: "GET", target: "/x?=", headers: [], body: []).query == ["": ""])
        #expect(HTTPRequest(method: "GET", target: "/x?", headers: [], body: []).query.isEmpty)
    }

    /// Fuzz: random bytes, and valid requests with random bytes flipped, inserted or cut, either
    /// parse, wait for more, or throw ``HTTPRequest/ParseError``; nothing traps, and what parses
    /// has a query that can be read.
    @Test func randomAndMutatedBytes_neverTrap() async {
        var rng = SeededRandom(state: 0xBEEF)
        var outcomes = (parsed: 0, incomplete: 0, refused: 0)
        for i in 0..<1500 {
            // CPU-bound: give the parallel suite's other tests a turn now and then.
            if i % 100 == 0 { await Task.yield() }
            var bytes: [UInt8]
            if i % 2 == 0 {
                let alphabet = Array("GET PUT /?=&.,:\r\n HTTP/1.1 Content-Length: 0123456789 abc".utf8)
                bytes = (0..<Int.random(in: 0...300, using: &rng)).map { _ in
                    Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                }
            } else {
                bytes = Self.request(&rng).1
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let at = Int.random(in: 0..<max(bytes.count, 1), using: &rng)
                    switch Int.random(in: 0...2, using: &rng) {
                    case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: min(at, bytes.count))
                    default: bytes = Array(bytes.prefix(at))
                    }
                }
            }
            var buffer = bytes
            do {
                if let r = try HTTPRequest.parse(&buffer) {
                    outcomes.parsed += 1
                    _ = r.query
                    _ = r.path
                    #expect(buffer.count < bytes.count)
                } else {
                    outcomes.incomplete += 1
                    #expect(buffer == bytes)
                }
            } catch {
                outcomes.refused += 1
            }
        }
        // The generator reaches every outcome (a fuzz that never parses tests nothing).
        #expect(outcomes.parsed > 100 && outcomes.incomplete > 100 && outcomes.refused > 100)
    }

    @Test func limits_headAndBodyRefused() {
        var head = Array("GET / HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: HTTPRequest.maxHead + 1)
        #expect(throws: HTTPRequest.ParseError.self) { try HTTPRequest.parse(&head) }
        var body = Array("PUT / HTTP/1.1\r\nContent-Length: \(HTTPRequest.maxBody + 1)\r\n\r\n".utf8)
        #expect(throws: HTTPRequest.ParseError.self) { try HTTPRequest.parse(&body) }
        var negative = Array("PUT / HTTP/1.1\r\nContent-Length: -1\r\n\r\n".utf8)
        #expect(throws: HTTPRequest.ParseError.self) { try HTTPRequest.parse(&negative) }
        var chunked = Array("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        #expect(throws: HTTPRequest.ParseError.self) { try HTTPRequest.parse(&chunked) }
    }

    /// Fuzz the encrypted framing: frames sealed by the controller, then cut, flipped or with
    /// random bytes appended, either open to a prefix of what was sealed or throw; nothing traps.
    @Test func secureFraming_mutatedFrames_openOrThrow() {
        var rng = SeededRandom(state: 0xC0FFEE)
        let shared = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var opened = 0
        var refused = 0
        for _ in 0..<400 {
            var controller = SecureFraming(controller: SessionKeys(sharedSecret: shared))
            var accessory = SecureFraming(accessory: SessionKeys(sharedSecret: shared))
            let plain = (0..<Int.random(in: 0...2500, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var wire = controller.seal(plain)
            let mutated = Int.random(in: 0...3, using: &rng)
            switch mutated {
            case 0: wire = Array(wire.prefix(Int.random(in: 0...wire.count, using: &rng)))
            case 1 where !wire.isEmpty: wire[Int.random(in: 0..<wire.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 2: wire += (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            default: break
            }
            do {
                let out = try accessory.open(&wire)
                opened += 1
                #expect(Array(plain.prefix(out.count)) == out)
                if mutated == 3 { #expect(out == plain && wire.isEmpty) }
            } catch {
                refused += 1
            }
        }
        #expect(opened > 0 && refused > 0)
    }
}

import BigInt
import Crypto
import Foundation
@testable import HAP
import Testing

func hex(_ s: String) -> [UInt8] {
    let d = Array(s.filter(\.isHexDigit))
    return stride(from: 0, to: d.count, by: 2).map { UInt8(String(d[$0...$0 + 1]), radix: 16)! }
}

/// RFC 5054 appendix B: the 1024-bit group, SHA-1, I = "alice", P = "password123".
@Suite struct SRPTests {
    static let salt = hex("BEB25379 D1A8581E B5A72767 3A2441EE")
    static let a = hex("60975527 035CF2AD 1989806F 0407210B C81EDC04 E2762A56 AFD529DD DA2D4393")
    static let b = hex("E487CB59 D31AC550 471E81F0 0F6928E0 1DDA08E9 74A004F4 9E61F5D1 05284D20")

    var server: SRPServer<Insecure.SHA1> {
        SRPServer(group: .rfc5054_1024, username: "alice", password: "password123", salt: Self.salt, secret: Self.b)
    }

    @Test func rfc5054_multiplierAndVerifier() {
        #expect(server.multiplier.bytes == hex("7556AA04 5AEF2CDD 07ABAF0F 665C3E81 8913186F"))
        let x = SRPServer<Insecure.SHA1>.privateKey(salt: Self.salt, username: Array("alice".utf8), password: Array("password123".utf8))
        #expect(x.bytes == hex("94B7555A ABE9127C C58CCF49 93DB6CF8 4D16C124"))
        #expect(server.verifier.bytes == hex("""
            7E273DE8 696FFC4F 4E337D05 B4B375BE B0DDE156 9E8FA00A 9886D812 9BADA1F1 822223CA 1A605B53 0E379BA4 729FDC59 F105B478
            7E5186F5 C671085A 1447B52A 48CF1970 B4FB6F84 00BBF4CE BFBB1681 52E08AB5 EA53D15C 1AFF87B2 B9DA6E04 E058AD51 CC72BFC9
            033B564E 26480D78 E955A5E2 9E7AB245 DB2BE315 E2099AFB
            """))
    }

    @Test func rfc5054_publicKeysScramblerAndPremasterSecret() throws {
        let client = SRPClient<Insecure.SHA1>(group: .rfc5054_1024, secret: Self.a)
        #expect(client.publicKey == hex("""
            61D5E490 F6F1B795 47B0704C 436F523D D0E560F0 C64115BB 72557EC4 4352E890 3211C046 92272D8B 2D1A5358 A2CF1B6E 0BFCF99F
            921530EC 8E393561 79EAE45E 42BA92AE ACED8251 71E1E8B9 AF6D9C03 E1327F44 BE087EF0 6530E69F 66615261 EEF54073 CA11CF58
            58F0EDFD FE15EFEA B349EF5D 76988A36 72FAC47B 0769447B
            """))
        #expect(server.publicKey == hex("""
            BD0C6151 2C692C0C B6D041FA 01BB152D 4916A1E7 7AF46AE1 05393011 BAF38964 DC46A067 0DD125B9 5A981652 236F99D9 B681CBF8
            7837EC99 6C6DA044 53728610 D0C6DDB5 8B318885 D7D82C7F 8DEB75CE 7BD4FBAA 37089E6F 9C6059F3 88838E7A 00030B33 1EB76840
            910440B1 B27AAEAE EB4012B7 D7665238 A8E3FB00 4B117B58
            """))
        #expect(server.scrambler(clientPublicKey: client.publicKeyValue).bytes == hex("CE38B959 3487DA98 554ED47D 70A7AE5F 462EF019"))
        let expectedS = hex("""
            B0DC82BA BCF30674 AE450C02 87745E79 90A3381F 63B387AA F271A10D 233861E3 59B48220 F7C4693C 9AE12B0A 6F67809F 0876E2D0
            13800D6C 41BB59B6 D5979B5C 00A172B4 A2A5903A 0BDCAF8A 709585EB 2AFAFA8F 3499B200 210DCC1F 10EB3394 3CD67FC8 8A2F39A4
            BE5BEC4E C0A3212D C346D7E4 74B29EDE 8A469FFE CA686E5A
            """)
        #expect(try server.premasterSecret(clientPublicKey: client.publicKeyValue).bytes == expectedS)
        // The client computes the same S, and the server accepts its proof.
        let c = client.proof(username: Array("alice".utf8), password: Array("password123".utf8), salt: Self.salt, serverPublicKey: server.publicKey)
        #expect(c.premaster.bytes == expectedS)
        var s = server
        let m2 = try s.verify(clientPublicKey: client.publicKey, proof: c.proof)
        #expect(s.sessionKey == c.key)
        #expect(m2 == SRPServer<Insecure.SHA1>.hash(client.publicKey, c.proof, c.key))
    }

    @Test func wrongPassword_proofRefused() {
        let client = SRPClient<Insecure.SHA1>(group: .rfc5054_1024, secret: Self.a)
        let c = client.proof(username: Array("alice".utf8), password: Array("password124".utf8), salt: Self.salt, serverPublicKey: server.publicKey)
        var s = server
        #expect(throws: SRPServer<Insecure.SHA1>.Failure.self) { try s.verify(clientPublicKey: client.publicKey, proof: c.proof) }
        #expect(s.sessionKey == nil)
    }

    @Test func zeroClientKey_refused() {
        var s = server
        #expect(throws: SRPServer<Insecure.SHA1>.Failure.self) { try s.verify(clientPublicKey: [0], proof: [1]) }
        #expect(throws: SRPServer<Insecure.SHA1>.Failure.self) { try s.verify(clientPublicKey: s.group.N.bytes, proof: [1]) }
    }

    /// HAP's group: k = H(N | PAD(g)) for the 3072-bit group and SHA-512, as HAP controllers use it.
    @Test func hapGroup_multiplier() {
        let s = SRPServer<SHA512>(group: .rfc5054_3072, username: "Pair-Setup", password: "031-45-154", salt: [UInt8](repeating: 1, count: 16), secret: [2])
        #expect(s.group.byteCount == 384)
        #expect(s.multiplier.bytes == hex("""
            a9c2e2559bf0ebb53f0cbbf62282906bede7f2182f00678211fbd5bde5b285033a4993503b87397f9be5ec02080fedbc0835587ad039060879b8621e8c3659e0
            """))
        #expect(s.publicKey.count == 384)
    }

    /// Montgomery exponentiation agrees with BigInt's for random odd moduli of 1 to 48 limbs,
    /// bases above the modulus, and exponents of 0, 1 and up to 400 bits (BigInt's side only where it is quick in a debug build).
    @Test func montgomeryPower_agreesWithBigInt() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<36 {
            let limbs = [1, 2, 3, 7, 16, 48][round % 6]
            var n = BigUInt.randomInteger(withExactWidth: 64 * limbs, using: &rng)
            n |= 1
            guard let field = MontgomeryField(modulus: n) else { Issue.record("odd modulus \(n) refused"); continue }
            let base = BigUInt.randomInteger(withMaximumWidth: 64 * limbs + 70, using: &rng)
            let exponent: BigUInt = round < 2 ? BigUInt(round) : BigUInt.randomInteger(withMaximumWidth: [8, 64, 200, 400][round % 4], using: &rng)
            let expected = limbs > 7 && exponent.bitWidth > 64 ? nil : base.power(exponent, modulus: n)
            let got = field.power(base, exponent)
            if let expected { #expect(got == expected, "n \(n) base \(base) exponent \(exponent)") }
            #expect(got < n)
        }
        // The 3072-bit group, a 64-bit exponent through both.
        let group = SRPGroup.rfc5054_3072
        let a = BigUInt(hex: "60975527035CF2AD")
        #expect(group.power(group.g, a) == group.g.power(a, modulus: group.N))
        #expect(MontgomeryField(modulus: BigUInt(10)) == nil)
        #expect(MontgomeryField(modulus: BigUInt(1)) == nil)
    }
}

import MatterTLV
import Testing

/// The encoding examples of the Matter Core Specification, Appendix A ("TLV Encoding
/// Examples"): each value must encode to exactly these bytes and decode back to the value.
@Suite struct SpecExamplesTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let element: TLVElement
        let bytes: String
        var testDescription: String { name }
    }

    static let examples: [Example] = [
        Example(name: "false", element: TLVElement(.bool(false)), bytes: "08"),
        Example(name: "true", element: TLVElement(.bool(true)), bytes: "09"),
        Example(name: "signed 1-octet 42", element: TLVElement(.signed(42)), bytes: "00 2a"),
        Example(name: "signed 1-octet -17", element: TLVElement(.signed(-17)), bytes: "00 ef"),
        Example(name: "unsigned 1-octet 42U", element: TLVElement(.unsigned(42)), bytes: "04 2a"),
        Example(name: "signed 2-octet 422", element: TLVElement(.signed(422)), bytes: "01 a6 01"),
        Example(name: "signed 4-octet -170000", element: TLVElement(.signed(-170000)), bytes: "02 f0 67 fd ff"),
        Example(name: "signed 8-octet 40000000000", element: TLVElement(.signed(40_000_000_000)), bytes: "03 00 90 2f 50 09 00 00 00"),
        Example(name: "UTF-8 Hello!", element: TLVElement(.utf8("Hello!")), bytes: "0c 06 48 65 6c 6c 6f 21"),
        Example(name: "UTF-8 Tschüs", element: TLVElement(.utf8("Tschüs")), bytes: "0c 07 54 73 63 68 c3 bc 73"),
        Example(name: "octet string 00…04", element: TLVElement(.bytes([0, 1, 2, 3, 4])), bytes: "10 05 00 01 02 03 04"),
        Example(name: "null", element: TLVElement(.null), bytes: "14"),
        Example(name: "float 0.0", element: TLVElement(.float(0.0)), bytes: "0a 00 00 00 00"),
        Example(name: "float 1/3", element: TLVElement(.float(1.0 / 3.0)), bytes: "0a ab aa aa 3e"),
        Example(name: "float 17.9", element: TLVElement(.float(17.9)), bytes: "0a 33 33 8f 41"),
        Example(name: "float +inf", element: TLVElement(.float(.infinity)), bytes: "0a 00 00 80 7f"),
        Example(name: "float -inf", element: TLVElement(.float(-.infinity)), bytes: "0a 00 00 80 ff"),
        Example(name: "double 0.0", element: TLVElement(.double(0.0)), bytes: "0b 00 00 00 00 00 00 00 00"),
        Example(name: "double 1/3", element: TLVElement(.double(1.0 / 3.0)), bytes: "0b 55 55 55 55 55 55 d5 3f"),
        Example(name: "double 17.9", element: TLVElement(.double(17.9)), bytes: "0b 66 66 66 66 66 e6 31 40"),
        Example(name: "double +inf", element: TLVElement(.double(.infinity)), bytes: "0b 00 00 00 00 00 00 f0 7f"),
        Example(name: "double -inf", element: TLVElement(.double(-.infinity)), bytes: "0b 00 00 00 00 00 00 f0 ff"),
        Example(name: "empty structure", element: .structure([]), bytes: "15 18"),
        Example(name: "empty array", element: .array([]), bytes: "16 18"),
        Example(name: "empty list", element: .list([]), bytes: "17 18"),
        Example(name: "structure {0 = 42, 1 = -17}",
                element: .structure([TLVElement(.context(0), .signed(42)), TLVElement(.context(1), .signed(-17))]),
                bytes: "15 20 00 2a 20 01 ef 18"),
        Example(name: "array [0, 1, 2, 3, 4]",
                element: .array((0...4).map { TLVElement(.signed($0)) }),
                bytes: "16 00 00 00 01 00 02 00 03 00 04 18"),
        Example(name: "list [[1, 0 = 42, 2, 3, 0 = -17]]",
                element: .list([TLVElement(.signed(1)), TLVElement(.context(0), .signed(42)), TLVElement(.signed(2)),
                                 TLVElement(.signed(3)), TLVElement(.context(0), .signed(-17))]),
                bytes: "17 00 01 20 00 2a 00 02 00 03 20 00 ef 18"),
        Example(name: "array of mixed types [42, -170000, {}, 17.9, \"Hello!\"]",
                element: .array([TLVElement(.signed(42)), TLVElement(.signed(-170000)), .structure([]),
                                  TLVElement(.double(17.9)), TLVElement(.utf8("Hello!"))]),
                bytes: "16 00 2a 02 f0 67 fd ff 15 18 0b 66 66 66 66 66 e6 31 40 0c 06 48 65 6c 6c 6f 21 18"),
        Example(name: "anonymous tag 42U", element: TLVElement(.anonymous, .unsigned(42)), bytes: "04 2a"),
        Example(name: "context tag 1 = 42U", element: TLVElement(.context(1), .unsigned(42)), bytes: "24 01 2a"),
        Example(name: "common profile tag 1 = 42U", element: TLVElement(.commonProfile(1), .unsigned(42)), bytes: "44 01 00 2a"),
        Example(name: "common profile tag 100000 = 42U", element: TLVElement(.commonProfile(100_000), .unsigned(42)),
                bytes: "64 a0 86 01 00 2a"),
        Example(name: "fully qualified 65521::57069:1 = 42U",
                element: TLVElement(.fullyQualified(vendorID: 0xFFF1, profile: 0xDEED, tag: 1), .unsigned(42)),
                bytes: "c4 f1 ff ed de 01 00 2a"),
        Example(name: "fully qualified 65521::57069:2857762541 = 42U",
                element: TLVElement(.fullyQualified(vendorID: 0xFFF1, profile: 0xDEED, tag: 0xAA55_FEED), .unsigned(42)),
                bytes: "e4 f1 ff ed de ed fe 55 aa 2a"),
    ]

    @Test(arguments: examples)
    func encodesToSpecBytes(_ example: Example) throws {
        #expect(try example.element.encoded() == hex(example.bytes))
    }

    @Test(arguments: examples)
    func decodesSpecBytes(_ example: Example) throws {
        let decoded = try TLVElement(decoding: hex(example.bytes))
        #expect(decoded == example.element)
        // Canonical: the spec's bytes are the canonical encoding.
        #expect(try TLVElement(decodingCanonical: hex(example.bytes)) == example.element)
    }

    /// Implicit-profile tags (tag control 4 and 5) follow the same little-endian layout; these
    /// bytes are derived from the tag control table (A.7.1), not quoted from the examples.
    @Test func implicitProfileTags() throws {
        #expect(try TLVElement(.implicitProfile(1), .unsigned(42)).encoded() == hex("84 01 00 2a"))
        #expect(try TLVElement(.implicitProfile(100_000), .unsigned(42)).encoded() == hex("a4 a0 86 01 00 2a"))
        #expect(try TLVElement(decoding: hex("a4 a0 86 01 00 2a")) == TLVElement(.implicitProfile(100_000), .unsigned(42)))
    }

    @Test func renderingIsReadable() {
        let e = TLVElement.structure([TLVElement(.context(0), .unsigned(42)), TLVElement(.context(1), .utf8("Hi"))])
        #expect(e.description == "{0 = 42U, 1 = \"Hi\"}")
    }
}

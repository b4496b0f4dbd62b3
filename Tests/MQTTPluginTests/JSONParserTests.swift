import HomeModel
import Testing
@testable import MQTTPlugin

@Suite struct JSONParserTests {
    @Test func parsesTheShapesDevicesSend() throws {
        let v = try JSONParser.parse(#"{"a": 1, "b": -2.5e1, "c": [true, false, null], "d": {"e": "x\"y\u00e9\ud83d\ude00"}}"#)
        #expect(v["a"] == .int(1))
        #expect(v["b"] == .double(-25))
        #expect(v["c"] == [true, false, nil])
        #expect(v["d"]?["e"] == .string("x\"yé😀"))
    }

    @Test(arguments: [
        ("{\"a\": }", 6), ("[1, 2", 5), ("\"abc", 4), ("{\"a\" 1}", 5), ("tru", 0), ("01", 1), ("{} x", 3),
    ])
    func reportsWhereItWentWrong(_ text: String, _ offset: Int) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.offset == offset)
        }
    }

    @Test func refusesNestingDeeperThanTheLimit_withoutRecursingFurther() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect((try? JSONParser.parse(ok)) != nil)
    }

    @Test func refusesBinaryAndControlCharacters() {
        let binary: [UInt8] = [0x7B, 0x22, 0x61, 0x00, 0xFF, 0x22, 0x3A, 0x31, 0x7D]
        #expect(throws: JSONParser.Failure.self) {
            try binary.withUnsafeBytes { try JSONParser.parse($0) }
        }
    }

    @Test func keepsBigIntegersExactAndRefusesInfiniteNumbers() throws {
        #expect(try JSONParser.parse("9007199254740993") == .int(9_007_199_254_740_993))
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("1e999") }
    }
}

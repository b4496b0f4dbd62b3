import Foundation
import HomeCore
@testable import MQTTExport
import Testing

/// The exporter's own JSON writer against Foundation's: every config and state of the fixtures
/// (read-write and read-only) and hostile strings read back to the same values.
@Suite struct ExportJSONTests {
    static func same(_ ours: [UInt8], _ object: [String: Any]) throws {
        let mine = try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(
            with: JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) as? NSDictionary
        #expect(mine != nil && mine == theirs, "\(String(decoding: ours, as: UTF8.self))")
    }

    @Test(arguments: [true, false]) func everyFixtureConfigAndStateParsesAsFoundationsWould(allowControl: Bool) throws {
        let (core, _) = ExportFixtures.core()
        let mapper = ExportMapper(topics: ExportFixtures.topics, allowControl: allowControl)
        var checked = 0
        for d in ExportPolicyHelper.exposed(core, policy: ExposurePolicy(includeSensitive: true)) {
            let e = mapper.export(d)
            for c in e.configs {
                let parsed = try #require(JSONSerialization.jsonObject(with: Data(c.payload)) as? [String: Any])
                try Self.same(c.payload, parsed)
                // Sorted by key, slashes as they are.
                let text = String(decoding: c.payload, as: UTF8.self)
                #expect(!text.contains("\\/"))
                checked += 1
            }
            #expect(try JSONSerialization.jsonObject(with: Data(e.state)) is [String: Any])
        }
        #expect(checked >= 10)
    }

    @Test func valuesAndHostileStringsRoundTrip() throws {
        let object: [String: Any] = [
            "quote\"back\\slash": "line\nfeed\ttab\r\u{8}\u{c}\u{1}\u{1f} °C ✓ /path", "int": 42, "negative": -7, "double": 21.5, "whole": 100.0,
            "small": 0.0001, "bool": true, "no": false, "null": NSNull(), "list": ["a", "b"], "nested": ["x": 0.3047, "y": [1, 2]],
            "objects": [["topic": "a/b"], ["topic": "c"]], "inf": Double.infinity,
        ]
        let ours = ExportJSON.encode(object)
        let back = try #require(JSONSerialization.jsonObject(with: Data(ours)) as? [String: Any])
        #expect(back["inf"] is NSNull)
        var finite = object
        finite["inf"] = nil
        var backFinite = back
        backFinite["inf"] = nil
        #expect(NSDictionary(dictionary: backFinite) == NSDictionary(dictionary: finite))
        let text = String(decoding: ours, as: UTF8.self)
        #expect(text.contains(#""bool":true"#) && text.contains(#""whole":100}"#) && text.contains(#""int":42,"#))
        let keys = ["bool", "double", "inf", "int", "list", "negative", "nested", "no", "null", "objects", "quote", "small", "whole"]
        let positions = keys.map { text.range(of: "\"\($0)")!.lowerBound }
        #expect(positions == positions.sorted(), "keys in byte order")
    }
}

import Foundation
import HomeModel
import Testing
@testable import MQTTPlugin

/// docs/mqtt.md and the code agree on the mapping rules (#14): the sensor classes the table
/// names are the ones the mapper maps, and the template filters and tests the docs list are the
/// engine's.
@Suite struct DocsAgreementTests {
    static let docs: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/mqtt.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The device classes in the table rows that start with `` `sensor` ``.
    static var documentedSensorClasses: Set<String> {
        var out: Set<String> = []
        for line in docs.split(separator: "\n") where line.hasPrefix("| `sensor` ") {
            let cell = line.dropFirst("| `sensor` ".count).prefix { $0 != "|" }
            for word in cell.split(whereSeparator: { $0 == "," || $0 == " " }) {
                let w = word.trimmingCharacters(in: .punctuationCharacters.subtracting(CharacterSet(charactersIn: "_")))
                if w.allSatisfy({ $0.isLowercase || $0 == "_" || $0.isNumber }), !w.isEmpty, !["in", "mv", "v", "kv"].contains(w) {
                    out.insert(w)
                }
            }
        }
        return out
    }

    @Test func theSensorTable_namesExactlyTheMappedDeviceClasses() {
        #expect(!Self.docs.isEmpty)
        let mapped = Set(ComponentMapper.mappedSensorClasses.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(Self.documentedSensorClasses == mapped)
    }

    @Test func everyDocumentedSensorClass_compilesToAnEntity() {
        for deviceClass in Self.documentedSensorClasses.sorted() {
            var mapper = ComponentMapper(
                topic: Discovery.Topic(component: "sensor", nodeID: nil, objectID: deviceClass),
                config: ["state_topic": .string("s/" + deviceClass), "device_class": .string(deviceClass)])
            #expect(throws: Never.self, "\(deviceClass)") { _ = try mapper.entity() }
        }
    }

    @Test func everyFilterAndTest_isDocumented_andEveryDocumentedOneParses() throws {
        let templates = Self.docs.components(separatedBy: "### Templates").last?.components(separatedBy: "## Explicit").first ?? ""
        for name in Template.Filter.names {
            #expect(templates.contains("`\(name)") || templates.contains("/`\(name)`") || templates.contains("`\(name)("), "filter \(name)")
            _ = try Template("{{ value | \(name)\(name == "replace" ? "('a', 'b')" : "") }}")
        }
        for test in Template.Test.allCases {
            #expect(templates.contains(test.rawValue), "test \(test.rawValue)")
            _ = try Template("{{ value is not \(test.rawValue) }}")
        }
        #expect(throws: TemplateError.self) { try Template("{{ value | wordcount }}") }
        #expect(throws: TemplateError.self) { try Template("{{ value is even }}") }
    }
}

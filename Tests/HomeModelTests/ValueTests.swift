import Foundation
import HomeModel
import Testing

@Suite struct ValueTests {
    @Test func roundTripsThroughJSON() throws {
        let value: Value = ["on": true, "level": 200, "temp": 21.5, "name": "Lamp", "list": [1, nil], "none": nil]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Value.self, from: data) == value)
    }

    @Test func integralDoublesReadAsIntegers() {
        #expect(Value.double(42).intValue == 42)
        #expect(Value.double(42.5).intValue == nil)
        #expect(Value.string("42").intValue == nil)
    }

    @Test func deviceIDSplitsPluginAndLocalPart() {
        let id = DeviceID(plugin: "mqtt", local: "0x00158d:contact")
        #expect(id.rawValue == "mqtt:0x00158d:contact")
        #expect(id.pluginID == "mqtt")
        #expect(id.localID == "0x00158d:contact")
    }

    @Test func wronglyTypedValueIsRefusedNamingTheAttribute() throws {
        let onOff = try #require(Catalog.standard.trait(OnOffTrait.identifier))
        let attribute = try #require(onOff.attribute(OnOffTrait.Attribute.onOff))
        #expect(throws: HomeError.self) { try attribute.validate(.int(1), in: onOff) }
        do {
            try attribute.validate(.string("on"), in: onOff)
        } catch {
            #expect(error.message.contains("On/Off.OnOff"))
            #expect(error.message.contains("must be a boolean"))
        }
    }
}

import DriverAPI
import Foundation
import HomeModel
import PluginHost
import Testing

/// The isolated-mode message format (docs/plugin-protocol.md), without processes.
@Suite struct PluginWireTests {
    let lamp = DeviceDescription(
        localID: "lamp", name: "Lamp", manufacturer: "Acme", model: "L1",
        types: [
            DeviceTypeDescription(
                id: OnOffLightDeviceType.identifier, isPrimary: true,
                traits: [IdentifyTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: true]])
        ], locality: .remote, commission: CommissionHint(name: "Desk Lamp", room: "Study"), optimistic: true,
        identity: DeviceIdentity(vendorName: "Acme", vendorID: 0xFFF1, productName: "L1", productID: 7, serialNumber: "SN1", uniqueID: "acme-l1-1"),
        suggestedRoom: "Study")

    @Test func deviceDescription_roundTrips_withHexKeysAsDocumented() throws {
        let wire = PluginWire.encode(lamp)
        #expect(wire["types"]?.listValue?.first?["traits"]?["0x0006"] == ["0x0000": true])
        #expect(wire["types"]?.listValue?.first?["id"] == 256)
        let json = try JSONEncoder().encode(wire)
        let back = try PluginWire.device(try JSONDecoder().decode(Value.self, from: json))
        #expect(back == lamp)
    }

    @Test func idsMayBeNumbersDecimalOrHexStrings() throws {
        let values: [Value] = [6, "6", "0x0006", "0x6"]
        for v in values {
            let r = try PluginWire.report(["localID": "lamp", "trait": v, "attribute": 0, "value": true])
            #expect(r.trait == OnOffTrait.identifier)
        }
    }

    @Test func reportsEventsCommandsAndWrites_roundTrip() throws {
        let report = AttributeReport(localID: "t", deviceType: 0x0302, trait: 0x0402, attribute: 0, value: 2150)
        #expect(try PluginWire.report(PluginWire.encode(report)) == report)
        let event = EventReport(localID: "b", trait: 0x003B, event: 1, fields: ["NewPosition": 1], timestampNanoseconds: 42)
        #expect(try PluginWire.event(PluginWire.encode(event)) == event)
        let command = DriverCommand(localID: "lamp", deviceType: 0x0100, trait: 6, command: 1, arguments: ["a": 1], origin: "user:x")
        let encodedCommand = PluginWire.encode(command, id: 7)
        #expect(encodedCommand["type"] == "command")
        #expect(encodedCommand["id"] == 7)
        #expect(try PluginWire.command(encodedCommand.objectValue!) == command)
        let write = DriverWrite(localID: "lamp", deviceType: 0x0100, trait: 6, attribute: 0x4003, value: 1, origin: "user:x")
        #expect(try PluginWire.write(PluginWire.encode(write, id: 8).objectValue!) == write)
    }

    @Test func health_roundTrips_andAnUnknownStateIsAFormatError() throws {
        let down = PluginHealth.unhealthy("cannot reach the MQTT broker at 127.0.0.1:1883: connection refused")
        let encoded = PluginWire.encode(down)
        #expect(encoded["type"] == "health")
        #expect(encoded["state"] == "unhealthy")
        #expect(try PluginWire.health(encoded.objectValue!) == down)
        #expect(try PluginWire.health(["type": "health", "state": "healthy"]) == PluginHealth(.healthy))
        #expect(throws: PluginWire.FormatError.self) { try PluginWire.health(["type": "health", "state": "fine"]) }
        #expect(throws: PluginWire.FormatError.self) { try PluginWire.health(["type": "health"]) }
    }

    @Test func traitConnectivity_roundTrips_asAMessageTypeOfItsOwn() throws {
        let m = PluginWire.encodeTraitConnectivity(.offline, device: "plug", trait: 0x0006, deviceType: 0x010A)
        #expect(m["type"] == "traitConnectivity", "a host that does not know it ignores it, instead of taking the whole device offline")
        let c = try PluginWire.traitConnectivity(m.objectValue!)
        #expect(c.state == .offline && c.localID == "plug" && c.trait == 0x0006 && c.deviceType == 0x010A)
        let any = try PluginWire.traitConnectivity(["type": "traitConnectivity", "state": "online", "localID": "plug", "trait": "0x0006"])
        #expect(any.deviceType == nil)
        #expect(throws: PluginWire.FormatError.self) {
            try PluginWire.traitConnectivity(["type": "traitConnectivity", "state": "gone", "localID": "plug", "trait": 6])
        }
    }

    @Test func resultsCarryValuesOrErrorsWithTheirCode() throws {
        let ok = PluginWire.result(id: 1, .success("done"))
        #expect(try PluginWire.outcome(ok.objectValue!).get() == "done")
        let refused = PluginWire.result(id: 2, .failure(HomeError.deviceOffline("unplugged")))
        #expect(refused["error"] == ["code": "deviceOffline", "message": "unplugged"])
        #expect(throws: HomeError.deviceOffline("unplugged")) { try PluginWire.outcome(refused.objectValue!).get() }
    }

    @Test func malformedMessages_nameTheFieldAndWhatWasExpected() {
        #expect(throws: PluginWire.FormatError.self) { try PluginWire.report(["localID": "lamp", "trait": "six", "attribute": 0]) }
        do {
            _ = try PluginWire.device(["localID": "lamp", "types": [["id": 256, "traits": ["0x0006": 5]]]])
            Issue.record("accepted a trait whose attributes are not an object")
        } catch {
            #expect(error.message == "device lamp.types[0].traits.0x0006: expected an object, found integer")
        }
    }

    @Test func configurationKeepsFileKeyPathAndLines() throws {
        let c = PluginConfiguration(value: ["pin": 17], file: "/etc/hearth.yaml", keyPath: "plugins.gpio", lines: ["pin": 12])
        #expect(try PluginWire.configuration(PluginWire.encode(c)) == c)
    }
}

import HomeModel
import Testing
@testable import MQTTPlugin

@Suite struct DiscoveryTests {
    @Test func parsesTopicsWithAndWithoutNodeID() {
        #expect(Discovery.parseTopic("homeassistant/sensor/node/obj/config", prefix: "homeassistant")
            == .init(component: "sensor", nodeID: "node", objectID: "obj"))
        #expect(Discovery.parseTopic("homeassistant/switch/1C8A7B_RL_1/config", prefix: "homeassistant")
            == .init(component: "switch", nodeID: nil, objectID: "1C8A7B_RL_1"))
        #expect(Discovery.parseTopic("homeassistant/status", prefix: "homeassistant") == nil)
        #expect(Discovery.parseTopic("homeassistant/sensor/a/b/c/config", prefix: "homeassistant") == nil)
        #expect(Discovery.parseTopic("homeassistant/sensor//config", prefix: "homeassistant") == nil)
        #expect(Discovery.parseTopic("other/sensor/x/config", prefix: "homeassistant") == nil)
    }

    @Test func expandsAbbreviationsAndTheBaseTopic() throws {
        let payload = try JSONParser.parse(#"""
            {"~": "tasmota_1C8A7B/", "cmd_t": "~cmnd/POWER", "stat_t": "~tele/STATE", "avty_t": "~tele/LWT",
             "json_attr_t": "prefix/~", "uniq_id": "u", "dev": {"ids": ["1C8A7B"], "mf": "Tasmota"},
             "avty": [{"t": "~avail", "pl_avail": "up"}], "name": "keeps ~ in names"}
            """#).objectValue!
        let c = Discovery.normalise(payload)
        #expect(c["command_topic"] == "tasmota_1C8A7B/cmnd/POWER")
        #expect(c["state_topic"] == "tasmota_1C8A7B/tele/STATE")
        #expect(c["availability_topic"] == "tasmota_1C8A7B/tele/LWT")
        #expect(c["json_attributes_topic"] == "prefix/tasmota_1C8A7B/")
        #expect(c["unique_id"] == "u")
        #expect(c["device"]?["identifiers"] == ["1C8A7B"])
        #expect(c["device"]?["manufacturer"] == "Tasmota")
        #expect(c["availability"]?.listValue?.first?["topic"] == "tasmota_1C8A7B/avail")
        #expect(c["availability"]?.listValue?.first?["payload_available"] == "up")
        #expect(c["name"] == "keeps ~ in names")
        #expect(c["~"] == nil)
    }
}

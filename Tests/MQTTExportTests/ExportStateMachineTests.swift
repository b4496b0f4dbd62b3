import DriverAPI
import Foundation
import HashTreeCollections
import HomeCore
import HomeModel
@testable import MQTTExport
import Testing

@Suite struct ExportStateMachineTests {
    let topics = ExportFixtures.topics

    func machine() -> (ExportStateMachine, [DeviceSnapshot]) {
        let (core, _) = ExportFixtures.core()
        let devices = ExportPolicyHelper.exposed(core)
        var m = ExportStateMachine(mapper: ExportMapper(topics: topics))
        #expect(m.devices(devices).isEmpty, "nothing goes out before the broker connects")
        return (m, devices)
    }

    func published(_ effects: [ExportStateMachine.Effect]) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for case .publish(let t, let p, let retain) in effects {
            if t.hasSuffix("/config") || t.hasSuffix("/state") || t.hasSuffix("/availability") { #expect(retain, "\(t) is retained") }
            out[t] = p
        }
        return out
    }

    @Test func connectingPublishesEveryConfigThenSubscribes() throws {
        var (m, _) = machine()
        let effects = m.connectedToBroker()
        guard case .publish(let first, let online, true) = effects.first else { Issue.record("first effect: \(effects.first.debugDescription)"); return }
        #expect(first == topics.bridgeAvailability && online == Array("online".utf8))
        let subs = effects.compactMap { if case .subscribe(let s) = $0 { s } else { nil } }
        #expect(subs == ["homeassistant/status", "hearth/hearth_a/+/+/set", "homeassistant/+/hearth_a/+/config"])
        let lastPublish = effects.lastIndex { if case .publish = $0 { true } else { false } }!
        let firstSubscribe = effects.firstIndex { if case .subscribe = $0 { true } else { false } }!
        #expect(lastPublish < firstSubscribe)

        let out = published(effects)
        let relaySlug = ExportTopics.slug("gpio:relay")
        let relay = ExportFixtures.json(try #require(out[topics.config("switch", "\(relaySlug)_onoff")]))
        #expect(relay["unique_id"] as? String == "hearth_a_\(relaySlug)_onoff")
        #expect(relay["command_topic"] as? String == "hearth/hearth_a/\(relaySlug)/onoff/set")
        let device = try #require(relay["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["hearth_a_\(relaySlug)"])
        #expect(device["via_device"] as? String == "hearth_a")
        #expect(device["manufacturer"] as? String == "Acme")
        #expect(device["model"] as? String == "R1")
        #expect(device["serial_number"] as? String == "gpio:relay")
        #expect(device["name"] as? String == "Relay")
        let availability = try #require(relay["availability"] as? [[String: Any]])
        #expect(availability.compactMap { $0["topic"] as? String } == [topics.bridgeAvailability, topics.availability(relaySlug)])
        #expect(relay["availability_mode"] as? String == "all")
        // The lock is sensitive: it stays home under the default policy.
        #expect(!out.keys.contains { $0.contains("lock") })
        // The bridge itself, for via_device.
        #expect(out[topics.config("binary_sensor", "hearth_a_bridge_connection")] != nil)
    }

    @Test func stateIsJSONInHomeAssistantUnits() throws {
        var (m, _) = machine()
        let out = published(m.connectedToBroker())
        let thermo = ExportFixtures.json(try #require(out[topics.state(ExportTopics.slug("gpio:thermo"))]))
        #expect(thermo["temperature"] as? Double == 21.5)
        #expect(thermo["humidity"] as? Double == 43.5)
        let lamp = ExportFixtures.json(try #require(out[topics.state(ExportTopics.slug("gpio:lamp"))]))
        #expect(lamp["brightness"] as? Int == 255)
        #expect(lamp["state"] as? String == "ON")
        let t = ExportFixtures.json(try #require(out[topics.config("sensor", "\(ExportTopics.slug("gpio:thermo"))_temperature")]))
        #expect(t["unit_of_measurement"] as? String == "°C")
        #expect(t["device_class"] as? String == "temperature")
        #expect(t["value_template"] as? String == "{{ value_json.temperature }}")
        let h = ExportFixtures.json(try #require(out[topics.config("sensor", "\(ExportTopics.slug("gpio:thermo"))_humidity")]))
        #expect(h["unit_of_measurement"] as? String == "%")
        let l = ExportFixtures.json(try #require(out[topics.config("light", "\(ExportTopics.slug("gpio:lamp"))_light")]))
        #expect(l["brightness_scale"] as? Int == 255)
        #expect(l["schema"] as? String == "json" && l["supported_color_modes"] as? [String] == ["brightness"])
        #expect(lamp["color_mode"] as? String == "brightness")
    }

    @Test func aColourLightIsAJSONSchemaLightWithItsModesAndMireds() throws {
        var (m, _) = machine()
        let out = published(m.connectedToBroker())
        let slug = ExportTopics.slug("gpio:bulb")
        let config = ExportFixtures.json(try #require(out[topics.config("light", "\(slug)_light")]))
        #expect(config["schema"] as? String == "json")
        #expect(config["command_topic"] as? String == topics.command(slug, "light"))
        #expect(config["state_topic"] as? String == topics.state(slug))
        #expect(config["supported_color_modes"] as? [String] == ["color_temp", "hs", "xy"])
        #expect(config["brightness"] as? Bool == true && config["brightness_scale"] as? Int == 255)
        #expect(config["min_mireds"] as? Int == 153 && config["max_mireds"] as? Int == 454)
        #expect(config["brightness_command_topic"] == nil && config["state_value_template"] == nil, "no default-schema keys")
        let state = ExportFixtures.json(try #require(out[topics.state(slug)]))
        #expect(state["state"] as? String == "OFF")
        #expect(state["brightness"] as? Int == 127)
        #expect(state["color_mode"] as? String == "xy")
        #expect(state["color_temp"] as? Int == 250)
        let color = try #require(state["color"] as? [String: Any])
        #expect(color["x"] as? Double == 0.3052 && color["y"] as? Double == 0.3204)
    }

    @Test(arguments: [
        (#"{"state":"ON","color_temp":300}"#, [
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on),
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: ColorControlTrait.identifier,
                command: ColorControlTrait.Command.moveToColorTemperature,
                arguments: ["ColorTemperatureMireds": 300, "TransitionTime": 0, "OptionsMask": 0, "OptionsOverride": 0]),
        ]),
        (#"{"state":"ON","color":{"h":180,"s":50},"transition":1.5}"#, [
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on),
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: ColorControlTrait.identifier,
                command: ColorControlTrait.Command.moveToHueAndSaturation,
                arguments: ["Hue": 127, "Saturation": 127, "TransitionTime": 15, "OptionsMask": 0, "OptionsOverride": 0]),
        ]),
        (#"{"state":"ON","brightness":255,"color":{"x":0.5,"y":0.25}}"#, [
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: LevelControlTrait.identifier,
                command: LevelControlTrait.Command.moveToLevelWithOnOff, arguments: ["Level": 254, "TransitionTime": .null, "OptionsMask": 0, "OptionsOverride": 0]),
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: ColorControlTrait.identifier,
                command: ColorControlTrait.Command.moveToColor, arguments: ["ColorX": 32768, "ColorY": 16384, "TransitionTime": 0, "OptionsMask": 0, "OptionsOverride": 0]),
        ]),
        (#"{"state":"OFF","color_temp":300}"#, [
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)
        ]),
        (#"{"brightness":0}"#, [
            CommandRequest(device: "gpio:bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)
        ]),
    ])
    func colourLightCommandsBecomeCoreCommandsInOrder(payload: String, expected: [CommandRequest]) {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let effects = m.message(topic: topics.command(ExportTopics.slug("gpio:bulb"), "light"), payload: Array(payload.utf8), retained: false)
        #expect(effects == expected.map { .invoke($0) })
    }

    @Test func aReadOnlyExportHasNoCommandTopicsAndRefusesCommands() throws {
        let (core, _) = ExportFixtures.core()
        var m = ExportStateMachine(mapper: ExportMapper(topics: topics))
        let readOnly = ExposurePolicy(includeSensitive: true, allowControl: false)
        _ = m.devices(ExportPolicyHelper.exposed(core, policy: readOnly))
        m.allowControl(false)
        _ = m.devices(ExportPolicyHelper.exposed(core, policy: readOnly))
        let out = published(m.connectedToBroker())
        let configs = out.filter { $0.key.hasSuffix("/config") }
        #expect(configs.count > 5)
        for (topic, payload) in configs {
            #expect(!String(decoding: payload, as: UTF8.self).contains("command_topic"), "\(topic) advertises a command topic")
            #expect(!topic.hasPrefix("homeassistant/switch/") && !topic.hasPrefix("homeassistant/light/") && !topic.hasPrefix("homeassistant/lock/"), "\(topic)")
        }
        let relay = ExportFixtures.json(try #require(out[topics.config("binary_sensor", "\(ExportTopics.slug("gpio:relay"))_onoff")]))
        #expect(relay["device_class"] as? String == "power" && relay["value_template"] as? String == "{{ value_json.state }}")
        let bulb = ExportFixtures.json(try #require(out[topics.config("binary_sensor", "\(ExportTopics.slug("gpio:bulb"))_light")]))
        #expect(bulb["device_class"] as? String == "light")
        #expect(out[topics.config("sensor", "\(ExportTopics.slug("gpio:bulb"))_brightness")] != nil)
        let lock = ExportFixtures.json(try #require(out[topics.config("binary_sensor", "\(ExportTopics.slug("gpio:lock"))_lock")]))
        #expect(lock["device_class"] as? String == "lock" && lock["payload_on"] as? String == "UNLOCKED")
        for (slug, what, payload) in [("gpio:relay", "onoff", "ON"), ("gpio:bulb", "light", #"{"state":"ON"}"#), ("gpio:lock", "lock", "UNLOCK")] {
            let effects = m.message(topic: topics.command(ExportTopics.slug(DeviceID(rawValue: slug)), what), payload: Array(payload.utf8), retained: false)
            if case .refused(_, let reason)? = effects.first { #expect(reason.contains("read only")) } else { Issue.record("\(slug) not refused: \(effects)") }
        }
        #expect(m.refusedCount == 3)

        // Control allowed again: the switch config returns and the binary sensor's is cleared.
        m.allowControl(true)
        let back = m.devices(ExportPolicyHelper.exposed(core, policy: ExposurePolicy(includeSensitive: true)))
        let relaySlug = ExportTopics.slug("gpio:relay")
        #expect(back.contains(.publish(topic: topics.config("binary_sensor", "\(relaySlug)_onoff"), payload: [], retain: true)))
        #expect(back.contains { if case .publish(let t, let p, _) = $0 { t == topics.config("switch", "\(relaySlug)_onoff") && !p.isEmpty } else { false } })
    }

    /// The race CI found: the policy turns read only, and a change of the relay reaches the
    /// machine before the device set that follows the policy. The change must carry out the
    /// whole change of shape (the switch config cleared, the sensor's published), and the set
    /// after it has nothing left to do — before, the switch config stayed on the broker for good.
    @Test func aChangeArrivingBeforeTheDeviceSetAfterAPolicyChangeStillClearsTheOldShape() throws {
        let (core, _) = ExportFixtures.core()
        var m = ExportStateMachine(mapper: ExportMapper(topics: topics))
        let open = ExposurePolicy(includeSensitive: true)
        _ = m.devices(ExportPolicyHelper.exposed(core, policy: open))
        _ = m.connectedToBroker()
        let relaySlug = ExportTopics.slug("gpio:relay")
        let switchTopic = topics.config("switch", "\(relaySlug)_onoff")
        let sensorTopic = topics.config("binary_sensor", "\(relaySlug)_onoff")
        #expect(m.configTopics.contains(switchTopic))

        m.allowControl(false)
        let readOnly = ExposurePolicy(includeSensitive: true, allowControl: false)
        let relay = try #require(ExportPolicyHelper.exposed(core, policy: readOnly).first { $0.id == "gpio:relay" })
        let out = published(m.updated(relay))
        #expect(out[switchTopic] == [], "the switch config is cleared")
        let sensor = try #require(out[sensorTopic])
        #expect(!String(decoding: sensor, as: UTF8.self).contains("command_topic"))
        #expect(!m.configTopics.contains(switchTopic) && m.configTopics.contains(sensorTopic))

        // The device set that follows the policy: the relay is already in its new shape.
        let rest = m.devices(ExportPolicyHelper.exposed(core, policy: readOnly))
        #expect(!rest.contains { if case .publish(let t, _, _) = $0 { t == switchTopic || t == sensorTopic } else { false } }, "\(rest)")
        // A retained switch config seen later is ours no more: it is cleared as stale.
        #expect(m.message(topic: switchTopic, payload: Array("{}".utf8), retained: true) == [.publish(topic: switchTopic, payload: [], retain: true)])
    }

    /// A policy edit (exclude the thermometer, read only) starts a new session, whose two feeds
    /// race: the state feed starts with every device, and under load it can be read before the
    /// device set. It used to re-export the relay with the read-only mapper through
    /// `updated(_:)`, which published the new binary sensor config but never cleared the
    /// switch's, and recorded the new shape, so the set that followed saw nothing to do: the
    /// switch config stayed retained (ExposureCLITests' flaky "the relay a binary sensor" wait).
    /// Whichever feed comes first, and through either entry, the end is the same.
    @Test(arguments: [0, 1, 2]) func aReadOnlyPolicyEditReshapesTheRelayWhicheverFeedComesFirst(order: Int) throws {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let (core, _) = ExportFixtures.core()
        let edited = ExposurePolicy(excludedDevices: ["gpio:thermo"], allowControl: false)
        let after = ExportPolicyHelper.exposed(core, policy: edited)
        m.allowControl(false)
        var effects: [ExportStateMachine.Effect] = []
        switch order {
        case 0:  // the state feed's first batch, then the set (the old session's two feeds)
            for d in after { effects += m.updated(d) }
            effects += m.devices(after)
        case 1:  // the set first
            effects += m.devices(after)
            for d in after { effects += m.updated(d) }
        default:  // the exporter now: each device re-read, the excluded one as nil, then the set
            for id in ["gpio:relay", "gpio:thermo", "gpio:bulb"] as [DeviceID] { effects += m.device(id, after.first { $0.id == id }) }
            effects += m.devices(after)
        }
        let out = published(effects)
        let relay = ExportTopics.slug("gpio:relay")
        let thermo = ExportTopics.slug("gpio:thermo")
        #expect(out[topics.config("switch", "\(relay)_onoff")] == [], "the switch config is cleared")
        let sensor = try #require(out[topics.config("binary_sensor", "\(relay)_onoff")])
        #expect(!sensor.isEmpty && !String(decoding: sensor, as: UTF8.self).contains("command_topic"))
        #expect(out[topics.config("sensor", "\(thermo)_temperature")] == [], "the excluded thermometer is cleared")
        // What the machine stands behind matches: a retained switch config now is stale.
        #expect(!m.configTopics.contains(topics.config("switch", "\(relay)_onoff")))
        #expect(m.exported["gpio:thermo"] == nil)
        #expect(m.message(topic: topics.config("switch", "\(relay)_onoff"), payload: Array("{}".utf8), retained: true)
            == [.publish(topic: topics.config("switch", "\(relay)_onoff"), payload: [], retain: true)])
        // Nothing left to do: the same set again publishes nothing.
        #expect(m.devices(after).isEmpty)
    }

    @Test func buttonsGetDeviceTriggersAndEventsGoToTheActionTopic() throws {
        var (m, _) = machine()
        let out = published(m.connectedToBroker())
        let slug = ExportTopics.slug("gpio:button")
        let trigger = ExportFixtures.json(try #require(out[topics.config("device_automation", "\(slug)_button_1_short_press")]))
        #expect(trigger["automation_type"] as? String == "trigger")
        #expect(trigger["type"] as? String == "button_short_press")
        #expect(trigger["subtype"] as? String == "button_1")
        #expect(trigger["topic"] as? String == topics.action(slug))
        // HA's device trigger schema: no entity keys (unique_id, name, state, availability).
        #expect(Set(trigger.keys) == ["automation_type", "type", "subtype", "topic", "payload", "device", "origin"])
        let press = DeviceEvent(
            device: "gpio:button", deviceType: GenericSwitchDeviceType.identifier, trait: SwitchTrait.identifier, event: SwitchTrait.Event.shortRelease,
            fields: ["PreviousPosition": 1], timestampNanoseconds: 0)
        #expect(m.event(press) == [.publish(topic: topics.action(slug), payload: Array("button_1_short_press".utf8), retain: false)])
    }

    @Test func aDeviceThatLeavesHasItsConfigsCleared() {
        var (m, devices) = machine()
        _ = m.connectedToBroker()
        let remaining = devices.filter { $0.id != "gpio:relay" }
        let effects = m.devices(remaining)
        let slug = ExportTopics.slug("gpio:relay")
        #expect(effects.contains(.publish(topic: topics.config("switch", "\(slug)_onoff"), payload: [], retain: true)))
        #expect(effects.contains(.publish(topic: topics.state(slug), payload: [], retain: true)))
        #expect(effects.allSatisfy { if case .publish(let t, let p, _) = $0 { p.isEmpty && t.contains(slug) } else { false } })
        // Unchanged devices publish nothing again.
        #expect(m.devices(remaining).isEmpty)
    }

    @Test func staleRetainedConfigsInOurNamespaceAreCleared() {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let stale = topics.config("switch", "gpio_gone_onoff")
        #expect(m.message(topic: stale, payload: Array("{}".utf8), retained: true) == [.publish(topic: stale, payload: [], retain: true)])
        #expect(m.message(topic: stale, payload: [], retained: true).isEmpty, "the clearing itself is not cleared again")
        let ours = topics.config("switch", "\(ExportTopics.slug("gpio:relay"))_onoff")
        #expect(m.message(topic: ours, payload: Array("{}".utf8), retained: true).isEmpty)
        // Before the device set is known nothing is cleared; once it is, what is not ours is.
        var fresh = ExportStateMachine(mapper: ExportMapper(topics: topics))
        _ = fresh.connectedToBroker()
        #expect(fresh.message(topic: stale, payload: Array("{}".utf8), retained: true).isEmpty)
        #expect(fresh.message(topic: ours, payload: Array("{}".utf8), retained: true).isEmpty)
        let (core, _) = ExportFixtures.core()
        let effects = fresh.devices(ExportPolicyHelper.exposed(core))
        #expect(effects.contains(.publish(topic: stale, payload: [], retain: true)))
        #expect(!effects.contains(.publish(topic: ours, payload: [], retain: true)))
    }

    @Test func homeAssistantsBirthRepublishesEverything() {
        var (m, _) = machine()
        let first = m.connectedToBroker().filter { if case .publish(let t, _, _) = $0 { t.hasSuffix("/config") } else { false } }
        let again = m.message(topic: "homeassistant/status", payload: Array("online".utf8), retained: false)
        #expect(Set(again.compactMap { if case .publish(let t, _, _) = $0, t.hasSuffix("/config") { t } else { nil } })
            == Set(first.compactMap { if case .publish(let t, _, _) = $0 { t } else { nil } }))
        #expect(m.message(topic: "homeassistant/status", payload: Array("offline".utf8), retained: false).isEmpty)
    }

    @Test(arguments: [("ON", OnOffTrait.Command.on), ("off", OnOffTrait.Command.off), (" TOGGLE\n", OnOffTrait.Command.toggle)])
    func onOffCommandsBecomeCoreCommands(payload: String, command: CommandID) {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let effects = m.message(topic: topics.command(ExportTopics.slug("gpio:relay"), "onoff"), payload: Array(payload.utf8), retained: false)
        #expect(effects == [.invoke(CommandRequest(device: "gpio:relay", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: command))])
    }

    @Test func brightnessCommandsScaleTo254() {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let effects = m.message(topic: topics.command(ExportTopics.slug("gpio:lamp"), "light"), payload: Array(#"{"state":"ON","brightness":255}"#.utf8), retained: false)
        guard case .invoke(let r)? = effects.first, effects.count == 1 else { Issue.record("\(effects)"); return }
        #expect(r.trait == LevelControlTrait.identifier && r.arguments["Level"] == .int(254))
    }

    @Test(arguments: [
        ("onoff", "MAYBE"), ("onoff", ""), ("light", #"{"brightness":256}"#), ("light", #"{"brightness":-1}"#), ("light", #"{"brightness":12.5}"#),
        ("light", "ON"), ("light", "[1]"), ("light", #"{"state":"MAYBE"}"#), ("light", #"{"color_temp":300}"#), ("light", #"{"color":{"h":10,"s":5}}"#),
        ("light", #"{"effect":"colorloop"}"#), ("light", "{}"), ("light", #"{"brightness":true}"#), ("colour", "red"),
    ])
    func badPayloadsAreRefusedAndCounted(what: String, payload: String) {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        // The lamp is dimmable only: colour commands are refused for it.
        let slug = ExportTopics.slug(what == "light" ? "gpio:lamp" : "gpio:relay")
        let effects = m.message(topic: topics.command(slug, what), payload: Array(payload.utf8), retained: false)
        #expect(effects.count == 1)
        if case .refused = effects.first {} else { Issue.record("not refused: \(effects)") }
        #expect(m.refusedCount == 1)
    }

    @Test func commandsForDevicesNotExportedAreRefused() {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        let effects = m.message(topic: topics.command("gpio_lock_xxxx", "onoff"), payload: Array("ON".utf8), retained: false)
        if case .refused = effects.first {} else { Issue.record("not refused: \(effects)") }
    }

    @Test func anOptedInLockIsExportedAndTakesLockCommands() throws {
        let (core, _) = ExportFixtures.core()
        var m = ExportStateMachine(mapper: ExportMapper(topics: topics))
        _ = m.devices(ExportPolicyHelper.exposed(core, policy: ExposurePolicy(devices: ["gpio:lock"])))
        let out = published(m.connectedToBroker())
        let slug = ExportTopics.slug("gpio:lock")
        let config = ExportFixtures.json(try #require(out[topics.config("lock", "\(slug)_lock")]))
        #expect(config["command_topic"] as? String == topics.command(slug, "lock"))
        #expect(m.message(topic: topics.command(slug, "lock"), payload: Array("UNLOCK".utf8), retained: false)
            == [.invoke(CommandRequest(device: "gpio:lock", deviceType: DoorLockDeviceType.identifier, trait: DoorLockTrait.identifier, command: DoorLockTrait.Command.unlockDoor))])
        if case .refused = m.message(topic: topics.command(slug, "lock"), payload: Array("OPEN".utf8), retained: false).first {} else { Issue.record("OPEN not refused") }
    }

    /// Hostile payloads and topics: thousands of random ones (seeded, so a failure repeats).
    /// None crashes, none but a well-formed command becomes a command, every other command-topic
    /// message is refused and counted.
    @Test func hostilePayloadsNeverCrashAndNeverSlipThrough() {
        var (m, _) = machine()
        _ = m.connectedToBroker()
        var rng = SplitMix(seed: 0x5EED_0019)
        let slugs = [ExportTopics.slug("gpio:relay"), ExportTopics.slug("gpio:lamp"), "nope", "", "+", "#", String(repeating: "a", count: 300)]
        let whats = ["onoff", "light", "set", "", "onoff/set", "\u{0}"]
        let valid: Set<String> = ["ON", "OFF", "TOGGLE"]
        var commandTopicMessages = 0
        var invokes = 0
        for _ in 0..<20000 {
            let length = Int(rng.next() % 80)
            var payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let samples = ["ON", "off", "255", "0", "1e9", "-0", "NaN", "ON\u{0}", "{\"state\":\"ON\"}", "{\"brightness\":99}", "{\"state\":\"OFF\",\"x\":1}", "{\"brightness\":1e999}"]
            if rng.next() % 4 == 0 { payload = Array(samples[Int(rng.next() % UInt64(samples.count))].utf8) }
            let slug = slugs[Int(rng.next() % UInt64(slugs.count))]
            let what = whats[Int(rng.next() % UInt64(whats.count))]
            let topic = "hearth/hearth_a/\(slug)/\(what)/set"
            let isCommandTopic = topics.parseCommand(topic) != nil
            let before = m.refusedCount
            let effects = m.message(topic: topic, payload: payload, retained: rng.next() % 2 == 0)
            if isCommandTopic {
                commandTopicMessages += 1
                #expect(!effects.isEmpty)
                if case .invoke(let r)? = effects.first {
                    invokes += 1
                    #expect(effects.allSatisfy { if case .invoke = $0 { true } else { false } })
                    let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    if what == "onoff" {
                        #expect(r.trait == OnOffTrait.identifier && valid.contains(text.uppercased()))
                    } else {
                        #expect(what == "light" && text.hasPrefix("{"), "\(text)")
                    }
                    #expect(m.refusedCount == before)
                } else {
                    #expect(effects.count == 1)
                    #expect(m.refusedCount == before + 1)
                }
            } else {
                #expect(effects.isEmpty)
            }
        }
        #expect(commandTopicMessages > 2000 && invokes > 20, "the generator reaches both sides (\(commandTopicMessages), \(invokes))")
    }
}

/// A small seeded generator (SplitMix64).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum ExportPolicyHelper {
    static func exposed(_ core: HomeCore, policy: ExposurePolicy = .default) -> [DeviceSnapshot] {
        core.state.devices.values.compactMap { policy.view(of: $0, catalog: core.catalog) }.sorted { $0.id < $1.id }
    }
}

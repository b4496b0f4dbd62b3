import HomeModel
import Synchronization
import Testing

// The expected values below are the Matter specification's (Device Library 1.3, Application
// Cluster Specification), written out by hand: these tests check the generated catalogue
// against the spec, not against its own data file.

@Suite struct CatalogDeviceTypeTests {
    let catalog = Catalog.standard

    @Test(arguments: [
        // (device type, ID, required application traits)
        ("On/Off Light", 0x0100, [0x0003, 0x0004, 0x0006]),
        ("Dimmable Light", 0x0101, [0x0003, 0x0004, 0x0006, 0x0008]),
        ("Color Temperature Light", 0x010C, [0x0003, 0x0004, 0x0006, 0x0008, 0x0300]),
        ("Extended Color Light", 0x010D, [0x0003, 0x0004, 0x0006, 0x0008, 0x0300]),
        ("On/Off Plug-in Unit", 0x010A, [0x0003, 0x0004, 0x0006]),
        ("Generic Switch", 0x000F, [0x0003, 0x003B]),
        ("Contact Sensor", 0x0015, [0x0003, 0x0045]),
        ("Occupancy Sensor", 0x0107, [0x0003, 0x0406]),
        ("Temperature Sensor", 0x0302, [0x0003, 0x0402]),
        ("Humidity Sensor", 0x0307, [0x0003, 0x0405]),
        ("Light Sensor", 0x0106, [0x0003, 0x0400]),
        ("Water Leak Detector", 0x0043, [0x0003, 0x0045]),
        ("Smoke CO Alarm", 0x0076, [0x0003, 0x005C]),
        ("Door Lock", 0x000A, [0x0003, 0x0101]),
        ("Thermostat", 0x0301, [0x0003, 0x0201]),
        ("Bridged Node", 0x0013, [0x0039]),
    ] as [(String, UInt32, [UInt32])])
    func deviceTypeRequiresItsTraits(name: String, id: UInt32, required: [UInt32]) throws {
        let type = try #require(catalog.deviceType(DeviceTypeID(id)), "\(name) missing")
        #expect(type.name == name)
        #expect(catalog.deviceType(named: name)?.id == DeviceTypeID(id))
        // The Base Device Type puts Descriptor (0x001D) on every endpoint.
        let expected = Set((required + [0x001D]).map(TraitID.init))
        #expect(Set(type.requiredTraits) == expected)
    }

    @Test func onOffLightMayAddLevelControl() throws {
        let light = try #require(catalog.deviceType(0x0100))
        #expect(light.optionalTraits.contains(0x0008))
        #expect(light.revision == 3)
        #expect(light.deviceClass == "simple")
    }

    @Test func contactSensorMayAddBooleanStateConfiguration() throws {
        let sensor = try #require(catalog.deviceType(0x0015))
        #expect(sensor.optionalTraits == [0x0080])
    }

    @Test func everyDeviceTypeOfTheBriefIsThere() {
        let ids: [UInt32] = [
            0x000E, 0x0013, 0x0100, 0x0101, 0x010C, 0x010D, 0x010A, 0x010B, 0x0103, 0x000F, 0x0015, 0x0107, 0x0302,
            0x0307, 0x0106, 0x0305, 0x0306, 0x0043, 0x0044, 0x0041, 0x0076, 0x002C, 0x002B, 0x0202, 0x000A, 0x0301,
        ]
        for id in ids { #expect(catalog.deviceType(DeviceTypeID(id)) != nil, "device type \(DeviceTypeID(id)) missing") }
    }

    @Test func everyTraitADeviceTypeNamesIsInTheCatalogue() {
        for type in catalog.sortedDeviceTypes {
            for trait in type.requiredTraits + type.optionalTraits {
                #expect(catalog.trait(trait) != nil, "\(type.name) names \(trait), which the catalogue lacks")
            }
        }
    }

    @Test func locksCoveringsAndAlarmsAreSensitive() {
        let sensitive = catalog.sortedDeviceTypes.filter(\.isSensitive).map(\.id)
        #expect(sensitive == [0x000A, 0x0076, 0x0202])
    }

    @Test func typedDeviceTypesCarryTheSpecIDs() {
        #expect(OnOffLightDeviceType.identifier == 0x0100)
        #expect(DimmableLightDeviceType.identifier == 0x0101)
        #expect(OnOffPlugInUnitDeviceType.identifier == 0x010A)
        #expect(DimmablePlugInUnitDeviceType.identifier == 0x010B)
        #expect(ContactSensorDeviceType.identifier == 0x0015)
        #expect(GenericSwitchDeviceType.identifier == 0x000F)
        #expect(TemperatureSensorDeviceType.identifier == 0x0302)
        #expect(OnOffLightDeviceType.requiredTraits.contains(OnOffTrait.identifier))
    }
}

@Suite struct CatalogTraitTests {
    let catalog = Catalog.standard

    @Test(arguments: [
        ("Identify", 0x0003), ("Groups", 0x0004), ("On/Off", 0x0006), ("Level Control", 0x0008),
        ("Descriptor", 0x001D), ("Basic Information", 0x0028), ("Power Source", 0x002F),
        ("Bridged Device Basic Information", 0x0039), ("Switch", 0x003B), ("Boolean State", 0x0045),
        ("Air Quality", 0x005B), ("Smoke CO Alarm", 0x005C), ("Boolean State Configuration", 0x0080),
        ("Door Lock", 0x0101), ("Window Covering", 0x0102), ("Thermostat", 0x0201), ("Fan Control", 0x0202),
        ("Color Control", 0x0300), ("Illuminance Measurement", 0x0400), ("Temperature Measurement", 0x0402),
        ("Pressure Measurement", 0x0403), ("Flow Measurement", 0x0404), ("Relative Humidity Measurement", 0x0405),
        ("Occupancy Sensing", 0x0406),
    ] as [(String, UInt32)])
    func traitHasItsSpecID(name: String, id: UInt32) {
        #expect(catalog.trait(named: name)?.id == TraitID(id))
    }

    @Test func temperatureMeasuredValueIsNullableInt16InHundredthsOfADegree() throws {
        let trait = try #require(catalog.trait(0x0402))
        let value = try #require(trait.attribute(0x0000))
        #expect(value.name == "MeasuredValue")
        #expect(value.swiftName == "measuredValue")
        #expect(value.type == .int16)
        #expect(value.specType == "temperature")
        #expect(value.nullable)
        #expect(!value.writable)
        #expect(value.unit == "0.01 °C")
        #expect(value.conformance == .mandatory)
        #expect(value.allowedRange == -27315...32767)
    }

    @Test(arguments: [
        (0x0405, "0.01 %"), (0x0403, "kPa/10"), (0x0404, "0.1 m³/h"), (0x0400, "10000×log10(lux)+1"),
    ] as [(UInt32, String)])
    func measuredValueUnitIsTheSpecs(trait id: UInt32, unit: String) throws {
        let value = try #require(catalog.trait(TraitID(id))?.attribute(named: "MeasuredValue"))
        #expect(value.unit == unit)
        #expect(value.nullable)
    }

    @Test func humidityIsAtMostOneHundredPercent() throws {
        let value = try #require(catalog.trait(0x0405)?.attribute(0x0000))
        #expect(value.type == .uint16)
        #expect(value.allowedRange == 0...10_000)
    }

    @Test func levelControlCurrentLevelIsALevelWithoutUnit() throws {
        let trait = try #require(catalog.trait(0x0008))
        let level = try #require(trait.attribute(named: "CurrentLevel"))
        #expect(level.id == 0x0000)
        #expect(level.type == .uint8)
        #expect(level.nullable)
        #expect(level.unit == nil)
        #expect(level.allowedRange == 0...254)
        #expect(trait.features.map(\.code) == ["OO", "LT", "FQ"])
    }

    @Test func colourTemperatureIsInMireds() throws {
        let value = try #require(catalog.trait(0x0300)?.attribute(named: "ColorTemperatureMireds"))
        #expect(value.id == 0x0007)
        #expect(value.unit == "mireds")
        #expect(value.conformanceExpression == "CT")
        #expect(value.conformance == .conditional)
    }

    @Test func onOffCommands() throws {
        let trait = try #require(catalog.trait(0x0006))
        #expect(trait.command(named: "Off")?.id == 0x00)
        #expect(trait.command(named: "On")?.id == 0x01)
        #expect(trait.command(named: "Toggle")?.id == 0x02)
        #expect(trait.command(named: "OnWithTimedOff")?.id == 0x42)
        #expect(trait.attribute(named: "OnOff")?.type == .bool)
    }

    @Test func moveToLevelWithOnOffTakesTheFieldsOfMoveToLevel() throws {
        let trait = try #require(catalog.trait(0x0008))
        let plain = try #require(trait.command(0x00))
        let coupled = try #require(trait.command(0x04))
        #expect(coupled.name == "MoveToLevelWithOnOff")
        #expect(coupled.fields.map(\.name) == ["Level", "TransitionTime", "OptionsMask", "OptionsOverride"])
        #expect(coupled.fields == plain.fields)
    }

    @Test func switchHasAllItsEvents() throws {
        let trait = try #require(catalog.trait(0x003B))
        let events = trait.events.map { ($0.id.rawValue, $0.name) }
        let expected: [(UInt32, String)] = [
            (0x00, "SwitchLatched"), (0x01, "InitialPress"), (0x02, "LongPress"), (0x03, "ShortRelease"),
            (0x04, "LongRelease"), (0x05, "MultiPressOngoing"), (0x06, "MultiPressComplete"),
        ]
        #expect(events.map(\.0) == expected.map(\.0))
        #expect(events.map(\.1) == expected.map(\.1))
        let complete = try #require(trait.event(named: "MultiPressComplete"))
        #expect(complete.fields.map(\.name) == ["PreviousPosition", "TotalNumberOfPressesCounted"])
        #expect(trait.features.map(\.code).prefix(5) == ["LS", "MS", "MSR", "MSL", "MSM"])
        #expect(SwitchTrait.Event.initialPress == 0x01)
        #expect(SwitchTrait.Event.multiPressComplete == 0x06)
    }

    @Test func booleanStateReportsStateChange() throws {
        let trait = try #require(catalog.trait(0x0045))
        #expect(trait.attribute(0x0000)?.name == "StateValue")
        #expect(trait.event(0x00)?.name == "StateChange")
        #expect(BooleanStateTrait.Attribute.stateValue == 0x0000)
    }

    @Test func occupancyIsABitmap() throws {
        let occupancy = try #require(catalog.trait(0x0406)?.attribute(0x0000))
        #expect(occupancy.type == .bitmap8)
        #expect(occupancy.items == [EnumItem(name: "Occupied", value: 1)])
    }

    @Test func everyTraitListsItsAttributesCommandsAndEventsOnceInIDOrder() {
        for trait in catalog.sortedTraits {
            let attributes = trait.attributes.map(\.id)
            #expect(attributes == attributes.sorted() && Set(attributes).count == attributes.count, "\(trait.name)")
            let commands = trait.commands.map(\.id)
            #expect(commands == commands.sorted() && Set(commands).count == commands.count, "\(trait.name)")
            #expect(trait.swiftName.hasSuffix("Trait"))
        }
    }
}

@Suite struct CatalogValidationTests {
    let levelControl = Catalog.standard.trait(0x0008)!

    @Test func currentLevel255IsRefusedNamingTheAttributeAndRange() throws {
        let currentLevel = try #require(levelControl.attribute(0x0000))
        let error = #expect(throws: HomeError.self) { try currentLevel.validate(.int(255), in: levelControl) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("CurrentLevel") == true)
        #expect(error?.message.contains("0…254") == true)
        #expect(error?.message.contains("255") == true)
    }

    @Test func currentLevelAcceptsTheLevelRangeAndNull() throws {
        let currentLevel = try #require(levelControl.attribute(0x0000))
        for value: Value in [0, 1, 127, 254, nil] {
            #expect(throws: Never.self) { try currentLevel.validate(value, in: levelControl) }
        }
    }

    @Test func temperatureBelowAbsoluteZeroIsRefused() throws {
        let trait = try #require(Catalog.standard.trait(0x0402))
        let measured = try #require(trait.attribute(0x0000))
        let error = #expect(throws: HomeError.self) { try measured.validate(.int(-27316), in: trait) }
        #expect(error?.message.contains("MeasuredValue") == true)
        #expect(throws: Never.self) { try measured.validate(.int(2150), in: trait) }
    }

    @Test func moveToLevelRefusesLevel255() throws {
        let command = try #require(levelControl.command(named: "moveToLevel"))
        let error = #expect(throws: HomeError.self) {
            _ = try command.validate(
                arguments: ["level": 255, "transitionTime": nil, "optionsMask": 0, "optionsOverride": 0], trait: levelControl)
        }
        #expect(error?.message.contains("Level") == true)
        let valid = try command.validate(
            arguments: ["level": 128, "transitionTime": 10, "optionsMask": 0, "optionsOverride": 0], trait: levelControl)
        #expect(valid["Level"] == 128)
    }

    @Test func enumValuesOutsideTheSpecAreRefused() throws {
        let onOff = try #require(Catalog.standard.trait(0x0006))
        let startUp = try #require(onOff.attribute(named: "StartUpOnOff"))
        #expect(startUp.items.map(\.name) == ["Off", "On", "Toggle"])
        #expect(throws: Never.self) { try startUp.validate(.int(2), in: onOff) }
        #expect(throws: HomeError.self) { try startUp.validate(.int(3), in: onOff) }
    }
}

@Suite struct TypedTraitTests {
    private func light(onOff: Value?, level: Value?, backend: (any HomeBackend)? = nil) -> OnOffLightDeviceType {
        var traits: [TraitID: TraitState] = [
            OnOffTrait.identifier: TraitState(id: OnOffTrait.identifier, attributes: onOff.map { [OnOffTrait.Attribute.onOff: $0] } ?? [:])
        ]
        if let level {
            traits[LevelControlTrait.identifier] = TraitState(
                id: LevelControlTrait.identifier, attributes: [LevelControlTrait.Attribute.currentLevel: level])
        }
        let state = DeviceTypeState(id: OnOffLightDeviceType.identifier, isPrimary: true, traits: traits)
        return OnOffLightDeviceType(
            state: state, binding: TraitBinding(device: "test:light", deviceType: OnOffLightDeviceType.identifier, backend: backend))
    }

    @Test func onOffReadsThroughMatterTraits() {
        let on = light(onOff: true, level: nil)
        #expect(on.matterTraits.onOffTrait?.attributes.onOff == true)
        #expect(on.matterTraits.levelControlTrait == nil)
        #expect(on.matterTraits.booleanStateTrait == nil)
        #expect(light(onOff: false, level: nil).matterTraits.onOffTrait?.attributes.onOff == false)
        #expect(light(onOff: nil, level: nil).matterTraits.onOffTrait?.attributes.onOff == nil)
    }

    @Test func integerAttributesReadAsTheirFixedWidthType() {
        let dimmed = light(onOff: true, level: 200)
        let level: UInt8? = dimmed.matterTraits.levelControlTrait?.attributes.currentLevel
        #expect(level == 200)
        // Null and values that do not fit the type read as nil.
        #expect(light(onOff: true, level: .null).matterTraits.levelControlTrait?.attributes.currentLevel == nil)
        #expect(light(onOff: true, level: 300).matterTraits.levelControlTrait?.attributes.currentLevel == nil)
    }

    @Test func temperatureReadsAsInt16() {
        let state = DeviceTypeState(
            id: TemperatureSensorDeviceType.identifier, isPrimary: true,
            traits: [0x0402: TraitState(id: 0x0402, attributes: [0x0000: -1250])])
        let sensor = TemperatureSensorDeviceType(
            state: state, binding: TraitBinding(device: "test:t", deviceType: 0x0302, backend: nil))
        let celsius: Int16? = sensor.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue
        #expect(celsius == -1250)
        #expect(sensor.traits[TemperatureMeasurementTrait.self]?.attributes.measuredValue == -1250)
    }

    @Test func commandsSendSpecFieldNames() async throws {
        let backend = RecordingBackend()
        let dimmable = light(onOff: false, level: 1, backend: backend)
        try await dimmable.matterTraits.onOffTrait?.toggle()
        try await dimmable.matterTraits.levelControlTrait?.moveToLevel(level: 128, transitionTime: nil)
        try await dimmable.matterTraits.levelControlTrait?.moveToLevelWithOnOff(level: 10, transitionTime: 5)

        let sent = backend.requests
        #expect(sent.count == 3)
        #expect(sent[0].trait == 0x0006 && sent[0].command == 0x02 && sent[0].arguments.isEmpty)
        #expect(sent[1].trait == 0x0008 && sent[1].command == 0x00)
        #expect(sent[1].arguments == ["Level": 128, "TransitionTime": .null, "OptionsMask": 0, "OptionsOverride": 0])
        #expect(sent[2].command == 0x04)
        #expect(sent[2].arguments["TransitionTime"] == 5)
        #expect(sent.allSatisfy { $0.device == "test:light" && $0.deviceType == 0x0100 })
    }

    @Test func detachedTraitsRefuseCommands() async {
        let detached = light(onOff: true, level: nil)
        await #expect(throws: HomeError.self) { try await detached.matterTraits.onOffTrait?.off() }
    }
}

@Suite struct UnitsTests {
    @Test func temperature() {
        #expect(Units.temperatureValue(celsius: 21.5) == 2150)
        #expect(Units.temperatureValue(celsius: -12.344) == -1234)
        #expect(Units.celsius(temperatureValue: 2150) == 21.5)
        #expect(Units.temperatureValue(celsius: -300) == -27315)
        #expect(Units.temperatureValue(celsius: 400) == 32767)
        for centi: Int16 in [-27315, -1, 0, 1, 2150, 32767] {
            #expect(Units.temperatureValue(celsius: Units.celsius(temperatureValue: centi)) == centi)
        }
    }

    @Test func humidity() {
        #expect(Units.humidityValue(percent: 45.67) == 4567)
        #expect(Units.percent(humidityValue: 10_000) == 100)
        #expect(Units.humidityValue(percent: 120) == 10_000)
        #expect(Units.humidityValue(percent: -3) == 0)
    }

    @Test func illuminance() {
        #expect(Units.illuminanceValue(lux: 1) == 1)
        #expect(Units.illuminanceValue(lux: 10) == 10_001)
        #expect(Units.illuminanceValue(lux: 1000) == 30_001)
        #expect(Units.illuminanceValue(lux: 0.5) == 0)
        #expect(Units.illuminanceValue(lux: 0) == 0)
        #expect(Units.illuminanceValue(lux: 1e9) == 0xFFFE)
        #expect(Units.lux(illuminanceValue: 0) == 0)
        #expect(abs(Units.lux(illuminanceValue: 20_001) - 100) < 1e-9)
        for lux in [1.0, 3.5, 250, 10_000, 100_000] {
            let back = Units.lux(illuminanceValue: Units.illuminanceValue(lux: lux))
            #expect(abs(back - lux) / lux < 0.0002, "lux \(lux) came back as \(back)")
        }
    }

    @Test func pressure() {
        #expect(Units.pressureValue(kilopascals: 101.325) == 1013)
        #expect(Units.pressureValue(hectopascals: 1013.25) == 1013)
        #expect(Units.kilopascals(pressureValue: 1013) == 101.3)
        #expect(Units.hectopascals(pressureValue: 1013) == 1013)
    }

    @Test func flow() {
        #expect(Units.flowValue(cubicMetresPerHour: 1.26) == 13)
        #expect(Units.cubicMetresPerHour(flowValue: 13) == 1.3)
    }

    @Test func brightnessAndLevel() {
        #expect(Units.level(brightness: 0) == 1)
        #expect(Units.level(brightness: 255) == 254)
        #expect(Units.brightness(level: 1) == 0)
        #expect(Units.brightness(level: 254) == 255)
        #expect(Units.brightness(level: 0) == 0)
        #expect(Units.brightness(level: 255) == 255)
        for level in UInt8(1)...254 {
            #expect(Units.level(brightness: Units.brightness(level: level)) == level)
        }
        for brightness in UInt8.min...UInt8.max {
            let level = Units.level(brightness: brightness)
            #expect((1...254).contains(level))
        }
    }

    @Test func miredsAndKelvin() {
        #expect(Units.mireds(kelvin: 4000) == 250)
        #expect(Units.mireds(kelvin: 2700) == 370)
        #expect(Units.kelvin(mireds: 250) == 4000)
        #expect(Units.mireds(kelvin: 0) == 0xFEFF)
        #expect(Units.mireds(kelvin: 10_000_000) == 1)
        for mireds: UInt16 in [153, 250, 370, 500] {
            #expect(Units.mireds(kelvin: Units.kelvin(mireds: mireds)) == mireds)
        }
    }

    @Test func percent100ths() {
        #expect(Units.percent100ths(percent: 12.34) == 1234)
        #expect(Units.percent(percent100ths: 5000) == 50)
        #expect(Units.percent100ths(percent: 150) == 10_000)
        for value: UInt16 in [0, 1, 5000, 9999, 10_000] {
            #expect(Units.percent100ths(percent: Units.percent(percent100ths: value)) == value)
        }
    }
}

/// A backend that records the commands it is sent.
private final class RecordingBackend: HomeBackend {
    private let sent = Mutex<[CommandRequest]>([])

    var requests: [CommandRequest] { sent.withLock { $0 } }

    func invoke(_ request: CommandRequest) async throws -> Value {
        sent.withLock { $0.append(request) }
        return .null
    }

    func write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) async throws {}

    func deviceUpdates(_ id: DeviceID) -> AsyncStream<DeviceSnapshot> { AsyncStream { $0.finish() } }

    func setName(device: DeviceID, name: String) async throws -> DeviceSnapshot {
        throw HomeError.unsupportedOperation("not in this test")
    }
}

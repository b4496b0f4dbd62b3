import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle
import TestSupport
import Testing

/// What an app writes to read the Demo plugin's vendor trait, as the seed does:
/// `deviceType.traits[ExampleOrganization.SpinnerTrait.self]`.
enum ExampleOrganization {
    struct SpinnerTrait: HomeModel.Trait {
        static let identifier: TraitID = 0xFFF1_FC01
        let state: TraitState
        let binding: TraitBinding
        init(state: TraitState, binding: TraitBinding) {
            self.state = state
            self.binding = binding
        }

        struct Attributes {
            let state: TraitState
            var rpm: UInt16? { state.attributes[0x0000]?.intValue.flatMap { UInt16(exactly: $0) } }
        }
        var attributes: Attributes { Attributes(state: state) }

        func spin(rpm: Int64) async throws { try await binding.invoke(Self.identifier, 0x00, ["RPM": .int(rpm)]) }
    }
}

/// A plugin's own traits, with the real Demo `.so`: declared through DriverAPI, added to the
/// running catalogue, validated, named with their units, and controlled in strict mode.
@Suite(.serialized) struct VendorTraitTests {
    @Test func demoSpinnerTrait_isInTheCatalogue_readTyped_andControlledInStrictMode() async throws {
        let loaded = try PluginLoader.load(BuildProducts.path("DemoPlugin"))
        let core = HomeCore(strictOperationValidation: true)
        #expect(core.catalog.trait(ExampleOrganization.SpinnerTrait.identifier) == nil, "not before the plugin is planned")
        let config = PluginConfiguration(value: ["interval": 0.05, "room": "Living Room"], file: "test.yaml", keyPath: "plugins.demo")
        let service = PluginService(loaded, core: core, configuration: config, clock: ContinuousClock(), logger: Logger(label: "test"))
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        let run = Task { try await group.run() }
        defer { run.cancel() }
        let home = core.home(for: .system)
        let id: DeviceID = "demo:lamp"
        let lamp = try #require(
            await within(20, "the demo lamp") { () async -> HomeDevice? in
                for await set in home.devices().batched() {
                    if let d = set.first(where: { $0.id == id }) { return d }
                }
                return nil
            })

        let descriptor = try #require(core.catalog.trait(ExampleOrganization.SpinnerTrait.identifier))
        #expect(descriptor.qualifiedName == "ExampleOrganization.SpinnerTrait")
        #expect(descriptor.attribute(0x0000)?.unit == "rpm")
        #expect(core.catalog.trait(named: "Spinner")?.id == descriptor.id)

        // The seed's read, and a command in strict mode.
        let deviceType = await lamp.types.get(OnOffLightDeviceType.self)
        let spinner = try #require(deviceType?.traits[ExampleOrganization.SpinnerTrait.self])
        #expect(spinner.attributes.rpm == 0)
        #expect(deviceType?.traits.contains(ExampleOrganization.SpinnerTrait.self) == true)
        try await spinner.spin(rpm: 1200)
        let spun = try await within(20, "the spinner at 1200 rpm") { () async -> UInt16? in
            for await d in home.device(id: id) {
                if let rpm = d.types.current(OnOffLightDeviceType.self)?.traits[ExampleOrganization.SpinnerTrait.self]?.attributes.rpm,
                    rpm == 1200
                {
                    return rpm
                }
            }
            return nil
        }
        #expect(spun == 1200)
        // Strict validation knows the declared range: refused before the plugin sees it.
        await #expect(throws: HomeError.invalidArgument("field RPM of command Spinner.Spin is 5000, outside the allowed range 0…3000")) {
            try await spinner.spin(rpm: 5000)
        }

        // Identity: the demo's BasicInformation.
        let info = try #require(lamp.types.current(OnOffLightDeviceType.self)?.matterTraits.basicInformationTrait)
        #expect(info.attributes.vendorName == "Hearth")
        #expect(info.attributes.vendorID == 0xFFF1)
        #expect(info.attributes.productID == 0x8002)
        #expect(info.attributes.serialNumber == "DEMO-LAMP-0001")
        #expect(info.attributes.uniqueID == "hearth-demo-lamp")

        // Identify: the demo counts IdentifyTime down (what makes the web tile flash).
        _ = try await home.invoke(
            CommandRequest(device: id, deviceType: OnOffLightDeviceType.identifier, trait: IdentifyTrait.identifier,
                           command: IdentifyTrait.Command.identify, arguments: ["IdentifyTime": .int(2)]))
        for expected: Int64 in [2, 0] {
            let seen = try await within(20, "IdentifyTime \(expected)") { () async -> Int64? in
                for await d in home.device(id: id) {
                    let t = d.snapshot.type(OnOffLightDeviceType.identifier)?.traits[IdentifyTrait.identifier]?.attributes[IdentifyTrait.Attribute.identifyTime]?.intValue
                    if t == expected { return t }
                }
                return nil
            }
            #expect(seen == expected)
        }
    }

    @Test func aDeclarationTheHostRefuses_keepsThePluginFromStarting() throws {
        let bad = TraitDescriptor.vendor(namespace: "Acme", id: 0x0006, name: "Not Vendor")
        #expect(throws: HomeError.self) { try Catalog.standard.adding(vendorTraits: [bad]) }
        let good = TraitDescriptor.vendor(namespace: "Acme", id: 0xFFF1_FC10, name: "Pump", attributes: [.vendor(id: 0, name: "Duty", type: .uint8, maximum: 100, unit: "%")])
        let clash = TraitDescriptor.vendor(namespace: "Other", id: 0xFFF1_FC10, name: "Pump")
        let core = HomeCore()
        try core.addVendorTraits([good], from: "a")
        try core.addVendorTraits([good], from: "a")  // a restart declares it again
        #expect(throws: HomeError.conflict("plugin b: vendor trait Other.PumpTrait (0xFFF1FC10): the ID is taken by Acme.PumpTrait")) {
            try core.addVendorTraits([clash], from: "b")
        }
        #expect(core.catalog.trait(0xFFF1_FC10)?.namespace == "Acme")
    }

    static func device(_ core: HomeCore, _ local: String) -> DeviceSnapshot? {
        let id = DeviceID(plugin: "p", local: local)
        return core.state.devices.first { $0.key == id }?.value
    }

    /// What `publish` accepts, a later `report` accepts, and vice versa: one rule for both.
    @Test func publishAndReport_acceptAndRefuseTheSameValues() async throws {
        let pump = TraitDescriptor.vendor(namespace: "Acme", id: 0xFFF1_FC11, name: "Pump", attributes: [.vendor(id: 0, name: "Duty", type: .uint8, maximum: 100, unit: "%")])
        let core = HomeCore()
        try core.addVendorTraits([pump], from: "p")
        let context = core.context(for: "p", configuration: PluginConfiguration(value: .object([:]), file: "t.yaml", keyPath: "plugins.p"))
        let cases: [(TraitID, AttributeID, Value, Bool)] = [
            (pump.id, 0, .int(50), true),
            (pump.id, 0, .int(101), false),
            (pump.id, 0x0007, .int(1), false),  // not declared
            (OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true), true),
            (OnOffTrait.identifier, 0x0099, .int(1), false),  // not an On/Off attribute
            (OnOffTrait.identifier, 0xF001, .int(1), true),  // manufacturer-specific rides along
        ]
        for (i, (trait, attribute, value, accepted)) in cases.enumerated() {
            let local = "d\(i)"
            context.publish(
                DeviceDescription(
                    localID: local, name: "Device", types: [DeviceTypeDescription(id: OnOffLightDeviceType.identifier, traits: [trait: [attribute: value]])]))
            let published = Self.device(core, local)?.type(OnOffLightDeviceType.identifier)?.traits[trait]?.attributes[attribute]
            #expect((published == value) == accepted, "publish of \(value) to \(trait.hex)/\(attribute.hex)")
            context.publish(
                DeviceDescription(
                    localID: local + "r", name: "Device", types: [DeviceTypeDescription(id: OnOffLightDeviceType.identifier, traits: [trait: [:]])]))
            context.report(local + "r", trait, attribute, value)
            let reported = Self.device(core, local + "r")?.type(OnOffLightDeviceType.identifier)?.traits[trait]?.attributes[attribute]
            #expect((reported == value) == accepted, "report of \(value) to \(trait.hex)/\(attribute.hex)")
        }
    }
}

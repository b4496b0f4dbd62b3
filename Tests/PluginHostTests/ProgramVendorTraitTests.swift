import DriverAPI
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

/// A program plugin (any language) declares vendor traits in its `hello`, as a `.so` plugin does
/// in `DriverPlugin.vendorTraits`: the host adds them to the running catalogue before the
/// program's devices arrive, strict validation knows them, and commands to them reach the
/// program. A declaration the catalogue refuses refuses the plugin, naming why.
@Suite(.timeLimit(.minutes(1))) struct ProgramVendorTraitTests {
    static let fan = TraitID(0xFFF1_FC10)

    @Test(.enabled(if: ForeignPluginTests.hasPython, "python3 is not installed"))
    func pythonPlugin_declaresAVendorTrait_inItsHello_andCommandsToItWork() async throws {
        let core = HomeCore(strictOperationValidation: true)
        #expect(core.catalog.trait(Self.fan) == nil)
        let plan = PluginSetup.plan(
            directories: [], sections: ["pylamp": section("pylamp", ["executable": .string(ForeignPluginTests.script)])],
            core: core, clock: ContinuousClock(), hearthd: hearthd, childEnvironment: childEnvironment, logger: testLogger)
        let lamp = DeviceID(plugin: "pylamp", local: "lamp")
        try await withServices(plan.services) {
            let device = await waitForDevice(core, lamp) { connectivity($0) == .online }
            let trait = try #require(core.catalog.trait(Self.fan), "the hello's trait is in the running catalogue")
            #expect(trait.qualifiedName == "PythonExample.FanTrait" && trait.isVendor)
            #expect(trait.attributes.first?.unit == "%" && trait.attributes.first?.maximum == 100)
            #expect(trait.commands.first?.swiftName == "setSpeed")
            #expect(device?.types.first?.traits[Self.fan]?.attributes[AttributeID(0)] == .int(0), "the device carries it")

            let home = core.home(for: .system)
            let setSpeed = { (percent: Int64) in
                CommandRequest(
                    device: lamp, deviceType: OnOffLightDeviceType.identifier, trait: Self.fan, command: CommandID(0),
                    arguments: ["Percent": .int(percent)])
            }
            _ = try await home.invoke(setSpeed(40))
            let spun = await waitForDevice(core, lamp) { $0.types.first?.traits[Self.fan]?.attributes[AttributeID(0)] == .int(40) }
            #expect(spun != nil, "the program got the command and reported the new speed")
            // Strict validation checks the declared range before anything reaches the program.
            await #expect(throws: HomeError.self) { try await home.invoke(setSpeed(150)) }
            #expect(core.catalog.trait(Self.fan)?.attributes.count == 1)
        }
    }

    @Test(.enabled(if: ForeignPluginTests.hasPython, "python3 is not installed"))
    func aVendorTraitOutsideTheManufacturerRange_refusesTheProgram() async throws {
        let core = HomeCore()
        var environment = childEnvironment
        environment["PYLAMP_FAN_TRAIT_ID"] = "0x0006"  // On/Off's ID: not a vendor's
        let plan = PluginSetup.plan(
            directories: [], sections: ["pylamp": section("pylamp", ["executable": .string(ForeignPluginTests.script)])],
            core: core, clock: ContinuousClock(), hearthd: hearthd, childEnvironment: environment, logger: testLogger)
        let service = try #require(plan.services.first)
        try await withServices(plan.services) {
            let s = await service.waitForStatus { $0.lastError?.contains("manufacturer-specific") == true }
            #expect(s != nil)
            #expect(core.catalog.trait(TraitID(0x0006))?.isVendor == false, "On/Off stays as it is")
        }
    }

    /// The wire format on its own: defaults, and errors that say where.
    @Test func wire_readsADeclaration_andNamesWhatIsWrong() throws {
        let traits = try PluginWire.vendorTraits(
            [["namespace": "Acme", "id": "0xFFF1FC20", "name": "Pump Duty",
              "attributes": [["id": 0, "name": "Duty", "type": "uint8", "maximum": 100, "unit": "%", "writable": true]],
              "events": [["id": "0x01", "name": "Dry Run", "fields": [["name": "Seconds", "type": "uint16"]]]]]])
        let t = try #require(traits.first)
        #expect(t.qualifiedName == "Acme.PumpDutyTrait" && t.attributes.first?.writable == true && t.events.first?.fields.count == 1)
        #expect(try PluginWire.vendorTraits(nil).isEmpty)
        #expect(throws: PluginWire.FormatError.self) {
            try PluginWire.vendorTraits([["namespace": "Acme", "id": 1, "name": "X", "attributes": [["id": 0, "name": "A", "type": "list"]]]])
        }
        do {
            _ = try PluginWire.vendorTraits([["namespace": "Acme", "name": "X"]])
            Issue.record("a trait without an ID was read")
        } catch {
            #expect(error.message.hasPrefix("hello.vendorTraits[0].id"), "\(error.message)")
        }
    }
}

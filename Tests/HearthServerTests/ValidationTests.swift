import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Synchronization
import Testing

/// `strictOperationValidation`: strict refuses what the catalogue says a device cannot do
/// before a driver sees it; lenient sends it and reports the driver's error.
@Suite struct ValidationTests {
    static let unknownCommand = #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"0x00FF"}"#
    static let missingTrait = #"{"device":"test:lamp","type":"OnOffLight","trait":"LevelControl","command":"moveToLevel","args":{"level":10}}"#

    @Test func strict_refusesUnsupportedCommandsAndTraits_beforeTheDriver() async throws {
        try await TestHome.inProcess(strict: true) { home in
            let member = try home.memberToken()
            let command = try await home.call("POST", "commands", token: member, body: Self.unknownCommand)
            #expect(command.status == 422, "\(command.text)")
            #expect(command.errorCode == "unsupportedOperation")
            let trait = try await home.call("POST", "commands", token: member, body: Self.missingTrait)
            #expect(trait.status == 422, "\(trait.text)")
            #expect(trait.errorCode == "unsupportedOperation")
            #expect(home.driver.seen.withLock { $0.isEmpty }, "nothing reached the driver")
        }
    }

    @Test func lenient_sendsTheCommand_andReportsTheDriversError() async throws {
        try await TestHome.inProcess(strict: false) { home in
            let member = try home.memberToken()
            let r = try await home.call("POST", "commands", token: member, body: Self.unknownCommand)
            #expect(r.status == 502, "\(r.text)")
            #expect(r.errorCode == "driverError")
            #expect(r.json["error"]?["message"]?.stringValue?.contains("0x00FF") == true)
            #expect(home.driver.seen.withLock { $0.map(\.command) } == [CommandID(0xFF)])
        }
    }

    @Test func strict_checksArgumentsAndAttributeWrites() async throws {
        try await TestHome.inProcess(strict: true) { home in
            let member = try home.memberToken()
            let readOnly = try await home.call(
                "POST", "attributes", token: member,
                body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","attribute":"onOff","value":true}"#)
            #expect(readOnly.status == 422, "\(readOnly.text)")
            #expect(readOnly.errorCode == "unsupportedOperation")
            let writable = try await home.call(
                "POST", "attributes", token: member,
                body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","attribute":"onTime","value":300}"#)
            #expect(writable.status == 204, "\(writable.text)")
            let unknownName = try await home.call(
                "POST", "commands", token: member, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"explode"}"#)
            #expect(unknownName.status == 422)
            #expect(unknownName.json["error"]?["message"]?.stringValue?.contains("toggle") == true, "the message lists the commands it has")
        }
    }

    @Test func offlineDevice_orStoppedPlugin_isDeviceOffline() async throws {
        try await TestHome.inProcess { home in
            let member = try home.memberToken()
            let on = #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on"}"#
            home.driver.context.setConnectivity(.offline, device: "lamp")
            let offline = try await home.call("POST", "commands", token: member, body: on)
            #expect(offline.status == 503, "\(offline.text)")
            #expect(offline.errorCode == "deviceOffline")

            home.driver.context.setConnectivity(.online, device: "lamp")
            home.core.setCommandHandler(nil, for: "test")
            let stopped = try await home.call("POST", "commands", token: member, body: on)
            #expect(stopped.status == 503)
            #expect(stopped.json["error"]?["message"]?.stringValue?.contains("not running") == true, "\(stopped.text)")
        }
    }
}


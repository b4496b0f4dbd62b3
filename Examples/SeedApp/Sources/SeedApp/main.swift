// The seed documents' snippets (Google Home APIs for iOS: connecting, devices, observing with
// Combine), run against hearthd. Where Swift needs it, a snippet is adapted and says how.
//
//     swift run --package-path Examples/SeedApp SeedApp http://127.0.0.1:8080
//
// It asks for access (an admin approves it: `hearth grants approve <id>`), lists the devices,
// observes them with publishers, toggles the lamp, and disconnects.
import Foundation
import HearthClient
import HomeCombine
import HomeModel
import OpenCombine

/// One line on standard output, unbuffered (the tests read it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The first element of `stream` within `seconds`; the app fails when none comes.
func first<T: Sendable>(_ what: String, of stream: AsyncStream<T>, within seconds: Int = 30) async -> T {
    let value = await withTaskGroup(of: T?.self) { group in
        group.addTask {
            var it = stream.makeAsyncIterator()
            return await it.next()
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let value = await group.next() ?? nil
        group.cancelAll()
        return value
    }
    guard let value else {
        say("FAILED: no \(what) within \(seconds) s")
        exit(1)
    }
    return value
}

guard CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]) else {
    say("usage: SeedApp <hearthd URL>")
    exit(2)
}

await runApp(url)

/// The app (not on the main actor: the publishers deliver on their own tasks, as Combine does
/// without `receive(on:)`).
func runApp(_ url: URL) async {
    do {
        // Connect: the consent step; the user asks an admin to approve.
        let home = try await Home.connect(
            url: url, appName: "Seed App", deviceTypes: [OnOffLightDeviceType.identifier, ContactSensorDeviceType.identifier]
        ) { pending in say("pending \(pending.requestID)") }
        say("connected")

        let devices = try await home.devices().list()
        say("devices \(devices.map(\.name).sorted().joined(separator: ","))")
        guard let device = devices.first(where: { $0.name == "Lamp" }) else {
            say("FAILED: no lamp")
            exit(1)
        }
        var cancellables = Set<AnyCancellable>()

        // "Track changes to a structure" (the seed's `=` is `==` here).
        let myStructureID = device.structureID
        let (structures, structureSeen) = AsyncStream<String>.makeStream()
        home.structures().batched()
            .compactMap { $0.first(where: { $0.id == myStructureID }) }
            .removeDuplicates()
            .sink { structure in
                structureSeen.yield(structure.name)
            }
            .store(in: &cancellables)

        // "Track changes to a specific device" (compactMap's result is not optional here, so the
        // seed's `if lampDevice != nil` is left out).
        let (lampChanges, lampChanged) = AsyncStream<String>.makeStream()
        home.devices().batched()
            .compactMap { deviceList -> HomeDevice? in
                deviceList.filter { $0.name == "Lamp" }.first
            }
            .removeDuplicates()
            .sink { lampDevice in
                lampChanged.yield("The lamp has changed! \(lampDevice.name)")
            }
            .store(in: &cancellables)

        // "Track changes to a specific trait on a device" (`onOff` is under `attributes`).
        let (onOffStates, onOffSeen) = AsyncStream<Bool>.makeStream()
        device.types.subscribe(OnOffLightDeviceType.self)
            .compactMap { $0.matterTraits.onOffTrait }
            .removeDuplicates()
            .sink { onOffState in
                onOffSeen.yield(onOffState.attributes.onOff == true)
            }
            .store(in: &cancellables)

        // The device itself, live, and every type of it.
        let (deviceNames, deviceSeen) = AsyncStream<String>.makeStream()
        let (deviceEnds, deviceEnded) = AsyncStream<String>.makeStream()
        home.device(id: device.id)
            .sink(
                receiveCompletion: { completion in
                    switch completion {
                    case .finished: deviceEnded.yield("finished")
                    case .failure(let error): deviceEnded.yield("failure \(error.code)")
                    }
                },
                receiveValue: { d in deviceSeen.yield(d.name) }
            )
            .store(in: &cancellables)
        let (typeSets, typeSetSeen) = AsyncStream<Int>.makeStream()
        device.types.subscribeAll()
            .removeDuplicates()
            .sink { types in typeSetSeen.yield(types.ids.count) }
            .store(in: &cancellables)

        // "Track changes to a room in a structure", as changes.
        let (roomChanges, roomSeen) = AsyncStream<String>.makeStream()
        home.rooms().stream()
            .sink { change in
                if case .snapshot(let rooms, _) = change { roomSeen.yield("rooms \(rooms.map(\.name).joined(separator: ","))") }
            }
            .store(in: &cancellables)

        say("structure \(await first("structure", of: structures))")
        say(await first("lamp change", of: lampChanges))
        say("device \(await first("device", of: deviceNames))")
        say("types \(await first("device types", of: typeSets))")
        say(await first("rooms", of: roomChanges))
        say("onOff \(await first("on/off state", of: onOffStates))")

        // Send a command (the seed's typed trait call), and see it come back through the publisher.
        if let light = await device.types.get(OnOffLightDeviceType.self), let onOffTrait = light.matterTraits.onOffTrait {
            try await onOffTrait.toggle()
        }
        say("onOff \(await first("on/off update", of: onOffStates))")

        // Disconnecting revokes the token: live publishers fail with permissionDenied.
        try await home.disconnect()
        say("device publisher: \(await first("the device publisher's end", of: deviceEnds))")
        cancellables.removeAll()
        say("done")
    } catch {
        say("FAILED: \(error)")
        exit(1)
    }
}

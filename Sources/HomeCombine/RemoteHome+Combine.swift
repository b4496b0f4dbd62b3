public import HearthClient
public import HomeModel
public import OpenCombine

// The network client's queries and subscriptions as publishers: the same Combine code runs
// against hearthd over one WebSocket as against the in-process core.
//
//     let home = try await HearthClient.Home.signIn(url: url, username: "mia", password: "…")
//     home.devices().batched()
//         .compactMap { deviceList -> HomeDevice? in deviceList.filter { $0.name == "Bedroom Lamp" }.first }
//         .removeDuplicates()
//         .sink { lampDevice in … }
//
// A publisher fails with `permissionDenied` when hearthd revokes the session.

extension RemoteQuery {
    /// The whole set now and again on every change, as a publisher.
    public func batched() -> AnyPublisher<[Element], HomeError> {
        let updates: RemoteUpdates<[Element]> = batched()
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }

    /// The whole set, then only what changes, as a publisher.
    public func stream() -> AnyPublisher<RemoteChange<Element>, HomeError> {
        let updates: RemoteUpdates<RemoteChange<Element>> = stream()
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }
}

extension HearthClient.Home {
    /// The device now and on every change, as a publisher.
    public func device(id: DeviceID) -> AnyPublisher<HomeDevice, HomeError> {
        let updates: RemoteUpdates<HomeDevice> = device(id: id)
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }

    /// Device events as a publisher; never coalesced while the subscriber keeps up with demand.
    public func events(device: DeviceID? = nil, trait: TraitID? = nil) -> AnyPublisher<DeviceEvent, HomeError> {
        let updates: RemoteUpdates<DeviceEvent> = events(device: device, trait: trait)
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }
}

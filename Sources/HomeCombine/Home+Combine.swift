public import HomeCore
public import HomeModel
public import OpenCombine

// The same queries and subscriptions as publishers, so Combine-style code written against the
// Google Home APIs ports to Linux:
//
//     home.devices().batched()
//         .compactMap { $0[id: lampID] }
//         .removeDuplicates()
//         .sink { lamp in … }
//         .store(in: &cancellables)
//
// A publisher fails with `permissionDenied` when the session's access is revoked, and
// finishes normally otherwise (the device was removed, the core shut down).

extension Query {
    /// The whole set now and again on every change, as a publisher.
    public func batched() -> AnyPublisher<HomeSet<Element>, HomeError> {
        let updates: Updates<HomeSet<Element>> = batched()
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }

    /// A snapshot, then only what changes, as a publisher.
    public func stream() -> AnyPublisher<QueryChange<Element>, HomeError> {
        let updates: Updates<QueryChange<Element>> = stream()
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }
}

extension Home {
    /// The device now and on every change, as a publisher.
    public func device(id: DeviceID) -> AnyPublisher<HomeDevice, HomeError> {
        let updates: Updates<HomeDevice> = device(id: id)
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }

    /// Events as a publisher; never coalesced while the subscriber keeps up with demand.
    public func events(device: DeviceID? = nil, trait: TraitID? = nil) -> AnyPublisher<DeviceEvent, HomeError> {
        let updates: Updates<DeviceEvent> = events(device: device, trait: trait)
        return AsyncSequencePublisher(updates, failure: { updates.failure }).eraseToAnyPublisher()
    }
}

extension DeviceTypes {
    /// The device type now and after every change to its traits, as a publisher; finishes at
    /// once when the device lacks the type.
    public func subscribe<T: DeviceType>(_ type: T.Type) -> AnyPublisher<T, HomeError> {
        let stream: AsyncStream<T> = subscribe(type)
        let backend = self.backend
        return AsyncSequencePublisher(stream, failure: { backend?.revocation }).eraseToAnyPublisher()
    }

    /// Every device type of the device, now and after every change, as a publisher.
    public func subscribeAll() -> AnyPublisher<DeviceTypeSet, HomeError> {
        let stream: AsyncStream<DeviceTypeSet> = subscribeAll()
        let backend = self.backend
        return AsyncSequencePublisher(stream, failure: { backend?.revocation }).eraseToAnyPublisher()
    }
}

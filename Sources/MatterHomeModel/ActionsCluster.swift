import HomeModel
import MatterInteraction
import MatterTLV

/// Actions (0x0025, Matter Core Specification 9.14; revision 1, no features) on the Aggregator:
/// the home's rooms as EndpointLists, so a controller with rooms of its own can place each
/// bridged device in the right one. One list per room that has exposed devices: EndpointListID
/// (stable while the bridge runs, assigned in room-ID order), Name = the room's name, Type = Room
/// (1: an endpoint is in one room only), Endpoints = the room's devices' endpoints (the Bridged
/// Node and, for a composed device, its device-type endpoints). ActionList is empty: Hearth's
/// scenes stay Hearth's, so no Actions command is accepted and no event is emitted.
///
/// The Fixed Label `room` on each Bridged Node stays too (controllers that read that instead).
struct ActionsCluster: ClusterServer {
    static let id: UInt32 = 0x0025
    static let actionList: UInt32 = 0x0000
    static let endpointLists: UInt32 = 0x0001
    static let revision: UInt16 = 1
    /// EndpointListTypeEnum (9.14.4.5).
    static let typeRoom: UInt64 = 1
    /// The spec's bounds: at most 256 lists, 256 endpoints a list.
    static let maxCount = 256

    /// One EndpointListStruct (9.14.4.7).
    struct EndpointList: Hashable, Sendable {
        var id: UInt16
        var name: String
        var endpoints: [UInt16]
    }

    /// The lists now (the owner keeps them under its lock).
    let lists: @Sendable () -> [EndpointList]

    var id: UInt32 { Self.id }

    // StateChanged (0x00) and ActionFailed (0x01) are the cluster's events; with no action
    // neither is ever emitted.
    var metadata: ClusterInfo {
        ClusterInfo(revision: Self.revision, attributes: [Self.actionList, Self.endpointLists], dataVersion: 0, events: [0x00, 0x01])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        switch attribute {
        case Self.actionList: return .success(TLVElement(.array([])))
        case Self.endpointLists:
            return .success(TLVElement(.array(lists().prefix(Self.maxCount).map { l in
                TLVElement(.structure([
                    TLVElement(.context(0), .unsigned(UInt64(l.id))),
                    TLVElement(.context(1), .utf8(BridgedInfoCluster.clip(l.name, 32))),
                    TLVElement(.context(2), .unsigned(Self.typeRoom)),
                    TLVElement(.context(3), .array(l.endpoints.prefix(Self.maxCount).map { TLVElement(.unsigned(UInt64($0))) })),
                ]))
            })))
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }
}

/// The room lists the Actions cluster serves, and the IDs handed to rooms so far.
struct RoomLists: Sendable {
    var ids: [RoomID: UInt16] = [:]
    var next: UInt16 = 1
    var current: [ActionsCluster.EndpointList] = []

    /// New lists from each exposed device's room and endpoints; true when they changed.
    mutating func update(_ rooms: [RoomID: (name: String, endpoints: [UInt16])]) -> Bool {
        for room in rooms.keys.sorted() where ids[room] == nil && next < 0xFFFF {
            ids[room] = next
            next += 1
        }
        let lists = rooms.compactMap { room, v in ids[room].map { ActionsCluster.EndpointList(id: $0, name: v.name, endpoints: v.endpoints.sorted()) } }
            .sorted { $0.id < $1.id }
        guard lists != current else { return false }
        current = lists
        return true
    }
}

import HomeModel
import HashTreeCollections

extension HomeState {
    mutating func layout(_ edit: LayoutEdit, catalog: Catalog, into outcome: inout HomeOutcome) throws(HomeError) {
        switch edit {
        case .createStructure(let id, let name):
            guard structures[id] == nil else { throw .conflict("structure \(id) already exists") }
            let name = try uniqueStructureName(name, except: nil)
            structures[id] = StructureSnapshot(id: id, name: name)
            outcome.structuresChanged = true

        case .renameStructure(let id, let name):
            guard var s = structures[id] else { throw .notFound("no structure \(id)") }
            s.name = try uniqueStructureName(name, except: id)
            structures[id] = s
            outcome.structuresChanged = true

        case .deleteStructure(let id):
            guard structures[id] != nil else { throw .notFound("no structure \(id)") }
            structures[id] = nil
            for room in rooms.values where room.structureID == id { rooms[room.id] = nil }
            for device in devices.values where device.structureID == id {
                var d = device
                d.structureID = nil
                d.roomID = nil
                d.commissioning = .discovered
                put(d)
                outcome.devices.append((d.id, .shape))
            }
            outcome.structuresChanged = true
            outcome.roomsChanged = true

        case .createRoom(let id, let structure, let name):
            guard structures[structure] != nil else { throw .notFound("no structure \(structure)") }
            guard rooms[id] == nil else { throw .conflict("room \(id) already exists") }
            let name = try uniqueRoomName(name, in: structure, except: nil)
            rooms[id] = RoomSnapshot(id: id, structureID: structure, name: name)
            outcome.roomsChanged = true

        case .renameRoom(let id, let name):
            guard var r = rooms[id] else { throw .notFound("no room \(id)") }
            r.name = try uniqueRoomName(name, in: r.structureID, except: id)
            rooms[id] = r
            outcome.roomsChanged = true

        case .deleteRoom(let id):
            guard rooms[id] != nil else { throw .notFound("no room \(id)") }
            rooms[id] = nil
            // Its devices stay in the structure, unassigned: nothing is lost.
            for device in devices.values where device.roomID == id {
                var d = device
                d.roomID = nil
                put(d)
                outcome.devices.append((d.id, .shape))
            }
            outcome.roomsChanged = true

        case .renameDevice(let id, let name):
            guard var d = devices[id] else { throw .notFound("no device \(id)") }
            d.name = try NamingRules.validate(name, what: "device name")
            if d != devices[id] {
                put(d)
                outcome.devices.append((id, .shape))
            }

        case .moveDevice(let id, let room):
            guard var d = devices[id] else { throw .notFound("no device \(id)") }
            if let room {
                guard let r = rooms[room] else { throw .notFound("no room \(room)") }
                guard d.commissioning == .commissioned else {
                    throw .invalidArgument("device \(id) is not commissioned; commission it into a room instead")
                }
                d.structureID = r.structureID
            }
            d.roomID = room
            if d != devices[id] {
                put(d)
                outcome.devices.append((id, .shape))
            }

        case .commission(let id, let name, let structure, let room, let primary):
            guard var d = devices[id] else { throw .notFound("no device \(id)") }
            guard structures[structure] != nil else { throw .notFound("no structure \(structure)") }
            if let room {
                guard let r = rooms[room] else { throw .notFound("no room \(room)") }
                guard r.structureID == structure else {
                    throw .invalidArgument("room \(r.name) belongs to another structure")
                }
            }
            d.name = try NamingRules.validate(name, what: "device name")
            if let primary {
                guard d.type(primary) != nil else {
                    throw .invalidArgument(
                        "device \(id) has no device type \(catalog.deviceType(primary)?.name ?? primary.hex) to make primary")
                }
                for i in d.types.indices { d.types[i].isPrimary = d.types[i].id == primary }
            }
            d.structureID = structure
            d.roomID = room
            d.commissioning = .commissioned
            d.suggestedRoom = nil
            put(d)
            outcome.devices.append((id, .shape))

        case .decommission(let id):
            guard var d = devices[id] else { throw .notFound("no device \(id)") }
            d.structureID = nil
            d.roomID = nil
            d.commissioning = .discovered
            put(d)
            outcome.devices.append((id, .shape))

        case .removeDevice(let id):
            guard devices[id] != nil else { throw .notFound("no device \(id)") }
            drop(id)
            outcome.devices.append((id, .removed))
        }
    }

    func uniqueStructureName(_ proposed: String, except: StructureID?) throws(HomeError) -> String {
        let name = try NamingRules.validate(proposed, what: "structure name")
        let key = NamingRules.normalised(name)
        if let other = structures.values.first(where: { $0.id != except && NamingRules.normalised($0.name) == key }) {
            throw .conflict("a structure named '\(other.name)' already exists")
        }
        return name
    }

    func uniqueRoomName(_ proposed: String, in structure: StructureID, except: RoomID?) throws(HomeError) -> String {
        let name = try NamingRules.validate(proposed, what: "room name")
        let key = NamingRules.normalised(name)
        if let other = rooms.values.first(where: {
            $0.id != except && $0.structureID == structure && NamingRules.normalised($0.name) == key
        }) {
            throw .conflict("a room named '\(other.name)' already exists in this structure")
        }
        return name
    }
}

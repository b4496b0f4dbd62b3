// A test helper: opens a Hearth database and commits layout edits in a loop, printing each
// committed edit's number on its own line ("committed N") right after its transaction commits.
// The kill -9 test (HomeStorageTests/CrashSafetyTests) kills it mid-burst with SIGKILL and
// checks that every reported edit is in the file and no half-written one is visible.
//
// Each edit N is one transaction of three rows that belong together: structure `s-N`, room
// `r-N` in it, and device `stress:dN` commissioned into that room.
//
// Usage: hearth-storage-stress DATABASE COUNT
import Foundation
import HomeCore
import HomeModel
import HomeStorage

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: hearth-storage-stress DATABASE COUNT\n".utf8))
    exit(64)
}
let database: HearthDatabase
do {
    database = try HearthDatabase(path: arguments[1])
} catch {
    FileHandle.standardError.write(Data("hearth-storage-stress: \(error.message)\n".utf8))
    exit(1)
}
var structures: [StructureSnapshot] = []
var rooms: [RoomSnapshot] = []
for n in 0..<count {
    let s = StructureSnapshot(id: StructureID(rawValue: "s-\(n)"), name: "Structure \(n)")
    let r = RoomSnapshot(id: RoomID(rawValue: "r-\(n)"), structureID: s.id, name: "Room \(n)")
    structures.append(s)
    rooms.append(r)
    let device = DeviceSnapshot(
        id: DeviceID(plugin: "stress", local: "d\(n)"), name: "Device \(n)", structureID: s.id, roomID: r.id,
        commissioning: .commissioned,
        types: [DeviceTypeState(id: OnOffLightDeviceType.identifier, isPrimary: true, traits: [:])])
    do {
        try database.persist(
            LayoutDelta(
                structures: structures, rooms: rooms, upserted: [device], version: UInt64(n + 1),
                at: UInt64(n + 1)))
    } catch {
        FileHandle.standardError.write(Data("hearth-storage-stress: edit \(n) failed: \(error)\n".utf8))
        exit(1)
    }
    FileHandle.standardOutput.write(Data("committed \(n)\n".utf8))
}

import DriverAPI
import Foundation
import GRDB
import HomeModel
@testable import HomeStorage
import Testing

@Suite struct CorruptFileTests {
    @Test func fileThatIsNotADatabase_isRefused_andNeverRecreated() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        let garbage = Data("this is not a database, it is a shopping list: eggs, milk\n".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: HomeError.self) { try HearthDatabase(path: path) }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("hearth restore") == true)
        #expect(error?.message.contains("move the file away") == true)
        #expect(FileManager.default.contents(atPath: path) == garbage)
    }

    @Test func damagedPages_areRefused_namingTheFile() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        do {
            let db = try HearthDatabase(path: path)
            try db.pool.write { db in
                for i in 0..<200 {
                    try db.execute(
                        sql: "INSERT INTO structure (id, name, nameKey) VALUES (?, ?, ?)",
                        arguments: ["s\(i)", "Structure \(i)", "structure \(i)"])
                }
            }
            _ = try db.pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        // Scribble over everything after the first page (the header stays valid).
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 4096)
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()
        let damaged = FileManager.default.contents(atPath: path)

        let error = #expect(throws: HomeError.self) { try HearthDatabase(path: path) }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("damaged") == true)
        #expect(FileManager.default.contents(atPath: path) == damaged)
    }

    @Test func emptyFile_isAFreshDatabase() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let db = try HearthDatabase(path: path)
        #expect(try db.appliedMigrations().count == 2)
    }
}

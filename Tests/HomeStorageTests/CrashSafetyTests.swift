import Dispatch
import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Kill -9 during a burst of layout edits: a real child process (`hearth-storage-stress`)
/// commits edits in a loop, printing each one's number after its commit; the test kills it
/// with SIGKILL mid-burst, reopens the file, and checks that every edit the child reported is
/// there and that no half-written edit is visible.
@Suite struct CrashSafetyTests {
    static func stressTool() throws -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("hearth-storage-stress").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        Issue.record("hearth-storage-stress not found next to \(dir.path): run `swift build --build-tests` first")
        throw HomeError.notFound("hearth-storage-stress")
    }

    /// Reads the child's output line by line off the cooperative pool (reads block).
    final class LineReader: @unchecked Sendable {
        // Only touched from the one reading thread at a time (each call waits for the last).
        let handle: FileHandle
        var buffer = Data()
        init(_ handle: FileHandle) { self.handle = handle }

        /// The next line, or nil at end of file.
        func next() async -> String? {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    while true {
                        if let newline = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                            let line = String(decoding: self.buffer[self.buffer.startIndex..<newline], as: UTF8.self)
                            self.buffer.removeSubrange(self.buffer.startIndex...newline)
                            continuation.resume(returning: line)
                            return
                        }
                        let chunk = self.handle.availableData
                        if chunk.isEmpty {
                            continuation.resume(returning: nil)
                            return
                        }
                        self.buffer.append(chunk)
                    }
                }
            }
        }
    }

    @Test func killDashNine_midBurst_losesNoCommittedEdit_andShowsNoHalfWrittenOne() async throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.stressTool())
        process.arguments = [path, "100000"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let reader = LineReader(out.fileHandleForReading)

        var reported: Set<Int> = []
        while reported.count < 150, let line = await reader.next() {
            if line.hasPrefix("committed "), let n = Int(line.dropFirst("committed ".count)) { reported.insert(n) }
        }
        #expect(reported.count == 150, "the child stopped before it was killed")
        kill(process.processIdentifier, SIGKILL)
        while let line = await reader.next() {
            if line.hasPrefix("committed "), let n = Int(line.dropFirst("committed ".count)) { reported.insert(n) }
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == SIGKILL)

        // The file opens (WAL recovery), and holds every reported edit, each whole.
        let db = try HearthDatabase(path: path)
        let layout = try db.loadLayout()
        func numbers(_ ids: [String], prefix: String) -> Set<Int> {
            Set(ids.compactMap { $0.hasPrefix(prefix) ? Int($0.dropFirst(prefix.count)) : nil })
        }
        let structures = numbers(layout.structures.map(\.id.rawValue), prefix: "s-")
        let rooms = numbers(layout.rooms.map(\.id.rawValue), prefix: "r-")
        let devices = numbers(layout.devices.map(\.id.rawValue), prefix: "stress:d")
        #expect(reported.isSubset(of: structures), "a committed edit was lost")
        #expect(structures == rooms && rooms == devices, "a half-written edit is visible")
        // Edits are sequential: what is there is 0..<n, at most one more than was reported.
        #expect(structures == Set(0..<structures.count))
        #expect(structures.count - reported.count <= 1)
        #expect(layout.devices.allSatisfy { $0.commissioning == .commissioned && $0.roomID != nil })
    }
}

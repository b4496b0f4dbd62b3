import Foundation
import PluginHost
import Testing

/// ``ResidentCode``: which mappings it may drop, and that dropping them shrinks this process's
/// file-backed resident set while its code keeps running.
@Suite struct ResidentCodeTests {
    static let smaps = """
        5555d000-5556d000 r-xp 00001000 08:01 4242 /usr/bin/hearthd
        Rss:                  64 kB
        Anonymous:             0 kB
        Private_Dirty:         0 kB
        5556d000-5557d000 r--p 00011000 08:01 4242 /usr/bin/hearthd
        Rss:                  16 kB
        Anonymous:            16 kB
        Private_Dirty:        16 kB
        5557d000-5558d000 rw-p 00021000 08:01 4242 /usr/bin/hearthd
        Rss:                   8 kB
        Anonymous:             8 kB
        7f000000-7f100000 r--p 00000000 08:01 77 /usr/lib/with space/libswiftCore.so
        Rss:                 512 kB
        Private_Dirty:       512 kB
        Anonymous:             0 kB
        7f100000-7f200000 r--p 00000000 08:01 78 /usr/lib/libgone.so (deleted)
        Rss:                   4 kB
        Anonymous:             0 kB
        7f300000-7f400000 r--p 00000000 08:01 79 /usr/lib/libunsaid.so
        Rss:                   4 kB
        7f200000-7f300000 rw-p 00000000 00:00 0
        Rss:                  40 kB
        Anonymous:            40 kB
        7ffc0000-7ffc2000 r--p 00000000 00:00 0                          [vvar]
        Rss:                   0 kB
        7ffc2000-7ffc4000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   4 kB
        7ffd0000-7ffd9000 rw-p 00000000 00:00 0                          [stack]
        Rss:                  36 kB
        """

    @Test func onlyCleanReadOnlyFileMappingsAreReleasable() {
        let mappings = ResidentCode.mappings(smaps: Self.smaps)
        #expect(mappings.count == 10)
        #expect(mappings[0].resident == 64 * 1024)
        #expect(mappings[3].path == "/usr/lib/with space/libswiftCore.so")
        #expect(mappings[8].path == "[vdso]")
        // The text and a read-only library (its page-cache pages dirty, as after a copy, but none
        // copied into the process); not the relocated (written) RELRO, writable data, a deleted
        // file, one whose copies smaps did not report, anonymous memory, [vvar], [vdso], the stack.
        #expect(mappings.filter(\.isReleasable).map(\.start) == [0x5555_d000, 0x7f00_0000])
    }

    /// `RssFile:` of /proc/self/status, in KiB.
    static func residentFileKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func release_shrinksTheFileBackedResidentSet_andCodeStillRuns() throws {
        // Touch code across the runtime and Foundation first.
        let sample = (0..<2_000).map { "value-\($0 * 7919 % 2_000)" }
        let encoded = try JSONEncoder().encode(sample)
        let before = try Self.residentFileKiB()

        let released = ResidentCode.release()
        let after = try Self.residentFileKiB()

        #expect(released.mappings > 0)
        #expect(released.files.contains { $0.contains("libswiftCore") || $0.contains("HearthPackageTests") })
        // Other tests run beside this one and fault some pages back in at once, but far from all.
        #expect(after < before - released.bytes / 1024 / 4, "RssFile \(before) KiB -> \(after) KiB, released \(released.bytes / 1024) KiB")

        // The same code, faulted back in from the page cache, still gives the same answers.
        let decoded = try JSONDecoder().decode([String].self, from: encoded)
        #expect(decoded == sample)
        #expect(decoded.sorted().first == "value-0")
        #expect(try JSONEncoder().encode(decoded) == encoded)
    }
}

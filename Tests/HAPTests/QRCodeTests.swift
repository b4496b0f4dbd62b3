import Foundation
@testable import HAP
import Testing

/// The QR encoder against a real decoder: zbarimg (zbar-tools, installed by scripts/setup)
/// reads each code back from a PBM image.
@Suite struct QRCodeTests {
    static func zbarimg() -> String? {
        ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The code as a plain PBM, 4 pixels per module and a 4-module quiet zone, decoded by zbarimg.
    func decode(_ qr: QRCode) throws -> String? {
        guard let zbar = Self.zbarimg() else { return nil }
        let scale = 4, quiet = 4
        let side = (qr.size + 2 * quiet) * scale
        var text = "P1\n\(side) \(side)\n"
        for y in 0..<side {
            let r = y / scale - quiet
            var line = ""
            for x in 0..<side {
                let c = x / scale - quiet
                let dark = r >= 0 && r < qr.size && c >= 0 && c < qr.size && qr.modules[r][c]
                line += dark ? "1 " : "0 "
            }
            text += line + "\n"
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pbm")
        try text.write(to: file, atomically: true, encoding: .ascii)
        defer { try? FileManager.default.removeItem(at: file) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: zbar)
        p.arguments = ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", file.path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        var s = String(decoding: data, as: UTF8.self)
        if s.hasSuffix("\n") { s.removeLast() }
        return s
    }

    @Test func setupURI_decodesBack_version2AtMedium() throws {
        let uri = "X-HM://0023ISYWYO4M9"
        let qr = try QRCode(uri)
        #expect(qr.version == 2 && qr.size == 25 && qr.level == .medium)
        #expect(qr.rows.count == 25 && qr.rows.allSatisfy { $0.count == 25 })
        // Finder pattern corners and the dark module, whatever the mask.
        #expect(qr.rows[0].hasPrefix("1111111") && qr.rows[0].hasSuffix("1111111") && qr.rows[24].hasPrefix("1111111"))
        #expect(qr.modules[qr.size - 8][8])
        let decoded = try #require(try decode(qr), "zbarimg is not installed (scripts/setup installs zbar-tools)")
        #expect(decoded == uri)
    }

    @Test(arguments: QRCode.Level.allCases)
    func everyLevelAndVersion_decodesBack(level: QRCode.Level) throws {
        // Lengths that reach versions 1 to 10 (version info from 7, two block groups).
        var versions: Set<Int> = []
        // The last: the most version 10 holds at this level.
        let most = (QRCode.capacityBits(10, level) - QRCode.neededBits(0, 10)) / 8
        for length in [5, 20, 40, 60, 90, 120, 150, 180, 200, most] {
            let text = String((0..<length).map { i in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789-:/.")[i * 7 % 46] })
            guard let qr = try? QRCode(text, level: level) else { continue }
            versions.insert(qr.version)
            let decoded = try #require(try decode(qr), "zbarimg is not installed (scripts/setup installs zbar-tools)")
            #expect(decoded == text, "version \(qr.version) level \(level) mask \(qr.mask)")
        }
        #expect(versions.count >= 5 && versions.contains(10))
    }

    @Test func tooLong_refusedWithTheLimit() {
        #expect(throws: QRCode.Failure.tooLong(bytes: 300, max: 271)) { try QRCode(String(repeating: "A", count: 300), level: .low) }
    }

    @Test func reedSolomon_knownCodewords() {
        // ISO/IEC 18004 annex I: "01234567" at 1-M, data codewords → the 10 EC codewords.
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        let ec = QRCode.ReedSolomon.remainder(data, QRCode.ReedSolomon.generator(degree: 10))
        #expect(ec == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }
}

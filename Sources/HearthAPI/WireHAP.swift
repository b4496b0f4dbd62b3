/// One controller paired with a HomeKit bridge.
public struct WireHAPPairing: Codable, Sendable, Equatable {
    public let identifier: String
    public let admin: Bool
    public init(identifier: String, admin: Bool) {
        self.identifier = identifier
        self.admin = admin
    }
}

/// One HomeKit (HAP) bridge: how to add it in the Home app and who is paired. A second bridge
/// runs past 149 exposed devices, with its own setup code.
public struct WireHAPBridge: Codable, Sendable, Equatable {
    /// 1 for the first bridge, 2 for the second, …
    public let number: Int
    public let name: String
    public let port: Int
    public let setupCode: String
    /// The `X-HM://` setup payload the QR code carries.
    public let setupURI: String
    /// The QR code of `setupURI`: one string per row, "1" dark, "0" light, without the quiet zone.
    public let setupQR: [String]
    public let pairingID: String
    /// `c#`: changes only when the accessory layout changes.
    public let configurationNumber: Int
    /// Accessories served, the bridge included (at most 150).
    public let accessories: Int
    public let pairings: [WireHAPPairing]
    public init(
        number: Int, name: String, port: Int, setupCode: String, setupURI: String, setupQR: [String], pairingID: String, configurationNumber: Int,
        accessories: Int, pairings: [WireHAPPairing]
    ) {
        self.number = number
        self.name = name
        self.port = port
        self.setupCode = setupCode
        self.setupURI = setupURI
        self.setupQR = setupQR
        self.pairingID = pairingID
        self.configurationNumber = configurationNumber
        self.accessories = accessories
        self.pairings = pairings
    }
}

extension WireHAPBridge {
    /// QR rows ("1" dark) for a terminal: half blocks, two rows a line, the light modules
    /// drawn (terminals are often dark), with a quiet zone of 4 modules.
    public static func terminalQR(_ rows: [String]) -> String {
        let quiet = 4
        let grid = rows.map { Array($0) }
        let side = (grid.first?.count ?? 0) + 2 * quiet
        func dark(_ r: Int, _ c: Int) -> Bool {
            let (y, x) = (r - quiet, c - quiet)
            return y >= 0 && y < grid.count && x >= 0 && x < grid[y].count && grid[y][x] == "1"
        }
        return stride(from: 0, to: side, by: 2).map { r in
            String((0..<side).map { c -> Character in
                switch (dark(r, c), r + 1 < side && dark(r + 1, c)) {
                case (false, false): "█"
                case (true, false): "▄"
                case (false, true): "▀"
                case (true, true): " "
                }
            })
        }.joined(separator: "\n")
    }
}

/// `GET /hap` (admins): the HomeKit bridges.
public struct WireHAP: Codable, Sendable, Equatable {
    public let bridges: [WireHAPBridge]
    public init(bridges: [WireHAPBridge]) { self.bridges = bridges }
}

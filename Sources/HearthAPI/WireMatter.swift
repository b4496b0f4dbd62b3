/// One fabric (controller ecosystem) the Matter bridge belongs to.
public struct WireMatterFabric: Codable, Sendable, Equatable {
    public let index: Int
    /// Hex, as controllers show them.
    public let fabricID: String
    public let nodeID: String
    public let vendorID: Int
    public let label: String
    public init(index: Int, fabricID: String, nodeID: String, vendorID: Int, label: String) {
        self.index = index
        self.fabricID = fabricID
        self.nodeID = nodeID
        self.vendorID = vendorID
        self.label = label
    }
}

/// `GET /matter` (admins): how to add the bridge to a Matter controller, and who has.
public struct WireMatter: Codable, Sendable, Equatable {
    /// The 11-digit manual pairing code (`1234-567-8901`).
    public let manualPairingCode: String
    /// The `MT:` payload the QR code carries.
    public let qrPayload: String
    /// ``qrPayload`` as a QR code, one string per row ("1" dark), without the quiet zone: the
    /// web page draws it (empty from an older daemon).
    public let qrRows: [String]
    public let discriminator: Int
    public let port: Int
    /// `closed`, `basic` (the pairing code works) or `enhanced` (a controller's own code).
    public let window: String
    /// Seconds until the window closes; nil when closed or open until commissioned.
    public let windowSecondsLeft: Int?
    public let fabrics: [WireMatterFabric]
    /// Why controllers cannot discover the bridge (avahi missing), when they cannot.
    public let advertisingProblem: String?
    public init(manualPairingCode: String, qrPayload: String, qrRows: [String] = [], discriminator: Int, port: Int, window: String,
                windowSecondsLeft: Int?, fabrics: [WireMatterFabric], advertisingProblem: String?) {
        self.manualPairingCode = manualPairingCode
        self.qrPayload = qrPayload
        self.qrRows = qrRows
        self.discriminator = discriminator
        self.port = port
        self.window = window
        self.windowSecondsLeft = windowSecondsLeft
        self.fabrics = fabrics
        self.advertisingProblem = advertisingProblem
    }

    private enum CodingKeys: String, CodingKey {
        case manualPairingCode, qrPayload, qrRows, discriminator, port, window, windowSecondsLeft, fabrics, advertisingProblem
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        manualPairingCode = try c.decode(String.self, forKey: .manualPairingCode)
        qrPayload = try c.decode(String.self, forKey: .qrPayload)
        qrRows = try c.decodeIfPresent([String].self, forKey: .qrRows) ?? []
        discriminator = try c.decode(Int.self, forKey: .discriminator)
        port = try c.decode(Int.self, forKey: .port)
        window = try c.decode(String.self, forKey: .window)
        windowSecondsLeft = try c.decodeIfPresent(Int.self, forKey: .windowSecondsLeft)
        fabrics = try c.decode([WireMatterFabric].self, forKey: .fabrics)
        advertisingProblem = try c.decodeIfPresent(String.self, forKey: .advertisingProblem)
    }
}

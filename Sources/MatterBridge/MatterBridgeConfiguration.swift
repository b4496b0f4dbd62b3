public import MatterCommissioning
public import MatterSecurity

/// How the bridge presents itself.
public struct MatterBridgeConfiguration: Sendable {
    /// UDP port (IPv6 dual-stack, IPv4 where the kernel has no IPv6); 0 for any free port.
    public var port: UInt16
    /// DN in the commissionable record, NodeLabel default, Basic Information's ProductName.
    public var deviceName: String
    public var vendorName: String
    public var vendorID: UInt16
    public var productID: UInt16
    /// How long the first window (no fabric yet) and an administrator's window stay open.
    public var windowTimeout: Duration
    /// Publish `_matterc._udp` / `_matter._tcp` records (through the publisher given to the service).
    public var advertise: Bool

    public init(port: UInt16 = MatterAdvertisement.defaultPort, deviceName: String = "Hearth", vendorName: String = "Hearth",
                vendorID: UInt16 = DevelopmentAttestation.vendorID, productID: UInt16 = DevelopmentAttestation.productID,
                windowTimeout: Duration = .seconds(900), advertise: Bool = true) {
        self.port = port
        self.deviceName = deviceName
        self.vendorName = vendorName
        self.vendorID = vendorID
        self.productID = productID
        self.windowTimeout = windowTimeout
        self.advertise = advertise
    }
}

/// Publishes DNS-SD records (hearthd passes HAP's shared `DNSSDAdvertiser`; tests a recorder).
public protocol MatterServicePublisher: Sendable {
    /// Why publishing cannot work here (avahi or dbus missing), or nil.
    var unavailableReason: String? { get }
    /// Publishes or replaces the record under `key`.
    /// - Throws: an error saying what to install or start.
    func publish(key: String, record: DNSSDRecord) throws
    func withdraw(key: String)
}

/// A fabric as the administration API shows it (no keys).
public struct MatterFabricSummary: Hashable, Sendable {
    public var index: UInt8
    public var fabricID: UInt64
    public var nodeID: UInt64
    public var vendorID: UInt16
    public var label: String
    public var compressedFabricID: UInt64
}

/// The bridge's state for the administration API and the log.
public struct MatterBridgeStatus: Hashable, Sendable {
    /// The 11-digit manual pairing code, formatted (`1234-567-8901`).
    public var manualPairingCode: String
    /// The `MT:` QR code payload.
    public var qrPayload: String
    public var discriminator: UInt16
    public var port: UInt16
    /// 0 not open, 1 enhanced (an administrator's verifier), 2 basic (the pairing code).
    public var windowStatus: UInt8
    /// Seconds until the open window closes (nil: closed, or open until commissioned).
    public var windowSecondsLeft: Int?
    public var fabrics: [MatterFabricSummary]
    public var sessions: Int
    /// Why the DNS-SD records are not published, when they are not.
    public var advertisingProblem: String?
}

/// A failure of the bridge, in words a person can act on.
public struct MatterBridgeError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

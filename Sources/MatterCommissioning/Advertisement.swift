import MatterSecurity

/// One DNS-SD service to publish: what an mDNS advertiser (avahi) needs.
public struct DNSSDRecord: Hashable, Sendable {
    public var instanceName: String
    /// For example `_matterc._udp`.
    public var serviceType: String
    /// Subtype labels without the `._sub.` suffix, for example `_L3840`.
    public var subtypes: [String]
    public var port: UInt16
    /// TXT key/value pairs in order.
    public var txt: [(key: String, value: String)]

    public init(instanceName: String, serviceType: String, subtypes: [String], port: UInt16, txt: [(key: String, value: String)]) {
        self.instanceName = instanceName
        self.serviceType = serviceType
        self.subtypes = subtypes
        self.port = port
        self.txt = txt
    }

    /// The full subtype service names avahi takes (`_L3840._sub._matterc._udp`).
    public var subtypeServiceNames: [String] { subtypes.map { "\($0)._sub.\(serviceType)" } }

    public static func == (a: DNSSDRecord, b: DNSSDRecord) -> Bool {
        a.instanceName == b.instanceName && a.serviceType == b.serviceType && a.subtypes == b.subtypes && a.port == b.port
            && a.txt.map(\.key) == b.txt.map(\.key) && a.txt.map(\.value) == b.txt.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(instanceName)
        hasher.combine(serviceType)
        hasher.combine(port)
    }
}

/// The session parameters every Matter advertisement carries (Core Specification 4.3.4):
/// SII, SAI, SAT in milliseconds, and T (TCP support bitmap; 0: UDP only).
public struct AdvertisedSessionParameters: Hashable, Sendable {
    public var idleIntervalMS: UInt32 = 500
    public var activeIntervalMS: UInt32 = 300
    public var activeThresholdMS: UInt16 = 4000

    public init(idleIntervalMS: UInt32 = 500, activeIntervalMS: UInt32 = 300, activeThresholdMS: UInt16 = 4000) {
        self.idleIntervalMS = idleIntervalMS
        self.activeIntervalMS = activeIntervalMS
        self.activeThresholdMS = activeThresholdMS
    }

    var txt: [(key: String, value: String)] {
        [("SII", String(idleIntervalMS)), ("SAI", String(activeIntervalMS)), ("SAT", String(activeThresholdMS)), ("T", "0")]
    }
}

/// The DNS-SD records of a Matter node (Core Specification 4.3).
public enum MatterAdvertisement {
    public static let commissionableService = "_matterc._udp"
    public static let operationalService = "_matter._tcp"
    /// Matter's default UDP port.
    public static let defaultPort: UInt16 = 5540

    /// What a commissionable node says about itself (4.3.1).
    public struct Commissionable: Hashable, Sendable {
        /// 12 bits.
        public var discriminator: UInt16
        public var vendorID: UInt16
        public var productID: UInt16
        /// CM: 1 basic window, 2 enhanced window (``CommissioningWindow/commissioningMode``).
        public var commissioningMode: UInt8
        public var deviceType: UInt32?
        /// DN: at most 32 bytes (longer names are cut at a character boundary).
        public var deviceName: String?
        /// PH / PI (4.3.1.11–12): how a person puts the node into commissioning mode.
        public var pairingHint: UInt16?
        public var pairingInstruction: String?
        public var sessionParameters: AdvertisedSessionParameters

        public init(discriminator: UInt16, vendorID: UInt16, productID: UInt16, commissioningMode: UInt8, deviceType: UInt32? = nil,
                    deviceName: String? = nil, pairingHint: UInt16? = nil, pairingInstruction: String? = nil,
                    sessionParameters: AdvertisedSessionParameters = .init()) {
            self.discriminator = discriminator & 0xFFF
            self.vendorID = vendorID
            self.productID = productID
            self.commissioningMode = commissioningMode
            self.deviceType = deviceType
            self.deviceName = deviceName
            self.pairingHint = pairingHint
            self.pairingInstruction = pairingInstruction
            self.sessionParameters = sessionParameters
        }

        /// The short discriminator: the upper 4 of the 12 bits (5.1.1.5).
        public var shortDiscriminator: UInt16 { discriminator >> 8 }

        /// Subtypes (4.3.1.x): _L<long>, _S<short>, _V<vendor>, _T<device type>, and _CM while
        /// in commissioning mode; all decimal.
        public var subtypes: [String] {
            var s = ["_L\(discriminator)", "_S\(shortDiscriminator)", "_V\(vendorID)"]
            if let deviceType { s.append("_T\(deviceType)") }
            if commissioningMode != 0 { s.append("_CM") }
            return s
        }

        /// TXT (4.3.1.x): D, VP, CM, DT, DN, SII/SAI/SAT/T, PH, PI.
        public var txt: [(key: String, value: String)] {
            var t: [(key: String, value: String)] = [("D", String(discriminator)), ("VP", "\(vendorID)+\(productID)"), ("CM", String(commissioningMode))]
            if let deviceType { t.append(("DT", String(deviceType))) }
            if let deviceName, !deviceName.isEmpty { t.append(("DN", MatterAdvertisement.truncate(deviceName, bytes: 32))) }
            t += sessionParameters.txt
            if let pairingHint { t.append(("PH", String(pairingHint))) }
            if let pairingInstruction, !pairingInstruction.isEmpty { t.append(("PI", MatterAdvertisement.truncate(pairingInstruction, bytes: 128))) }
            return t
        }
    }

    /// The commissionable record; `instanceName` is 16 random upper-case hex digits (4.3.1.1),
    /// new for each window.
    public static func commissionable(_ node: Commissionable, instanceName: String, port: UInt16 = defaultPort) -> DNSSDRecord {
        DNSSDRecord(instanceName: instanceName, serviceType: commissionableService, subtypes: node.subtypes, port: port, txt: node.txt)
    }

    /// A random commissionable instance name.
    public static func randomInstanceName<R: RandomNumberGenerator>(using rng: inout R) -> String {
        hex(UInt64.random(in: 0...UInt64.max, using: &rng))
    }

    /// The operational record of one fabric (4.3.2): instance `<compressed fabric ID>-<node ID>`,
    /// subtype `_I<compressed fabric ID>`, upper-case hex.
    public static func operational(compressedFabricID: UInt64, nodeID: UInt64, port: UInt16 = defaultPort,
                                   sessionParameters: AdvertisedSessionParameters = .init()) -> DNSSDRecord {
        DNSSDRecord(
            instanceName: Fabric.operationalInstanceName(compressedFabricID: compressedFabricID, nodeID: nodeID),
            serviceType: operationalService, subtypes: ["_I" + hex(compressedFabricID)], port: port, txt: sessionParameters.txt)
    }

    /// The operational record of a fabric in the table.
    public static func operational(_ fabric: FabricInfo, port: UInt16 = defaultPort, sessionParameters: AdvertisedSessionParameters = .init()) -> DNSSDRecord {
        operational(compressedFabricID: fabric.compressedFabricID, nodeID: fabric.nodeID, port: port, sessionParameters: sessionParameters)
    }

    static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    static func truncate(_ s: String, bytes: Int) -> String {
        var out = ""
        for c in s {
            if out.utf8.count + String(c).utf8.count > bytes { break }
            out.append(c)
        }
        return out
    }
}

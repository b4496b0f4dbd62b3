public import HomeModel

/// Who made a device and which one it is: what the host shows as the device's
/// `BasicInformation` trait (Matter Core spec §11.1 "Basic Information Cluster") — vendor
/// name and ID, product name and ID, serial number, firmware and hardware versions, a unique
/// ID.
///
/// Fill what the hardware tells (an MQTT discovery message's `device` block, a GPIO line's
/// configuration); leave the rest nil. IDs are the CSA-issued ones when the device has them.
public struct DeviceIdentity: Hashable, Sendable, Codable {
    public var vendorName: String?
    /// The CSA vendor ID (`0xFFF1` is a test vendor).
    public var vendorID: UInt16?
    public var productName: String?
    public var productID: UInt16?
    /// The vendor's model number or part number (`model_id` in MQTT discovery).
    public var partNumber: String?
    public var serialNumber: String?
    /// The firmware version as the device writes it (`sw_version`).
    public var firmwareVersion: String?
    /// The hardware version as the device writes it (`hw_version`).
    public var hardwareVersion: String?
    /// An ID that stays the same across resets (a MAC address, a zigbee IEEE address).
    public var uniqueID: String?

    public init(
        vendorName: String? = nil, vendorID: UInt16? = nil, productName: String? = nil, productID: UInt16? = nil,
        partNumber: String? = nil, serialNumber: String? = nil, firmwareVersion: String? = nil, hardwareVersion: String? = nil,
        uniqueID: String? = nil
    ) {
        self.vendorName = vendorName
        self.vendorID = vendorID
        self.productName = productName
        self.productID = productID
        self.partNumber = partNumber
        self.serialNumber = serialNumber
        self.firmwareVersion = firmwareVersion
        self.hardwareVersion = hardwareVersion
        self.uniqueID = uniqueID
    }

    /// The `BasicInformation` attribute values this identity fills (absent ones left out).
    ///
    /// Strings are cut to the spec's lengths (32 characters, 64 for the version strings); a
    /// hardware version that is a whole number also fills `HardwareVersion`.
    public var basicInformation: [AttributeID: Value] {
        typealias A = BasicInformationTrait.Attribute
        var values: [AttributeID: Value] = [:]
        func put(_ id: AttributeID, _ s: String?, max: Int = 32) {
            guard let s, !s.isEmpty else { return }
            values[id] = .string(String(s.prefix(max)))
        }
        put(A.vendorName, vendorName)
        put(A.productName, productName)
        put(A.partNumber, partNumber)
        put(A.serialNumber, serialNumber)
        put(A.softwareVersionString, firmwareVersion, max: 64)
        put(A.hardwareVersionString, hardwareVersion, max: 64)
        put(A.uniqueID, uniqueID)
        if let vendorID { values[A.vendorID] = .int(Int64(vendorID)) }
        if let productID { values[A.productID] = .int(Int64(productID)) }
        if let hardwareVersion, let number = UInt16(hardwareVersion) { values[A.hardwareVersion] = .int(Int64(number)) }
        return values
    }
}

import DriverAPI
import HomeModel

/// The global `FeatureMap` attribute (Matter Core §7.13).
let featureMapAttribute: AttributeID = 0xFFFC

extension LineRole {
    /// The Matter device type a line of this role is.
    var deviceType: DeviceTypeID {
        switch self {
        case .contact, .boolean: ContactSensorDeviceType.identifier
        case .occupancy, .motion: OccupancySensorDeviceType.identifier
        case .leak: WaterLeakDetectorDeviceType.identifier
        case .rain: RainSensorDeviceType.identifier
        case .freeze: WaterFreezeDetectorDeviceType.identifier
        case .smoke: SmokeCOAlarmDeviceType.identifier
        case .button, .toggleSwitch: GenericSwitchDeviceType.identifier
        case .relay, .plug: OnOffPlugInUnitDeviceType.identifier
        case .light: OnOffLightDeviceType.identifier
        }
    }

    /// The name a device suggests for itself before a person names it.
    var defaultName: String {
        switch self {
        case .contact: "Contact sensor"
        case .boolean: "Binary sensor"
        case .occupancy: "Occupancy sensor"
        case .motion: "Motion sensor"
        case .leak: "Leak detector"
        case .rain: "Rain sensor"
        case .freeze: "Freeze detector"
        case .smoke: "Smoke alarm"
        case .button: "Button"
        case .toggleSwitch: "Switch"
        case .relay: "Relay"
        case .plug: "Plug"
        case .light: "Light"
        }
    }
}

extension LineConfiguration {
    /// The device this line is, with the attribute values known before the line is read.
    func deviceDescription(multiPress: ButtonSettings) -> DeviceDescription {
        // Identify only where the configuration opts in (an output that may blink; its type is
        // LightOutput for a light, Actuator otherwise): a line has
        // no way to show itself that is safe for whatever is wired to it (a pump, a heater, a
        // garage door), so by default the trait is not advertised.
        var traits: [TraitID: [AttributeID: Value]] =
            identify ? [IdentifyTrait.identifier: [IdentifyTrait.Attribute.identifyTime: .int(0), IdentifyTrait.Attribute.identifyType: .int(role == .light ? 1 : 5)]] : [:]
        switch role {
        case .contact, .boolean, .leak, .rain, .freeze:
            traits[BooleanStateTrait.identifier] = [:]
        case .smoke:
            traits[SmokeCOAlarmTrait.identifier] = [
                featureMapAttribute: .int(1),  // SMOKE
                SmokeCOAlarmTrait.Attribute.batteryAlert: .int(0),
                SmokeCOAlarmTrait.Attribute.testInProgress: .bool(false),
                SmokeCOAlarmTrait.Attribute.hardwareFaultAlert: .bool(false),
                SmokeCOAlarmTrait.Attribute.endOfServiceAlert: .int(0),
            ]
        case .occupancy, .motion:
            var attributes: [AttributeID: Value] = [
                featureMapAttribute: .int(2),  // PIR
                OccupancySensingTrait.Attribute.occupancySensorType: .int(0),  // PIR
                OccupancySensingTrait.Attribute.occupancySensorTypeBitmap: .int(1),  // PIR
            ]
            if let holdOn {
                attributes[OccupancySensingTrait.Attribute.holdTime] = .int(min(65535, holdOn.duration.components.seconds))
            }
            traits[OccupancySensingTrait.identifier] = attributes
        case .button:
            // MS | MSR | MSL (+ MSM with a multi-press window)
            var attributes: [AttributeID: Value] = [
                featureMapAttribute: .int(multiPress.multiPressWindow == nil ? 0b01110 : 0b11110),
                SwitchTrait.Attribute.numberOfPositions: .int(2),
                SwitchTrait.Attribute.currentPosition: .int(0),
            ]
            if multiPress.multiPressWindow != nil {
                attributes[SwitchTrait.Attribute.multiPressMax] = .int(Int64(multiPress.multiPressMax))
            }
            traits[SwitchTrait.identifier] = attributes
        case .toggleSwitch:
            traits[SwitchTrait.identifier] = [
                featureMapAttribute: .int(1),  // LS
                SwitchTrait.Attribute.numberOfPositions: .int(2),
            ]
        case .relay, .plug, .light:
            traits[GroupsTrait.identifier] = [:]
            traits[OnOffTrait.identifier] = [:]
        }
        return DeviceDescription(
            localID: localID, name: name ?? "\(role.defaultName) \(line)", manufacturer: "Hearth", model: "GPIO \(role.rawValue)",
            types: [DeviceTypeDescription(id: role.deviceType, isPrimary: true, traits: traits)],
            commission: name.map { CommissionHint(name: $0, room: room) }, identity: identity)
    }

    /// What the device says it is: the configuration's `vendor`, `model`, `serial-number` and
    /// `hardware-version`, else Hearth's GPIO line of this role; the line as its unique ID.
    var identity: DeviceIdentity {
        DeviceIdentity(
            vendorName: vendor ?? "Hearth", productName: model ?? "GPIO \(role.rawValue)", serialNumber: serialNumber,
            hardwareVersion: hardwareVersion, uniqueID: "gpio-\(localID)")
    }

    /// The button settings of this line (defaults where not configured).
    var buttonSettings: ButtonSettings {
        let defaults = ButtonSettings()
        let window = multiPressWindow.map(\.duration) ?? defaults.multiPressWindow
        return .init(
            longPress: longPress?.duration ?? defaults.longPress,
            multiPressWindow: window.flatMap { $0 > .zero ? $0 : nil },
            multiPressMax: multiPressMax ?? defaults.multiPressMax)
    }
}

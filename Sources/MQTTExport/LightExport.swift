import HomeModel

/// A light as Home Assistant's JSON-schema MQTT light sees it: which colour modes it offers,
/// its state in HA's units, and its discovery fields. Pure: no I/O.
///
/// Matter → Home Assistant (Color Control, Matter 1.3 §3.2; HA's `light.mqtt` JSON schema):
///
/// | Matter | HA |
/// |---|---|
/// | ColorCapabilities bit 0 (HS) / bit 3 (XY) / bit 4 (CT) | `supported_color_modes` `hs` / `xy` / `color_temp` |
/// | ColorMode 0 / 1 / 2 | `color_mode` `hs` / `xy` / `color_temp` |
/// | CurrentHue 0…254, CurrentSaturation 0…254 | `color.h` 0…360 °, `color.s` 0…100 % |
/// | CurrentX, CurrentY (×65536) | `color.x`, `color.y` 0…1 |
/// | ColorTemperatureMireds, ColorTempPhysicalMin/MaxMireds | `color_temp`, `min_mireds`, `max_mireds` |
/// | CurrentLevel 1…254 | `brightness` 0…255 |
///
/// Without Level Control the light is `onoff`; with it but no colour, `brightness`.
struct LightExport {
    let hasBrightness: Bool
    /// In HA's order of preference: `color_temp`, `hs`, `xy`; or `brightness`; or `onoff`.
    let colorModes: [String]
    let minMireds: Int64?
    let maxMireds: Int64?
    /// The JSON state keys (`state`, `brightness`, `color_mode`, `color_temp`, `color`).
    let state: [String: Any]

    static let capabilityHueSaturation: Int64 = 0x01
    static let capabilityXY: Int64 = 0x08
    static let capabilityTemperature: Int64 = 0x10

    init(type: DeviceTypeID, traits: [TraitID: TraitState]) {
        let level = traits[LevelControlTrait.identifier]
        let color = traits[ColorControlTrait.identifier]
        hasBrightness = level != nil || color != nil
        // The capabilities a device reports win; without them, what its device type requires.
        let capabilities: Int64
        if let reported = color?[ColorControlTrait.Attribute.colorCapabilities]?.intValue {
            capabilities = reported
        } else if type == ExtendedColorLightDeviceType.identifier {
            capabilities = Self.capabilityHueSaturation | Self.capabilityXY | Self.capabilityTemperature
        } else if type == ColorTemperatureLightDeviceType.identifier {
            capabilities = Self.capabilityTemperature
        } else {
            capabilities = 0
        }
        var modes: [String] = []
        if color != nil {
            if capabilities & Self.capabilityTemperature != 0 { modes.append("color_temp") }
            if capabilities & Self.capabilityHueSaturation != 0 { modes.append("hs") }
            if capabilities & Self.capabilityXY != 0 { modes.append("xy") }
        }
        if modes.isEmpty { modes = [hasBrightness ? "brightness" : "onoff"] }
        colorModes = modes
        minMireds = color?[ColorControlTrait.Attribute.colorTempPhysicalMinMireds]?.intValue.flatMap { (1...0xFEFF).contains($0) ? $0 : nil }
        maxMireds = color?[ColorControlTrait.Attribute.colorTempPhysicalMaxMireds]?.intValue.flatMap { (1...0xFEFF).contains($0) ? $0 : nil }

        var s: [String: Any] = [:]
        if let on = traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff]?.boolValue { s["state"] = on ? "ON" : "OFF" }
        if let v = level?[LevelControlTrait.Attribute.currentLevel]?.intValue, (0...254).contains(v) {
            s["brightness"] = Int(Units.brightness(level: UInt8(v)))
        }
        let mode: String
        switch color?[ColorControlTrait.Attribute.colorMode]?.intValue {
        case 0 where modes.contains("hs"): mode = "hs"
        case 1 where modes.contains("xy"): mode = "xy"
        case 2 where modes.contains("color_temp"): mode = "color_temp"
        default: mode = modes[0]
        }
        s["color_mode"] = mode
        if let m = color?[ColorControlTrait.Attribute.colorTemperatureMireds]?.intValue, (1...0xFEFF).contains(m), modes.contains("color_temp") {
            s["color_temp"] = Int(m)
        }
        switch mode {
        case "hs":
            if let h = color?[ColorControlTrait.Attribute.currentHue]?.intValue, let sat = color?[ColorControlTrait.Attribute.currentSaturation]?.intValue,
                (0...254).contains(h), (0...254).contains(sat)
            {
                s["color"] = ["h": Self.round(Double(h) * 360 / 254, 1), "s": Self.round(Double(sat) * 100 / 254, 1)]
            }
        case "xy":
            if let x = color?[ColorControlTrait.Attribute.currentX]?.intValue, let y = color?[ColorControlTrait.Attribute.currentY]?.intValue,
                (0...0xFEFF).contains(x), (0...0xFEFF).contains(y)
            {
                s["color"] = ["x": Self.round(Double(x) / 65536, 4), "y": Self.round(Double(y) / 65536, 4)]
            }
        default: break
        }
        state = s
    }

    static func round(_ v: Double, _ digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (v * scale).rounded() / scale
    }

    /// The JSON-schema discovery fields (the caller adds `state_topic`, device, availability).
    func config(command: String) -> [String: Any] {
        var c: [String: Any] = [
            "schema": "json", "command_topic": command, "supported_color_modes": colorModes, "brightness": hasBrightness,
        ]
        if hasBrightness { c["brightness_scale"] = 255 }
        if colorModes.contains("color_temp") {
            // Mireds (HA's `color_temp_kelvin` stays false); HA's own defaults are 153…500.
            if let minMireds { c["min_mireds"] = Int(minMireds) }
            if let maxMireds { c["max_mireds"] = Int(maxMireds) }
        }
        return c
    }
}

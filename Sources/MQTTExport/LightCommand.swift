import Foundation
import HomeModel

/// A JSON-schema light command from Home Assistant (`{"state":"ON","brightness":128,
/// "color_temp":300,"color":{"h":30,"s":80},"transition":2}`) as core commands, in the order
/// to send them: on, off or level first, then colour. Pure: no I/O.
enum LightCommand {
    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The longest JSON command accepted (HA's largest is well under 200 bytes).
    static let maximumLength = 512

    static func requests(_ payload: [UInt8], device: ExportedDevice) throws(Refusal) -> [CommandRequest] {
        guard let type = device.lightType else { throw Refusal("\(device.id) is not a light") }
        guard payload.count <= maximumLength else { throw Refusal("payload of \(payload.count) bytes is too long for a light command") }
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(payload))
        } catch {
            throw Refusal("a light command must be a JSON object")
        }
        guard let o = value.objectValue else { throw Refusal("a light command must be a JSON object, not \(value.kindName)") }
        let known: Set<String> = ["state", "brightness", "color_temp", "color", "transition", "color_mode"]
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw Refusal("'\(unknown.prefix(40))' is not a light command field (effects and flashes are not offered)")
        }
        var state: Bool?
        if let s = o["state"] {
            switch s.stringValue?.uppercased() {
            case "ON"?: state = true
            case "OFF"?: state = false
            default: throw Refusal("state \(s.description.prefix(40)) is not ON or OFF")
            }
        }
        // HA's transition is in seconds; Matter's TransitionTime in tenths.
        var tenths: Int64?
        if let t = o["transition"] {
            guard let seconds = t.doubleValue, seconds >= 0, seconds <= 6553.4 else { throw Refusal("transition must be 0…6553.4 seconds") }
            tenths = Int64((seconds * 10).rounded())
        }
        func request(_ trait: TraitID, _ command: CommandID, _ arguments: [String: Value] = [:]) -> CommandRequest {
            CommandRequest(device: device.id, deviceType: type, trait: trait, command: command, arguments: arguments)
        }
        if state == false {
            return [request(OnOffTrait.identifier, OnOffTrait.Command.off)]
        }
        var out: [CommandRequest] = []
        if let b = o["brightness"] {
            guard device.levelType != nil else { throw Refusal("\(device.id) has no brightness") }
            guard let v = b.intValue, (0...255).contains(v), b.boolValue == nil else { throw Refusal("brightness \(b.description.prefix(40)) is not 0…255") }
            if v == 0 {
                return [request(OnOffTrait.identifier, OnOffTrait.Command.off)]
            }
            let level = max(1, Units.level(brightness: UInt8(v)))
            out.append(request(LevelControlTrait.identifier, LevelControlTrait.Command.moveToLevelWithOnOff, [
                "Level": .int(Int64(level)), "TransitionTime": tenths.map(Value.int) ?? .null, "OptionsMask": .int(0), "OptionsOverride": .int(0),
            ]))
        } else if state == true || o["color_temp"] != nil || o["color"] != nil {
            // HA sends a colour with "state": "ON"; a colour alone also turns the light on.
            out.append(request(OnOffTrait.identifier, OnOffTrait.Command.on))
        }
        let colorArguments: [String: Value] = ["TransitionTime": .int(tenths ?? 0), "OptionsMask": .int(0), "OptionsOverride": .int(0)]
        if let ct = o["color_temp"] {
            guard device.colorModes.contains("color_temp") else { throw Refusal("\(device.id) has no colour temperature") }
            guard let m = ct.intValue, (1...0xFEFF).contains(m) else { throw Refusal("color_temp \(ct.description.prefix(40)) is not 1…65279 mireds") }
            out.append(request(ColorControlTrait.identifier, ColorControlTrait.Command.moveToColorTemperature,
                colorArguments.merging(["ColorTemperatureMireds": .int(m)]) { $1 }))
        }
        if let c = o["color"] {
            guard let color = c.objectValue else { throw Refusal("color must be an object") }
            if let h = color["h"]?.doubleValue, let s = color["s"]?.doubleValue {
                guard device.colorModes.contains("hs") else { throw Refusal("\(device.id) takes no hue and saturation") }
                guard (0...360).contains(h), (0...100).contains(s) else { throw Refusal("color h must be 0…360 and s 0…100") }
                let hue = min(254, Int64((h * 254 / 360).rounded()))
                let saturation = min(254, Int64((s * 254 / 100).rounded()))
                out.append(request(ColorControlTrait.identifier, ColorControlTrait.Command.moveToHueAndSaturation,
                    colorArguments.merging(["Hue": .int(hue), "Saturation": .int(saturation)]) { $1 }))
            } else if let x = color["x"]?.doubleValue, let y = color["y"]?.doubleValue {
                guard device.colorModes.contains("xy") else { throw Refusal("\(device.id) takes no xy colour") }
                guard (0...1).contains(x), (0...1).contains(y) else { throw Refusal("color x and y must be 0…1") }
                out.append(request(ColorControlTrait.identifier, ColorControlTrait.Command.moveToColor,
                    colorArguments.merging(["ColorX": .int(min(0xFEFF, Int64((x * 65536).rounded()))), "ColorY": .int(min(0xFEFF, Int64((y * 65536).rounded())))]) { $1 }))
            } else {
                throw Refusal("color needs h and s, or x and y (the modes this light offers: \(device.colorModes.joined(separator: ", ")))")
            }
        }
        guard !out.isEmpty else { throw Refusal("a light command needs state, brightness, color_temp or color") }
        return out
    }
}

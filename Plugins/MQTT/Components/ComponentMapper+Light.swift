import DriverAPI
import HomeModel
import Foundation

/// The `light` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func light() throws(ComponentError) -> Entity {
        let schema = string("schema") ?? "default"
        switch schema {
        case "json": return try jsonLight()
        case "default", "basic": return try defaultLight()
        default: throw ComponentError("light schema '\(schema)' is not supported (supported: default, json)")
        }
    }

    /// Which colours a light takes besides a temperature: hue/saturation, xy (rgb lights too).
    struct ColorSupport: Equatable {
        var hueSaturation = false
        var xy = false
        var any: Bool { hueSaturation || xy }
    }

    static func lightType(brightness: Bool, colorTemp: Bool, color: ColorSupport = ColorSupport()) -> DeviceTypeID {
        if color.any { return ExtendedColorLightDeviceType.identifier }
        return colorTemp
            ? ColorTemperatureLightDeviceType.identifier
            : (brightness ? DimmableLightDeviceType.identifier : OnOffLightDeviceType.identifier)
    }

    static func lightTraits(
        brightness: Bool, colorTemp: Bool, minMireds: Int?, maxMireds: Int?, color: ColorSupport = ColorSupport()
    ) -> [TraitID: [AttributeID: Value]] {
        var traits: [TraitID: [AttributeID: Value]] = [OnOffTrait.identifier: [:]]
        if color.any {
            traits[ColorControlTrait.identifier] = [
                ColorControlTrait.Attribute.colorMode: .int(color.xy ? ColorConversion.modeXY : ColorConversion.modeHueSaturation),
                ColorControlTrait.Attribute.colorCapabilities: .int(
                    ColorConversion.capabilities(hueSaturation: color.hueSaturation, xy: color.xy, temperature: colorTemp)),
            ]
        }
        if brightness || colorTemp || color.any {
            traits[LevelControlTrait.identifier] = [
                LevelControlTrait.Attribute.minLevel: .int(1), LevelControlTrait.Attribute.maxLevel: .int(254),
            ]
        }
        if colorTemp {
            var attributes: [AttributeID: Value] = traits[ColorControlTrait.identifier] ?? [ColorControlTrait.Attribute.colorMode: .int(2)]
            if let minMireds { attributes[ColorControlTrait.Attribute.colorTempPhysicalMinMireds] = .int(Int64(minMireds)) }
            if let maxMireds { attributes[ColorControlTrait.Attribute.colorTempPhysicalMaxMireds] = .int(Int64(maxMireds)) }
            traits[ColorControlTrait.identifier] = attributes
        }
        return traits
    }

    mutating func defaultLight() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let scale = Double(int("brightness_scale") ?? 255)
        let kelvin = bool("color_temp_kelvin") ?? false
        let hasBrightness = string("brightness_state_topic") != nil || string("brightness_command_topic") != nil
        let hasColorTemp = string("color_temp_state_topic") != nil || string("color_temp_command_topic") != nil
        var entity = base(
            Self.lightType(brightness: hasBrightness, colorTemp: hasColorTemp), rank: 10,
            Self.lightTraits(brightness: hasBrightness, colorTemp: hasColorTemp, minMireds: int("min_mireds"), maxMireds: int("max_mireds")))
        // Tasmota's discovery names the light's state template value_template.
        let stateTemplate = config["state_value_template"] == nil && config["value_template"] != nil ? "value_template" : "state_value_template"
        if let sub = subscription("state_topic", template: stateTemplate, { v, _ throws(PayloadError) in
            [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(v, on: payloadOn, off: payloadOff)))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let sub = subscription("brightness_state_topic", template: "brightness_value_template", { v, _ throws(PayloadError) in
            [try Mapping.level(v, scale: scale)]
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("color_temp_state_topic", template: "color_temp_value_template", { v, _ throws(PayloadError) in
            [try Mapping.colorTemperature(v, kelvin: kelvin)]
        }) {
            entity.subscriptions.append(sub)
        }
        let command = try require("command_topic")
        entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        if let brightnessTopic = string("brightness_command_topic") {
            let handler: CommandHandler = { args, _ throws in
                let level = try Mapping.levelArgument(args)
                let brightness = Int((Double(Units.brightness(level: level)) * scale / 255).rounded())
                return Action(
                    publish: [Outgoing(topic: brightnessTopic, payload: String(brightness))],
                    assumed: [
                        .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level))),
                        .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true)),
                    ])
            }
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevel)] = handler
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevelWithOnOff)] = handler
        }
        if let colorTopic = string("color_temp_command_topic") {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColorTemperature)] = {
                args, _ throws in
                let mireds = try Mapping.miredsArgument(args)
                let payload = kelvin ? String(Int(Units.kelvin(mireds: mireds).rounded())) : String(mireds)
                return Action(
                    publish: [Outgoing(topic: colorTopic, payload: payload)],
                    assumed: [.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))])
            }
        }
        return entity
    }

    mutating func jsonLight() throws(ComponentError) -> Entity {
        let scale = Double(int("brightness_scale") ?? 255)
        let kelvin = bool("color_temp_kelvin") ?? false
        let modes = config["supported_color_modes"]?.listValue?.compactMap(\.stringValue) ?? []
        let hasColorTemp = modes.contains("color_temp") || (bool("color_temp") ?? false)
        let hasBrightness = hasColorTemp || (bool("brightness") ?? false)
            || modes.contains { ["brightness", "hs", "xy", "rgb", "rgbw", "rgbww", "white"].contains($0) }
        // Every colour mode Home Assistant defines maps to Color Control: xy as is, rgb/rgbw/rgbww
        // through xy, hs as hue and saturation.
        let color = ColorSupport(
            hueSaturation: modes.contains("hs"), xy: modes.contains { ["xy", "rgb", "rgbw", "rgbww"].contains($0) })
        let rgbOnly = !modes.contains("xy") && color.xy
        var entity = base(
            Self.lightType(brightness: hasBrightness, colorTemp: hasColorTemp, color: color), rank: 10,
            Self.lightTraits(
                brightness: hasBrightness, colorTemp: hasColorTemp, minMireds: int("min_mireds"), maxMireds: int("max_mireds"), color: color))
        if let stateTopic = string("state_topic") {
            entity.subscriptions.append(
                StateSubscription(topic: stateTopic) { message throws(PayloadError) in
                    let json: Value
                    switch message.json {
                    case .success(let v): json = v
                    case .failure(let f): throw PayloadError("json light state: the payload is \(f)")
                    }
                    guard case .object(let o) = json else { throw PayloadError("json light state: expected a JSON object, got \(json.kindName)") }
                    var updates: [Update] = []
                    if let state = o["state"] {
                        updates.append(.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(state, on: "ON", off: "OFF"))))
                    }
                    if hasBrightness, let b = o["brightness"], !b.isNull { updates.append(try Mapping.level(b, scale: scale)) }
                    let mode = o["color_mode"]?.stringValue
                    if hasColorTemp, let ct = o["color_temp"], !ct.isNull, mode == nil || mode == "color_temp" {
                        updates.append(try Mapping.colorTemperature(ct, kelvin: kelvin))
                        if color.any {
                            updates.append(.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeTemperature)))
                        }
                    }
                    if color.any, let c = o["color"]?.objectValue, mode != "color_temp" {
                        updates += try ColorConversion.updates(color: c, mode: mode)
                    }
                    if updates.isEmpty { throw PayloadError("json light state: no 'state', 'brightness', 'color_temp' or 'color' key") }
                    return updates
                })
        } else {
            entity.optimistic = true
        }
        let command = try require("command_topic")
        @Sendable func json(_ object: [String: Value]) -> String { Value.object(object).jsonText }
        let on: CommandHandler = { _, _ throws in
            Action(publish: [Outgoing(topic: command, payload: json(["state": "ON"]))],
                assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))])
        }
        let off: CommandHandler = { _, _ throws in
            Action(publish: [Outgoing(topic: command, payload: json(["state": "OFF"]))],
                assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(false))])
        }
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)] = on
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)] = off
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle)] = { args, current throws in
            guard let isOn = current[OnOffTrait.identifier, OnOffTrait.Attribute.onOff]?.boolValue else {
                throw HomeError.unsupportedOperation("toggle needs the light's current state, which it has not reported yet")
            }
            return try (isOn ? off : on)(args, current)
        }
        if hasBrightness {
            let handler: CommandHandler = { args, _ throws in
                let level = try Mapping.levelArgument(args)
                let brightness = Int((Double(Units.brightness(level: level)) * scale / 255).rounded())
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "brightness": .int(Int64(brightness))]))],
                    assumed: [
                        .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level))),
                        .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true)),
                    ])
            }
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevel)] = handler
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevelWithOnOff)] = handler
        }
        if color.xy {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColor)] = { args, _ throws in
                guard let x = (args["ColorX"] ?? args["colorX"])?.intValue, let y = (args["ColorY"] ?? args["colorY"])?.intValue,
                    (0...0xFEFF).contains(x), (0...0xFEFF).contains(y)
                else { throw HomeError.invalidArgument("moveToColor needs colorX and colorY between 0 and 65279") }
                let cx = Double(x) / 65536, cy = Double(y) / 65536
                let payload: Value
                if rgbOnly {
                    let rgb = ColorConversion.rgb(x: cx, y: cy)
                    payload = .object(["r": .int(rgb.red), "g": .int(rgb.green), "b": .int(rgb.blue)])
                } else {
                    payload = .object(["x": .double((cx * 10000).rounded() / 10000), "y": .double((cy * 10000).rounded() / 10000)])
                }
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color": payload]))],
                    assumed: [
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentX, .int(x)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentY, .int(y)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeXY)),
                    ])
            }
        }
        if color.hueSaturation {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToHueAndSaturation)] = {
                args, _ throws in
                guard let h = (args["Hue"] ?? args["hue"])?.intValue, let s = (args["Saturation"] ?? args["saturation"])?.intValue,
                    (0...254).contains(h), (0...254).contains(s)
                else { throw HomeError.invalidArgument("moveToHueAndSaturation needs hue and saturation between 0 and 254") }
                let degrees = (Double(h) * 360 / 254 * 10).rounded() / 10
                let percent = (Double(s) * 100 / 254 * 10).rounded() / 10
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color": ["h": .double(degrees), "s": .double(percent)]]))],
                    assumed: [
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentHue, .int(h)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentSaturation, .int(s)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeHueSaturation)),
                    ])
            }
        }
        if hasColorTemp {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColorTemperature)] = {
                args, _ throws in
                let mireds = try Mapping.miredsArgument(args)
                let value: Value = kelvin ? .int(Int64(Units.kelvin(mireds: mireds).rounded())) : .int(Int64(mireds))
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color_temp": value]))],
                    assumed: [.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))])
            }
        }
        return entity
    }
}

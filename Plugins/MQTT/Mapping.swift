import DriverAPI
import HomeModel
import Foundation

extension String {
    /// At most 120 characters, for a log line that quotes network input.
    var shortened: String { count > 120 ? String(prefix(120)) + "…" : self }
}

extension Double {
    /// The number for a message: integral values without a fraction.
    var formatted: String { rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self) }
}

/// Conversions from payload values to attribute values in the specification's units.
enum Mapping {
    static func onOff(_ v: Value, on: String, off: String) throws(PayloadError) -> Bool {
        let text = v.templateText
        if text == on { return true }
        if text == off { return false }
        if case .bool(let b) = v { return b }
        throw PayloadError("'\(text.prefix(40))' is neither '\(on)' nor '\(off)'")
    }

    static func temperature(_ x: Double, unit: String) throws(PayloadError) -> Int16 {
        let celsius: Double
        switch unit.uppercased() {
        case "°F", "F", "FAHRENHEIT": celsius = (x - 32) * 5 / 9
        case "K", "KELVIN": celsius = x - 273.15
        default: celsius = x
        }
        guard celsius >= -273.15, celsius <= 327.67 else { throw PayloadError("temperature \(x) \(unit) is outside −273.15…327.67 °C") }
        return Units.temperatureValue(celsius: celsius)
    }

    static func pressure(_ x: Double, unit: String) throws(PayloadError) -> Int16 {
        let hPa: Double
        switch unit.lowercased() {
        case "kpa": hPa = x * 10
        case "pa": hPa = x / 100
        case "bar": hPa = x * 1000
        case "psi": hPa = x * 68.9476
        case "inhg": hPa = x * 33.8639
        case "mmhg": hPa = x * 1.33322
        default: hPa = x  // hPa, mbar
        }
        guard hPa >= 0, hPa <= 32767 else { throw PayloadError("pressure \(x) \(unit) is outside 0…3276.7 kPa") }
        return Units.pressureValue(hectopascals: hPa)
    }

    static func battery(_ percent: Double) throws(PayloadError) -> Update {
        guard percent.isFinite, (0...100).contains(percent) else { throw PayloadError("battery \(percent) % is outside 0…100 %") }
        // BatPercentRemaining is in half percent (0…200).
        return .attribute(PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batPercentRemaining, .int(Int64((percent * 2).rounded())))
    }

    static func level(_ v: Value, scale: Double) throws(PayloadError) -> Update {
        guard let b = Evaluator.number(v), b.isFinite else { throw PayloadError("brightness '\(v.templateText.prefix(40))' is not a number") }
        guard scale.isFinite, scale >= 1 else { throw PayloadError("brightness_scale \(scale) is not a number ≥ 1") }
        guard (0...scale).contains(b) else { throw PayloadError("brightness \(b) is outside 0…\(scale.formatted)") }
        let level = Units.level(brightness: UInt8((b * 255 / scale).rounded()))
        return .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level)))
    }

    static func colorTemperature(_ v: Value, kelvin: Bool) throws(PayloadError) -> Update {
        guard let x = Evaluator.number(v), x.isFinite, x > 0 else { throw PayloadError("color temperature '\(v.templateText.prefix(40))' is not a positive number") }
        let mireds = kelvin ? Units.mireds(kelvin: x) : UInt16(max(1, min(x.rounded(), 0xFEFF)))
        guard kelvin || x <= 0xFEFF else { throw PayloadError("color temperature \(x) mireds is outside 1…65279") }
        return .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))
    }

    static func levelArgument(_ args: [String: Value]) throws(HomeError) -> UInt8 {
        guard let l = (args["Level"] ?? args["level"])?.intValue, (0...254).contains(l) else {
            throw HomeError.invalidArgument("moveToLevel needs level between 0 and 254")
        }
        return UInt8(max(l, 1))
    }

    static func miredsArgument(_ args: [String: Value]) throws(HomeError) -> UInt16 {
        guard let m = (args["ColorTemperatureMireds"] ?? args["colorTemperatureMireds"])?.intValue, (1...0xFEFF).contains(m) else {
            throw HomeError.invalidArgument("moveToColorTemperature needs colorTemperatureMireds between 1 and 65279")
        }
        return UInt16(m)
    }

    static func onOffCommands(topic: String, on: String, off: String) -> [CommandKey: CommandHandler] {
        let onAction = Action(publish: [Outgoing(topic: topic, payload: on)], assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))])
        let offAction = Action(publish: [Outgoing(topic: topic, payload: off)], assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(false))])
        return [
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.on): { _, _ throws in onAction },
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.off): { _, _ throws in offAction },
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle): { _, current throws in
                guard let isOn = current[OnOffTrait.identifier, OnOffTrait.Attribute.onOff]?.boolValue else {
                    throw HomeError.unsupportedOperation("toggle needs the device's current state, which it has not reported yet")
                }
                return isOn ? offAction : onAction
            },
        ]
    }

    enum PressKind: Hashable, Sendable { case short, shortRelease, long, longRelease, multi(Int) }

    static func pressKind(type: String, subtype: String) -> PressKind {
        let words = (type + " " + subtype).lowercased()
        if words.contains("long_release") || words.contains("hold_release") || words.hasSuffix("release") && words.contains("hold") {
            return .longRelease
        }
        if words.contains("long") || words.contains("hold") { return .long }
        if words.contains("quintuple") { return .multi(5) }
        if words.contains("quadruple") { return .multi(4) }
        if words.contains("triple") { return .multi(3) }
        if words.contains("double") { return .multi(2) }
        if words.contains("release") { return .shortRelease }
        return .short
    }

    static func pressEvents(_ kind: PressKind, position: Int64) -> [Update] {
        let s = SwitchTrait.identifier
        switch kind {
        case .short:
            return [.event(s, SwitchTrait.Event.initialPress, ["NewPosition": .int(position)]),
                .event(s, SwitchTrait.Event.shortRelease, ["PreviousPosition": .int(position)])]
        case .shortRelease: return [.event(s, SwitchTrait.Event.shortRelease, ["PreviousPosition": .int(position)])]
        case .long: return [.event(s, SwitchTrait.Event.longPress, ["NewPosition": .int(position)])]
        case .longRelease: return [.event(s, SwitchTrait.Event.longRelease, ["PreviousPosition": .int(position)])]
        case .multi(let n):
            return [.event(s, SwitchTrait.Event.multiPressComplete, ["PreviousPosition": .int(position), "TotalNumberOfPressesCounted": .int(Int64(n))])]
        }
    }
}

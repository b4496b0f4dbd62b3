import Foundation
import HomeModel

/// Conversions between Home Assistant's colour payloads and Matter's Color Control units
/// (Matter Application Cluster Specification §3.2): `CurrentX`/`CurrentY` are CIE 1931 x and y
/// times 65536 (0…0xFEFF), `CurrentHue` is 0…254 for 0…360°, `CurrentSaturation` 0…254 for
/// 0…100 %. RGB goes through sRGB (IEC 61966-2-1, D65) to XYZ to xy.
enum ColorConversion {
    /// Home Assistant's colour modes that carry a colour (not only a temperature).
    static let colorModes: Set<String> = ["hs", "xy", "rgb", "rgbw", "rgbww"]

    /// Matter's ColorMode: 0 hue/saturation, 1 xy, 2 colour temperature.
    static let modeHueSaturation: Int64 = 0
    static let modeXY: Int64 = 1
    static let modeTemperature: Int64 = 2

    /// ColorCapabilities bits: hue/saturation (0), xy (3), colour temperature (4).
    static func capabilities(hueSaturation: Bool, xy: Bool, temperature: Bool) -> Int64 {
        (hueSaturation ? 1 : 0) | (xy ? 1 << 3 : 0) | (temperature ? 1 << 4 : 0)
    }

    /// A chromaticity coordinate (0…1) as `CurrentX`/`CurrentY`.
    static func coordinate(_ v: Double) throws(PayloadError) -> Int64 {
        guard v.isFinite, (0...1).contains(v) else { throw PayloadError("colour coordinate \(v) is outside 0…1") }
        return Int64(min((v * 65536).rounded(), 0xFEFF))
    }

    /// A hue in degrees (0…360) as `CurrentHue`.
    static func hue(degrees: Double) throws(PayloadError) -> Int64 {
        guard degrees.isFinite, (0...360).contains(degrees) else { throw PayloadError("hue \(degrees)° is outside 0…360°") }
        return Int64((degrees / 360 * 254).rounded())
    }

    /// A saturation in percent (0…100) as `CurrentSaturation`.
    static func saturation(percent: Double) throws(PayloadError) -> Int64 {
        guard percent.isFinite, (0...100).contains(percent) else { throw PayloadError("saturation \(percent) % is outside 0…100 %") }
        return Int64((percent / 100 * 254).rounded())
    }

    /// The CIE xy chromaticity of an sRGB colour (each channel 0…255); nil for black.
    static func xy(red: Double, green: Double, blue: Double) throws(PayloadError) -> (x: Double, y: Double)? {
        for c in [red, green, blue] where !(c.isFinite && (0...255).contains(c)) {
            throw PayloadError("colour channel \(c) is outside 0…255")
        }
        func linear(_ c: Double) -> Double {
            let v = c / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        let (r, g, b) = (linear(red), linear(green), linear(blue))
        let x = 0.4124 * r + 0.3576 * g + 0.1805 * b
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = 0.0193 * r + 0.1192 * g + 0.9505 * b
        let sum = x + y + z
        guard sum > 0 else { return nil }
        return (x / sum, y / sum)
    }

    /// An sRGB colour (0…255, the brightest channel 255) for a CIE xy chromaticity.
    static func rgb(x: Double, y: Double) -> (red: Int64, green: Int64, blue: Int64) {
        guard y > 0 else { return (0, 0, 0) }
        let bigY = 1.0
        let bigX = x * bigY / y
        let bigZ = (1 - x - y) * bigY / y
        var rgb = [
            3.2406 * bigX - 1.5372 * bigY - 0.4986 * bigZ,
            -0.9689 * bigX + 1.8758 * bigY + 0.0415 * bigZ,
            0.0557 * bigX - 0.2040 * bigY + 1.0570 * bigZ,
        ].map { max($0, 0) }
        let top = rgb.max() ?? 0
        if top > 0 { rgb = rgb.map { $0 / top } }
        let gamma = rgb.map { c in c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055 }
        let channels = gamma.map { Int64(min(max(($0 * 255).rounded(), 0), 255)) }
        return (channels[0], channels[1], channels[2])
    }

    /// The Color Control updates for a JSON light's `color` object (`{x, y}`, `{h, s}` or
    /// `{r, g, b}`) and its `color_mode`.
    static func updates(color: [String: Value], mode: String?) throws(PayloadError) -> [Update] {
        let trait = ColorControlTrait.identifier
        func number(_ key: String) -> Double? { color[key].flatMap(Evaluator.number) }
        func xyUpdates(_ x: Double, _ y: Double) throws(PayloadError) -> [Update] {
            [
                .attribute(trait, ColorControlTrait.Attribute.currentX, .int(try coordinate(x))),
                .attribute(trait, ColorControlTrait.Attribute.currentY, .int(try coordinate(y))),
                .attribute(trait, ColorControlTrait.Attribute.colorMode, .int(modeXY)),
            ]
        }
        let h = number("h"), s = number("s")
        // zigbee2mqtt sends both xy and hs; `color_mode` says which the light is in.
        if let h, let s, mode == "hs" || number("x") == nil {
            return [
                .attribute(trait, ColorControlTrait.Attribute.currentHue, .int(try hue(degrees: h))),
                .attribute(trait, ColorControlTrait.Attribute.currentSaturation, .int(try saturation(percent: s))),
                .attribute(trait, ColorControlTrait.Attribute.colorMode, .int(modeHueSaturation)),
            ]
        }
        if let x = number("x"), let y = number("y") { return try xyUpdates(x, y) }
        if let r = number("r"), let g = number("g"), let b = number("b") {
            guard let (x, y) = try xy(red: r, green: g, blue: b) else { return [] }
            return try xyUpdates(x, y)
        }
        throw PayloadError("json light state: 'color' has none of x/y, h/s, r/g/b")
    }
}

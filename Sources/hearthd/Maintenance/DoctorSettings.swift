import DriverAPI
import Foundation
import GPIOKit
import HearthConfiguration
import HomeModel

/// What `hearth doctor` takes from `hearth.yaml`: the same file, read by the same code, as hearthd.
struct DoctorSettings {
    /// The broker the MQTT plugin connects to (`plugins.mqtt.broker`).
    struct Broker {
        var address: String
        var username: String?
        var password: String?
        /// `caFile` is set: the plugin speaks TLS.
        var tls: Bool
    }

    /// The GPIO plugin's lines (`plugins.gpio`).
    struct GPIO {
        /// Why there are no lines to check, when there are none.
        var none: String?
        /// The section could not be read (the message names the file, line and key).
        var problem: String?
        /// Lines on real chips, and the devices they belong to.
        var lines: [(id: String, chip: String, line: LineReference)] = []
        var simulatedChips: Set<String> = []

        /// Whether the configuration asks for no real chip at all (then the gpio group and
        /// /dev/gpiochip* do not matter). Without a configuration, doctor cannot tell: false.
        var realChipsUnneeded: Bool { problem == nil && none != nil && none != Self.noConfiguration }

        static let noConfiguration = "not checked: no configuration read (pass --config hearth.yaml)"
    }

    /// The configuration file doctor read (or tried to), nil when none was found.
    var file: String?
    var config: HearthConfig?
    /// The finding about the file itself.
    var finding: Diagnosis
    var broker: Broker?
    var gpio: GPIO

    /// Where doctor looks when `--config` is not given: the installed file (the .deb's and
    /// `scripts/install`'s), then hearthd's own default, `etc/hearth.yaml` in the current folder.
    static let defaultLocations = ["/etc/hearth/hearth.yaml", "etc/hearth.yaml"]

    static func read(explicit: String?) -> DoctorSettings {
        let check = "config"
        guard let file = explicit ?? defaultLocations.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            return DoctorSettings(
                file: nil, config: nil,
                finding: Diagnosis(
                    check: check, status: .skipped,
                    explanation: "no hearth.yaml at \(defaultLocations.joined(separator: " or ")): checking the flags' values and the defaults; "
                        + "pass --config to check what hearthd will use"),
                gpio: GPIO(none: GPIO.noConfiguration))
        }
        let config: HearthConfig
        do {
            config = try HearthConfig.load(path: file)
        } catch {
            return DoctorSettings(
                file: file, config: nil,
                finding: Diagnosis(
                    check: check, status: .problem,
                    explanation: "\(error.message): hearthd refuses to start with this file; fix it (hearthd --check --config \(file) checks it again)"),
                gpio: GPIO(none: GPIO.noConfiguration))
        }
        let plugins = config.plugins
        var broker: Broker?
        if let mqtt = plugins.sections["mqtt"], !plugins.disabled.contains("mqtt") {
            let b = mqtt.value["broker"]
            let host = b?["host"]?.stringValue ?? "127.0.0.1"
            let port = b?["port"]?.intValue ?? 1883
            broker = Broker(
                address: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)",
                username: b?["username"]?.stringValue, password: b?["password"]?.stringValue, tls: b?["caFile"]?.stringValue != nil)
        }
        return DoctorSettings(
            file: file, config: config, finding: Diagnosis(check: check, status: .ok, explanation: "read \(file)"), broker: broker,
            gpio: gpio(plugins))
    }

    static func gpio(_ plugins: HearthConfig.Plugins) -> GPIO {
        guard let section = plugins.sections["gpio"] else { return GPIO(none: "not checked: the gpio plugin is not configured") }
        if plugins.disabled.contains("gpio") { return GPIO(none: "not checked: the gpio plugin is disabled (enabled: false)") }
        let configuration: GPIOConfiguration
        do {
            configuration = try GPIOConfiguration.load(section)
        } catch {
            return GPIO(problem: "\(error.message): the gpio plugin will refuse this configuration")
        }
        var simulated = Set(configuration.simulated.map(\.chip))
        simulated.formUnion(configuration.simulated.compactMap(\.label))
        var result = GPIO(simulatedChips: simulated)
        for line in configuration.lines where !simulated.contains(line.chip) {
            result.lines.append((line.localID, line.chip, line.line))
            if let status = line.statusLine { result.lines.append(("\(line.localID) status", line.chip, status)) }
        }
        if result.lines.isEmpty {
            result.none = configuration.lines.isEmpty
                ? "not checked: the gpio plugin has no lines configured"
                : "nothing to check: every configured line is on a simulated chip (\(simulated.sorted().joined(separator: ", ")))"
        }
        return result
    }
}

extension Doctor {
    /// Each configured line on a real chip: free, in use by hearthd, or busy (and held by whom).
    static func gpioLines(_ gpio: DoctorSettings.GPIO, dev: String) -> [Diagnosis] {
        if let problem = gpio.problem { return [Diagnosis(check: "gpio lines", status: .problem, explanation: problem)] }
        if let none = gpio.none { return [Diagnosis(check: "gpio lines", status: .skipped, explanation: none)] }
        let backend = LibgpiodBackend()
        var chips: [String: Result<any GPIOChip, GPIOError>] = [:]
        var holders: GPIOLineHolders?
        defer {
            for case .success(let chip) in chips.values { chip.close() }
        }
        var findings: [Diagnosis] = []
        for (id, spec, reference) in gpio.lines {
            // --dev stands in for /dev (a staged folder); labels and paths are looked up as the plugin does.
            let path = dev != "/dev" && !spec.hasPrefix("/") ? (dev as NSString).appendingPathComponent(spec) : spec
            if chips[spec] == nil { chips[spec] = Result { () throws(GPIOError) in try backend.openChip(path) } }
            let chip: any GPIOChip
            switch chips[spec]! {
            case .success(let c): chip = c
            case .failure(let error):
                findings.append(Diagnosis(check: "gpio line \(spec):\(reference) (\(id))", status: .problem, explanation: error.message))
                continue
            }
            let resolved: Int? =
                switch reference {
                case .offset(let o): o < chip.lineCount ? o : nil
                case .name(let name): chip.offset(ofLineNamed: name)
                }
            guard let offset = resolved else {
                let why =
                    switch reference {
                    case .offset: "has only \(chip.lineCount) lines (0...\(chip.lineCount - 1))"
                    case .name(let name): "has no line named '\(name)': 'gpioinfo \(chip.name)' lists its lines, or use an offset"
                    }
                findings.append(
                    Diagnosis(check: "gpio line \(chip.name):\(reference) (\(id))", status: .problem, explanation: "\(chip.name) (\(chip.label)) \(why)"))
                continue
            }
            let check = "gpio line \(chip.name):\(offset) (\(id))"
            guard let consumer = chip.consumer(ofLine: offset) else {
                findings.append(Diagnosis(check: check, status: .ok, explanation: "free"))
                continue
            }
            if holders == nil { holders = GPIOLineHolders.scan() }
            findings.append(busyLine(check: check, chip: chip.name, offset: offset, consumer: consumer, holders: holders!))
        }
        return findings
    }

    static func busyLine(check: String, chip: String, offset: Int, consumer: String, holders: GPIOLineHolders) -> Diagnosis {
        let advice = ": stop it or pick another line"
        func held(_ h: GPIOLineHolder, likely: Bool) -> Diagnosis {
            if h.command == "hearthd" {
                return Diagnosis(check: check, status: .ok, explanation: "in use by hearthd (pid \(h.pid)) as '\(consumer)'")
            }
            return Diagnosis(
                check: check, status: .problem,
                explanation: "busy, held by \(h.command) (pid \(h.pid)) as consumer '\(consumer)'"
                    + (likely ? " (the only process that can hold it: the kernel names the lines of a request only for v2 requests from Linux 6.7 on)" : "")
                    + advice)
        }
        switch holders.holder(chip: chip, offset: offset, consumer: consumer) {
        case .process(let h): return held(h, likely: false)
        case .likely(let h): return held(h, likely: true)
        case .oneOf(let candidates):
            return Diagnosis(
                check: check, status: .problem,
                explanation: "busy, held by consumer '\(consumer)', one of "
                    + candidates.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ") + " (the kernel does not say which)" + advice)
        case .kernel:
            return Diagnosis(
                check: check, status: .problem,
                explanation: "claimed by the kernel itself as '\(consumer)', not by a process: a driver or a device-tree overlay "
                    + "(a dtoverlay in /boot/firmware/config.txt) uses it; pick another line or remove what claims it")
        case .unknown:
            if consumer.hasPrefix("hearth:") {
                return Diagnosis(check: check, status: .ok, explanation: "in use by hearthd as '\(consumer)' (its process is hidden from this user)")
            }
            return Diagnosis(
                check: check, status: .problem,
                explanation: "busy, held by consumer '\(consumer)'; which process is hidden from this user "
                    + "(run 'sudo hearth doctor' to name it)" + advice)
        }
    }
}

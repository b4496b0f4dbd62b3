public import DriverAPI
import Foundation
import HomeModel
#if canImport(Glibc)
    import Glibc
#endif

/// The GPIO plugin's `hearth doctor` checks: the `gpio` group, the chips, which libgpiod the
/// plugin will load, and each configured line on a real chip (free, used by hearthd, or busy
/// and held by whom).
public enum GPIODoctor {
    /// Every GPIO finding for `request`, in the order a person fixes them.
    public static func findings(_ request: DoctorRequest) -> [DoctorFinding] {
        let plan = lines(request)
        var findings: [DoctorFinding] = []
        if plan.realChipsUnneeded {
            let why = "not needed: \(request.configurationFile ?? "the configuration") asks for no real GPIO chip"
            findings += [
                DoctorFinding(check: "gpio group", status: .skipped, explanation: why),
                DoctorFinding(check: "gpio chips", status: .skipped, explanation: why),
            ]
        } else {
            findings += [group(user: request.user, accounts: request.accounts), chips(dev: request.deviceDirectory)]
            // Which libgpiod the plugin will load (v2 or v1) and the kernel's GPIO uAPI.
            let library = GPIOLibrary.doctorReport(dev: request.deviceDirectory)
            findings.append(DoctorFinding(check: "gpio library", status: library.isProblem ? .problem : .ok, explanation: library.explanation))
        }
        findings += check(plan, dev: request.deviceDirectory)
        return findings
    }

    /// The configured lines to check.
    struct Plan {
        /// Why there are no lines to check, when there are none.
        var none: String?
        /// The section could not be read (the message names the file, line and key).
        var problem: String?
        /// Lines on real chips, and the devices they belong to.
        var lines: [(id: String, chip: String, line: LineReference)] = []

        /// Whether the configuration asks for no real chip at all (then the gpio group and
        /// /dev/gpiochip* do not matter). Without a configuration, doctor cannot tell: false.
        var realChipsUnneeded: Bool { problem == nil && none != nil && none != Self.noConfiguration }

        static let noConfiguration = "not checked: no configuration read (pass --config hearth.yaml)"
    }

    static func lines(_ request: DoctorRequest) -> Plan {
        guard let section = request.configuration else {
            return Plan(none: request.configurationFile == nil ? Plan.noConfiguration : "not checked: the gpio plugin is not configured")
        }
        let configuration: GPIOConfiguration
        do {
            configuration = try GPIOConfiguration.load(section)
        } catch {
            return Plan(problem: "\(error.message): the gpio plugin will refuse this configuration")
        }
        var simulated = Set(configuration.simulated.map(\.chip))
        simulated.formUnion(configuration.simulated.compactMap(\.label))
        var result = Plan()
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

    static func group(user: String, accounts: SystemAccounts) -> DoctorFinding {
        let check = "gpio group"
        guard accounts.group("gpio") != nil else {
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "there is no 'gpio' group, so only root can open /dev/gpiochip*. Create it and give it the chips: "
                    + "'sudo groupadd --system gpio', then a udev rule: SUBSYSTEM==\"gpio\", GROUP=\"gpio\", MODE=\"0660\"")
        }
        if accounts.user(user, isIn: "gpio") {
            return DoctorFinding(check: check, status: .ok, explanation: "\(user) is in the gpio group")
        }
        return DoctorFinding(
            check: check, status: .problem,
            explanation: "\(user) is not in the gpio group, so it cannot open the GPIO chips. Run 'sudo usermod -aG gpio \(user)' "
                + "and sign in again (or restart hearthd)")
    }

    static func chips(dev: String) -> DoctorFinding {
        let check = "gpio chips"
        let chips = ((try? FileManager.default.contentsOfDirectory(atPath: dev)) ?? []).filter { $0.hasPrefix("gpiochip") }.sorted()
        guard !chips.isEmpty else {
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "no \(dev)/gpiochip* device: this kernel exposes no GPIO controller (not a Raspberry Pi, a container "
                    + "without the device passed in, or a kernel without CONFIG_GPIO_CDEV). The GPIO plugin can run on its simulated chip instead")
        }
        var unreadable: [String] = []
        for chip in chips {
            let fd = open((dev as NSString).appendingPathComponent(chip), O_RDWR | O_CLOEXEC)
            if fd < 0 { unreadable.append("\(chip) (\(String(cString: strerror(errno))))") } else { close(fd) }
        }
        if !unreadable.isEmpty {
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "cannot open \(unreadable.joined(separator: ", ")): check the gpio group and the chips' permissions (ls -l \(dev)/gpiochip*)")
        }
        return DoctorFinding(check: check, status: .ok, explanation: "found \(chips.joined(separator: ", "))")
    }

    /// Each configured line on a real chip: free, in use by hearthd, or busy (and held by whom).
    static func check(_ gpio: Plan, dev: String) -> [DoctorFinding] {
        if let problem = gpio.problem { return [DoctorFinding(check: "gpio lines", status: .problem, explanation: problem)] }
        if let none = gpio.none { return [DoctorFinding(check: "gpio lines", status: .skipped, explanation: none)] }
        let backend = LibgpiodBackend()
        var chips: [String: Result<any GPIOChip, GPIOError>] = [:]
        var holders: GPIOLineHolders?
        defer {
            for case .success(let chip) in chips.values { chip.close() }
        }
        var findings: [DoctorFinding] = []
        for (id, spec, reference) in gpio.lines {
            // --dev stands in for /dev (a staged folder); labels and paths are looked up as the plugin does.
            let path = dev != "/dev" && !spec.hasPrefix("/") ? (dev as NSString).appendingPathComponent(spec) : spec
            if chips[spec] == nil { chips[spec] = Result { () throws(GPIOError) in try backend.openChip(path) } }
            let chip: any GPIOChip
            switch chips[spec]! {
            case .success(let c): chip = c
            case .failure(let error):
                findings.append(DoctorFinding(check: "gpio line \(spec):\(reference) (\(id))", status: .problem, explanation: error.message))
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
                    DoctorFinding(check: "gpio line \(chip.name):\(reference) (\(id))", status: .problem, explanation: "\(chip.name) (\(chip.label)) \(why)"))
                continue
            }
            let check = "gpio line \(chip.name):\(offset) (\(id))"
            guard let consumer = chip.consumer(ofLine: offset) else {
                findings.append(DoctorFinding(check: check, status: .ok, explanation: "free"))
                continue
            }
            if holders == nil { holders = GPIOLineHolders.scan() }
            findings.append(busyLine(check: check, chip: chip.name, offset: offset, consumer: consumer, holders: holders!))
        }
        return findings
    }

    static func busyLine(check: String, chip: String, offset: Int, consumer: String, holders: GPIOLineHolders) -> DoctorFinding {
        let advice = ": stop it or pick another line"
        func held(_ h: GPIOLineHolder, likely: Bool) -> DoctorFinding {
            if h.command == "hearthd" {
                return DoctorFinding(check: check, status: .ok, explanation: "in use by hearthd (pid \(h.pid)) as '\(consumer)'")
            }
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "busy, held by \(h.command) (pid \(h.pid)) as consumer '\(consumer)'"
                    + (likely ? " (the only process that can hold it: the kernel names the lines of a request only for v2 requests from Linux 6.7 on)" : "")
                    + advice)
        }
        switch holders.holder(chip: chip, offset: offset, consumer: consumer) {
        case .process(let h): return held(h, likely: false)
        case .likely(let h): return held(h, likely: true)
        case .oneOf(let candidates):
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "busy, held by consumer '\(consumer)', one of "
                    + candidates.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ") + " (the kernel does not say which)" + advice)
        case .kernel:
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "claimed by the kernel itself as '\(consumer)', not by a process: a driver or a device-tree overlay "
                    + "(a dtoverlay in /boot/firmware/config.txt) uses it; pick another line or remove what claims it")
        case .unknown:
            if consumer.hasPrefix("hearth:") {
                return DoctorFinding(check: check, status: .ok, explanation: "in use by hearthd as '\(consumer)' (its process is hidden from this user)")
            }
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "busy, held by consumer '\(consumer)'; which process is hidden from this user "
                    + "(run 'sudo hearth doctor' to name it)" + advice)
        }
    }
}

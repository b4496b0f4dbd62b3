import DriverAPI
import Foundation
import HearthConfiguration
import HomeModel

/// What `hearth doctor` takes from `hearth.yaml`: the same file, read by the same code, as
/// hearthd. Each plugin's section goes to the plugin's own checks (`DriverPlugin.doctor`).
struct DoctorSettings {
    /// The configuration file doctor read (or tried to), nil when none was found.
    var file: String?
    var config: HearthConfig?
    /// The finding about the file itself.
    var finding: Diagnosis

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
                        + "pass --config to check what hearthd will use"))
        }
        let config: HearthConfig
        do {
            config = try HearthConfig.load(path: file)
        } catch {
            return DoctorSettings(
                file: file, config: nil,
                finding: Diagnosis(
                    check: check, status: .problem,
                    explanation: "\(error.message): hearthd refuses to start with this file; fix it (hearthd --check --config \(file) checks it again)"))
        }
        return DoctorSettings(
            file: file, config: config, finding: Diagnosis(check: check, status: .ok, explanation: "read \(file)"))
    }
}

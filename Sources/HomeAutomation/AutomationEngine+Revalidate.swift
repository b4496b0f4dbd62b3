import HomeCore
import HomeModel
import Foundation
import HashTreeCollections

/// Runtime re-validation (design §6.5): when a device an automation uses leaves the home
/// (removed or decommissioned) the automation becomes inert — listed, with `deviceRemoved`
/// issues naming where it used the device, announced once — and when the device is back it
/// compiles and runs again.
extension AutomationEngine {
    /// `changed` are devices whose shape changed (added, removed, commissioned, connectivity).
    func revalidate(_ changed: Set<DeviceID>) {
        let state = core.state
        // Loaded automations that use a device that is no longer in the home.
        let gone = changed.filter { state.commissioned[$0] == nil }
        if !gone.isEmpty {
            for (id, used) in usedDevices.sorted(by: { $0.key < $1.key }) where !used.isDisjoint(with: gone) {
                guard let record = records[id] else { continue }
                install(record, quiet: true)
                guard compiled[id] == nil, var inert = records[id] else { continue }
                inert.issues = inert.issues.map { issue in
                    guard AutomationIssue.missingDeviceCodes.contains(issue.code) else { return issue }
                    var i = issue
                    i.code = "deviceRemoved"
                    i.message = issue.message.replacingOccurrences(of: " is not in the home (decommissioned, or not commissioned yet)", with: " was removed from the home")
                        + "; the automation does nothing until it is back"
                    return i
                }
                records[id] = inert
                let where_ = inert.issues.filter { $0.code == "deviceRemoved" }.map(\.path).joined(separator: ", ")
                notify(
                    "automation \(id) is inert: " + gone.intersection(used).map(\.rawValue).sorted().joined(separator: ", ")
                        + " left the home (used at \(where_)); it runs again when \(gone.intersection(used).count == 1 ? "it is" : "they are") back")
            }
        }
        // Inert automations that waited for a device that is back.
        let back = changed.filter { state.commissioned[$0] != nil }
        guard !back.isEmpty, compiled.count < records.count else { return }  // none is inert: nothing to retry
        for (id, record) in records.sorted(by: { $0.key < $1.key })
        where compiled[id] == nil && record.issues.contains(where: { AutomationIssue.missingDeviceCodes.contains($0.code) }) {
            guard compiler().compile(record.automation).0 != nil else { continue }
            install(record)
            notify("automation \(id): its devices are back; it runs again")
        }
    }

    /// Every device a compiled automation uses: starters, conditions (also in waits and
    /// branches) and actions.
    static func devices(of c: CompiledAutomation) -> Set<DeviceID> {
        var out = Set<DeviceID>()
        for s in c.starters {
            switch s.kind {
            case .attribute(let key, _, _, _): out.insert(key.device)
            case .event(let d, _, _, _), .connectivity(let d, _, _): out.insert(d)
            case .time, .sun, .manual, .startup: break
            }
        }
        if let cond = c.conditions { devices(in: cond, into: &out) }
        actionDevices(c.actions, into: &out)
        return out
    }

    static func devices(in condition: CompiledCondition, into out: inout Set<DeviceID>) {
        switch condition {
        case .all(let l), .any(let l): for x in l { devices(in: x, into: &out) }
        case .not(let x): devices(in: x, into: &out)
        case .attribute(let key, _, _, _): out.insert(key.device)
        case .connectivity(let d, _): out.insert(d)
        case .time, .sun, .starter, .scene: break
        }
    }

    static func actionDevices(_ actions: [CompiledAction], into out: inout Set<DeviceID>) {
        for a in actions {
            switch a {
            case .command(let r, _): out.insert(r.device)
            case .write(let d, _, _, _, _): out.insert(d)
            case .waitFor(let cond, _, _): devices(in: cond, into: &out)
            case .if(let cond, let then, let otherwise):
                devices(in: cond, into: &out)
                actionDevices(then + otherwise, into: &out)
            case .parallel(let list): actionDevices(list, into: &out)
            case .scene, .delay, .stop, .run, .log, .notify, .publish, .webhook: break
            }
        }
    }
}

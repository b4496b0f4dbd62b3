public import HomeCore
import HomeModel
import Foundation
import HashTreeCollections

/// Automations owned by apps (issue 18, design §6.6): an app whose grant has automation types
/// (`GrantScope.automationTypes`, the consent's `referencedAutomationTypes`) and may control
/// creates, edits, enables, runs and deletes its own automations; they may use only devices its
/// grant shows and (device type, trait) pairs it may automate, and no scene, `run`, `publish`,
/// `webhook` or `notify` action. The grant is looked up again at every run: a narrowed grant
/// refuses the run (traced), a revoked one suspends the automation (`grantRevoked`) and ends its
/// runs; commands go out as the app, so the core checks its scope too.
extension AutomationEngine {
    /// The owner of an automation an app makes: `app:<grant ID>` (``readable(_:by:)`` reads it so).
    static func owner(of principal: Principal) -> String { "app:\(principal.sessionID ?? principal.id)" }

    /// The grant ID of an app-owned automation (nil: the home's).
    static func grantID(ofOwner owner: String) -> String? { owner.hasPrefix("app:") ? String(owner.dropFirst(4)) : nil }

    /// Sets how the engine finds an app grant's current scope (nil: revoked or gone). hearthd
    /// reads the access store; without it app-owned automations do not run.
    public func setGrantLookup(_ lookup: @escaping @Sendable (String) -> GrantScope?) { grantLookup = lookup }

    /// An app's grant was revoked: its automations are suspended (`grantRevoked`) and their
    /// runs end. A re-approval does not resume them; an admin does (enable).
    public func suspendAutomations(ofGrant grantID: String) {
        for (id, r) in records where r.owner == "app:\(grantID)" && r.state != "suspended" {
            suspend(id, reason: "grantRevoked")
            notify("automation \(id) was suspended: its app's grant was revoked")
        }
    }

    /// Who may edit, enable, delete or run `record` (beyond reading it): admins, and the app that owns it.
    func requireManage(_ record: AutomationRecord, _ principal: Principal, _ what: String) throws(AutomationError) {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        switch principal.role {
        case .admin: return
        case .app where record.owner == Self.owner(of: principal): return
        case .app: throw AutomationError(.notFound, "no automation '\(record.automation.id)'")
        case .member: throw AutomationError(.permissionDenied, "\(principal) is a member; only an admin can \(what)")
        }
    }

    /// Everything in `automation` an app with `scope` may not use, as `outOfScope` errors.
    func outOfScope(_ automation: Automation, scope: GrantScope) -> [AutomationIssue] {
        guard let c = compiler().compile(automation).0 else { return [] }
        var issues: [AutomationIssue] = []
        let state = core.state
        let catalog = core.catalog
        let pairs = scope.automationTypes ?? []
        func deny(_ path: String, _ message: String) { issues.append(AutomationIssue(.error, "outOfScope", path, message)) }
        func device(_ d: DeviceID, at path: String) -> DeviceSnapshot? {
            guard let snapshot = state.devices[d], let seen = scope.view(of: snapshot, catalog: catalog) else {
                deny(path, "\(d) is outside this app's grant")
                return nil
            }
            return seen
        }
        func pair(_ d: DeviceID, _ type: DeviceTypeID?, _ trait: TraitID, at path: String) {
            guard let seen = device(d, at: path) else { return }
            let candidates = seen.types.filter { ($0.id == type || type == nil) && $0.traits[trait] != nil }
            guard candidates.contains(where: { pairs.contains(AutomationType(deviceType: $0.id, trait: trait)) }) else {
                let traitName = catalog.trait(trait)?.name ?? trait.hex
                let allowed = pairs.compactMap { p in catalog.deviceType(p.deviceType).map { "\($0.name) (\(catalog.trait(p.trait)?.name ?? p.trait.hex))" } }
                deny(path, "this app may not automate \(traitName) of \(d)" + (allowed.isEmpty ? "" : "; it may automate " + allowed.sorted().joined(separator: ", ")))
                return
            }
        }
        for (i, s) in c.starters.enumerated() {
            let path = "starters[\(i)]"
            switch s.kind {
            case .attribute(let key, let type, _, _): pair(key.device, type, key.trait, at: path)
            case .event(let d, let t, _, _): pair(d, nil, t, at: path)
            case .connectivity(let d, _, _): _ = device(d, at: path)
            case .time, .sun, .manual, .startup: break
            }
        }
        func checkCondition(_ condition: CompiledCondition, _ path: String) {
            switch condition {
            case .all(let l): for (i, x) in l.enumerated() { checkCondition(x, "\(path).all[\(i)]") }
            case .any(let l): for (i, x) in l.enumerated() { checkCondition(x, "\(path).any[\(i)]") }
            case .not(let x): checkCondition(x, "\(path).not")
            case .attribute(let key, let type, _, _): pair(key.device, type, key.trait, at: path)
            case .connectivity(let d, _): _ = device(d, at: path)
            case .scene: deny(path, "apps may not test scenes in automations")
            case .time, .sun, .starter: break
            }
        }
        if let cond = c.conditions { checkCondition(cond, "conditions") }
        func checkActions(_ actions: [CompiledAction], _ path: String) {
            for (i, a) in actions.enumerated() {
                let p = "\(path)[\(i)]"
                switch a {
                case .command(let r, _): pair(r.device, r.deviceType, r.trait, at: p)
                case .write(let d, let type, let trait, _, _): pair(d, type, trait, at: p)
                case .waitFor(let cond, _, _): checkCondition(cond, p)
                case .if(let cond, let then, let otherwise):
                    checkCondition(cond, p)
                    checkActions(then, "\(p).then")
                    checkActions(otherwise, "\(p).else")
                case .parallel(let list): checkActions(list, "\(p).parallel")
                case .scene: deny(p, "apps may not recall scenes from automations")
                case .run: deny(p, "apps may not run other automations")
                case .publish, .webhook, .notify: deny(p, "apps may not use publish, webhook or notify actions")
                case .delay, .stop, .log: break
                }
            }
        }
        checkActions(c.actions, "actions")
        if scope.canControl == false { deny("", "this app's grant does not let it control devices") }
        return issues
    }

    /// An app may simulate only within its grant as it is now: it must be allowed to automate,
    /// and everything the automation uses must be inside the grant (`outOfScope` issues
    /// otherwise). Which automations it may name is checked by the caller (its own only).
    func mayAppSimulate(_ automation: Automation, as principal: Principal) throws(AutomationError) {
        guard principal.role == .app else { return }
        guard let scope = principal.scope, scope.canAutomate else {
            throw AutomationError(.permissionDenied, "this app's grant does not let it automate (it has no automation types, or may not control)")
        }
        let denied = outOfScope(automation, scope: scope)
        if !denied.isEmpty {
            throw AutomationError(.permissionDenied, "automation '\(automation.id)' uses \(denied.count) thing(s) this app may not automate", issues: denied)
        }
    }

    /// For a run of `record`: the scope to act with (nil for the home's automations), or why it
    /// may not run now (the grant was revoked: the automation is then suspended).
    func actingScope(_ record: AutomationRecord) -> Result<GrantScope?, AutomationError> {
        guard let grant = Self.grantID(ofOwner: record.owner) else { return .success(nil) }
        guard let lookup = grantLookup else {
            return .failure(AutomationError(.permissionDenied, "this engine cannot check app grants; app automations do not run"))
        }
        guard let scope = lookup(grant) else {
            suspend(record.automation.id, reason: "grantRevoked")
            return .failure(AutomationError(.permissionDenied, "the app's grant was revoked; suspended"))
        }
        let issues = outOfScope(record.automation, scope: scope)
        if !issues.isEmpty {
            return .failure(AutomationError(.permissionDenied, "outside the app's grant now: " + issues.map(\.message).joined(separator: "; ")))
        }
        return .success(scope)
    }
}

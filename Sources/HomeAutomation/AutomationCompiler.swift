public import HomeCore
public import HomeModel
public import Foundation
import HashTreeCollections

/// Resolves an ``Automation``'s names against the home and checks everything at once: every
/// problem comes back with a code, its path and a suggestion; nothing stops at the first.
///
/// The one compiler behind YAML, the API, validate and simulate.
public struct AutomationCompiler: Sendable {
    public let catalog: Catalog
    public let state: HomeState
    /// Scene IDs that exist.
    public var scenes: Set<String>
    /// Automation IDs that exist, with whether each has a manual starter.
    public let automations: [String: Bool]

    /// Where the home is, for sun starters (see ``checksLocation``).
    public var location: SolarLocation?
    /// Whether a sun starter without a ``location`` is an error (`locationRequired`).
    public var checksLocation = false
    /// The time zone sun days are counted in (the `sunEventMissing` warning).
    public var timeZone: TimeZone = .current

    public init(catalog: Catalog, state: HomeState, scenes: Set<String> = [], automations: [String: Bool] = [:]) {
        self.catalog = catalog
        self.state = state
        self.scenes = scenes
        self.automations = automations
    }

    /// Every problem in the automation (errors and warnings); empty when it is fine.
    public func validate(_ automation: Automation) -> [AutomationIssue] {
        compile(automation).issues
    }

    func compile(_ a: Automation) -> (CompiledAutomation?, issues: [AutomationIssue]) {
        var ctx = Context(compiler: self, allowSensitive: a.allowSensitive ?? false)
        if a.id.isEmpty || !a.id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
            ctx.issue("invalidId", "id", "an automation id is letters, digits, '-' and '_' (got '\(a.id)')")
        }
        let verdict = NamingRules.check(a.name)
        if !verdict.isValid {
            ctx.issue("invalidName", "name", "invalid name '\(a.name)': " + verdict.violations.map(\.rule).joined(separator: "; "),
                suggestion: verdict.suggestions.first.map { "'\($0)'" })
        }
        if let n = a.maxRuns, !(1...10).contains(n) { ctx.issue("outOfRange", "maxRuns", "maxRuns is 1…10 (got \(n))") }
        if let s = a.suppressFor, s.milliseconds < 0 || s > .seconds(86_400) {
            ctx.issue("outOfRange", "suppressFor", "suppressFor is 0 s – 24 h (got \(s))")
        }
        if let n = a.maxExecutions, n < 1 { ctx.issue("outOfRange", "maxExecutions", "maxExecutions is at least 1") }
        if a.starters.isEmpty { ctx.issue("noStarters", "starters", "an automation needs at least one starter") }
        if a.actions.isEmpty { ctx.issue("noActions", "actions", "an automation needs at least one action") }

        var starters: [CompiledStarter] = []
        var ids = Set<String>()
        for (i, s) in a.starters.enumerated() {
            let id = s.id ?? "starter\(i)"
            if !ids.insert(id).inserted { ctx.issue("duplicateStarterId", "starters[\(i)].id", "starter id '\(id)' is used twice") }
            if let k = ctx.starter(s.kind, at: "starters[\(i)]") { starters.append(CompiledStarter(id: id, index: i, kind: k)) }
        }
        ctx.starterIDs = ids
        let conditions = a.conditions.flatMap { ctx.condition($0, at: "conditions") }
        let actions = ctx.actions(a.actions, at: "actions", depth: 0)
        let errors = ctx.issues.contains { $0.severity == .error }
        let compiled = errors ? nil : CompiledAutomation(source: a, starters: starters, conditions: conditions, actions: actions)
        return (compiled, ctx.issues)
    }

    struct Context {
        let compiler: AutomationCompiler
        let allowSensitive: Bool
        var issues: [AutomationIssue] = []
        var starterIDs: Set<String> = []
        var catalog: Catalog { compiler.catalog }
        var state: HomeState { compiler.state }

        mutating func issue(_ code: String, _ path: String, _ message: String, suggestion: String? = nil, warning: Bool = false) {
            issues.append(AutomationIssue(warning ? .warning : .error, code, path, message, suggestion: suggestion))
        }

        static func quoted(_ names: [String]) -> String? { names.isEmpty ? nil : names.map { "'\($0)'" }.joined(separator: " or ") }

        /// The device by ID, or by name (case-insensitive) among commissioned devices.
        mutating func device(_ name: String, at path: String) -> DeviceSnapshot? {
            if let d = state.devices[DeviceID(rawValue: name)] {
                if d.commissioning == .commissioned { return d }
                // Decommissioned (or not commissioned yet): not in the home, so nothing may use it.
                issue("notCommissioned", path, "'\(name)' is not in the home (decommissioned, or not commissioned yet)",
                    suggestion: "commission it again, or name another device")
                return nil
            }
            let byName = state.commissioned.values.filter { NamingRules.normalised($0.name) == NamingRules.normalised(name) }
            if byName.count == 1 { return byName[0] }
            let names = state.commissioned.values.map(\.id.rawValue) + state.commissioned.values.map(\.name)
            issue("unknownDevice", path, "no device '\(name)'", suggestion: Self.quoted(EditDistance.closest(to: name, in: names)))
            return nil
        }

        /// The device type and trait, the type resolved when not given (GHA's rule: required
        /// when two of the device's types have the trait).
        mutating func trait(_ device: DeviceSnapshot, type: String?, trait name: String, at path: String)
            -> (DeviceTypeID, TraitDescriptor)?
        {
            guard let trait = catalog.trait(named: name) else {
                let names = device.types.flatMap { $0.traits.keys }.compactMap { catalog.trait($0)?.swiftName.replacingOccurrences(of: "Trait", with: "") }
                issue("unknownTrait", "\(path).trait", "no trait '\(name)' in the catalogue",
                    suggestion: Self.quoted(EditDistance.closest(to: name, in: Array(Set(names)))))
                return nil
            }
            var candidates = device.types.filter { $0.traits[trait.id] != nil }
            if let type {
                guard let t = catalog.deviceType(named: type) else {
                    issue("unknownType", "\(path).type", "no device type '\(type)' in the catalogue",
                        suggestion: Self.quoted(device.types.compactMap { catalog.deviceType($0.id)?.swiftName.replacingOccurrences(of: "DeviceType", with: "") }))
                    return nil
                }
                candidates = candidates.filter { $0.id == t.id }
                if device.type(t.id) == nil {
                    issue("typeNotOnDevice", "\(path).type", "\(device.name) is not a \(t.name)",
                        suggestion: Self.quoted(device.types.compactMap { catalog.deviceType($0.id)?.swiftName.replacingOccurrences(of: "DeviceType", with: "") }))
                    return nil
                }
            }
            guard let chosen = candidates.first else {
                let has = Set(device.types.flatMap { $0.traits.keys }).compactMap { catalog.trait($0)?.swiftName.replacingOccurrences(of: "Trait", with: "") }.sorted()
                issue("traitNotOnDevice", "\(path).trait", "\(device.name) has no \(trait.name) trait" + (type.map { " on its \($0) type" } ?? ""),
                    suggestion: Self.quoted(has))
                return nil
            }
            if candidates.count > 1 {
                issue("ambiguousType", "\(path).type", "\(device.name) has \(trait.name) on several types; name one",
                    suggestion: Self.quoted(candidates.compactMap { catalog.deviceType($0.id)?.swiftName.replacingOccurrences(of: "DeviceType", with: "") }))
                return nil
            }
            if !allowSensitive, catalog.deviceType(chosen.id)?.isSensitive == true {
                issue("sensitiveNotAllowed", path, "\(device.name) is sensitive (\(catalog.deviceType(chosen.id)?.name ?? "")); an admin must set allowSensitive")
            }
            return (chosen.id, trait)
        }

        mutating func attribute(_ trait: TraitDescriptor, _ name: String, at path: String) -> AttributeDescriptor? {
            if let a = trait.attribute(named: name) ?? catalog.attributeByLooseName(trait, name) { return a }
            issue("unknownAttribute", path, "\(trait.name) has no attribute '\(name)'",
                suggestion: Self.quoted(EditDistance.closest(to: name, in: trait.attributes.map(\.name), limit: 2)))
            return nil
        }

        mutating func check(_ value: Value, _ a: AttributeDescriptor, _ trait: TraitDescriptor, at path: String) {
            do throws(HomeError) {
                try a.validate(value, in: trait)
            } catch {
                issue("valueOutOfRange", path, error.message, suggestion: a.allowedRange.map { "a value in \($0.lowerBound)…\($0.upperBound)" })
            }
        }

        mutating func number(_ x: Double, _ a: AttributeDescriptor, at path: String) {
            if !a.type.isInteger && a.type != .single && a.type != .double {
                issue("notNumeric", path, "\(a.name) is not a number (\(a.type.rawValue)); use to/from")
            } else if let r = a.allowedRange, x < Double(r.lowerBound) || x > Double(r.upperBound) {
                issue("valueOutOfRange", path, "\(x) is outside \(a.name)'s range", suggestion: "a value in \(r.lowerBound)…\(r.upperBound)")
            }
        }

        mutating func starter(_ kind: Starter.Kind, at path: String) -> CompiledStarter.Kind? {
            switch kind {
            case .attribute(let s):
                let p = "\(path).attribute"
                guard let d = device(s.device, at: "\(p).device"), let (type, trait) = self.trait(d, type: s.type, trait: s.trait, at: p),
                    let a = attribute(trait, s.attribute, at: "\(p).attribute")
                else { return nil }
                let forms = [s.changes == true, s.to != nil || s.from != nil, s.above != nil, s.below != nil].filter { $0 }.count
                if forms > 1 { issue("conflictingStarter", p, "use one of changes, to/from, above, below") }
                if let h = s.hysteresis, h < 0 { issue("outOfRange", "\(p).hysteresis", "hysteresis is not negative") }
                if let t = s.to { check(t, a, trait, at: "\(p).to") }
                if let f = s.from { check(f, a, trait, at: "\(p).from") }
                if let x = s.above { number(x, a, at: "\(p).above") }
                if let x = s.below { number(x, a, at: "\(p).below") }
                let predicate: Predicate =
                    if let x = s.above { .above(x, hysteresis: s.hysteresis ?? 0) } else if let x = s.below {
                        .below(x, hysteresis: s.hysteresis ?? 0)
                    } else if s.to != nil || s.from != nil { .equals(to: s.to, from: s.from) } else { .changes }
                if s.hysteresis != nil, s.above == nil, s.below == nil {
                    issue("unusedHysteresis", "\(p).hysteresis", "hysteresis applies to above/below only", warning: true)
                }
                if let h = s.for, h.milliseconds < 0 || h > .seconds(7 * 86_400) { issue("outOfRange", "\(p).for", "for is 0 s – 7 d") }
                return .attribute(AttributeKey(device: d.id, trait: trait.id, attribute: a.id), type: s.type == nil ? nil : type, predicate, hold: s.for)
            case .event(let s):
                let p = "\(path).event"
                guard let d = device(s.device, at: "\(p).device"), let (_, trait) = self.trait(d, type: s.type, trait: s.trait, at: p) else { return nil }
                guard let e = trait.event(named: s.event) ?? trait.events.first(where: { $0.name.lowercased() == s.event.lowercased() }) else {
                    issue("unknownEvent", "\(p).event", "\(trait.name) has no event '\(s.event)'",
                        suggestion: Self.quoted(EditDistance.closest(to: s.event, in: trait.events.map(\.name), limit: 2)))
                    return nil
                }
                var fields: [String: Value] = [:]
                for (k, v) in s.where ?? [:] {
                    guard let f = e.fields.first(where: { $0.name.lowercased() == k.lowercased() || $0.swiftName.lowercased() == k.lowercased() }) else {
                        issue("unknownField", "\(p).where.\(k)", "\(e.name) has no field '\(k)'", suggestion: Self.quoted(e.fields.map(\.name)))
                        continue
                    }
                    fields[f.name] = v
                }
                if e.name == "MultiPressComplete" {
                    issue("slowButtonStarter", "\(p).event", "MultiPressComplete arrives after the multi-press window ends", suggestion: "'InitialPress'", warning: true)
                }
                return .event(device: d.id, trait: trait.id, event: e.id, fields: fields)
            case .connectivity(let s):
                let p = "\(path).connectivity"
                guard let d = device(s.device, at: "\(p).device") else { return nil }
                guard let to = ConnectivityState(rawValue: s.to), to == .online || to == .offline else {
                    issue("invalidValue", "\(p).to", "to is 'online' or 'offline' (got '\(s.to)')")
                    return nil
                }
                return .connectivity(device: d.id, to: to, hold: s.for)
            case .time(let t):
                let p = "\(path).time"
                let forms = [t.at != nil, t.every != nil, t.once != nil].filter { $0 }.count
                if forms != 1 { issue("invalidTime", p, "a time starter has one of at, every, once") }
                if let at = t.at, LocalTime(parsing: at) == nil { issue("invalidTime", "\(p).at", "'\(at)' is not a time of day (HH:MM or HH:MM:SS)") }
                if let days = t.days { checkDays(days, at: "\(p).days") }
                if let e = t.every, e < .seconds(1) || e > .seconds(86_400) { issue("outOfRange", "\(p).every", "every is 1 s – 24 h") }
                if let once = t.once, LocalTime.parseDateTime(once) == nil {
                    issue("invalidTime", "\(p).once", "'\(once)' is not a local date and time (YYYY-MM-DDTHH:MM)")
                }
                return .time(t)
            case .sun(let s):
                if !["sunrise", "sunset", "dawn", "dusk", "solarNoon"].contains(s.event) {
                    issue("invalidValue", "\(path).sun.event", "sun events: sunrise, sunset, dawn, dusk, solarNoon",
                        suggestion: Self.quoted(EditDistance.closest(to: s.event, in: ["sunrise", "sunset", "dawn", "dusk", "solarNoon"], limit: 1)))
                }
                if let o = s.offset, o > .seconds(86_400) || o < .seconds(-86_400) {
                    issue("durationOutOfRange", "\(path).sun.offset", "a sun offset is at most 24 h either way")
                }
                if compiler.location == nil, compiler.checksLocation {
                    issue("locationRequired", "\(path).sun", "a sun starter needs the home's coordinates",
                        suggestion: "location: { latitude: …, longitude: …, timezone: … } in hearth.yaml")
                }
                if let location = compiler.location, let event = SolarCalculator.Event(rawValue: s.event), event != .solarNoon {
                    let missing = SolarCalculator.missingDays(event, from: Date(), days: 366, in: compiler.timeZone, location)
                    if let first = missing.first {
                        issue(
                            "sunEventMissing", "\(path).sun.event",
                            "no \(s.event) on \(missing.count) day(s) of the coming year at latitude \(location.latitude) (polar day or night), from \(first); it does not fire on those days",
                            warning: true)
                    }
                }
                return .sun(s)
            case .manual:
                return .manual
            case .startup(let after):
                return .startup(after: after)
            }
        }

        mutating func checkDays(_ days: [String], at path: String) {
            for (i, d) in days.enumerated() where LocalTime.weekday(d) == nil {
                issue("invalidDays", "\(path)[\(i)]", "'\(d)' is not a day", suggestion: Self.quoted(EditDistance.closest(to: d, in: LocalTime.dayNames, limit: 1)))
            }
        }

        mutating func condition(_ c: Condition, at path: String) -> CompiledCondition? {
            switch c {
            case .all(let l): return .all(l.enumerated().compactMap { condition($0.element, at: "\(path).all[\($0.offset)]") })
            case .any(let l): return .any(l.enumerated().compactMap { condition($0.element, at: "\(path).any[\($0.offset)]") })
            case .not(let x): return condition(x, at: "\(path).not").map { .not($0) }
            case .attribute(let s):
                let p = "\(path).attribute"
                guard let d = device(s.device, at: "\(p).device"), let (type, trait) = self.trait(d, type: s.type, trait: s.trait, at: p),
                    let a = attribute(trait, s.attribute, at: "\(p).attribute")
                else { return nil }
                if let v = s.equals { check(v, a, trait, at: "\(p).equals") }
                for (i, v) in (s.in ?? []).enumerated() { check(v, a, trait, at: "\(p).in[\(i)]") }
                if let x = s.above { number(x, a, at: "\(p).above") }
                if let x = s.below { number(x, a, at: "\(p).below") }
                return .attribute(AttributeKey(device: d.id, trait: trait.id, attribute: a.id), type: type, s, path: p)
            case .time(let t):
                for (k, v) in [("after", t.after), ("before", t.before)] {
                    if let v, LocalTime(parsing: v) == nil { issue("invalidTime", "\(path).time.\(k)", "'\(v)' is not a time of day") }
                }
                if let days = t.days { checkDays(days, at: "\(path).time.days") }
                return .time(t, path: "\(path).time")
            case .sun(let x):
                return sun(x, at: "\(path).sun")
            case .starter(let id):
                if !starterIDs.contains(id) {
                    issue("unknownStarter", "\(path).starter", "no starter '\(id)'", suggestion: Self.quoted(EditDistance.closest(to: id, in: Array(starterIDs))))
                }
                return .starter(id)
            case .scene(let id):
                if !compiler.scenes.contains(id) {
                    issue("unknownScene", "\(path).scene", "no scene '\(id)'", suggestion: Self.quoted(EditDistance.closest(to: id, in: Array(compiler.scenes))))
                }
                return .scene(id)
            case .connectivity(let name, let s):
                guard let d = device(name, at: "\(path).connectivity.device") else { return nil }
                guard let state = ConnectivityState(rawValue: s) else {
                    issue("invalidValue", "\(path).connectivity.is", "is: online, offline, partiallyOnline or unknown")
                    return nil
                }
                return .connectivity(d.id, state)
            }
        }

        /// A sun condition: `isUp`, or `after`/`before` sun instants; needs the home's location.
        mutating func sun(_ x: SunCondition, at p: String) -> CompiledCondition? {
            let names = SolarCalculator.Event.allCases.map(\.rawValue)
            func instant(_ text: String?, _ key: String) -> SunInstant? {
                guard let text else { return nil }
                guard let i = SunInstant(parsing: text) else {
                    let word = String(text.prefix { $0.isLetter })
                    issue("invalidValue", "\(p).\(key)", "'\(text)' is not a sun event with an optional offset (e.g. sunset-30m, sunrise+10m)",
                        suggestion: Self.quoted(EditDistance.closest(to: word, in: names, limit: 1).map { $0 + String(text.dropFirst(word.count)) }))
                    return nil
                }
                if i.offset > .seconds(86_400) || i.offset < .seconds(-86_400) {
                    issue("durationOutOfRange", "\(p).\(key)", "a sun offset is at most 24 h either way")
                }
                return i
            }
            let after = instant(x.after, "after"), before = instant(x.before, "before")
            if x.isUp != nil, x.after != nil || x.before != nil {
                issue("conflictingCondition", p, "a sun condition has isUp, or after and/or before, not both")
            } else if x.isUp == nil, x.after == nil, x.before == nil {
                issue("missingKey", p, "a sun condition needs isUp, or after and/or before", suggestion: "'isUp: true' or 'after: sunset-30m'")
            }
            if compiler.location == nil, compiler.checksLocation {
                issue("locationRequired", p, "a sun condition needs the home's coordinates",
                    suggestion: "location: { latitude: …, longitude: …, timezone: … } in hearth.yaml")
            }
            if let location = compiler.location {
                for (key, i) in [("after", after), ("before", before)] {
                    guard let i, i.event != .solarNoon else { continue }
                    let missing = SolarCalculator.missingDays(i.event, from: Date(), days: 366, in: compiler.timeZone, location)
                    if let first = missing.first {
                        issue(
                            "sunEventMissing", "\(p).\(key)",
                            "no \(i.event.rawValue) on \(missing.count) day(s) of the coming year at latitude \(location.latitude) (polar day or night), from \(first); the condition does not hold on those days",
                            warning: true)
                    }
                }
            }
            return .sun(after: after, before: before, isUp: x.isUp)
        }

        mutating func actions(_ list: [Action], at path: String, depth: Int) -> [CompiledAction] {
            if depth > 16 { issue("tooDeep", path, "actions nest deeper than 16 levels"); return [] }
            return list.enumerated().compactMap { action($0.element, at: "\(path)[\($0.offset)]", depth: depth) }
        }

        mutating func action(_ a: Action, at path: String, depth: Int) -> CompiledAction? {
            switch a {
            case .command(let c):
                let p = "\(path).command"
                guard let d = device(c.device, at: "\(p).device"), let (type, trait) = self.trait(d, type: c.type, trait: c.trait, at: p) else { return nil }
                guard let command = trait.command(named: c.command) ?? trait.commands.first(where: { $0.name.lowercased() == c.command.lowercased() }) else {
                    issue("unknownCommand", "\(p).command", "\(trait.name) has no command '\(c.command)'",
                        suggestion: Self.quoted(EditDistance.closest(to: c.command, in: trait.commands.map(\.name), limit: 2)))
                    return nil
                }
                do throws(HomeError) {
                    _ = try command.validate(arguments: c.args ?? [:], trait: trait)
                } catch {
                    issue("invalidArgument", "\(p).args", error.message)
                }
                if let t = c.timeout, t < Span(milliseconds: 100) || t > .minutes(10) {
                    issue("durationOutOfRange", "\(p).timeout", "a step's timeout is 100 ms – 10 min (got \(t))")
                }
                return .command(
                    CommandRequest(device: d.id, deviceType: type, trait: trait.id, command: command.id, arguments: c.args ?? [:]),
                    StepOptions(timeout: c.timeout, continueOnError: c.continueOnError ?? false))
            case .write(let w):
                let p = "\(path).write"
                guard let d = device(w.device, at: "\(p).device"), let (type, trait) = self.trait(d, type: w.type, trait: w.trait, at: p),
                    let attr = attribute(trait, w.attribute, at: "\(p).attribute")
                else { return nil }
                if !attr.writable {
                    issue("notWritable", "\(p).attribute", "\(trait.name).\(attr.name) is read-only",
                        suggestion: Self.quoted(trait.attributes.filter(\.writable).map(\.name)))
                }
                check(w.value, attr, trait, at: "\(p).value")
                return .write(device: d.id, deviceType: type, trait: trait.id, attribute: attr.id, value: w.value)
            case .scene(let id):
                if !compiler.scenes.contains(id) {
                    issue("unknownScene", "\(path).scene", "no scene '\(id)'", suggestion: Self.quoted(EditDistance.closest(to: id, in: Array(compiler.scenes))))
                }
                return .scene(id)
            case .delay(let s):
                if s.milliseconds < 0 || s > .seconds(7 * 86_400) { issue("outOfRange", "\(path).delay", "a delay is 0 s – 7 d (got \(s))") }
                return .delay(s)
            case .waitFor(let w):
                guard let c = condition(w.condition, at: "\(path).waitFor") else { return nil }
                if let t = w.timeout, t.milliseconds < 0 || t > .seconds(7 * 86_400) { issue("outOfRange", "\(path).waitFor.timeout", "timeout is 0 s – 7 d") }
                if let o = w.onTimeout, o != "continue", o != "stop" { issue("invalidValue", "\(path).waitFor.onTimeout", "onTimeout is continue or stop") }
                return .waitFor(c, timeout: w.timeout, stopOnTimeout: w.onTimeout == "stop")
            case .if(let x):
                let c = condition(x.condition, at: "\(path).if.condition")
                let then = actions(x.then, at: "\(path).if.then", depth: depth + 1)
                let otherwise = actions(x.else ?? [], at: "\(path).if.else", depth: depth + 1)
                return c.map { .if($0, then: then, else: otherwise) }
            case .parallel(let l):
                return .parallel(actions(l, at: "\(path).parallel", depth: depth + 1))
            case .stop(let reason, let error):
                return .stop(reason: reason, error: error)
            case .run(let id):
                if let manual = compiler.automations[id] {
                    if !manual { issue("notManual", "\(path).run", "automation '\(id)' has no manual starter; only those can be run") }
                } else {
                    issue("unknownAutomation", "\(path).run", "no automation '\(id)'",
                        suggestion: Self.quoted(EditDistance.closest(to: id, in: Array(compiler.automations.keys))))
                }
                return .run(id)
            case .log(let m): return .log(m)
            case .notify(let m): return .notify(m)
            case .publish(let x):
                let p = "\(path).publish.topic"
                if x.topic.isEmpty || x.topic.contains("#") || x.topic.contains("+") || x.topic.utf8.count > 65_535 {
                    issue("invalidValue", p, "an MQTT topic to publish to is not empty and has no wildcards (+, #)")
                }
                let payload: [UInt8] = x.payload.stringValue.map { Array($0.utf8) }
                    ?? ((try? JSONEncoder().encode(x.payload)).map { Array($0) } ?? [])
                return .publish(topic: x.topic, payload: payload, retain: x.retain ?? false)
            case .webhook(let x):
                let timeout = x.timeout ?? .seconds(5)
                if timeout.milliseconds <= 0 || timeout > .seconds(60) {
                    issue("durationOutOfRange", "\(path).webhook.timeout", "a webhook timeout is more than 0 s and at most 60 s")
                }
                guard let url = URL(string: x.url), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                    issue("invalidValue", "\(path).webhook.url", "'\(x.url)' is not an http:// or https:// URL")
                    return nil
                }
                return .webhook(url: url, body: x.body, timeout: timeout)
            }
        }
    }
}

extension Catalog {
    /// An attribute by a looser spelling (case and spaces ignored).
    func attributeByLooseName(_ trait: TraitDescriptor, _ name: String) -> AttributeDescriptor? {
        let key = name.lowercased().filter { $0.isLetter || $0.isNumber }
        return trait.attributes.first { $0.name.lowercased().filter { $0.isLetter || $0.isNumber } == key }
    }
}

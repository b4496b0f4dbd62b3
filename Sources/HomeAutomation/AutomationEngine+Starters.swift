import HomeCore
import HomeModel
import Foundation
import HashTreeCollections
import Logging

extension AutomationEngine {
    // MARK: - The tap

    /// Tells the tap whether any change could concern the engine: not while it has no
    /// automation (enabled or not), no run, nothing pending and nobody waiting for a change or a
    /// version. An idle engine is not woken for every report of the home (the core passes over
    /// its changes and counts them as read); whatever makes it busy again tells the tap first.
    func refreshTapIdle() {
        let idle = started && !stopping && records.isEmpty && running.values.allSatisfy(\.isEmpty) && pendingConfig.isEmpty && pendingScenes.isEmpty
            && changeWaiters.isEmpty && versionWaiters.isEmpty
        guard idle != tapIdle else { return }
        tapIdle = idle
        tap.setIdle(idle)
    }

    /// Processes tapped changes in core order (``run()`` feeds it; tests may call it).
    func process(_ changes: [TappedChange], dropped: UInt64, newestDroppedVersion: UInt64 = 0) {
        if dropped > 0 {
            droppedChanges += dropped
            notify("automations: \(dropped) accepted change(s) were dropped (the engine fell 10,000 changes behind); starters may have missed them")
            for id in records.keys {
                record(
                    RunTrace(
                        id: newRunID(), automation: id, started: clock.now(), finished: clock.now(),
                        cause: .init(starter: nil, description: "\(dropped) change(s) dropped by the change tap"), outcome: .dropped,
                        reason: "the engine fell behind the core"))
            }
        }
        var reshaped = Set<DeviceID>()
        for change in changes where change.version > seededVersion {
            for item in change.items {
                switch item {
                case .attribute(let device, let type, let trait, let attribute, let value):
                    attributeChanged(AttributeKey(device: device, trait: trait, attribute: attribute), type: type, value, change)
                case .event(let e):
                    eventHappened(e, change)
                case .device(let id, let connectivity):
                    connectivityChanged(id, connectivity, change)
                    reshaped.insert(id)
                }
            }
        }
        // Devices that left or came back: automations that use them go inert or run again.
        if !reshaped.isEmpty { revalidate(reshaped) }
        if !pendingConfig.isEmpty || !pendingScenes.isEmpty, changes.contains(where: { $0.items.contains { if case .device(_, .some) = $0 { true } else { false } } }) {
            retryPending()
        }
        if let last = changes.last { processedVersion = max(processedVersion, last.version) }
        // A dropped change is never seen: count past it, or whoever waits for its version
        // (`waitForVersion`) would wait for ever.
        processedVersion = max(processedVersion, newestDroppedVersion)
        processedVersion = max(processedVersion, tap.skippedThrough(processed: processedVersion))
        let waiters = changeWaiters
        changeWaiters = [:]
        for w in waiters.values { w.resume() }
        checkWaiters()
    }

    func depth(for device: DeviceID, _ change: TappedChange) -> Int {
        guard case .plugin = change.origin, let recent = recentCommands[device], clock.now().timeIntervalSince(recent.at) < 5 else { return 0 }
        return recent.depth + 1
    }

    func attributeChanged(_ key: AttributeKey, type: DeviceTypeID, _ value: Value, _ change: TappedChange) {
        guard let watchers = attributeIndex[key] else { return }
        for (id, index) in watchers {
            guard let c = compiled[id], let s = c.starters.first(where: { $0.index == index }),
                case .attribute(_, let onlyType, let predicate, let hold) = s.kind
            else { continue }
            if let onlyType, onlyType != type { continue }
            var st = starterStates[id]?[index] ?? StarterState()
            let old = st.last
            if let old, Self.same(old, value) { continue }
            st.last = value
            let wasActive = st.active
            var entered = false
            switch predicate {
            case .changes:
                entered = old != nil
            case .equals(let to, let from):
                let fromOK = from.map { f in old.map { Self.same($0, f) } ?? false } ?? true
                let toOK = to.map { Self.same(value, $0) } ?? true
                entered = fromOK && toOK
                st.active = to.map { Self.same(value, $0) } ?? false
            case .above, .below:
                st.active = Self.holds(predicate, value, wasActive: wasActive, old: old)
                entered = !wasActive && st.active
            }
            let left: Bool
            switch predicate {
            case .changes: left = false
            default: left = wasActive && !st.active
            }
            if left || (entered && hold != nil) || (hold != nil && predicate == .changes && old != nil) {
                st.hold?.cancel()
                st.hold = nil
                if let t = st.holdTimer { deleteTimer(t) }
                st.holdTimer = nil
            }
            starterStates[id]?[index] = st
            guard entered else { continue }
            // Worked out only for a starter that fired: most evaluations do not, and the text is string work.
            let cause = RunTrace.Cause(
                starter: s.id, description: "\(key.device) \(name(key)) \(old?.description ?? "–") → \(value)", old: old, new: value,
                version: change.version)
            if let hold {
                startHold(id, index: index, hold: hold, cause: cause, depth: depth(for: key.device, change))
            } else {
                trigger(id, cause: cause, acceptedAt: change.acceptedAt, depth: depth(for: key.device, change))
            }
        }
    }

    func name(_ key: AttributeKey) -> String {
        let t = core.catalog.trait(key.trait)
        return "\(t?.swiftName.replacingOccurrences(of: "Trait", with: "") ?? key.trait.hex).\(t?.attribute(key.attribute)?.name ?? key.attribute.hex)"
    }

    func eventHappened(_ e: DeviceEvent, _ change: TappedChange) {
        guard let watchers = eventIndex[EventKey(device: e.device, trait: e.trait, event: e.event)] else { return }
        for (id, index) in watchers {
            guard let c = compiled[id], let s = c.starters.first(where: { $0.index == index }), case .event(_, _, _, let fields) = s.kind
            else { continue }
            let eventName = core.catalog.trait(e.trait)?.event(e.event)?.name ?? e.event.hex
            let matches = fields.allSatisfy { k, v in e.fields[k].map { Self.same($0, v) } ?? false }
            let cause = RunTrace.Cause(starter: s.id, description: "\(e.device) \(eventName)", new: .object(e.fields), version: change.version)
            if !matches {
                record(
                    RunTrace(
                        id: newRunID(), automation: id, started: clock.now(), finished: clock.now(), cause: cause, outcome: .conditionFailed,
                        reason: "the event's fields \(Value.object(e.fields)) do not match \(Value.object(fields))"))
                continue
            }
            trigger(id, cause: cause, acceptedAt: change.acceptedAt, depth: depth(for: e.device, change))
        }
    }

    func connectivityChanged(_ device: DeviceID, _ state: ConnectivityState?, _ change: TappedChange) {
        guard let watchers = connectivityIndex[device] else { return }
        for (id, index) in watchers {
            guard let c = compiled[id], let s = c.starters.first(where: { $0.index == index }), case .connectivity(_, let to, let hold) = s.kind
            else { continue }
            var st = starterStates[id]?[index] ?? StarterState()
            let now = state ?? .offline
            let was = st.active
            st.active = now == to
            st.last = .string(now.rawValue)
            if was && !st.active {
                st.hold?.cancel()
                st.hold = nil
                if let t = st.holdTimer { deleteTimer(t) }
                st.holdTimer = nil
            }
            starterStates[id]?[index] = st
            guard !was && st.active else { continue }
            let cause = RunTrace.Cause(starter: s.id, description: "\(device) is \(now.rawValue)", new: .string(now.rawValue), version: change.version)
            if let hold {
                startHold(id, index: index, hold: hold, cause: cause, depth: 0)
            } else {
                trigger(id, cause: cause, acceptedAt: change.acceptedAt, depth: 0)
            }
        }
    }

    // MARK: - `for` holds

    func startHold(_ id: String, index: Int, hold: Span, cause: RunTrace.Cause, depth: Int, due: Date? = nil) {
        let due = due ?? clock.now().addingTimeInterval(hold.timeInterval)
        let timerID = "hold|\(id)|\(index)"
        saveTimer(StoredTimer(id: timerID, automationID: id, kind: "hold", dueAt: due, payloadJSON: Self.json(TimerPayload(starterIndex: index, cause: cause))))
        let clock = self.clock
        let task = Task {
            do { try await clock.sleep(until: due) } catch { return }
            self.holdElapsed(id, index: index, cause: cause, depth: depth)
        }
        starterStates[id]?[index]?.hold?.cancel()
        starterStates[id]?[index]?.hold = task
        starterStates[id]?[index]?.holdTimer = timerID
    }

    func holdElapsed(_ id: String, index: Int, cause: RunTrace.Cause, depth: Int) {
        guard var st = starterStates[id]?[index], st.hold != nil else { return }
        st.hold = nil
        if let t = st.holdTimer { deleteTimer(t) }
        st.holdTimer = nil
        starterStates[id]?[index] = st
        // The state must still hold now (after a restart, the value reported since start).
        if let c = compiled[id], let s = c.starters.first(where: { $0.index == index }), case .attribute(let key, let type, let p, let hold) = s.kind {
            let now = Self.value(core.state, key, type)
            let still: Bool
            switch p {
            case .changes: still = now.map { v in cause.new.map { Self.same(v, $0) } ?? false } ?? false
            default: still = now.map { Self.holds(p, $0, wasActive: true, old: nil) } ?? false
            }
            guard still else {
                record(
                    RunTrace(
                        id: newRunID(), automation: id, started: clock.now(), finished: clock.now(), cause: cause, outcome: .conditionFailed,
                        reason: "the state did not hold for \(hold.map(\.description) ?? "")"))
                return
            }
        }
        var held = cause
        held.description += " (held)"
        trigger(id, cause: held, acceptedAt: nil, depth: depth)
    }

    // MARK: - Schedules

    /// Plans the next instant of each time and sun starter (held while the clock is unsynchronised).
    func planSchedules(_ id: String) {
        guard let c = compiled[id], records[id]?.state == "enabled" else { return }
        for s in c.starters where s.isScheduled {
            planSchedule(id, s, after: clock.now())
        }
    }

    /// The next instant of a time or sun starter after `after`, and how a trace names it.
    func nextInstant(_ s: CompiledStarter, after: Date) -> (due: Date, label: String)? {
        switch s.kind {
        case .time(let t):
            return t.nextInstant(after: after, in: timeZone).map { ($0, "time \(t.at ?? t.every?.description ?? t.once ?? "")") }
        case .sun(let sun):
            guard let location, let event = SolarCalculator.Event(rawValue: sun.event) else { return nil }
            let offset = sun.offset?.timeInterval ?? 0
            guard let due = SolarCalculator.next(event, offset: offset, after: after, in: timeZone, location) else {
                logger.warning("automation \(s.id): no \(sun.event) within a year at \(location.latitude), \(location.longitude)")
                return nil
            }
            let shown = sun.offset.map { " \($0.milliseconds < 0 ? "-" : "+")\(Span(milliseconds: abs($0.milliseconds)))" } ?? ""
            return (due, "sun \(sun.event)\(shown)")
        default:
            return nil
        }
    }

    func planSchedule(_ id: String, _ s: CompiledStarter, after: Date, due fixed: Date? = nil) {
        let key = "\(id)|\(s.index)"
        scheduleTasks[key]?.cancel()
        let clock = self.clock
        guard clock.isSynchronized else {
            // Wall-clock starters wait for a synchronised clock; re-check every 5 s.
            scheduleTasks[key] = Task {
                do { try await clock.sleep(until: clock.now().addingTimeInterval(5)) } catch { return }
                self.planScheduleByIndex(id, s.index)
            }
            return
        }
        guard let next = nextInstant(s, after: after) else { return }
        let due = fixed ?? next.due
        let timerID = "schedule|\(key)"
        let cause = RunTrace.Cause(starter: s.id, description: "\(next.label) (due \(Self.stamp(due, timeZone)))")
        saveTimer(StoredTimer(id: timerID, automationID: id, kind: "schedule", dueAt: due, payloadJSON: Self.json(TimerPayload(starterIndex: s.index, cause: cause))))
        scheduleTasks[key] = Task {
            do { try await clock.sleep(until: due) } catch { return }
            self.scheduleDue(id, s.index, due: due, cause: cause)
        }
    }

    func planScheduleByIndex(_ id: String, _ index: Int) {
        guard let s = compiled[id]?.starters.first(where: { $0.index == index }), s.isScheduled else { return }
        planSchedule(id, s, after: clock.now())
    }

    func scheduleDue(_ id: String, _ index: Int, due: Date, cause: RunTrace.Cause) {
        deleteTimer("schedule|\(id)|\(index)")
        trigger(id, cause: cause, acceptedAt: nil, depth: 0)
        guard let s = compiled[id]?.starters.first(where: { $0.index == index }), s.isScheduled else { return }
        // The next one strictly after this one (a repeated DST hour runs once).
        planSchedule(id, s, after: max(due, clock.now()).addingTimeInterval(1))
    }

    static func stamp(_ date: Date, _ zone: TimeZone) -> String { format(date, zone, "yyyy-MM-dd HH:mm:ss zzz") }

    static func format(_ date: Date, _ zone: TimeZone, _ pattern: String) -> String {
        let f = DateFormatter()
        f.timeZone = zone
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = pattern
        return f.string(from: date)
    }

    // MARK: - Start-up

    func startupStarters(_ id: String) {
        guard let c = compiled[id], records[id]?.state == "enabled" else { return }
        for s in c.starters {
            guard case .startup(let after) = s.kind else { continue }
            let cause = RunTrace.Cause(starter: s.id, description: "start-up" + (after.map { " + \($0)" } ?? ""))
            if let after {
                let clock = self.clock
                let due = clock.now().addingTimeInterval(after.timeInterval)
                scheduleTasks["\(id)|\(s.index)"] = Task {
                    do { try await clock.sleep(until: due) } catch { return }
                    self.trigger(id, cause: cause, acceptedAt: nil, depth: 0)
                }
            } else {
                trigger(id, cause: cause, acceptedAt: nil, depth: 0)
            }
        }
    }

    // MARK: - Durable timers

    struct TimerPayload: Codable {
        var starterIndex: Int?
        var cause: RunTrace.Cause
        var runID: String?
        /// Where a delay sits: indices through sequences and if-branches.
        var position: [Int]?
    }

    static func json<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = .sortedKeys
        return (try? e.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    func saveTimer(_ t: StoredTimer) {
        do { try store?.saveTimer(t) } catch { logger.error("timer \(t.id) could not be saved: \(error)") }
    }

    func deleteTimer(_ id: String) {
        do { try store?.deleteTimer(id: id) } catch { logger.error("timer \(id) could not be deleted: \(error)") }
    }

    /// Timers found at start: holds continue (checked when due), schedules missed while down run
    /// once within `catchUp`, delays resume with their remaining time (or are abandoned).
    func restoreTimers(_ timers: [StoredTimer]) {
        let now = clock.now()
        for t in timers {
            guard let payload = try? JSONDecoder().decode(TimerPayload.self, from: Data(t.payloadJSON.utf8)),
                let c = compiled[t.automationID], records[t.automationID]?.state == "enabled"
            else {
                deleteTimer(t.id)
                continue
            }
            switch t.kind {
            case "hold":
                guard let index = payload.starterIndex, let s = c.starters.first(where: { $0.index == index }) else { deleteTimer(t.id); continue }
                var hold: Span?
                switch s.kind {
                case .attribute(_, _, _, let h), .connectivity(_, _, let h): hold = h
                default: break
                }
                guard let hold else { deleteTimer(t.id); continue }
                var cause = payload.cause
                cause.description += " (hold continued after restart)"
                starterStates[t.automationID]?[index]?.active = true
                startHold(t.automationID, index: index, hold: hold, cause: cause, depth: 0, due: t.dueAt)
            case "schedule":
                guard let index = payload.starterIndex, let s = c.starters.first(where: { $0.index == index }), s.isScheduled else {
                    deleteTimer(t.id)
                    continue
                }
                if t.dueAt <= now {
                    deleteTimer(t.id)
                    let catchUp = c.source.catchUp ?? .minutes(15)
                    var cause = payload.cause
                    if now.timeIntervalSince(t.dueAt) <= catchUp.timeInterval {
                        cause.description = "catch-up: due \(Self.stamp(t.dueAt, timeZone)), ran \(Self.stamp(now, timeZone)) after restart"
                        trigger(t.automationID, cause: cause, acceptedAt: nil, depth: 0)
                    } else {
                        record(
                            RunTrace(
                                id: newRunID(), automation: t.automationID, started: now, finished: now, cause: cause, outcome: .abandoned,
                                reason: "missed while hearthd was down: due \(Self.stamp(t.dueAt, timeZone)), more than catchUp \(catchUp) ago"))
                    }
                    planSchedule(t.automationID, s, after: now)
                } else {
                    planSchedule(t.automationID, s, after: now, due: t.dueAt)
                }
            case "delay":
                deleteTimer(t.id)
                guard let position = payload.position else { continue }
                if c.source.onRestart == .abandon {
                    record(
                        RunTrace(
                            id: newRunID(), automation: t.automationID, started: now, finished: now, cause: payload.cause, outcome: .abandoned,
                            reason: "a delay due \(Self.stamp(t.dueAt, timeZone)) was interrupted by a restart (onRestart: abandon)"))
                    continue
                }
                guard let rest = Self.remaining(c.actions, after: position) else { continue }
                var cause = payload.cause
                cause.description += " (resumed after restart; delay due \(Self.stamp(t.dueAt, timeZone)))"
                resume(t.automationID, cause: cause, due: t.dueAt, actions: rest, position: position)
            default:
                deleteTimer(t.id)
            }
        }
    }

    /// The actions left after the step at `position` (through sequences and if-branches).
    static func remaining(_ actions: [CompiledAction], after position: [Int]) -> [CompiledAction]? {
        guard let first = position.first, first < actions.count else { return nil }
        let tail = Array(actions[(first + 1)...])
        if position.count == 1 { return tail }
        guard position.count >= 3, case .if(_, let then, let otherwise) = actions[first] else { return nil }
        let branch = position[1] == 0 ? then : otherwise
        guard let inner = remaining(branch, after: Array(position.dropFirst(2))) else { return nil }
        return inner + tail
    }
}

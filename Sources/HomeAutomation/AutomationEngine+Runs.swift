public import HomeCore
import HomeModel
import Foundation
import HashTreeCollections
import Logging

extension AutomationEngine {
    func newRunID() -> String {
        nextRun += 1
        return "run-\(Int(clock.now().timeIntervalSince1970))-\(nextRun)"
    }

    /// Keeps a trace (last 50 per automation), replacing the one with the same ID.
    func record(_ trace: RunTrace) {
        var list = traces[trace.automation] ?? []
        if let i = list.lastIndex(where: { $0.id == trace.id }) {
            list[i] = trace
        } else {
            list.append(trace)
            if list.count > Self.traceLimit { list.removeFirst(list.count - Self.traceLimit) }
        }
        traces[trace.automation] = list
        keep(trace)
        publishRun(trace)
        checkWaiters()
    }

    func update(_ runID: String, _ automation: String, _ edit: (inout RunTrace) -> Void) {
        guard var list = traces[automation], let i = list.lastIndex(where: { $0.id == runID }) else { return }
        edit(&list[i])
        traces[automation] = list
        keep(list[i])
        publishRun(list[i])
        checkWaiters()
    }

    /// Waits until `predicate` holds for the traces (every automation's, oldest first).
    public func waitForTraces(_ predicate: @escaping @Sendable ([String: [RunTrace]]) -> Bool) async {
        if predicate(traces) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in traceWaiters[UUID()] = (predicate, c) }
    }

    /// Waits until the engine has processed every change up to the core's `version`.
    public func waitForVersion(_ version: UInt64) async {
        processedVersion = max(processedVersion, tap.skippedThrough(processed: processedVersion))
        if processedVersion >= version { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            // Waiting makes the engine busy (the tap offers every change from now on); what
            // the tap passed over until then counts as read.
            versionWaiters.append((version, c))
            processedVersion = max(processedVersion, tap.skippedThrough(processed: processedVersion))
            checkWaiters()
        }
    }

    func checkWaiters() {
        for (id, (p, c)) in traceWaiters where p(traces) {
            traceWaiters[id] = nil
            c.resume()
        }
        let ready = versionWaiters.filter { $0.0 <= processedVersion }
        versionWaiters.removeAll { $0.0 <= processedVersion }
        for (_, c) in ready { c.resume() }
    }

    // MARK: - Starting

    /// A starter fired: checks state, loops, suppression, conditions and the mode, then runs.
    func trigger(_ id: String, cause: RunTrace.Cause, acceptedAt: ContinuousClock.Instant?, depth: Int, manual: Bool = false) {
        guard let record = records[id], let c = compiled[id] else { return }
        let now = clock.now()
        var trace = RunTrace(id: newRunID(), automation: id, revision: record.revision, started: now, cause: cause, outcome: .running)
        func refuse(_ outcome: RunTrace.Outcome, _ reason: String) {
            trace.outcome = outcome
            trace.reason = reason
            trace.finished = now
            self.record(trace)
        }
        guard record.state == "enabled" else {
            return refuse(.skipped, "the automation is \(record.state)" + (record.suspendedReason.map { " (\($0))" } ?? ""))
        }
        if depth > Self.maxDepth {
            return refuse(.skipped, "loop: started by a change another automation caused, \(depth) deep (limit \(Self.maxDepth))")
        }
        let window = loopGuard.seconds
        var starts = (recentStarts[id] ?? []).filter { now.timeIntervalSince($0) < window }
        starts.append(now)
        recentStarts[id] = starts
        if starts.count > loopGuard.starts {
            let limit = "more than \(loopGuard.starts) starts in \(window.formatted()) s"
            suspend(id, reason: "loopDetected")
            notify("automation \(id) started \(limit) and was suspended (loopDetected)")
            return refuse(.skipped, "loop detected: \(limit); suspended")
        }
        if let s = c.source.suppressFor, let last = lastStart[id], now.timeIntervalSince(last) < s.timeInterval {
            return refuse(.suppressed, "within suppressFor \(s) of the start at \(Self.stamp(last, timeZone))")
        }
        if let cond = c.conditions {
            var results: [RunTrace.ConditionResult] = []
            let holds = evaluate(cond, starter: cause.starter, path: "conditions", into: &results)
            trace.conditions = results
            if !holds { return refuse(.conditionFailed, "the conditions did not hold") }
        }
        if let max = c.source.maxExecutions, record.executionCount >= max {
            return refuse(.skipped, "maxExecutions \(max) reached")
        }
        // An app's automation acts with its grant as it is now.
        let scope: GrantScope?
        switch actingScope(record) {
        case .success(let s): scope = s
        case .failure(let e): return refuse(.skipped, e.message)
        }
        let active = running[id] ?? [:]
        switch c.source.effectiveMode {
        case .single:
            if !active.isEmpty { return refuse(.skipped, "mode single: a run is going (\(active.keys.sorted().joined(separator: ", ")))") }
        case .restart:
            for (runID, task) in active {
                task.cancel()
                update(runID, id) {
                    $0.outcome = .interrupted
                    $0.reason = "restarted by a new start (mode restart)"
                    $0.finished = now
                }
            }
            running[id] = [:]
        case .queued:
            if !active.isEmpty {
                if (queued[id]?.count ?? 0) + active.count >= c.source.effectiveMaxRuns {
                    return refuse(.skipped, "mode queued: \(c.source.effectiveMaxRuns) runs already wait")
                }
                queued[id, default: []].append((cause, depth))
                return
            }
        case .parallel:
            if active.count >= c.source.effectiveMaxRuns { return refuse(.skipped, "mode parallel: \(active.count) runs going (maxRuns)") }
        }
        lastStart[id] = now
        records[id]?.executionCount += 1
        if let max = c.source.maxExecutions, (records[id]?.executionCount ?? 0) >= max {
            records[id]?.state = "disabled"
        }
        if c.source.maxExecutions != nil, let r = records[id] { try? persist(r) }
        self.record(trace)
        launch(id, trace: trace, actions: c.actions, position: [], acceptedAt: acceptedAt, depth: depth, scope: scope, grant: Self.grantID(ofOwner: record.owner))
    }

    func launch(
        _ id: String, trace: RunTrace, actions: [CompiledAction], position: [Int], acceptedAt: ContinuousClock.Instant?, depth: Int,
        scope: GrantScope? = nil, grant: String? = nil
    ) {
        let runID = trace.id
        var context = RunContext(automation: id, runID: runID, starter: trace.cause.starter, cause: trace.cause, depth: depth, acceptedAt: acceptedAt)
        context.scope = scope
        context.grant = grant
        let task = Task {
            let flow = await self.execute(actions, at: position, context)
            self.finished(context, flow)
        }
        running[id, default: [:]][runID] = task
    }

    func finished(_ context: RunContext, _ flow: Flow) {
        running[context.automation]?[context.runID] = nil
        update(context.runID, context.automation) { t in
            guard t.outcome == .running else { return }
            t.finished = clock.now()
            switch flow {
            case .next: t.outcome = .completed
            case .stop(let reason, let error):
                t.outcome = error ? .failed : .stopped
                t.reason = reason
            case .cancelled:
                t.outcome = .interrupted
                t.reason = t.reason ?? "cancelled"
            }
        }
        if var waiting = queued[context.automation], !waiting.isEmpty {
            let (next, depth) = waiting.removeFirst()
            queued[context.automation] = waiting
            trigger(context.automation, cause: next, acceptedAt: nil, depth: depth)
        }
    }

    func resume(_ id: String, cause: RunTrace.Cause, due: Date, actions: [CompiledAction], position: [Int]) {
        guard let r = records[id] else { return }
        let trace = RunTrace(id: newRunID(), automation: id, revision: r.revision, started: clock.now(), cause: cause, outcome: .running)
        record(trace)
        let rest: [CompiledAction] = [.delay(Span(milliseconds: 0))] + actions
        let clock = self.clock
        let runID = trace.id
        var context = RunContext(automation: id, runID: runID, starter: cause.starter, cause: cause, depth: 0, acceptedAt: nil)
        context.resumed = true
        if Self.grantID(ofOwner: r.owner) != nil {
            guard case .success(let scope) = actingScope(r) else {
                update(runID, id) {
                    $0.outcome = .abandoned
                    $0.reason = "the app's grant no longer allows it"
                    $0.finished = self.clock.now()
                }
                return
            }
            context.scope = scope
            context.grant = Self.grantID(ofOwner: r.owner)
        }
        // The row stays until the delay is over: a second crash resumes it again.
        let timerID = "delay|\(runID)|resume"
        saveTimer(StoredTimer(id: timerID, automationID: id, kind: "delay", dueAt: due, payloadJSON: Self.json(TimerPayload(cause: cause, runID: runID, position: position))))
        let task = Task {
            do { try await clock.sleep(until: due) } catch {
                self.finished(context, .cancelled)
                return
            }
            self.deleteTimer(timerID)
            // Right after a start the plugins may not have reported yet: a command then would
            // fail as offline. Wait (at most 30 s) until the devices the rest commands are known.
            await self.waitUntilReported(Self.devices(in: rest), atMost: 30)
            self.step(context, path: "resume", kind: "delay", detail: "resumed: due \(Self.stamp(due, self.timeZone))", result: "ok")
            let flow = await self.execute(Array(rest.dropFirst()), at: [], context)
            self.finished(context, flow)
        }
        running[id, default: [:]][runID] = task
    }

    /// The devices commanded or written by `actions` (branches included).
    static func devices(in actions: [CompiledAction]) -> Set<DeviceID> {
        var out = Set<DeviceID>()
        for a in actions {
            switch a {
            case .command(let r, _): out.insert(r.device)
            case .write(let d, _, _, _, _): out.insert(d)
            case .if(_, let then, let otherwise): out.formUnion(devices(in: then + otherwise))
            case .parallel(let list): out.formUnion(devices(in: list))
            default: break
            }
        }
        return out
    }

    /// Waits until none of `devices` has an unknown connectivity (its plugin has reported since
    /// the start), or `seconds` passed.
    func waitUntilReported(_ devices: Set<DeviceID>, atMost seconds: Double) async {
        let deadline = clock.now().addingTimeInterval(seconds)
        while devices.contains(where: { core.state.devices[$0]?.sourceConnectivity.connectivityState == .unknown }), clock.now() < deadline {
            if Task.isCancelled { return }
            await nextChange(until: deadline)
        }
    }

    /// Suspends an automation (loops, a revoked grant); an admin resumes it by enabling it.
    func suspend(_ id: String, reason: String) {
        guard var r = records[id] else { return }
        r.state = "suspended"
        r.suspendedReason = reason
        records[id] = r
        try? persist(r)
        if let runs = running[id] { for t in runs.values { t.cancel() } }
    }

    /// Starts an automation now (API, CLI, web, `run` actions): admins any; members only one
    /// with a manual starter. Conditions still apply. Returns the run's ID.
    @discardableResult
    public func runNow(_ id: String, as principal: Principal) throws(AutomationError) -> String {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        guard let c = compiled[id] else { throw AutomationError(.notFound, records[id] == nil ? "no automation '\(id)'" : "automation '\(id)' is inert: \(records[id]!.issues.first?.description ?? "")") }
        switch principal.role {
        case .admin: break
        case .member:
            guard c.hasManualStarter else { throw AutomationError(.permissionDenied, "members may run only automations with a manual starter") }
        case .app:
            guard let r = records[id], r.owner == Self.owner(of: principal) else { throw AutomationError(.notFound, "no automation '\(id)'") }
        }
        let starter = c.starters.first { if case .manual = $0.kind { true } else { false } }?.id
        trigger(id, cause: .init(starter: starter, description: "run by \(principal.id)"), acceptedAt: nil, depth: 0)
        return traces[id]?.last?.id ?? ""
    }

    // MARK: - Conditions

    func evaluate(_ c: CompiledCondition, starter: String?, path: String, into results: inout [RunTrace.ConditionResult]) -> Bool {
        switch c {
        case .all(let l):
            var ok = true
            for (i, x) in l.enumerated() where !evaluate(x, starter: starter, path: "\(path).all[\(i)]", into: &results) { ok = false }
            return ok
        case .any(let l):
            var ok = false
            for (i, x) in l.enumerated() where evaluate(x, starter: starter, path: "\(path).any[\(i)]", into: &results) { ok = true }
            return ok
        case .not(let x):
            return !evaluate(x, starter: starter, path: "\(path).not", into: &results)
        case .attribute(let key, let type, let cond, _):
            let v = Self.value(core.state, key, type)
            var ok = v != nil
            if let v {
                if let e = cond.equals, !Self.same(v, e) { ok = false }
                if let list = cond.in, !list.contains(where: { Self.same(v, $0) }) { ok = false }
                if let a = cond.above, !((v.doubleValue ?? -.infinity) > a) { ok = false }
                if let b = cond.below, !((v.doubleValue ?? .infinity) < b) { ok = false }
            }
            results.append(.init(path: path, holds: ok, saw: "\(key.device) \(name(key)) = \(v?.description ?? "no value")"))
            return ok
        case .time(let t, _):
            let now = clock.now()
            let ok = LocalTime.matches(
                now, after: t.after.flatMap(LocalTime.init(parsing:)), before: t.before.flatMap(LocalTime.init(parsing:)),
                days: t.days.map { Set($0.compactMap(LocalTime.weekday)) }, zone: timeZone)
            results.append(.init(path: path, holds: ok, saw: "local time \(Self.stamp(now, timeZone))"))
            return ok
        case .sun(let after, let before, let isUp):
            let (ok, saw) = sunHolds(after: after, before: before, isUp: isUp)
            results.append(.init(path: path, holds: ok, saw: saw))
            return ok
        case .starter(let id):
            let ok = starter == id
            results.append(.init(path: path, holds: ok, saw: "starter \(starter ?? "none") fired"))
            return ok
        case .scene(let id):
            let ok = scenes?.isActive(id) ?? false
            results.append(.init(path: path, holds: ok, saw: "scene \(id) is \(ok ? "active" : "not active")"))
            return ok
        case .connectivity(let d, let s):
            let now = core.state.devices[d]?.sourceConnectivity.connectivityState
            results.append(.init(path: path, holds: now == s, saw: "\(d) is \(now?.rawValue ?? "gone")"))
            return now == s
        }
    }

    /// Whether a sun condition holds now, and what it saw (the elevation, or the day's instants).
    func sunHolds(after: SunInstant?, before: SunInstant?, isUp: Bool?) -> (Bool, String) {
        let now = clock.now()
        guard let location else { return (false, "no location: the sun is unknown (set location: in hearth.yaml)") }
        if let isUp {
            let elevation = SolarCalculator.elevation(at: now, location)
            // Sunrise and sunset: the upper limb on the horizon with refraction (centre −0.833°).
            let up = elevation > -0.833
            return (up == isUp, "sun elevation \(String(format: "%.1f", elevation))° at \(Self.stamp(now, timeZone)): \(up ? "up" : "down")")
        }
        var seen: [String] = []
        func instant(_ i: SunInstant) -> Date? {
            let t = SolarCalculator.time(of: i.event, onDayOf: now, in: timeZone, location)?.addingTimeInterval(i.offset.timeInterval)
            seen.append("\(i) " + (t.map { Self.clockTime($0, timeZone) } ?? "does not happen today"))
            return t
        }
        let start = after.map { instant($0) }, end = before.map { instant($0) }
        let ok: Bool
        switch (start, end) {
        case (.some(nil), _), (_, .some(nil)): ok = false  // polar day or night: no such event today
        case (.some(let a?), .some(let b?)): ok = a <= b ? (now >= a && now < b) : (now >= a || now < b)
        case (.some(let a?), nil): ok = now >= a
        case (nil, .some(let b?)): ok = now < b
        case (nil, nil): ok = false
        }
        return (ok, "local time \(Self.clockTime(now, timeZone)); " + seen.joined(separator: ", "))
    }

    /// `20:15:00 CET`.
    static func clockTime(_ date: Date, _ zone: TimeZone) -> String { format(date, zone, "HH:mm:ss zzz") }

    // MARK: - Actions

    struct RunContext: Sendable {
        let automation: String
        let runID: String
        let starter: String?
        let cause: RunTrace.Cause
        let depth: Int
        let acceptedAt: ContinuousClock.Instant?
        var dryRun = false
        /// Resumed after a restart: a device its plugin has not made ready yet is waited for.
        var resumed = false
        /// An app's automation: the grant's scope at the start of the run, and the grant (its
        /// revocation ends the run's commands in the core too).
        var scope: GrantScope?
        var grant: String?
        var principal: Principal {
            if let scope { return Principal(id: "automation:\(automation)/\(runID)", role: .app, scope: scope, sessionID: grant) }
            return Principal(id: "automation:\(automation)/\(runID)", role: .admin)
        }
    }

    enum Flow: Sendable {
        case next
        case stop(String?, error: Bool)
        case cancelled
    }

    func step(_ context: RunContext, path: String, kind: String, detail: String, result: String, message: String? = nil, ms: Double? = nil) {
        let s = RunTrace.Step(path: path, kind: kind, detail: detail, result: result, message: message, at: clock.now(), milliseconds: ms)
        update(context.runID, context.automation) { $0.steps.append(s) }
    }

    func describe(_ r: CommandRequest) -> String {
        let t = core.catalog.trait(r.trait)
        let args = r.arguments.isEmpty ? "" : " \(Value.object(r.arguments))"
        return "\(r.device) \(t?.swiftName.replacingOccurrences(of: "Trait", with: "") ?? r.trait.hex).\(t?.command(r.command)?.name ?? r.command.hex)\(args)"
    }

    func execute(_ actions: [CompiledAction], at position: [Int], _ context: RunContext) async -> Flow {
        for (i, action) in actions.enumerated() {
            if Task.isCancelled { return .cancelled }
            let here = position + [i]
            let path = "actions" + here.map { "[\($0)]" }.joined()
            let flow = await perform(action, at: here, path: path, context)
            if case .next = flow { continue }
            return flow
        }
        return .next
    }

    func perform(_ action: CompiledAction, at here: [Int], path: String, _ context: RunContext) async -> Flow {
        let home = core.home(for: context.principal)
        switch action {
        case .command(let r, let options):
            let detail = describe(r)
            if context.dryRun {
                step(context, path: path, kind: "command", detail: detail, result: "wouldSend")
                return .next
            }
            firstCommand(context)
            recentCommands[r.device] = (context.depth, clock.now())
            let started = ContinuousClock.now
            // A resumed run may start before the plugin has its lines or connection ready: a
            // deviceOffline then is retried on each change for up to 30 s.
            let patience = context.resumed ? clock.now().addingTimeInterval(30) : nil
            var failure: any Error
            while true {
                do {
                    _ = try await invoke(home, r, timeout: options.timeout)
                    step(context, path: path, kind: "command", detail: detail, result: "ok", ms: Self.ms(since: started))
                    return .next
                } catch let e as HomeError where e.code == .deviceOffline && patience.map({ clock.now() < $0 }) == true && !Task.isCancelled {
                    // On the next change, or half a second later (a line's readiness is no change).
                    await nextChange(until: clock.now().addingTimeInterval(0.5))
                } catch {
                    failure = error
                    break
                }
            }
            if failure is CancellationError { return .cancelled }
            let e = (failure as? HomeError) ?? HomeError(.internal, "\(failure)")
            let going = options.continueOnError ? " (continueOnError: the run goes on)" : ""
            step(context, path: path, kind: "command", detail: detail, result: e.code.rawValue, message: e.message + going, ms: Self.ms(since: started))
            return options.continueOnError ? .next : .stop("\(path) failed: \(e.message)", error: true)
        case .write(let d, let type, let trait, let attribute, let value):
            let t = core.catalog.trait(trait)
            let detail = "\(d) \(t?.swiftName ?? trait.hex).\(t?.attribute(attribute)?.name ?? attribute.hex) = \(value)"
            if context.dryRun {
                step(context, path: path, kind: "write", detail: detail, result: "wouldSend")
                return .next
            }
            firstCommand(context)
            recentCommands[d] = (context.depth, clock.now())
            let started = ContinuousClock.now
            do {
                try await home.write(device: d, deviceType: type, trait: trait, attribute: attribute, value: value)
                step(context, path: path, kind: "write", detail: detail, result: "ok", ms: Self.ms(since: started))
                return .next
            } catch {
                let e = (error as? HomeError) ?? HomeError(.internal, "\(error)")
                step(context, path: path, kind: "write", detail: detail, result: e.code.rawValue, message: e.message)
                return .stop("\(path) failed: \(e.message)", error: true)
            }
        case .scene(let id):
            guard let scenes else {
                step(context, path: path, kind: "scene", detail: id, result: "notFound", message: "no scenes here")
                return .stop("no scene \(id)", error: true)
            }
            if context.dryRun {
                let steps = ((try? scenes.scene(id, as: .system))?.steps() ?? []).map { s -> String in
                    if case .command(let c) = s { return describe(c) }
                    return "\(s)"
                }
                step(context, path: path, kind: "scene", detail: "recall \(id): " + steps.joined(separator: "; "), result: "wouldSend")
                return .next
            }
            firstCommand(context)
            let started = ContinuousClock.now
            do {
                let result = try await scenes.recall(id, as: context.principal)
                for s in result.steps { recentCommands[s.step.device] = (context.depth, clock.now()) }
                let failed = result.steps.compactMap(\.error)
                step(
                    context, path: path, kind: "scene", detail: "recall \(id) (\(result.steps.count) step(s))", result: failed.first?.code.rawValue ?? "ok",
                    message: failed.isEmpty ? nil : failed.map(\.message).joined(separator: "; "), ms: Self.ms(since: started))
                return failed.isEmpty ? .next : .stop("scene \(id): \(failed.count) step(s) failed", error: true)
            } catch {
                step(context, path: path, kind: "scene", detail: "recall \(id)", result: error.code.rawValue, message: error.message)
                return .stop("scene \(id): \(error.message)", error: true)
            }
        case .delay(let span):
            let due = clock.now().addingTimeInterval(span.timeInterval)
            step(context, path: path, kind: "delay", detail: "\(span) (due \(Self.stamp(due, timeZone)))", result: context.dryRun ? "wouldWait" : "ok")
            if context.dryRun { return .next }
            let timerID = "delay|\(context.runID)|\(here.map(String.init).joined(separator: "."))"
            saveTimer(
                StoredTimer(
                    id: timerID, automationID: context.automation, kind: "delay", dueAt: due,
                    payloadJSON: Self.json(TimerPayload(cause: context.cause, runID: context.runID, position: here))))
            do {
                try await clock.sleep(until: due)
            } catch {
                // Stopping hearthd keeps the row: the delay resumes at start (onRestart).
                if !stopping { deleteTimer(timerID) }
                return .cancelled
            }
            deleteTimer(timerID)
            return .next
        case .waitFor(let cond, let timeout, let stopOnTimeout):
            if context.dryRun {
                step(context, path: path, kind: "waitFor", detail: "until the condition holds" + (timeout.map { ", at most \($0)" } ?? ""), result: "wouldWait")
                return .next
            }
            let deadline = timeout.map { clock.now().addingTimeInterval($0.timeInterval) }
            let started = ContinuousClock.now
            while true {
                var results: [RunTrace.ConditionResult] = []
                if evaluate(cond, starter: context.starter, path: path, into: &results) {
                    step(context, path: path, kind: "waitFor", detail: results.map(\.saw).joined(separator: "; "), result: "ok", ms: Self.ms(since: started))
                    return .next
                }
                if let deadline, clock.now() >= deadline {
                    step(context, path: path, kind: "waitFor", detail: "timed out after \(timeout!)", result: "timeout")
                    return stopOnTimeout ? .stop("waitFor timed out", error: false) : .next
                }
                if Task.isCancelled { return .cancelled }
                await nextChange(until: deadline)
            }
        case .if(let cond, let then, let otherwise):
            var results: [RunTrace.ConditionResult] = []
            let holds = evaluate(cond, starter: context.starter, path: "\(path).if", into: &results)
            update(context.runID, context.automation) { $0.conditions += results }
            step(context, path: path, kind: "if", detail: holds ? "then" : "else", result: "ok")
            return await execute(holds ? then : otherwise, at: here + [holds ? 0 : 1], context)
        case .parallel(let list):
            step(context, path: path, kind: "parallel", detail: "\(list.count) branch(es)", result: "ok")
            let flows = await withTaskGroup(of: Flow.self) { group in
                for (i, a) in list.enumerated() {
                    group.addTask { await self.perform(a, at: here + [i], path: "\(path).parallel[\(i)]", context) }
                }
                var all: [Flow] = []
                for await f in group { all.append(f) }
                return all
            }
            for f in flows { if case .next = f { continue } else { return f } }
            return .next
        case .stop(let reason, let error):
            step(context, path: path, kind: "stop", detail: reason ?? "stop", result: "ok")
            return .stop(reason, error: error)
        case .run(let other):
            if context.dryRun {
                step(context, path: path, kind: "run", detail: other, result: "wouldRun")
                return .next
            }
            if context.depth + 1 > Self.maxDepth {
                step(context, path: path, kind: "run", detail: other, result: "loop", message: "run depth over \(Self.maxDepth)")
                return .stop("run depth", error: true)
            }
            trigger(other, cause: .init(starter: nil, description: "run by automation \(context.automation)"), acceptedAt: nil, depth: context.depth + 1)
            step(context, path: path, kind: "run", detail: other, result: "ok")
            return .next
        case .log(let message):
            step(context, path: path, kind: "log", detail: message, result: "ok")
            if !context.dryRun { logger.info("automation \(context.automation): \(message)") }
            return .next
        case .notify(let message):
            step(context, path: path, kind: "notify", detail: message, result: context.dryRun ? "wouldNotify" : "ok")
            if !context.dryRun { notify("automation \(context.automation): \(message)") }
            return .next
        case .publish(let topic, let payload, let retain):
            let detail = "\(topic) ← \(String(decoding: payload.prefix(200), as: UTF8.self))" + (retain ? " (retained)" : "")
            return await outboundStep(context, path: path, kind: "publish", detail: detail) { outbound throws(HomeError) in
                try await outbound.publish(topic: topic, payload: payload, retain: retain)
            }
        case .webhook(let url, let body, let timeout):
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let data = (try? encoder.encode(body ?? .object(["automation": .string(context.automation), "run": .string(context.runID), "cause": .string(context.cause.description)]))) ?? Data()
            return await outboundStep(context, path: path, kind: "webhook", detail: "POST \(url.absoluteString)") { outbound throws(HomeError) in
                let status = try await outbound.post(url: url, body: data, timeout: timeout.duration)
                guard (200..<300).contains(status) else { throw .driverError("\(url.absoluteString) answered HTTP \(status)") }
            }
        }
    }

    /// A `publish` or `webhook` step: `wouldSend` in a dry run; a failure stops the run as failed.
    func outboundStep(
        _ context: RunContext, path: String, kind: String, detail: String, _ send: (any AutomationOutbound) async throws(HomeError) -> Void
    ) async -> Flow {
        if context.dryRun {
            step(context, path: path, kind: kind, detail: detail, result: "wouldSend")
            return .next
        }
        guard let outbound else {
            step(context, path: path, kind: kind, detail: detail, result: HomeError.Code.unsupportedOperation.rawValue, message: "no \(kind) outlet is configured")
            return .stop("\(path): no \(kind) outlet is configured", error: true)
        }
        let started = ContinuousClock.now
        do {
            try await send(outbound)
            step(context, path: path, kind: kind, detail: detail, result: "ok", ms: Self.ms(since: started))
            return .next
        } catch {
            step(context, path: path, kind: kind, detail: detail, result: error.code.rawValue, message: error.message, ms: Self.ms(since: started))
            return .stop("\(path) failed: \(error.message)", error: true)
        }
    }

    /// `home.invoke`, bounded by a step's own `timeout` on the engine's clock (nil: the core's).
    func invoke(_ home: Home, _ request: CommandRequest, timeout: Span?) async throws -> Value {
        guard let timeout else { return try await home.invoke(request) }
        enum Ending: Sendable {
            case answered(Value)
            case timedOut
        }
        let clock = self.clock
        let due = clock.now().addingTimeInterval(timeout.timeInterval)
        let ending = try await withThrowingTaskGroup(of: Ending.self) { group in
            group.addTask { .answered(try await home.invoke(request)) }
            group.addTask {
                try await clock.sleep(until: due)
                return .timedOut
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
        switch ending {
        case .answered(let value): return value
        case .timedOut: throw HomeError(.timeout, "no answer within the step's timeout of \(timeout)")
        }
    }

    func firstCommand(_ context: RunContext) {
        guard let at = context.acceptedAt else { return }
        let elapsed = ContinuousClock.now - at
        let micros = Int(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
        update(context.runID, context.automation) { t in if t.latencyMicroseconds == nil { t.latencyMicroseconds = micros } }
    }

    static func ms(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// Waits for the next processed batch of changes (or the deadline, or cancellation).
    func nextChange(until deadline: Date?) async {
        let id = UUID()
        let clock = self.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                        Task { await self.addWaiter(id, c) }
                    }
                } onCancel: {
                    Task { await self.resumeWaiter(id) }
                }
            }
            if let deadline {
                group.addTask { try? await clock.sleep(until: deadline) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    func addWaiter(_ id: UUID, _ c: CheckedContinuation<Void, Never>) {
        if cancelledWaiters.remove(id) != nil {
            c.resume()
            return
        }
        changeWaiters[id] = c
    }

    func resumeWaiter(_ id: UUID) {
        if let c = changeWaiters.removeValue(forKey: id) {
            c.resume()
        } else {
            cancelledWaiters.insert(id)
        }
    }

    // MARK: - Simulate

    /// A dry run: the conditions checked against the live state, the actions walked without
    /// sending anything — commands, writes and scene recalls appear as `wouldSend`, delays and
    /// waits as `wouldWait`. `starter` names the cause (a starter id).
    public func simulate(_ automation: Automation, starter: String?, as principal: Principal) async throws(AutomationError) -> RunTrace {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        let (compiled, issues) = compiler().compile(automation)
        guard let c = compiled else {
            throw AutomationError(.invalidArgument, "automation '\(automation.id)' does not validate", issues: issues)
        }
        try mayAppSimulate(automation, as: principal)
        let cause = RunTrace.Cause(starter: starter, description: "simulated" + (starter.map { ": starter \($0)" } ?? ""))
        var trace = RunTrace(id: "sim-" + newRunID(), automation: automation.id, started: clock.now(), cause: cause, outcome: .simulated)
        if let cond = c.conditions {
            var results: [RunTrace.ConditionResult] = []
            let ok = evaluate(cond, starter: starter, path: "conditions", into: &results)
            trace.conditions = results
            if !ok {
                trace.reason = "the conditions do not hold now: it would not run"
                trace.finished = clock.now()
                return trace
            }
        }
        // Simulated traces live apart from the real ring (under a key no automation has).
        let key = "\u{0}simulate"
        var scratch = trace
        scratch.automation = key
        record(scratch)
        var context = RunContext(automation: key, runID: trace.id, starter: starter, cause: cause, depth: 0, acceptedAt: nil)
        context.dryRun = true
        let flow = await execute(c.actions, at: [], context)
        let done = traces[key]?.first { $0.id == trace.id }
        traces[key] = nil
        trace.steps = done?.steps ?? []
        let seen = trace.conditions
        trace.conditions += (done?.conditions ?? []).filter { r in !seen.contains(r) }
        if case .stop(let reason, _) = flow { trace.reason = reason }
        trace.finished = clock.now()
        return trace
    }
}

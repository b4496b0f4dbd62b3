import DriverAPI
import HomeModel
import Synchronization

/// One configured line at run time: its hardware handle, debouncer and role state machine.
///
/// Edges (from the backend's monitor thread) and ticks (from the scheduler) move the state
/// under a lock; what to tell the home is collected there and sent after the lock is released.
final class LineDevice<C: Clock>: Sendable where C.Duration == Duration {
    enum Behaviour: Sendable {
        case binary
        case smoke
        case occupancy(OccupancyHoldOn<C.Instant>)
        case button(ButtonStateMachine<C.Instant>)
        case latching
        case output
    }

    enum Hardware: Sendable {
        case none
        case input(any GPIOInputLine)
        case output(any GPIOOutputLine, status: (any GPIOInputLine)?)
    }

    struct State: Sendable {
        var hardware: Hardware = .none
        var debouncer: Debouncer<C.Instant>
        /// Sets a chattering line aside (after debouncing).
        var chatter: ChatterGuard<C.Instant>
        var behaviour: Behaviour
        /// Why the line is not in use (shown as the device's offline reason), nil when it is.
        var failure: GPIOError?
        var failureLogged: GPIOError?
    }

    enum Effect: Sendable {
        case report([AttributeReport])
        case emit(EventReport)
        case log(LogLevel, String, device: String)
    }

    let config: LineConfiguration
    let clock: C
    let state: Mutex<State>
    let description: DeviceDescription

    var localID: String { config.localID }

    init(config: LineConfiguration, clock: C) {
        self.config = config
        self.clock = clock
        let behaviour: Behaviour =
            switch config.role {
            case .contact, .boolean, .leak, .rain, .freeze: .binary
            case .smoke: .smoke
            case .occupancy, .motion: .occupancy(OccupancyHoldOn(holdOn: config.holdOn?.duration ?? .zero, initial: false))
            case .button: .button(ButtonStateMachine(settings: config.buttonSettings))
            case .toggleSwitch: .latching
            case .relay, .light, .plug: .output
            }
        state = Mutex(
            State(debouncer: Debouncer(window: config.debounce.duration, initial: false), chatter: ChatterGuard(limit: config.chatterGuard ? ChatterGuard<C.Instant>.defaultLimit : .max, initial: false), behaviour: behaviour))
        description = config.deviceDescription(multiPress: config.buttonSettings)
    }

    var isAcquired: Bool { state.withLock { if case .none = $0.hardware { false } else { true } } }

    // MARK: Inputs

    /// The line was requested and read: set the state from its level (no events for it).
    func start(level: Bool, hardware: Hardware) -> [Effect] {
        state.withLock { s in
            s.hardware = hardware
            s.failure = nil
            s.failureLogged = nil
            s.debouncer.reset(to: level)
            s.chatter.reset(to: level)
            return Self.settle(&s, level: level, now: clock.now, config: config)
        }
    }

    /// The initial report of an input's level (no events: nothing happened).
    static func settle(_ s: inout State, level: Bool, now: C.Instant, config: LineConfiguration) -> [Effect] {
        let id = config.localID
        switch s.behaviour {
        case .binary:
            return [.report([AttributeReport(localID: id, trait: BooleanStateTrait.identifier, attribute: BooleanStateTrait.Attribute.stateValue, value: .bool(level))])]
        case .smoke:
            return [.report(smokeReports(id, level))]
        case .occupancy(var machine):
            _ = machine.level(level, at: now)
            s.behaviour = .occupancy(machine)
            return [.report([occupancyReport(id, machine.occupied)])]
        case .button:
            return [.report([switchPosition(id, 0)])]
        case .latching:
            return [.report([switchPosition(id, level ? 1 : 0)])]
        case .output:
            return []
        }
    }

    /// An edge from the backend.
    func edge(_ edge: GPIOEdge, kernelDebounced: Bool) -> [Effect] {
        state.withLock { s in
            let now = clock.now
            var effects: [Effect] = []
            if kernelDebounced {
                if edge.rising != s.debouncer.level {
                    s.debouncer.reset(to: edge.rising)
                    effects += Self.guarded(&s, LevelChange(level: edge.rising, timestampNanoseconds: edge.timestampNanoseconds), now: now, config: config)
                }
            } else if let change = s.debouncer.edge(edge.rising, at: now, timestamp: edge.timestampNanoseconds) {
                effects += Self.guarded(&s, change, now: now, config: config)
            }
            return effects
        }
    }

    /// Time passed: debounce windows, long presses, multi-press windows and hold-on times.
    func tick(_ now: C.Instant) -> [Effect] {
        state.withLock { s in
            var effects: [Effect] = []
            if let change = s.debouncer.tick(now) { effects += Self.guarded(&s, change, now: now, config: config) }
            if let ended = s.chatter.tick(now) {
                effects.append(.log(.info, "\(Self.place(config)) is steady again: its changes count again", device: config.localID))
                if let change = ended { effects += Self.apply(&s, change, now: now, config: config) }
            }
            switch s.behaviour {
            case .occupancy(var machine):
                if let occupied = machine.tick(now) { effects.append(.report([Self.occupancyReport(config.localID, occupied)])) }
                s.behaviour = .occupancy(machine)
            case .button(var machine):
                effects += machine.tick(now).map { Self.buttonEffect($0, config.localID, timestamp: nil) }
                s.behaviour = .button(machine)
            default: break
            }
            return effects
        }
    }

    /// The next instant ``tick(_:)`` has work.
    var deadline: C.Instant? {
        state.withLock { s in
            var d = s.debouncer.deadline
            if let c = s.chatter.deadline { d = d.map { min($0, c) } ?? c }
            let behaviourDeadline: C.Instant? =
                switch s.behaviour {
                case .occupancy(let m): m.deadline
                case .button(let m): m.deadline
                default: nil
                }
            if let b = behaviourDeadline { d = d.map { min($0, b) } ?? b }
            return d
        }
    }

    /// A debounced change, past the chatter guard.
    static func guarded(_ s: inout State, _ change: LevelChange, now: C.Instant, config: LineConfiguration) -> [Effect] {
        switch s.chatter.change(change, at: now) {
        case .pass(let change): return apply(&s, change, now: now, config: config)
        case .suppressed: return []
        case .tripped(let restore):
            let c = s.chatter
            var effects: [Effect] = [
                .log(
                    .warning,
                    "\(place(config)) chatters: more than \(c.limit) changes within \(c.window), each slower than the debounce "
                        + "window (a failing contact or a loose wire?). Its changes are ignored until it holds one level for "
                        + "\(c.quiet); the device keeps its last steady state (line \(c.steady ? "active" : "inactive"))",
                    device: config.localID)
            ]
            if let restore { effects += apply(&s, restore, now: now, config: config) }
            return effects
        }
    }

    /// `GPIO device 'door' (line GPIO17 of chip gpiochip0)`.
    static func place(_ config: LineConfiguration) -> String {
        "GPIO device '\(config.localID)' (line \(config.line) of chip \(config.chip))"
    }

    static func apply(_ s: inout State, _ change: LevelChange, now: C.Instant, config: LineConfiguration) -> [Effect] {
        let id = config.localID
        let timestamp = KernelTime.epochNanoseconds(fromMonotonic: change.timestampNanoseconds)
        switch s.behaviour {
        case .binary:
            return [.report([AttributeReport(localID: id, trait: BooleanStateTrait.identifier, attribute: BooleanStateTrait.Attribute.stateValue, value: .bool(change.level))])]
        case .smoke:
            return [.report(smokeReports(id, change.level))]
        case .occupancy(var machine):
            let occupied = machine.level(change.level, at: now)
            s.behaviour = .occupancy(machine)
            return occupied.map { [.report([occupancyReport(id, $0)])] } ?? []
        case .button(var machine):
            let outputs = change.level ? machine.press(at: now) : machine.release(at: now)
            s.behaviour = .button(machine)
            var effects: [Effect] = [.report([switchPosition(id, change.level ? 1 : 0)])]
            effects += outputs.map { buttonEffect($0, id, timestamp: timestamp) }
            return effects
        case .latching:
            let position: Int64 = change.level ? 1 : 0
            return [
                .report([switchPosition(id, position)]),
                .emit(EventReport(localID: id, trait: SwitchTrait.identifier, event: SwitchTrait.Event.switchLatched, fields: ["NewPosition": .int(position)], timestampNanoseconds: timestamp)),
            ]
        case .output:
            // A status line of an output reports the real state.
            return [.report([onOffReport(id, change.level)])]
        }
    }

    static func buttonEffect(_ output: ButtonStateMachine<C.Instant>.Output, _ id: String, timestamp: UInt64?) -> Effect {
        func event(_ e: EventID, _ fields: [String: Value]) -> Effect {
            .emit(EventReport(localID: id, trait: SwitchTrait.identifier, event: e, fields: fields, timestampNanoseconds: timestamp))
        }
        switch output {
        case .initialPress: return event(SwitchTrait.Event.initialPress, ["NewPosition": 1])
        case .longPress: return event(SwitchTrait.Event.longPress, ["NewPosition": 1])
        case .shortRelease: return event(SwitchTrait.Event.shortRelease, ["PreviousPosition": 1])
        case .longRelease: return event(SwitchTrait.Event.longRelease, ["PreviousPosition": 1])
        case .multiPressOngoing(let n):
            return event(SwitchTrait.Event.multiPressOngoing, ["NewPosition": 1, "CurrentNumberOfPressesCounted": .int(Int64(n))])
        case .multiPressComplete(let n):
            return event(SwitchTrait.Event.multiPressComplete, ["PreviousPosition": 1, "TotalNumberOfPressesCounted": .int(Int64(n))])
        }
    }

    static func switchPosition(_ id: String, _ position: Int64) -> AttributeReport {
        AttributeReport(localID: id, trait: SwitchTrait.identifier, attribute: SwitchTrait.Attribute.currentPosition, value: .int(position))
    }

    static func occupancyReport(_ id: String, _ occupied: Bool) -> AttributeReport {
        AttributeReport(localID: id, trait: OccupancySensingTrait.identifier, attribute: OccupancySensingTrait.Attribute.occupancy, value: .int(occupied ? 1 : 0))
    }

    static func onOffReport(_ id: String, _ on: Bool) -> AttributeReport {
        AttributeReport(localID: id, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: .bool(on))
    }

    static func smokeReports(_ id: String, _ smoke: Bool) -> [AttributeReport] {
        [
            AttributeReport(localID: id, trait: SmokeCOAlarmTrait.identifier, attribute: SmokeCOAlarmTrait.Attribute.smokeState, value: .int(smoke ? 2 : 0)),
            AttributeReport(localID: id, trait: SmokeCOAlarmTrait.identifier, attribute: SmokeCOAlarmTrait.Attribute.expressedState, value: .int(smoke ? 1 : 0)),
        ]
    }

    // MARK: Outputs

    /// Drives an output and returns its state read back from the line.
    func drive(_ on: Bool) throws(HomeError) -> [Effect] {
        let result: Result<[Effect], HomeError> = state.withLock { s in
            guard case .output(let line, let status) = s.hardware else { return .failure(Self.offline(config, s.failure)) }
            do throws(GPIOError) {
                try line.set(on)
                // With a status line, the status input reports the real state when it changes.
                if status != nil { return .success([]) }
                return .success([.report([Self.onOffReport(config.localID, try line.value())])])
            } catch {
                return .failure(.driverError(error.message))
            }
        }
        return try result.get()
    }

    /// The output's logical state, nil when not in use.
    var outputState: Bool? {
        state.withLock { s in
            guard case .output(let line, _) = s.hardware else { return nil }
            return try? line.value()
        }
    }

    /// Reads the output's logical state for a toggle.
    func readOutput() throws(HomeError) -> Bool {
        let result: Result<Bool, HomeError> = state.withLock { s in
            guard case .output(let line, _) = s.hardware else { return .failure(Self.offline(config, s.failure)) }
            do throws(GPIOError) {
                return .success(try line.value())
            } catch {
                return .failure(.driverError(error.message))
            }
        }
        return try result.get()
    }

    static func offline(_ config: LineConfiguration, _ failure: GPIOError?) -> HomeError {
        let why = failure?.message ?? "the line is not in use"
        return .deviceOffline("GPIO device \(config.localID) (\(config.line) of chip \(config.chip)) is offline: \(why)")
    }

    // MARK: Hardware

    /// Records why the line is not in use; returns true the first time this reason is seen.
    func fail(_ error: GPIOError) -> Bool {
        state.withLock { s in
            s.failure = error
            defer { s.failureLogged = error }
            return s.failureLogged != error
        }
    }

    var failure: GPIOError? { state.withLock { $0.failure } }

    /// Releases the lines.
    func release() {
        let hardware = state.withLock { s in
            defer { s.hardware = .none }
            return s.hardware
        }
        switch hardware {
        case .none: break
        case .input(let line): line.release()
        case .output(let line, let status):
            line.release()
            status?.release()
        }
    }
}

public import DriverAPI
public import HomeModel
import Foundation
import Synchronization

/// The GPIO driver plugin: wired sensors, buttons and relays on the kernel's GPIO character
/// device (or on simulated chips), as Matter device types.
///
/// Generic over the clock that times debounce, long presses, multi-press windows, PIR hold-on
/// and chip retries, so tests drive it with a `ManualClock`. The `.so` uses `ContinuousClock`.
public final class GPIODriverPlugin<C: Clock>: DriverPlugin where C.Duration == Duration {
    public let manifest = PluginManifest(
        id: "gpio", name: "GPIO", version: "0.1.0",
        summary: "Contacts, motion and leak sensors, buttons, switches and relays on GPIO lines (libgpiod)")

    let clock: C
    let simulator: GPIOSimulator
    let hardware: any GPIOChipBackend
    let running = Mutex<Runtime<C>?>(nil)

    /// - Parameters:
    ///   - clock: times debounce, long presses, hold-on and retries.
    ///   - simulator: where the configuration's `simulated` chips live (a test passes its own
    ///     to drive them).
    ///   - hardware: the backend for every chip that is not simulated.
    public init(clock: C, simulator: GPIOSimulator = GPIOSimulator(), hardware: any GPIOChipBackend = LibgpiodBackend()) {
        self.clock = clock
        self.simulator = simulator
        self.hardware = hardware
    }

    public func validate(configuration: PluginConfiguration) throws {
        _ = try GPIOConfiguration.load(configuration)
    }

    /// `hearth doctor`'s GPIO checks (``GPIODoctor``): group, chips, libgpiod, configured lines.
    public func doctor(_ request: DoctorRequest) async -> [DoctorFinding] { GPIODoctor.findings(request) }

    public func run(context: any DriverContext) async throws {
        let config = try GPIOConfiguration.load(context.configuration)
        let runtime = Runtime(config: config, clock: clock, simulator: simulator, hardware: hardware, context: context)
        running.withLock { $0 = runtime }
        defer {
            running.withLock { $0 = nil }
            runtime.shutdown()
        }
        context.log(.info, "GPIO: \(config.lines.count) line(s); hardware backend \(LibgpiodBackend.description)")
        try await runtime.run()
    }

    public func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        guard let runtime = running.withLock({ $0 }) else { throw HomeError.deviceOffline("the GPIO plugin is not running") }
        return try runtime.handle(command)
    }
}

/// One run of the plugin: the devices, the chips opened for them, and the loops that serve them.
final class Runtime<C: Clock>: Sendable where C.Duration == Duration {
    struct Chips: Sendable {
        var open: [String: any GPIOChip] = [:]
        /// The next attempt at the lines not in use; only ever brought forward (``Runtime/retry(after:)``).
        var retryAt: C.Instant?
        /// After another process released a line a device waits for: which step of
        /// ``Runtime/promptBackoff`` the next failed attempt waits, nil outside such a series.
        var promptStep: Int?
        /// The next look at whether the open chips are still there.
        var presenceAt: C.Instant?
        /// A line stopped delivering events: look at the chips now.
        var checkPresence = false
        /// Watched lines per chip spec, and who holds each (from the kernel's line-info events).
        var watched: [String: Set<Int>] = [:]
        var holders: [String: String] = [:]
        /// Each device's lines (with a status line), once resolved: "<spec>/<offset>" by local ID.
        var lines: [String: Set<String>] = [:]
        /// The missing-library error is logged once, not once per line.
        var libraryMissingLogged = false
    }

    let config: GPIOConfiguration
    let clock: C
    let simulator: GPIOSimulator
    let simulated: SimulatedGPIOBackend
    let hardware: any GPIOChipBackend
    let context: any DriverContext
    let devices: [LineDevice<C>]
    let scheduler: Scheduler<C>
    let chips = Mutex(Chips())
    let restored: [String: Bool]
    /// Outputs blinking to identify, by local ID (only lines whose configuration says `identify`).
    let blinking = Mutex<[String: Blink]>([:])
    /// The state each finished blink goes back to (taken by ``endBlink(_:restore:)``).
    let restoredLevels = Mutex<[String: Bool]>([:])

    /// An output blinking to identify: until when, its next toggle, and the state to go back to.
    struct Blink: Sendable {
        var until: C.Instant
        var next: C.Instant
        var level: Bool
        let restore: Bool
    }

    /// Half a blink.
    static var blinkHalfPeriod: Duration { .milliseconds(500) }

    init(config: GPIOConfiguration, clock: C, simulator: GPIOSimulator, hardware: any GPIOChipBackend, context: any DriverContext) {
        self.config = config
        self.clock = clock
        self.simulator = simulator
        self.hardware = hardware
        self.context = context
        for chip in config.simulated { simulator.addChip(chip.chip, label: chip.label, lineNames: chip.lineNames) }
        let control = config.simulated.compactMap(\.control).first
        simulated = SimulatedGPIOBackend(simulator: simulator, controlDirectory: control) { [context] message in
            context.log(.warning, message)
        }
        devices = config.lines.map { LineDevice(config: $0, clock: clock) }
        scheduler = Scheduler(clock: clock)
        restored = Self.loadState(config.stateFile)
    }

    func run() async throws {
        try simulated.prepareControl()
        for device in devices {
            context.publish(device.description)
        }
        hardware.onLineLost { [weak self] in
            guard let self else { return }
            self.chips.withLock { $0.checkPresence = true }
            self.scheduler.poke()
        }
        acquireAll()
        let usesHardware = config.lines.contains { !simulator.hasChip($0.chip) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            if usesHardware { group.addTask { try await self.hardware.monitor() } }
            group.addTask { try await self.simulated.monitor() }
            group.addTask {
                try await self.scheduler.run(
                    deadline: { self.deadline },
                    fire: { now in self.fire(now) })
            }
            try await group.next()
            group.cancelAll()
        }
    }

    var deadline: C.Instant? {
        var d = chips.withLock { c -> C.Instant? in
            if c.checkPresence { return clock.now }
            return [c.retryAt, c.presenceAt].compactMap { $0 }.min()
        }
        for device in devices {
            if let x = device.deadline { d = d.map { min($0, x) } ?? x }
        }
        if let x = blinking.withLock({ $0.values.map(\.next).min() }) { d = d.map { min($0, x) } ?? x }
        return d
    }

    /// Toggles the blinking outputs that are due, and ends the blinks whose time is up (the
    /// output goes back to its state before, reported as usual).
    func blink(_ now: C.Instant) {
        let due = blinking.withLock { b -> [(String, Blink?)] in
            var due: [(String, Blink?)] = []
            for (id, var blink) in b where blink.next <= now {
                if now >= blink.until {
                    b[id] = nil
                    due.append((id, nil))
                } else {
                    blink.level.toggle()
                    blink.next = now.advanced(by: Self.blinkHalfPeriod)
                    b[id] = blink
                    due.append((id, blink))
                }
            }
            return due
        }
        for (id, blink) in due {
            guard let device = devices.first(where: { $0.localID == id }) else { continue }
            if let blink {
                _ = try? device.drive(blink.level)  // the blink is not the output's state: not reported
            } else {
                endBlink(device, restore: nil)
            }
        }
    }

    /// Puts an output back after identifying and reports IdentifyTime 0.
    func endBlink(_ device: LineDevice<C>, restore: Bool?) {
        let back = restore ?? restoredLevels.withLock { $0.removeValue(forKey: device.localID) }
        if let back { perform((try? device.drive(back)) ?? []) }
        context.report(device.localID, IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(0))
    }

    func fire(_ now: C.Instant) {
        for device in devices { perform(device.tick(now)) }
        blink(now)
        let (retry, check) = chips.withLock { c -> (Bool, Bool) in
            var check = c.checkPresence
            if let at = c.presenceAt, at <= now {
                check = true
                c.presenceAt = nil
            }
            c.checkPresence = false
            guard let at = c.retryAt, at <= now else { return (false, check) }
            c.retryAt = nil
            return (true, check)
        }
        if check { checkChips() }
        if retry { acquireAll() }
        // Chips of the hardware backend are looked at every `retry` (an output line has no
        // events to tell that its chip went away); simulated chips never go.
        chips.withLock { c in
            if c.presenceAt == nil, c.open.keys.contains(where: { !simulator.hasChip($0) }) {
                c.presenceAt = now.advanced(by: config.retry.duration)
            }
        }
    }

    // MARK: Chips that go away

    /// Closes every open chip that is gone (unplugged, removed); its devices go offline and are
    /// acquired again when it returns.
    func checkChips() {
        let gone = chips.withLock { c -> [(String, any GPIOChip)] in
            let gone = c.open.filter { !$0.value.isPresent }
            for spec in gone.keys {
                c.open[spec] = nil
                c.watched[spec] = nil
            }
            return Array(gone)
        }
        guard !gone.isEmpty else { return }
        // Every watch first, then any line: two specs (a label and a name) can open the same
        // chip twice, and a line released while the other handle still watches it oopses
        // Linux before 6.5 (see GPIOChip.stopWatching).
        for (_, chip) in gone { chip.stopWatching() }
        for (spec, chip) in gone {
            let error = GPIOError(
                .chipNotFound, "GPIO chip '\(spec)' (\(chip.name), \(chip.label)) is gone (unplugged, or its driver removed); its devices are offline until it returns")
            for device in devices where device.config.chip == spec && device.isAcquired {
                device.release()
                if device.fail(error) {
                    context.log(.error, "GPIO device '\(device.localID)': \(error.message); trying again every \(config.retry.duration)", device: device.localID)
                }
                context.setConnectivity(.offline, device: device.localID)
            }
            chip.close()
        }
        retry(after: config.retry.duration)
    }

    /// Schedules an attempt at the lines not in use no later than `delay` from now: an earlier
    /// attempt already scheduled stays (a release noticed while a request was failing must not
    /// be pushed back to the next `retry`).
    func retry(after delay: Duration) {
        let at = clock.now.advanced(by: delay)
        chips.withLock { c in c.retryAt = c.retryAt.map { min($0, at) } ?? at }
        scheduler.poke()
    }

    /// How long to wait before trying a released line again when it is still busy: the
    /// releasing process may hold it a moment longer (a request right after its release can
    /// lose to the kernel or to a process that takes it back), so a few quick attempts first,
    /// then every `retry` again.
    static var promptBackoff: [Duration] {
        [.milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(500), .seconds(1)]
    }

    // MARK: Lines other processes claim and release

    /// Watches a configured line, so requests and releases by other processes are logged and a
    /// line another process releases is requested at once.
    func watch(_ offset: Int, on chip: any GPIOChip, spec: String) {
        let first = chips.withLock { c in c.watched[spec, default: []].insert(offset).inserted }
        guard first else { return }
        let chipName = chip.name
        guard chip.watchLine(offset, onChange: { [weak self] change in self?.lineChanged(change, chip: chipName, spec: spec) }) else { return }
        // Who holds it already (its request came before the watch).
        if let holder = chip.consumer(ofLine: offset) {
            chips.withLock { c in
                if c.holders["\(spec)/\(offset)"] == nil { c.holders["\(spec)/\(offset)"] = holder }
            }
        }
    }

    func lineChanged(_ change: GPIOLineChange, chip chipName: String, spec: String) {
        let key = "\(spec)/\(change.offset)"
        let lines = chips.withLock { $0.lines }
        // Devices that need this line and do not have it: refused as busy, or with a request
        // under way right now (its failure is not recorded yet).
        let waiting = devices.filter { d in
            lines[d.localID]?.contains(key) == true && !d.isAcquired && d.failure?.isRetryable != false
        }
        let place = "line \(change.offset) of GPIO chip \(chipName)"
        switch change.kind {
        case .requested:
            chips.withLock { $0.holders[key] = change.consumer }
            guard !change.consumer.hasPrefix("hearth:") else { return }
            let verdict = GPIOLineHolders.scan().holder(chip: chipName, offset: change.offset, consumer: change.consumer)
            context.log(.info, "GPIO: \(place) was requested by '\(change.consumer)'\(GPIOLineHolders.logPhrase(verdict))", device: waiting.first?.localID)
        case .released:
            let previous = chips.withLock { $0.holders.removeValue(forKey: key) } ?? "another process"
            guard !previous.hasPrefix("hearth:") else { return }
            let then = waiting.isEmpty ? "" : "; requesting it for \(waiting.map { "'\($0.localID)'" }.joined(separator: ", ")) now"
            context.log(.info, "GPIO: \(place) was released by '\(previous)'\(then)", device: waiting.first?.localID)
            guard !waiting.isEmpty else { return }
            chips.withLock { $0.promptStep = 0 }
            retry(after: .zero)
        case .reconfigured:
            return
        }
    }

    func perform(_ effects: [LineDevice<C>.Effect]) {
        for effect in effects {
            switch effect {
            case .report(let reports): context.report(reports)
            case .emit(let event): context.emit(event)
            case .log(let level, let message, let device): context.log(level, message, device: device)
            }
        }
    }

    // MARK: Acquiring lines

    func backend(for chip: String) -> any GPIOChipBackend { simulator.hasChip(chip) ? simulated : hardware }

    /// Requests every line not yet in use; failures are logged once each and retried later.
    func acquireAll() {
        var again = false
        for device in devices where !device.isAcquired {
            if device.failure.map({ !$0.isRetryable }) == true { continue }
            do throws(GPIOError) {
                try acquire(device)
                context.setConnectivity(.online, device: device.localID)
                context.log(.info, "GPIO: \(device.config.role.rawValue) on \(device.config.line) of chip \(device.config.chip) is ready", device: device.localID)
            } catch where error.code == .libraryMissing {
                // One error for the plugin, not one per line.
                _ = device.fail(error)
                let first = chips.withLock { c in
                    defer { c.libraryMissingLogged = true }
                    return !c.libraryMissingLogged
                }
                if first { context.log(.error, "GPIO: no device on a real chip can work: \(error.message)") }
                context.setConnectivity(.offline, device: device.localID)
            } catch {
                if device.fail(error) {
                    let later = error.isRetryable ? "; trying again every \(config.retry.duration)" : ""
                    context.log(.error, "GPIO device '\(device.localID)': \(error.message)\(later)", device: device.localID)
                }
                context.setConnectivity(.offline, device: device.localID)
                if error.isRetryable { again = true }
            }
        }
        let delay = chips.withLock { c -> Duration? in
            guard again else {
                c.promptStep = nil
                return nil
            }
            guard let step = c.promptStep else { return config.retry.duration }
            let backoff = Self.promptBackoff
            c.promptStep = step + 1 < backoff.count ? step + 1 : nil
            return min(backoff[step], config.retry.duration)
        }
        if let delay { retry(after: delay) }
    }

    func chip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        if let chip = chips.withLock({ $0.open[spec] }) { return chip }
        let chip = try backend(for: spec).openChip(spec)
        chips.withLock { $0.open[spec] = chip }
        return chip
    }

    func offset(_ reference: LineReference, on chip: any GPIOChip) throws(GPIOError) -> Int {
        switch reference {
        case .offset(let o):
            guard o < chip.lineCount else {
                throw GPIOError(
                    .lineNotFound,
                    "line \(o) of GPIO chip \(chip.name) (\(chip.label)): the chip has only \(chip.lineCount) lines (0...\(chip.lineCount - 1))")
            }
            return o
        case .name(let n):
            guard let o = chip.offset(ofLineNamed: n) else {
                throw GPIOError(.lineNotFound, "GPIO chip \(chip.name) (\(chip.label)) has no line named '\(n)' (see `gpioinfo \(chip.name)`)")
            }
            return o
        }
    }

    /// What an input's edges do: move the device's state machines, tell the home, re-arm timers.
    func edgeHandler(_ device: LineDevice<C>, _ kernelDebounced: KernelDebounce) -> @Sendable (GPIOEdge) -> Void {
        { [weak self, weak device] edge in
            guard let self, let device else { return }
            // Every edge the kernel delivers, before debouncing (`hearth_gpio_events_total`).
            self.context.count("events")
            self.perform(device.edge(edge, kernelDebounced: kernelDebounced.value))
            self.scheduler.poke()
        }
    }

    func acquire(_ device: LineDevice<C>) throws(GPIOError) {
        let line = device.config
        let chip = try chip(line.chip)
        let offset = try offset(line.line, on: chip)
        watch(offset, on: chip, spec: line.chip)
        chips.withLock { _ = $0.lines[line.localID, default: []].insert("\(line.chip)/\(offset)") }
        let consumer = "hearth:\(line.localID)"
        if line.role.isOutput {
            var status: (any GPIOInputLine)?
            if let statusReference = line.statusLine {
                let statusOffset = try self.offset(statusReference, on: chip)
                watch(statusOffset, on: chip, spec: line.chip)
                chips.withLock { _ = $0.lines[line.localID, default: []].insert("\(line.chip)/\(statusOffset)") }
                let kernelDebounced = KernelDebounce()
                let input = try chip.requestInput(
                    offset: statusOffset, consumer: consumer + ":status",
                    settings: GPIOInputSettings(activeLow: line.activeLow, bias: line.bias ?? .asIs, debounce: line.debounce.duration),
                    onEdge: edgeHandler(device, kernelDebounced))
                kernelDebounced.set(input.kernelDebounced)
                status = input
            }
            let initial: Bool =
                switch line.initial ?? .off {
                case .off: false
                case .on: true
                case .restore: restored[line.localID] ?? false
                }
            let output: any GPIOOutputLine
            do {
                output = try chip.requestOutput(offset: offset, consumer: consumer, activeLow: line.activeLow, initial: initial)
            } catch {
                status?.release()
                throw error
            }
            let state: Bool
            do throws(GPIOError) {
                if let status { state = try status.value() } else { state = try output.value() }
            } catch {
                status?.release()
                output.release()
                throw error
            }
            _ = device.start(level: state, hardware: .output(output, status: status))
            context.report([LineDevice<C>.onOffReport(line.localID, state)])
            return
        }
        let kernelDebounced = KernelDebounce()
        let input = try chip.requestInput(
            offset: offset, consumer: consumer,
            settings: GPIOInputSettings(activeLow: line.activeLow, bias: line.bias ?? .asIs, debounce: line.debounce.duration),
            onEdge: edgeHandler(device, kernelDebounced))
        kernelDebounced.set(input.kernelDebounced)
        let level: Bool
        do {
            level = try input.value()
        } catch {
            input.release()
            throw error
        }
        perform(device.start(level: level, hardware: .input(input)))
    }

    // MARK: Commands

    func handle(_ command: DriverCommand) throws -> Value {
        guard let device = devices.first(where: { $0.localID == command.localID }) else {
            throw HomeError.notFound("the GPIO plugin has no device '\(command.localID)'")
        }
        if command.trait == IdentifyTrait.identifier, device.config.identify {
            return try identify(device, command)
        }
        guard command.trait == OnOffTrait.identifier, device.config.role.isOutput else {
            throw HomeError.unsupportedOperation(
                "GPIO device '\(command.localID)' (\(device.config.role.rawValue)) takes no command \(command.command.hex) of trait \(command.trait.hex)")
        }
        // A person switching the output ends its blink: their state wins (a toggle toggles the
        // state before the blink, not the blink's level).
        var before: Bool?
        if blinking.withLock({ $0.removeValue(forKey: device.localID) }) != nil {
            before = restoredLevels.withLock { $0.removeValue(forKey: device.localID) }
            context.report(device.localID, IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(0))
        }
        let on: Bool
        switch command.command {
        case OnOffTrait.Command.on: on = true
        case OnOffTrait.Command.off: on = false
        case OnOffTrait.Command.toggle: on = !(try before ?? device.readOutput())
        default:
            throw HomeError.unsupportedOperation("GPIO outputs support on, off and toggle, not command \(command.command.hex)")
        }
        perform(try device.drive(on))
        saveState()
        return .null
    }

    /// Identify (Matter Core §1.2) on an output whose configuration opts in: blinks it once a
    /// second for `IdentifyTime` seconds (0 stops), then puts it back.
    func identify(_ device: LineDevice<C>, _ command: DriverCommand) throws -> Value {
        guard command.command == IdentifyTrait.Command.identify else {
            throw HomeError.unsupportedOperation("GPIO outputs identify by blinking: use Identify, not command \(command.command.hex)")
        }
        let seconds = min(max(command.arguments["IdentifyTime"]?.intValue ?? 0, 0), 65535)
        let current = try device.readOutput()
        let now = clock.now
        let started = blinking.withLock { b -> Bool in
            if seconds == 0 {
                return b.removeValue(forKey: device.localID) == nil
            }
            let restore = b[device.localID]?.restore ?? current
            b[device.localID] = Blink(until: now.advanced(by: .seconds(seconds)), next: now, level: current, restore: restore)
            return true
        }
        if seconds == 0 {
            if !started { endBlink(device, restore: restoredLevels.withLock { $0.removeValue(forKey: device.localID) }) }
            return .null
        }
        restoredLevels.withLock { $0[device.localID] = $0[device.localID] ?? current }
        context.report(device.localID, IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(seconds))
        scheduler.poke()
        return .null
    }

    // MARK: Restoring outputs

    static func loadState(_ path: String?) -> [String: Bool] {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return [:] }
        return (try? JSONDecoder().decode([String: Bool].self, from: data)) ?? [:]
    }

    func saveState() {
        guard let path = config.stateFile else { return }
        var states: [String: Bool] = [:]
        for device in devices where device.config.initial == .restore {
            if let on = device.outputState { states[device.localID] = on }
        }
        do {
            let data = try JSONEncoder().encode(states)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            context.log(.warning, "GPIO: cannot save output states to \(path): \(error)")
        }
    }

    func shutdown() {
        let open = chips.withLock { c in
            defer { c.open = [:] }
            return Array(c.open.values)
        }
        // A chip may have gone unnoticed since the last look: see GPIOChip.stopWatching.
        for chip in open { chip.stopWatching() }
        for device in devices { device.release() }
        for chip in open { chip.close() }
    }
}

/// Whether the kernel debounces a line: known only once the line is requested, but the edge
/// handler is created before.
final class KernelDebounce: Sendable {
    let flag = Mutex(false)
    var value: Bool { flag.withLock { $0 } }
    func set(_ v: Bool) { flag.withLock { $0 = v } }
}

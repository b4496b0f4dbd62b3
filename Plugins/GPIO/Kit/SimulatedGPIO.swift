import CHearthGPIO
import Foundation
import Glibc
import Synchronization

/// In-memory GPIO chips that behave like the kernel's gpio-sim: each line has a `pull` a test
/// or a person sets (the level an unconnected input reads), outputs show the `value` they drive,
/// a bias requested on an input moves its pull, and a line can be held by one consumer at a time.
///
/// Drive it from a test with ``setPull(chip:line:high:)`` or from a shell through the control
/// FIFO of ``SimulatedGPIOBackend`` (`echo "sim0 GPIO3 pull-up" > …/control`).
public final class GPIOSimulator: Sendable {
    struct Line {
        var name: String
        var pull = false
        var consumer: String?
        var activeLow = false
        var isOutput = false
        var driven = false
        var onEdge: (@Sendable (GPIOEdge) -> Void)?
        /// The physical level: what the output drives, or the pull of an input.
        var physical: Bool { isOutput ? driven : pull }
        var logical: Bool { physical != activeLow }
    }

    struct Chip {
        var label: String
        var lines: [Line]
        var present = true
    }

    struct State {
        var chips: [String: Chip] = [:]
        var changeWaiters: [CheckedContinuation<Void, Never>] = []
        var observers: [Int: @Sendable () -> Void] = [:]
        var nextObserver = 0
    }

    let state = Mutex(State())

    public init() {}

    /// Adds a chip (or replaces a missing one) with lines named as given.
    public func addChip(_ name: String, label: String? = nil, lineNames: [String]) {
        state.withLock { s in
            if s.chips[name]?.present == true { return }
            s.chips[name] = Chip(label: label ?? name, lines: lineNames.map { Line(name: $0) })
        }
    }

    /// Makes a chip disappear (as an unplugged USB expander) or reappear.
    public func setPresent(_ name: String, _ present: Bool) {
        state.withLock { s in s.chips[name]?.present = present }
    }

    /// Whether a chip of this name is simulated.
    public func hasChip(_ name: String) -> Bool { state.withLock { $0.chips[name] != nil } }

    /// Names of the simulated chips.
    public var chipNames: [String] { state.withLock { $0.chips.keys.sorted() } }

    /// Sets the pull of a line (a wire to 3.3 V or to ground), by offset or name; an input
    /// requested with edge detection sees an edge when its logical value changes.
    /// - Throws: ``GPIOError`` when the chip or line does not exist.
    public func setPull(chip: String, line: String, high: Bool) throws(GPIOError) {
        var delivery: (@Sendable (GPIOEdge) -> Void, GPIOEdge)?
        let result: Result<Void, GPIOError> = state.withLock { s in
            guard var c = s.chips[chip] else { return .failure(GPIOError(.chipNotFound, "no simulated chip '\(chip)'")) }
            guard let i = Self.index(of: line, in: c) else {
                return .failure(GPIOError(.lineNotFound, "simulated chip '\(chip)' has no line '\(line)'"))
            }
            let before = c.lines[i].logical
            c.lines[i].pull = high
            let after = c.lines[i].logical
            s.chips[chip] = c
            if before != after, !c.lines[i].isOutput, let onEdge = c.lines[i].onEdge {
                delivery = (onEdge, GPIOEdge(rising: after, timestampNanoseconds: KernelTime.monotonicNanoseconds()))
            }
            return .success(())
        }
        try result.get()
        if let (onEdge, edge) = delivery { onEdge(edge) }
        notify()
    }

    /// Sets the pull of a line by offset.
    public func setPull(chip: String, offset: Int, high: Bool) throws(GPIOError) {
        try setPull(chip: chip, line: String(offset), high: high)
    }

    /// The physical level of a line: what an output drives, the pull of an input
    /// (gpio-sim's `value` attribute). Nil when there is no such line.
    public func level(chip: String, line: String) -> Bool? {
        state.withLock { s in
            guard let c = s.chips[chip], let i = Self.index(of: line, in: c) else { return nil }
            return c.lines[i].physical
        }
    }

    /// Who holds the line, nil when free.
    public func consumer(chip: String, line: String) -> String? {
        state.withLock { s in
            guard let c = s.chips[chip], let i = Self.index(of: line, in: c) else { return nil }
            return c.lines[i].consumer
        }
    }

    /// Holds a line as another process would (to test a busy line).
    public func hold(chip: String, line: String, consumer: String) {
        state.withLock { s in
            guard let c = s.chips[chip], let i = Self.index(of: line, in: c) else { return }
            s.chips[chip]!.lines[i].consumer = consumer
        }
    }

    /// Lets go of a line held with ``hold(chip:line:consumer:)`` (the other process ends).
    public func unhold(chip: String, line: String) {
        state.withLock { s in
            guard let c = s.chips[chip], let i = Self.index(of: line, in: c) else { return }
            s.chips[chip]!.lines[i].consumer = nil
        }
    }

    /// A text rendering of every line: `sim0 3 GPIO3 output value=1 consumer=hearth`.
    public func render() -> String {
        state.withLock { s in
            var out = ""
            for name in s.chips.keys.sorted() {
                let c = s.chips[name]!
                for (i, l) in c.lines.enumerated() {
                    let direction = l.consumer == nil ? "unused" : (l.isOutput ? "output" : "input")
                    out += "\(name) \(i) \(l.name) \(direction) value=\(l.physical ? 1 : 0) pull=\(l.pull ? "up" : "down")"
                    if let consumer = l.consumer { out += " consumer=\(consumer)" }
                    out += "\n"
                }
            }
            return out
        }
    }

    /// Calls `observer` after every change (used to rewrite the control directory's state file).
    func observe(_ observer: @escaping @Sendable () -> Void) -> Int {
        state.withLock { s in
            s.nextObserver += 1
            s.observers[s.nextObserver] = observer
            return s.nextObserver
        }
    }

    func stopObserving(_ id: Int) { state.withLock { s in s.observers[id] = nil } }

    func notify() {
        let observers = state.withLock { Array($0.observers.values) }
        for o in observers { o() }
    }

    static func index(of line: String, in chip: Chip) -> Int? {
        if let n = Int(line) { return n >= 0 && n < chip.lines.count ? n : nil }
        return chip.lines.firstIndex { $0.name == line }
    }

    // MARK: Chip operations (used by SimulatedChip)

    func open(_ name: String) -> (label: String, count: Int)? {
        state.withLock { s in
            guard let c = s.chips[name], c.present else { return nil }
            return (c.label, c.lines.count)
        }
    }

    func request(
        chip: String, offset: Int, consumer: String, output: Bool, activeLow: Bool, initial: Bool, bias: GPIOBias,
        onEdge: (@Sendable (GPIOEdge) -> Void)?
    ) throws(GPIOError) {
        let result: Result<Void, GPIOError> = state.withLock { s in
            guard var c = s.chips[chip], c.present else {
                return .failure(GPIOError(.chipNotFound, "simulated GPIO chip '\(chip)' is not present"))
            }
            guard offset >= 0, offset < c.lines.count else {
                return .failure(
                    GPIOError(
                        .lineNotFound,
                        "line \(offset) of simulated GPIO chip \(chip): the chip has only \(c.lines.count) lines (0...\(c.lines.count - 1))"))
            }
            if let holder = c.lines[offset].consumer {
                return .failure(GPIOError(.busy, "line \(offset) of simulated GPIO chip \(chip) is busy: held by '\(holder)'"))
            }
            c.lines[offset].consumer = consumer
            c.lines[offset].isOutput = output
            c.lines[offset].activeLow = activeLow
            c.lines[offset].onEdge = onEdge
            if output { c.lines[offset].driven = initial != activeLow }
            switch bias {
            case .pullUp where !output: c.lines[offset].pull = true
            case .pullDown where !output: c.lines[offset].pull = false
            default: break
            }
            s.chips[chip] = c
            return .success(())
        }
        try result.get()
        notify()
    }

    func release(chip: String, offset: Int) {
        state.withLock { s in
            guard s.chips[chip] != nil, offset < s.chips[chip]!.lines.count else { return }
            s.chips[chip]!.lines[offset].consumer = nil
            s.chips[chip]!.lines[offset].onEdge = nil
            s.chips[chip]!.lines[offset].isOutput = false
        }
        notify()
    }

    func logical(chip: String, offset: Int) throws(GPIOError) -> Bool {
        let v: Bool? = state.withLock { s in
            guard let c = s.chips[chip], c.present, offset < c.lines.count else { return nil }
            return c.lines[offset].logical
        }
        guard let v else { throw GPIOError(.io, "line \(offset) of simulated GPIO chip \(chip): the chip is gone") }
        return v
    }

    func drive(chip: String, offset: Int, _ value: Bool) throws(GPIOError) {
        let ok: Bool = state.withLock { s in
            guard let c = s.chips[chip], c.present, offset < c.lines.count else { return false }
            s.chips[chip]!.lines[offset].driven = value != c.lines[offset].activeLow
            return true
        }
        guard ok else { throw GPIOError(.io, "line \(offset) of simulated GPIO chip \(chip): the chip is gone") }
        notify()
    }

    func lineNames(_ chip: String) -> [String] { state.withLock { $0.chips[chip]?.lines.map(\.name) ?? [] } }
}

/// The simulated chips as a ``GPIOChipBackend``, optionally driven through a control directory:
///
/// - `<dir>/control`: a FIFO; write lines `<chip> <line> <pull-up|pull-down|high|low|1|0>`,
///   where `<line>` is an offset or a line name: `echo "sim0 GPIO3 pull-up" > <dir>/control`.
/// - `<dir>/state`: rewritten after every change: one line per GPIO line with direction,
///   physical value, pull and consumer (the simulated counterpart of gpio-sim's `value`).
public final class SimulatedGPIOBackend: GPIOChipBackend {
    public let simulator: GPIOSimulator
    public let controlDirectory: String?
    let log: @Sendable (String) -> Void

    public init(simulator: GPIOSimulator, controlDirectory: String? = nil, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.simulator = simulator
        self.controlDirectory = controlDirectory
        self.log = log
    }

    public func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        guard let (label, count) = simulator.open(spec) else {
            throw GPIOError(.chipNotFound, "simulated GPIO chip '\(spec)' is not present")
        }
        return SimulatedChip(simulator: simulator, name: spec, label: label, lineCount: count)
    }

    /// The control FIFO, once created.
    let control = Mutex<(fd: Int32, observer: Int)?>(nil)

    /// Creates the control directory and its FIFO (idempotent), so a writer can open it as soon
    /// as this returns; ``monitor()`` then serves it.
    public func prepareControl() throws(GPIOError) {
        guard let dir = controlDirectory else { return }
        try control.withLock { (served: inout (fd: Int32, observer: Int)?) throws(GPIOError) in
            guard served == nil else { return }
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                throw GPIOError(.io, "cannot create the simulator's control directory \(dir): \(error)")
            }
            let fifo = dir + "/control"
            unlink(fifo)
            guard mkfifo(fifo, 0o620) == 0 else {
                throw GPIOError(.io, "cannot create the simulator's control FIFO \(fifo): \(String(cString: strerror(errno)))")
            }
            // O_RDWR keeps a writer open, so the FIFO never reports end-of-file between writers.
            let opened = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard opened >= 0 else { throw GPIOError(.io, "cannot open \(fifo): \(String(cString: strerror(errno)))") }
            served = (opened, simulator.observe { [weak self] in self?.writeState() })
        }
        writeState()
    }

    /// Serialises state-file writes, so the last change is the one on disk.
    let stateWrite = Mutex(())

    func writeState() {
        guard let dir = controlDirectory else { return }
        let statePath = dir + "/state"
        let tmp = statePath + ".tmp"
        stateWrite.withLock { _ in
            if FileManager.default.createFile(atPath: tmp, contents: Data(simulator.render().utf8)) {
                rename(tmp, statePath)
            }
        }
    }

    /// Serves the control directory (when configured) until cancelled.
    public func monitor() async throws {
        guard let dir = controlDirectory else {
            // Nothing to serve: edges are delivered by whoever drives the simulator.
            try await waitForCancellation()
            return
        }
        try prepareControl()
        guard let (fd, observer) = control.withLock({ $0 }) else { return }
        let wake = hg_wake_fd()
        defer {
            simulator.stopObserving(observer)
            control.withLock { $0 = nil }
            close(fd)
            close(wake)
            unlink(dir + "/control")
        }
        let done = AsyncStream<Void>.makeStream()
        let thread = Thread { [self] in
            self.serve(fd: fd, wake: wake)
            done.continuation.finish()
        }
        thread.name = "hearth-gpio-sim-control"
        await withTaskCancellationHandler {
            thread.start()
            for await _ in done.stream {}
        } onCancel: {
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
        try Task.checkCancellation()
    }

    func serve(fd: Int32, wake: Int32) {
        var pending = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { continue }
            pending += String(decoding: buffer[0..<n], as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let command = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                apply(command)
            }
        }
    }

    /// Applies one control line; a malformed one is logged and ignored.
    func apply(_ command: String) {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty else { return }
        guard words.count == 3 else {
            log("simulated GPIO control: '\(command)': expected '<chip> <line> <pull-up|pull-down|high|low|1|0>'")
            return
        }
        let high: Bool
        switch words[2] {
        case "pull-up", "high", "1", "up": high = true
        case "pull-down", "low", "0", "down": high = false
        default:
            log("simulated GPIO control: '\(command)': '\(words[2])' is not one of pull-up, pull-down, high, low, 1, 0")
            return
        }
        do {
            try simulator.setPull(chip: words[0], line: words[1], high: high)
        } catch {
            log("simulated GPIO control: '\(command)': \(error.message)")
        }
    }
}

/// A simulated chip, opened.
final class SimulatedChip: GPIOChip {
    let simulator: GPIOSimulator
    let name: String
    let label: String
    let lineCount: Int

    init(simulator: GPIOSimulator, name: String, label: String, lineCount: Int) {
        self.simulator = simulator
        self.name = name
        self.label = label
        self.lineCount = lineCount
    }

    var backendDescription: String { "simulated" }

    var isPresent: Bool { simulator.open(name) != nil }

    func offset(ofLineNamed lineName: String) -> Int? { simulator.lineNames(name).firstIndex(of: lineName) }

    func consumer(ofLine offset: Int) -> String? { simulator.consumer(chip: name, line: String(offset)) }

    func requestInput(
        offset: Int, consumer: String, settings: GPIOInputSettings, onEdge: @escaping @Sendable (GPIOEdge) -> Void
    ) throws(GPIOError) -> any GPIOInputLine {
        try simulator.request(
            chip: name, offset: offset, consumer: consumer, output: false, activeLow: settings.activeLow, initial: false,
            bias: settings.bias, onEdge: onEdge)
        return SimulatedLine(simulator: simulator, chip: name, offset: offset)
    }

    func requestOutput(offset: Int, consumer: String, activeLow: Bool, initial: Bool) throws(GPIOError) -> any GPIOOutputLine {
        try simulator.request(
            chip: name, offset: offset, consumer: consumer, output: true, activeLow: activeLow, initial: initial, bias: .asIs,
            onEdge: nil)
        return SimulatedLine(simulator: simulator, chip: name, offset: offset)
    }

    func close() {}
}

/// A requested simulated line (input or output).
final class SimulatedLine: GPIOInputLine, GPIOOutputLine {
    let simulator: GPIOSimulator
    let chip: String
    let offset: Int
    let released = Mutex(false)

    init(simulator: GPIOSimulator, chip: String, offset: Int) {
        self.simulator = simulator
        self.chip = chip
        self.offset = offset
    }

    var kernelDebounced: Bool { false }
    func value() throws(GPIOError) -> Bool { try simulator.logical(chip: chip, offset: offset) }
    func set(_ value: Bool) throws(GPIOError) { try simulator.drive(chip: chip, offset: offset, value) }
    func release() {
        let first = released.withLock { r in
            defer { r = true }
            return !r
        }
        if first { simulator.release(chip: chip, offset: offset) }
    }
}

/// Suspends until the task is cancelled, then throws `CancellationError`.
func waitForCancellation() async throws {
    let (stream, continuation) = AsyncStream<Void>.makeStream()
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
    throw CancellationError()
}

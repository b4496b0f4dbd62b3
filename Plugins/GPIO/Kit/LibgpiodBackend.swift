import CHearthGPIO
import Foundation
import Glibc
import Synchronization

/// GPIO through the kernel's character device (`/dev/gpiochipN`), via libgpiod and the C shim.
///
/// The shim loads libgpiod 2 (`libgpiod.so.3`) or else libgpiod 1.6 (`libgpiod.so.2`) at run
/// time (``GPIOLibrary``); with neither, opening a chip throws `libraryMissing`.
///
/// Edges are read on one dedicated thread that `poll()`s every requested input's event file
/// descriptor, every watched chip's line-info descriptor, plus an `eventfd` used to wake it
/// (when lines change or the monitor is cancelled).
public final class LibgpiodBackend: GPIOChipBackend {
    struct Watch {
        let line: CHandle
        let fd: Int32
        let onEdge: @Sendable (GPIOEdge) -> Void
        /// The chip went away: no longer polled, but still held until its owner releases it
        /// (from the plugin's side, which also closes the chip; never from the monitor).
        var lost = false
    }

    /// A chip whose line-info descriptor is polled: `drain` reads its pending changes and
    /// says whether the chip is still there.
    struct InfoWatch {
        let fd: Int32
        let drain: @Sendable () -> Bool
        /// The chip went away: no longer polled (its descriptor would report it forever).
        var lost = false
    }

    struct State {
        var watches: [Int: Watch] = [:]
        var infoWatches: [Int: InfoWatch] = [:]
        var nextID = 0
        var stopping = false
        var onLost: (@Sendable () -> Void)?
        /// The monitor thread while its loop runs, and how many times the loop has begun a
        /// poll: a pass that begins after a watch was removed no longer polls its descriptor.
        var monitorThread: pthread_t?
        var pass = 0
    }

    /// Registered inputs. Event reads happen under this lock too, so a release never frees a
    /// line the monitor is reading; handlers run after it is released.
    let state = Mutex(State())
    let wakeFD: Int32

    public init() {
        wakeFD = hg_wake_fd()
    }

    deinit { if wakeFD >= 0 { Glibc.close(wakeFD) } }

    /// Which library serves the chips, e.g. `libgpiod 2.2.1 (v2 API, libgpiod.so.3)`, or why none does.
    public static var description: String { GPIOLibrary.current.description }

    public func onLineLost(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onLost = handler }
    }

    public func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        var error: Int32 = 0
        guard let chip = hg_chip_open(spec, &error) else {
            switch error {
            case ELIBACC:
                throw GPIOError(.libraryMissing, "GPIO chip '\(spec)': \(GPIOLibrary.current.description)")
            case EACCES, EPERM:
                throw GPIOError(
                    .permissionDenied,
                    "GPIO chip '\(spec)': permission denied (add the user running hearthd to the 'gpio' group, or a udev rule for /dev/gpiochip*)")
            default:
                throw GPIOError(
                    .chipNotFound,
                    "GPIO chip '\(spec)' not found (no /dev/\(spec), and no chip with that label or path; \(Self.errnoText(error)))")
            }
        }
        return LibgpiodChip(backend: self, chip: chip, spec: spec)
    }

    public func monitor() async throws {
        let done = AsyncStream<Void>.makeStream()
        state.withLock { $0.stopping = false }
        let thread = Thread { [self] in
            self.loop()
            done.continuation.yield()
            done.continuation.finish()
        }
        thread.name = "hearth-gpio-edges"
        await withTaskCancellationHandler {
            thread.start()
            for await _ in done.stream {}
        } onCancel: {
            state.withLock { $0.stopping = true }
            wake()
        }
        try Task.checkCancellation()
    }

    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    func add(_ watch: Watch) -> Int {
        let id = state.withLock { s in
            s.nextID += 1
            s.watches[s.nextID] = watch
            return s.nextID
        }
        wake()
        return id
    }

    func addInfoWatch(_ watch: InfoWatch) -> Int {
        let id = state.withLock { s in
            s.nextID += 1
            s.infoWatches[s.nextID] = watch
            return s.nextID
        }
        wake()
        return id
    }

    /// Stops polling a line-info descriptor and returns once the monitor's poll has let go of
    /// it (at most 2 s), so that closing it afterwards ends the kernel's watch at once: a file
    /// a `poll()` still holds is released only when that poll returns.
    func removeInfoWatch(_ id: Int) {
        let (thread, pass) = state.withLock { s in
            _ = s.infoWatches.removeValue(forKey: id)
            return (s.monitorThread, s.pass)
        }
        wake()
        guard let thread, pthread_equal(thread, pthread_self()) == 0 else { return }
        for _ in 0..<2000 {
            if state.withLock({ $0.monitorThread == nil || $0.pass > pass }) { return }
            usleep(1000)
        }
    }

    /// Stops watching and releases the line, under the lock the monitor reads with.
    func release(_ id: Int) {
        state.withLock { s in
            if let w = s.watches.removeValue(forKey: id) { hg_line_release(w.line.pointer) }
        }
        wake()
    }

    func loop() {
        var events = [hg_event](repeating: hg_event(), count: 16)
        state.withLock { $0.monitorThread = pthread_self() }
        defer { state.withLock { $0.monitorThread = nil } }
        while true {
            let (stopping, watches, infoWatches) = state.withLock { s in
                s.pass += 1
                return (s.stopping, s.watches, s.infoWatches)
            }
            if stopping { return }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            var ids: [Int] = []
            for (id, w) in watches where !w.lost {
                fds.append(pollfd(fd: w.fd, events: Int16(POLLIN | POLLPRI), revents: 0))
                ids.append(id)
            }
            let infos = infoWatches.filter { !$0.value.lost }.map { (id: $0.key, watch: $0.value) }
            for (_, w) in infos { fds.append(pollfd(fd: w.fd, events: Int16(POLLIN), revents: 0)) }
            let n = poll(&fds, nfds_t(fds.count), -1)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 {
                var count: UInt64 = 0
                _ = Glibc.read(wakeFD, &count, 8)
            }
            for (i, id) in ids.enumerated() where fds[i + 1].revents != 0 {
                var delivered: [GPIOEdge] = []
                var handler: (@Sendable (GPIOEdge) -> Void)?
                var dropWatch = false
                state.withLock { s in
                    guard let w = s.watches[id] else { return }
                    handler = w.onEdge
                    let got = events.withUnsafeMutableBufferPointer { hg_line_read_events(w.line.pointer, $0.baseAddress, 16) }
                    if got < 0 {
                        // The line is gone (chip unplugged): stop polling it; the plugin
                        // releases it when it closes the chip.
                        dropWatch = true
                        return
                    }
                    for k in 0..<Int(got) {
                        delivered.append(GPIOEdge(rising: events[k].rising != 0, timestampNanoseconds: events[k].timestamp_ns))
                    }
                }
                if dropWatch {
                    let onLost = state.withLock { s in
                        s.watches[id]?.lost = true
                        return s.onLost
                    }
                    onLost?()
                }
                if let handler { for edge in delivered { handler(edge) } }
            }
            for (i, info) in infos.enumerated() where fds[ids.count + 1 + i].revents != 0 {
                if fds[ids.count + 1 + i].revents & Int16(POLLNVAL) != 0 { continue }
                if !info.watch.drain() {
                    let onLost = state.withLock { s in
                        s.infoWatches[info.id]?.lost = true
                        return s.onLost
                    }
                    onLost?()
                }
            }
        }
    }

    static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// A chip opened through libgpiod.
final class LibgpiodChip: GPIOChip {
    let backend: LibgpiodBackend
    /// The C handle, nil once closed; chip-level calls are serialised by this lock (libgpiod
    /// objects are not thread-safe).
    let chip: Mutex<CHandle?>
    let name: String
    let label: String
    let lineCount: Int
    let spec: String
    /// The device number of `/dev/<name>` when opened: a chip that is removed and comes back
    /// may get the same name but is another device.
    let device: UInt?
    /// Who hears about line-info changes, and the monitor's registration of this chip.
    let watcher = Mutex<(onChange: (@Sendable (GPIOLineChange) -> Void)?, id: Int?)>((nil, nil))

    init(backend: LibgpiodBackend, chip: OpaquePointer, spec: String) {
        self.backend = backend
        self.spec = spec
        name = String(cString: hg_chip_name(chip))
        label = String(cString: hg_chip_label(chip))
        lineCount = Int(hg_chip_num_lines(chip))
        self.chip = Mutex(CHandle(chip))
        device = Self.deviceNumber("/dev/\(name)")
    }

    static func deviceNumber(_ path: String) -> UInt? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return UInt(st.st_rdev)
    }

    var backendDescription: String { LibgpiodBackend.description }

    /// Whether the kernel still has this chip: its device node is the one opened, and the kernel
    /// still answers about its lines.
    var isPresent: Bool {
        guard let device, Self.deviceNumber("/dev/\(name)") == device else { return false }
        return chip.withLock { c -> Bool in
            guard let c else { return false }
            var buffer = [CChar](repeating: 0, count: 8)
            let r = hg_chip_line_consumer(c.pointer, 0, &buffer, buffer.count)
            return r >= 0 || (r != -ENODEV && r != -ENXIO)
        }
    }

    func watchLine(_ offset: Int, onChange: @escaping @Sendable (GPIOLineChange) -> Void) -> Bool {
        let (ok, fd) = chip.withLock { c -> (Bool, Int32) in
            guard let c, offset >= 0, offset < lineCount else { return (false, -1) }
            guard hg_chip_watch_line(c.pointer, UInt32(offset)) == 0 else { return (false, -1) }
            return (true, hg_chip_info_fd(c.pointer))
        }
        guard ok, fd >= 0 else { return false }
        let register = watcher.withLock { w -> Bool in
            w.onChange = onChange
            return w.id == nil
        }
        if register {
            let id = backend.addInfoWatch(LibgpiodBackend.InfoWatch(fd: fd, drain: { [weak self] in self?.drainInfo() ?? false }))
            watcher.withLock { $0.id = id }
        }
        return true
    }

    /// Reads the pending line-info changes and tells the watcher (after the chip's lock);
    /// false when the chip is gone (its descriptor reports that on every poll).
    func drainInfo() -> Bool {
        var changes: [GPIOLineChange] = []
        let present = chip.withLock { c -> Bool in
            guard let c else { return true }
            var event = hg_info_event()
            for _ in 0..<64 {
                let r = hg_chip_read_info_event(c.pointer, &event)
                if r == -ENODEV || r == -ENXIO { return false }
                guard r > 0 else { break }
                let consumer = withUnsafeBytes(of: event.consumer) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                let kind: GPIOLineChange.Kind =
                    switch Int(event.type) {
                    case Int(HG_INFO_REQUESTED): .requested
                    case Int(HG_INFO_RELEASED): .released
                    default: .reconfigured
                    }
                changes.append(GPIOLineChange(offset: Int(event.offset), kind: kind, consumer: consumer, timestampNanoseconds: event.timestamp_ns))
            }
            return true
        }
        if let onChange = watcher.withLock({ $0.onChange }) {
            for change in changes { onChange(change) }
        }
        return present
    }

    func offset(ofLineNamed lineName: String) -> Int? {
        chip.withLock { c -> Int? in
            guard let c else { return nil }
            let r = hg_chip_find_line(c.pointer, lineName)
            return r >= 0 ? Int(r) : nil
        }
    }

    func consumer(ofLine offset: Int) -> String? {
        chip.withLock { c -> String? in
            guard let c, offset >= 0, offset < lineCount else { return nil }
            var buffer = [CChar](repeating: 0, count: 64)
            let used = hg_chip_line_consumer(c.pointer, UInt32(offset), &buffer, buffer.count)
            guard used > 0 else { return nil }
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.isEmpty ? "unnamed consumer" : text
        }
    }

    func where_(_ offset: Int) -> String { "line \(offset) of GPIO chip \(name) (\(label))" }

    func failure(_ error: Int32, _ offset: Int) -> GPIOError {
        switch error {
        case EBUSY:
            guard let consumer = consumer(ofLine: offset) else {
                return GPIOError(.busy, "\(where_(offset)) is busy (another process or device uses it)")
            }
            // Which process: /proc names it (this one left out: its own lines are not the busy one).
            let verdict = GPIOLineHolders.scan().holder(chip: name, offset: offset, consumer: consumer)
            return GPIOError(.busy, "\(where_(offset)) is busy: held by '\(consumer)'\(GPIOLineHolders.logPhrase(verdict))")
        case EACCES, EPERM:
            return GPIOError(.permissionDenied, "\(where_(offset)): permission denied")
        case EINVAL where offset >= lineCount:
            return GPIOError(.lineNotFound, "\(where_(offset)): the chip has only \(lineCount) lines (0...\(lineCount - 1))")
        case EINVAL, EOPNOTSUPP:
            return GPIOError(.invalid, "\(where_(offset)): the kernel refused the request (\(LibgpiodBackend.errnoText(error)))")
        case ENODEV, ENXIO:
            return GPIOError(.chipNotFound, "\(where_(offset)): the chip is gone (\(LibgpiodBackend.errnoText(error)))")
        default:
            return GPIOError(.io, "\(where_(offset)): \(LibgpiodBackend.errnoText(error))")
        }
    }

    func requestInput(
        offset: Int, consumer: String, settings: GPIOInputSettings, onEdge: @escaping @Sendable (GPIOEdge) -> Void
    ) throws(GPIOError) -> any GPIOInputLine {
        guard offset >= 0, offset < lineCount else { throw failure(EINVAL, offset) }
        let bias: Int32 =
            switch settings.bias {
            case .asIs: Int32(HG_BIAS_AS_IS)
            case .disabled: Int32(HG_BIAS_DISABLED)
            case .pullUp: Int32(HG_BIAS_PULL_UP)
            case .pullDown: Int32(HG_BIAS_PULL_DOWN)
            }
        let debounceMicroseconds = UInt32(clamping: settings.debounce.components.seconds * 1_000_000 + settings.debounce.components.attoseconds / 1_000_000_000_000)
        var error: Int32 = 0
        let handle = chip.withLock { c -> CHandle? in
            guard let c else { error = ENODEV; return nil }
            return CHandle(hg_line_request_input(c.pointer, UInt32(offset), consumer, settings.activeLow ? 1 : 0, bias, debounceMicroseconds, &error))
        }
        guard let handle else { throw failure(error, offset) }
        let line = handle.pointer
        let fd = hg_line_event_fd(line)
        let kernelDebounced = hg_backend_has_kernel_debounce() != 0 && settings.debounce > .zero
        let id = backend.add(LibgpiodBackend.Watch(line: handle, fd: fd, onEdge: onEdge))
        return LibgpiodInput(backend: backend, id: id, description: where_(offset), kernelDebounced: kernelDebounced)
    }

    func requestOutput(offset: Int, consumer: String, activeLow: Bool, initial: Bool) throws(GPIOError) -> any GPIOOutputLine {
        guard offset >= 0, offset < lineCount else { throw failure(EINVAL, offset) }
        var error: Int32 = 0
        let handle = chip.withLock { c -> CHandle? in
            guard let c else { error = ENODEV; return nil }
            return CHandle(hg_line_request_output(c.pointer, UInt32(offset), consumer, activeLow ? 1 : 0, initial ? 1 : 0, &error))
        }
        guard let handle else { throw failure(error, offset) }
        return LibgpiodOutput(line: handle, description: where_(offset))
    }

    func stopWatching() {
        if let id = watcher.withLock({ w -> Int? in
            defer { w = (nil, nil) }
            return w.id
        }) {
            backend.removeInfoWatch(id)
        }
        chip.withLock { c in
            if let c { hg_chip_unwatch(c.pointer) }
        }
    }

    func close() {
        if let id = watcher.withLock({ w -> Int? in
            defer { w = (nil, nil) }
            return w.id
        }) {
            backend.removeInfoWatch(id)
        }
        chip.withLock { c in
            if let c { hg_chip_close(c.pointer) }
            c = nil
        }
    }
}

/// An input line: reads happen under the backend's lock (shared with the monitor).
final class LibgpiodInput: GPIOInputLine {
    let backend: LibgpiodBackend
    let id: Int
    let released = Mutex(false)
    let description: String
    let kernelDebounced: Bool

    init(backend: LibgpiodBackend, id: Int, description: String, kernelDebounced: Bool) {
        self.backend = backend
        self.id = id
        self.description = description
        self.kernelDebounced = kernelDebounced
    }

    func value() throws(GPIOError) -> Bool {
        let r: Int32 = backend.state.withLock { s in
            guard let w = s.watches[id] else { return -ENODEV }
            return hg_line_get_value(w.line.pointer)
        }
        guard r >= 0 else { throw GPIOError(.io, "\(description): cannot read: \(LibgpiodBackend.errnoText(-r))") }
        return r != 0
    }

    func release() {
        let wasHeld = released.withLock { r -> Bool in
            defer { r = true }
            return !r
        }
        if wasHeld { backend.release(id) }
    }
}

/// An output line; the Mutex serialises writes and the release.
final class LibgpiodOutput: GPIOOutputLine {
    let line: Mutex<CHandle?>
    let description: String

    init(line: CHandle, description: String) {
        self.line = Mutex(line)
        self.description = description
    }

    func value() throws(GPIOError) -> Bool {
        let r = line.withLock { l -> Int32 in l.map { hg_line_get_value($0.pointer) } ?? -ENODEV }
        guard r >= 0 else { throw GPIOError(.io, "\(description): cannot read: \(LibgpiodBackend.errnoText(-r))") }
        return r != 0
    }

    func set(_ value: Bool) throws(GPIOError) {
        let r = line.withLock { l -> Int32 in l.map { hg_line_set_value($0.pointer, value ? 1 : 0) } ?? -ENODEV }
        guard r >= 0 else { throw GPIOError(.io, "\(description): cannot drive: \(LibgpiodBackend.errnoText(-r))") }
    }

    func release() {
        line.withLock { l in
            if let p = l { hg_line_release(p.pointer) }
            l = nil
        }
    }
}

/// A libgpiod object handle as a plain address, so it can sit in a `Mutex` state and cross to
/// the monitor thread; every use of the pointee happens under the lock that owns the handle.
struct CHandle: Hashable, Sendable {
    let address: UInt

    init(_ pointer: OpaquePointer) { address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer))) }

    init?(_ pointer: OpaquePointer?) {
        guard let pointer else { return nil }
        self.init(pointer)
    }

    var pointer: OpaquePointer { OpaquePointer(bitPattern: address)! }
}

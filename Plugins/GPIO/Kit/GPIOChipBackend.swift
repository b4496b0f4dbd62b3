import Glibc

/// The narrow door between the plugin and a GPIO implementation: open a chip, request lines,
/// read and drive them, and deliver edges with the kernel's timestamps.
///
/// Two implementations: ``LibgpiodBackend`` (the kernel's character device through libgpiod 2
/// or 1.6, loaded at run time behind the C shim `hearth_gpio.h`) and ``SimulatedGPIOBackend``
/// (in-memory chips for machines without GPIO and for fast tests).
public protocol GPIOChipBackend: Sendable {
    /// Opens a chip by name (`gpiochip0`), label (`pinctrl-rp1`) or path (`/dev/gpiochip0`).
    /// - Throws: ``GPIOError`` `chipNotFound` or `permissionDenied`.
    func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip

    /// Runs the edge monitor until the task is cancelled: edges of requested inputs are
    /// delivered to their handlers from here (a dedicated thread for libgpiod).
    func monitor() async throws

    /// Registers who is told (from the monitor) when a requested line stops delivering events
    /// because its chip is gone; the plugin then checks its chips.
    func onLineLost(_ handler: @escaping @Sendable () -> Void)
}

extension GPIOChipBackend {
    public func onLineLost(_ handler: @escaping @Sendable () -> Void) {}
}

/// A change of a line's status that the kernel reported to a watcher.
public struct GPIOLineChange: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case requested, released, reconfigured
    }

    public var offset: Int
    public var kind: Kind
    /// The line's consumer after the change (empty when released).
    public var consumer: String
    /// When the kernel saw it: nanoseconds of `CLOCK_MONOTONIC`.
    public var timestampNanoseconds: UInt64

    public init(offset: Int, kind: Kind, consumer: String, timestampNanoseconds: UInt64) {
        self.offset = offset
        self.kind = kind
        self.consumer = consumer
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// An open chip.
public protocol GPIOChip: Sendable {
    /// The kernel's name (`gpiochip0`) or the simulated chip's name.
    var name: String { get }
    var label: String { get }
    var lineCount: Int { get }
    /// Which implementation serves this chip, for logs (`libgpiod 1.6.3 (v1 uAPI)`).
    var backendDescription: String { get }

    /// The offset of the line called `name` (`GPIO17`), nil when the chip has none.
    func offset(ofLineNamed name: String) -> Int?

    /// Who holds the line now (another process's consumer label), nil when free or unknown.
    func consumer(ofLine offset: Int) -> String?

    /// Requests an input line with events on both edges; `onEdge` is called for each edge,
    /// from the backend's monitor (or, for a simulated chip, from whoever drives it).
    func requestInput(
        offset: Int, consumer: String, settings: GPIOInputSettings, onEdge: @escaping @Sendable (GPIOEdge) -> Void
    ) throws(GPIOError) -> any GPIOInputLine

    /// Requests an output line driving `initial` (logical value; active-low applied below us).
    func requestOutput(offset: Int, consumer: String, activeLow: Bool, initial: Bool) throws(GPIOError) -> any GPIOOutputLine

    /// Releases the chip; its lines must have been released.
    func close()

    /// Whether the chip is still there (false once unplugged or removed).
    var isPresent: Bool { get }

    /// Asks the kernel to report when the line is requested, released or reconfigured by
    /// anyone; `onChange` is called from the backend's monitor. False when the backend cannot.
    func watchLine(_ offset: Int, onChange: @escaping @Sendable (GPIOLineChange) -> Void) -> Bool

    /// Ends every line watch of ``watchLine(_:onChange:)``; returns once the monitor no longer
    /// looks at them. The plugin calls it before releasing the lines of a chip that is gone:
    /// Linux before 6.5 (Debian 12's 6.1) oopses when a line of a removed chip is released
    /// while someone watches that chip's lines.
    func stopWatching()
}

extension GPIOChip {
    public var isPresent: Bool { true }
    public func stopWatching() {}
    public func watchLine(_ offset: Int, onChange: @escaping @Sendable (GPIOLineChange) -> Void) -> Bool { false }
}

/// A requested input line.
public protocol GPIOInputLine: Sendable {
    /// Whether the kernel debounces this line (then the plugin does not).
    var kernelDebounced: Bool { get }
    /// The logical value now (active-low applied).
    func value() throws(GPIOError) -> Bool
    func release()
}

/// A requested output line.
public protocol GPIOOutputLine: Sendable {
    /// The logical value now (active-low applied).
    func value() throws(GPIOError) -> Bool
    func set(_ value: Bool) throws(GPIOError)
    func release()
}

/// Pull resistor setting of an input.
public enum GPIOBias: String, Hashable, Sendable, Codable, CaseIterable {
    case asIs = "as-is"
    case disabled
    case pullUp = "pull-up"
    case pullDown = "pull-down"
}

/// How an input line is requested.
public struct GPIOInputSettings: Hashable, Sendable {
    public var activeLow: Bool
    public var bias: GPIOBias
    /// Debounce period asked of the kernel where it can (zero: none).
    public var debounce: Duration

    public init(activeLow: Bool = false, bias: GPIOBias = .asIs, debounce: Duration = .zero) {
        self.activeLow = activeLow
        self.bias = bias
        self.debounce = debounce
    }
}

/// One edge of an input line.
public struct GPIOEdge: Hashable, Sendable {
    /// The new logical value (active-low applied): true after a rising edge.
    public var rising: Bool
    /// When the kernel saw it: nanoseconds of `CLOCK_MONOTONIC`.
    public var timestampNanoseconds: UInt64

    public init(rising: Bool, timestampNanoseconds: UInt64) {
        self.rising = rising
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// Why a chip or line could not be used; the message names the chip and line.
public struct GPIOError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// No such chip (yet: USB expanders and overlays can appear later).
        public static let chipNotFound = Code(rawValue: "chipNotFound")
        /// The chip has no such line (offset out of range, or no line of that name).
        public static let lineNotFound = Code(rawValue: "lineNotFound")
        /// Another process (or another configured device) holds the line.
        public static let busy = Code(rawValue: "busy")
        /// The user running hearthd may not open the chip.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// The kernel refused the request (unsupported flags).
        public static let invalid = Code(rawValue: "invalid")
        /// Reading or writing the line failed.
        public static let io = Code(rawValue: "io")
        /// Neither libgpiod 2 (`libgpiod.so.3`) nor libgpiod 1.6 (`libgpiod.so.2`) is installed.
        public static let libraryMissing = Code(rawValue: "libraryMissing")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Whether trying again later can help (a chip that appears, a line that is released).
    public var isRetryable: Bool { code != .lineNotFound && code != .invalid && code != .libraryMissing }
}

/// Monotonic and wall-clock time as the kernel stamps GPIO events.
public enum KernelTime {
    /// `CLOCK_MONOTONIC` now, in nanoseconds (the clock of GPIO event timestamps).
    public static func monotonicNanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    /// `CLOCK_REALTIME` now, in nanoseconds since the Unix epoch.
    public static func realtimeNanoseconds() -> UInt64 { read(CLOCK_REALTIME) }

    /// Converts a monotonic timestamp into nanoseconds since the Unix epoch.
    public static func epochNanoseconds(fromMonotonic ts: UInt64) -> UInt64 {
        let real = realtimeNanoseconds()
        let mono = monotonicNanoseconds()
        return ts >= mono ? real + (ts - mono) : real - min(real, mono - ts)
    }

    static func read(_ clock: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A momentary button as the Matter Switch cluster sees it (features MS, MSR, MSL and, with a
/// multi-press window, MSM; Matter 1.3 §1.13.7): it turns presses and releases into
/// `InitialPress`, `LongPress`, `ShortRelease`, `LongRelease`, `MultiPressOngoing` and
/// `MultiPressComplete`.
///
/// Pure: feed it presses, releases and ticks with instants of any clock.
public struct ButtonStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public typealias Settings = ButtonSettings

    /// What the button did, in Switch event terms.
    public enum Output: Hashable, Sendable {
        case initialPress
        case longPress
        case shortRelease
        case longRelease
        /// Another press of an ongoing multi-press: the count so far (≥ 2).
        case multiPressOngoing(Int)
        /// The multi-press ended: how many presses (0 when more than `multiPressMax`).
        case multiPressComplete(Int)
    }

    public let settings: Settings
    public private(set) var isPressed = false
    var pressedAt: Instant?
    var longFired = false
    var count = 0
    var windowEnds: Instant?

    public init(settings: Settings) { self.settings = settings }

    public mutating func press(at now: Instant) -> [Output] {
        guard !isPressed else { return [] }
        isPressed = true
        pressedAt = now
        windowEnds = nil
        count += 1
        var out: [Output] = [.initialPress]
        if settings.multiPressWindow != nil, count >= 2, count <= settings.multiPressMax { out.append(.multiPressOngoing(count)) }
        return out
    }

    public mutating func release(at now: Instant) -> [Output] {
        guard isPressed else { return [] }
        // A long press that is due but not yet ticked counts as long.
        var out = tick(now)
        isPressed = false
        pressedAt = nil
        if longFired {
            longFired = false
            count = 0
            out.append(.longRelease)
            return out
        }
        out.append(.shortRelease)
        if let window = settings.multiPressWindow {
            windowEnds = now.advanced(by: window)
        } else {
            count = 0
        }
        return out
    }

    /// When ``tick(_:)`` has something to decide.
    public var deadline: Instant? {
        if isPressed { return longFired ? nil : pressedAt?.advanced(by: settings.longPress) }
        return windowEnds
    }

    public mutating func tick(_ now: Instant) -> [Output] {
        if isPressed, !longFired, let at = pressedAt, at.advanced(by: settings.longPress) <= now {
            longFired = true
            // A long press ends any multi-press: it is its own gesture.
            return [.longPress]
        }
        if !isPressed, let end = windowEnds, end <= now {
            windowEnds = nil
            let total = count > settings.multiPressMax ? 0 : count
            count = 0
            return [.multiPressComplete(total)]
        }
        return []
    }
}

/// How a button tells presses apart.
public struct ButtonSettings: Hashable, Sendable {
    /// A press held this long is a long press.
    public var longPress: Duration
    /// Presses this close after a release count to one multi-press; nil turns multi-press off.
    public var multiPressWindow: Duration?
    /// The most presses a multi-press counts (Switch `MultiPressMax`); more report a total of 0.
    public var multiPressMax: Int

    public init(longPress: Duration = .milliseconds(800), multiPressWindow: Duration? = .milliseconds(400), multiPressMax: Int = 3) {
        self.longPress = longPress
        self.multiPressWindow = multiPressWindow
        self.multiPressMax = multiPressMax
    }
}

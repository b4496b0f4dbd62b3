/// An outgoing message counter (Matter Core Specification 4.6.1 "Message Counter Types").
///
/// A secure unicast session's counter starts at a random value in 1…2^28 and must not wrap:
/// when it is used up the session has to be replaced. The global unencrypted counter starts at
/// a random 32-bit value and wraps.
public struct MessageCounter: Hashable, Sendable {
    public private(set) var next: UInt32
    public let wraps: Bool
    private var exhausted = false

    /// A counter that yields `start` first.
    public init(start: UInt32, wraps: Bool) {
        next = start
        self.wraps = wraps
    }

    /// A fresh secure-session counter: random in 1…2^28 (4.6.1.2).
    public static func secureSession(using rng: inout some RandomNumberGenerator) -> MessageCounter {
        MessageCounter(start: UInt32.random(in: 1...(1 << 28), using: &rng), wraps: false)
    }

    /// The global unencrypted counter: a random 32-bit start, wrapping (4.6.1.1).
    public static func globalUnencrypted(using rng: inout some RandomNumberGenerator) -> MessageCounter {
        MessageCounter(start: UInt32.random(in: 0...UInt32.max, using: &rng), wraps: true)
    }

    /// The counter value for the next message; throws `counterExhausted` once a non-wrapping
    /// counter has used its last value.
    public mutating func take() throws(MessagingError) -> UInt32 {
        guard !exhausted else {
            throw MessagingError(.counterExhausted, "session message counter exhausted; establish a new session")
        }
        let v = next
        if v == UInt32.max {
            if wraps { next = 0 } else { exhausted = true }
        } else {
            next = v + 1
        }
        return v
    }
}

/// The receive side of a message counter: the largest counter seen and a bitmap of the 32
/// counters below it (4.6.5 "Message Counter Processing", MSG_COUNTER_WINDOW_SIZE = 32).
public struct MessageReceptionState: Hashable, Sendable {
    /// How a session type treats counters (4.6.5.1–4.6.5.3).
    public enum Policy: Hashable, Sendable {
        /// Secure unicast: counters never roll over; anything at or behind the window is a
        /// duplicate.
        case secureUnicast
        /// Group: counters roll over (mod 2^32); behind the window is refused.
        case group
        /// Unencrypted: counters roll over; behind the window (the peer rebooted) is accepted
        /// and restarts the window.
        case unencrypted
    }

    public static let windowSize: UInt32 = 32

    public let policy: Policy
    /// The largest counter accepted so far, or nil before the first message (trust first).
    public private(set) var maxCounter: UInt32?
    /// Bit i set: counter `maxCounter - 1 - i` was received.
    public private(set) var bitmap: UInt32 = 0

    public init(policy: Policy) { self.policy = policy }

    /// Synchronized to a known peer counter (counter synchronization): counters after it are new.
    public init(policy: Policy, synchronizedTo counter: UInt32) {
        self.policy = policy
        maxCounter = counter
        bitmap = UInt32.max
    }

    /// Whether `counter` is new; records it if so. A duplicate (or a counter refused by the
    /// policy) returns false and changes nothing, except that an unencrypted counter behind
    /// the window restarts the window.
    public mutating func accept(_ counter: UInt32) -> Bool {
        guard let max = maxCounter else {
            maxCounter = counter
            bitmap = 0
            return true
        }
        if policy == .secureUnicast {
            if counter > max {
                shift(by: counter - max)
                maxCounter = counter
                return true
            }
            return markBehind(max - counter)
        }
        // Rolling counters: compare in modular arithmetic; "ahead" is the forward half.
        let delta = counter &- max
        if delta != 0 && delta < 1 << 31 {
            shift(by: delta)
            maxCounter = counter
            return true
        }
        let behind = max &- counter
        if behind == 0 { return false }
        if behind <= Self.windowSize { return markBehind(behind) }
        if policy == .unencrypted {
            maxCounter = counter
            bitmap = 0
            return true
        }
        return false
    }

    /// Records counter `max - behind` (behind ≥ 1) if inside the window and not seen yet.
    private mutating func markBehind(_ behind: UInt32) -> Bool {
        guard behind >= 1, behind <= Self.windowSize else { return false }
        let bit: UInt32 = 1 << (behind - 1)
        guard bitmap & bit == 0 else { return false }
        bitmap |= bit
        return true
    }

    /// Moves the window forward by `n`, remembering the old maximum.
    private mutating func shift(by n: UInt32) {
        if n > Self.windowSize {
            bitmap = 0
        } else {
            bitmap = n == 32 ? 0 : bitmap << n
            bitmap |= 1 << (n - 1)  // the old maximum is now `n` behind
        }
    }
}

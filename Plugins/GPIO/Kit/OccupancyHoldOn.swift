/// Occupancy from a PIR or presence input, held for a while after the input goes quiet
/// (PIRs pulse; a room is not empty between pulses).
///
/// Pure: feed it levels and ticks with instants of any clock.
public struct OccupancyHoldOn<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public let holdOn: Duration
    public private(set) var occupied: Bool
    var clearsAt: Instant?

    public init(holdOn: Duration, initial: Bool) {
        self.holdOn = holdOn
        self.occupied = initial
    }

    /// The input's level at `now`. Returns the new occupancy when it changes now.
    public mutating func level(_ active: Bool, at now: Instant) -> Bool? {
        if active {
            clearsAt = nil
            guard !occupied else { return nil }
            occupied = true
            return true
        }
        guard occupied else { return nil }
        if holdOn <= .zero {
            occupied = false
            return false
        }
        clearsAt = now.advanced(by: holdOn)
        return nil
    }

    public var deadline: Instant? { clearsAt }

    /// Lets time pass: occupancy clears once the hold-on time has run out.
    public mutating func tick(_ now: Instant) -> Bool? {
        guard let c = clearsAt, c <= now else { return nil }
        clearsAt = nil
        guard occupied else { return nil }
        occupied = false
        return false
    }
}

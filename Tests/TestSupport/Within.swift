/// Fails the test instead of hanging when `body` does not finish in time (a guard, not a wait:
/// passing tests never reach the deadline).
///
/// ```swift
/// let line = try await within(20, "the plugin's first log line") { await daemon.line { $0.contains("plugin") } }
/// ```
///
/// - Throws: ``TimedOut`` after `seconds`, or what `body` throws.
public func within<T: Sendable>(
    _ seconds: Double = 20, _ what: String = "the expected happening", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimedOut(description: "timed out after \(seconds) s waiting for \(what)")
        }
        group.cancelAll()
        return value
    }
}

/// What ``within(_:_:_:)`` throws when the deadline passes first.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String
}

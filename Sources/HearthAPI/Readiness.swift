public import HomeModel

/// What `/readyz` answers: ready only when the storage answers, the core holds its state and
/// every enabled plugin is running and does not say it is unhealthy (a plugin whose broker is
/// down or keeps dropping the connection). A degraded plugin leaves the daemon ready; its
/// check's `detail` says why.
public struct Readiness: Sendable, Equatable, Codable {
    public struct Check: Sendable, Equatable, Codable {
        public var name: String
        public var ok: Bool
        /// Why it is not ok, in plain words (nil when ok).
        public var reason: String?
        /// What was found when ok (for example how many devices the core holds).
        public var detail: String?

        public init(name: String, ok: Bool, reason: String? = nil, detail: String? = nil) {
            self.name = name
            self.ok = ok
            self.reason = reason
            self.detail = detail
        }
    }

    public enum Status: String, WireEnum {
        case ready
        case notReady = "not ready"
        public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
    }

    public var status: Status
    public var checks: [Check]
    public var ready: Bool { checks.allSatisfy(\.ok) }

    public init(checks: [Check]) {
        self.checks = checks
        self.status = checks.allSatisfy(\.ok) ? .ready : .notReady
    }

    /// Evaluates the checks. A disabled plugin does not count; any other plugin must be
    /// `running` (starting, restarting, parked, refused or misconfigured ones are not) and not
    /// report itself `unhealthy`.
    public static func evaluate(storage: Result<Void, HomeError>, deviceCount: Int, plugins: [WirePlugin]) -> Readiness {
        var checks: [Check] = []
        switch storage {
        case .success: checks.append(Check(name: "storage", ok: true))
        case .failure(let e): checks.append(Check(name: "storage", ok: false, reason: "the database does not answer: \(e.message)"))
        }
        // The core lives in this process: reading its state (under its lock) is the check.
        checks.append(Check(name: "core", ok: true, detail: "\(deviceCount) devices"))
        for p in plugins where p.state != .disabled {
            let name = "plugin:\(p.id.isEmpty ? p.path : p.id)"
            if p.state == .running {
                // The plugin's own word on its health: unhealthy is not ready (its broker is
                // down); degraded is ready, with the reason as the detail.
                switch p.health?.state {
                case .unhealthy:
                    checks.append(Check(name: name, ok: false, reason: "plugin is unhealthy" + (p.health?.reason.map { ": \($0)" } ?? "")))
                case .degraded:
                    checks.append(Check(name: name, ok: true, detail: "degraded" + (p.health?.reason.map { ": \($0)" } ?? "")))
                case .healthy:
                    checks.append(Check(name: name, ok: true, detail: p.health?.reason))
                case nil:
                    checks.append(Check(name: name, ok: true))
                }
            } else {
                let why = p.lastError.map { ": \($0)" } ?? ""
                checks.append(Check(name: name, ok: false, reason: "plugin is \(p.state.rawValue)\(why)"))
            }
        }
        return Readiness(checks: checks)
    }
}

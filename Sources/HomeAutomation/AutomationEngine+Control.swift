public import Foundation
public import HomeCore
import HomeModel

/// The engine as the API's ``AutomationControl``: definitions and traces as the engine's JSON.
extension AutomationEngine: AutomationControl {
    /// Dates as ISO 8601, keys sorted: what the API writes.
    static let wireEncoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .iso8601
        return e
    }()

    public func automations(as principal: Principal) throws -> [AutomationEntry] {
        try Self.refusing { () throws(AutomationError) in try list(as: principal) }.map(Self.entry)
    }

    public func automation(_ id: String, as principal: Principal) throws -> AutomationEntry {
        Self.entry(try Self.refusing { () throws(AutomationError) in try record(id, as: principal) })
    }

    public func problems(in definition: Data) throws -> [AutomationProblem] {
        validate(try Self.definition(definition)).map(Self.problem)
    }

    public func create(_ definition: Data, as principal: Principal) throws -> AutomationEntry {
        let a = try Self.definition(definition)
        if (try? record(a.id, as: .system)) != nil {
            throw HomeError.conflict("automation '\(a.id)' exists; PUT /automations/\(a.id) to replace it")
        }
        return Self.entry(try Self.refusing { () throws(AutomationError) in try save(a, as: principal) })
    }

    public func replace(_ id: String, with definition: Data, ifRevision revision: Int?, as principal: Principal) throws -> AutomationEntry {
        var a = try Self.definition(definition)
        a.id = id
        return Self.entry(try Self.refusing { () throws(AutomationError) in try save(a, ifRevision: revision, as: principal) })
    }

    public func deleteAutomation(_ id: String, ifRevision revision: Int?, as principal: Principal) throws {
        try Self.refusing { () throws(AutomationError) in try delete(id, ifRevision: revision, as: principal) }
    }

    public func setAutomation(_ id: String, enabled: Bool, as principal: Principal) throws -> AutomationEntry {
        try Self.refusing { () throws(AutomationError) in try setEnabled(id, enabled, as: principal) }
        return try automation(id, as: principal)
    }

    public func startRun(_ id: String, as principal: Principal) throws -> String {
        try Self.refusing { () throws(AutomationError) in try runNow(id, as: principal) }
    }

    public func dryRun(_ id: String, starter: String?, as principal: Principal) async throws -> Data {
        let saved = try Self.refusing { () throws(AutomationError) in try record(id, as: principal) }
        do {
            return try Self.wireEncoder.encode(try await simulate(saved.automation, starter: starter, as: principal))
        } catch let error as AutomationError {
            throw Self.refusal(error)
        }
    }

    public func runTraces(of id: String, as principal: Principal) throws -> Data {
        try Self.wireEncoder.encode(try Self.refusing { () throws(AutomationError) in try runs(id, as: principal) })
    }

    public func runTrace(_ runID: String, as principal: Principal) throws -> Data {
        try Self.wireEncoder.encode(try Self.refusing { () throws(AutomationError) in try trace(runID, as: principal) })
    }

    public func runUpdates(of id: String?, as principal: Principal) throws -> AsyncStream<AutomationRunUpdate> {
        try Self.refusing { () throws(AutomationError) in try liveRuns(of: id, as: principal) }
    }

    public func reloadConfiguration(as principal: Principal) async throws -> ConfigReloadReport {
        do {
            return try await reload(as: principal)
        } catch {
            throw Self.refusal(error)
        }
    }

    public func candidates(for device: String, as principal: Principal) throws -> Data {
        try Self.wireEncoder.encode(try Self.refusing { () throws(AutomationError) in try deviceCandidates(device, as: principal) })
    }

    public func grantRevoked(_ grantID: String) { suspendAutomations(ofGrant: grantID) }

    /// A definition from a request body; a body that is not one is `invalidArgument` naming where.
    static func definition(_ data: Data) throws(HomeError) -> Automation {
        do {
            return try JSONDecoder().decode(Automation.self, from: data)
        } catch let e as DecodingError {
            throw e.invalidArgument
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    static func refusing<T>(_ body: () throws(AutomationError) -> T) throws(AutomationRefusal) -> T {
        do { return try body() } catch { throw refusal(error) }
    }

    static func refusal(_ error: AutomationError) -> AutomationRefusal {
        AutomationRefusal(HomeError(error.code, error.message), problems: error.issues.map(problem))
    }

    static func problem(_ i: AutomationIssue) -> AutomationProblem {
        AutomationProblem(isError: i.severity == .error, code: i.code, path: i.path, message: i.message, suggestion: i.suggestion)
    }

    static func entry(_ r: AutomationRecord) -> AutomationEntry {
        AutomationEntry(
            // An Automation always encodes (plain values only).
            definition: (try? wireEncoder.encode(r.automation)) ?? Data("{}".utf8), state: r.state, suspendedReason: r.suspendedReason,
            revision: r.revision, executionCount: r.executionCount, source: r.source, configRef: r.configRef, problems: r.issues.map(problem),
            owner: r.owner)
    }
}

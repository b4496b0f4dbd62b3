import Foundation
import HashTreeCollections
import HearthAPI
import HomeCore
import HomeModel
import Hummingbird

/// `/scenes` and `/automations` (issue 18). Everyone signed in reads and recalls scenes and
/// reads automations; the scene book and the engine refuse what a principal may not do
/// (members create nothing; apps see only scenes inside their grant).
///
/// Automations are reached through HomeCore's ``AutomationControl`` (hearthd hands in the
/// engine); the envelope is HearthAPI's ``WireAutomation``, the definition and the traces
/// inside it the engine's own JSON (`docs/automations.md`), carried as JSON ``Value``s.
struct AutomationRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize

        // MARK: Scenes
        routes.get("scenes") { _, context in
            let (book, principal) = try server.sceneBook(context)
            return APIResponse.json(try book.list(as: principal).map { SceneBody($0, active: book.isActive($0.id)) })
        }
        routes.get("scenes/:id") { _, context in
            let (book, principal) = try server.sceneBook(context)
            let s = try book.scene(try context.parameter("id"), as: principal)
            return APIResponse.json(SceneBody(s, active: book.isActive(s.id)))
        }
        routes.post("scenes") { request, context in
            let (book, principal) = try server.sceneBook(context)
            let body: SceneBody = try await Self.decode(request, limit: limit)
            var scene = try body.scene(server.core)
            if body.capture == true { scene.targets = try book.captured(scene.targets, allowSensitive: scene.allowSensitive, as: principal) }
            let s = try book.create(scene, as: principal)
            return APIResponse.json(SceneBody(s, active: book.isActive(s.id)), status: .created)
        }
        routes.put("scenes/:id") { request, context in
            let (book, principal) = try server.sceneBook(context)
            var body: SceneBody = try await Self.decode(request, limit: limit)
            body.id = try context.parameter("id")
            let s = try book.update(try body.scene(server.core), ifRevision: Self.revision(request) ?? body.revision, as: principal)
            return APIResponse.json(SceneBody(s, active: book.isActive(s.id)))
        }
        routes.delete("scenes/:id") { request, context in
            let (book, principal) = try server.sceneBook(context)
            try book.delete(try context.parameter("id"), ifRevision: Self.revision(request), as: principal)
            return Response(status: .noContent)
        }
        routes.post("scenes/:id/capture") { request, context in
            let (book, principal) = try server.sceneBook(context)
            let s = try book.capture(try context.parameter("id"), ifRevision: Self.revision(request), as: principal)
            return APIResponse.json(SceneBody(s, active: book.isActive(s.id)))
        }
        routes.post("scenes/:id/recall") { _, context in
            let (book, principal) = try server.sceneBook(context)
            let result = try await book.recall(try context.parameter("id"), as: principal)
            return APIResponse.json(RecallBody(result))
        }

        // MARK: Automations
        routes.get("automations") { _, context in
            let (automations, principal) = try server.automationControl(context)
            return APIResponse.json(try await Self.run { try await automations.automations(as: principal) }.map(WireAutomation.init))
        }
        routes.get("automations/:id") { _, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            return APIResponse.json(try WireAutomation(try await Self.run { try await automations.automation(id, as: principal) }))
        }
        routes.post("automations/validate") { request, context in
            let (automations, _) = try server.automationControl(context)
            let definition = try await Self.body(request, limit: limit)
            return APIResponse.json(WireAutomationIssues(issues: try await automations.problems(in: definition).map(WireAutomationIssue.init)))
        }
        routes.post("automations/reload") { _, context in
            let (automations, principal) = try server.automationControl(context)
            return APIResponse.json(WireReloadOutcome(try await Self.run { try await automations.reloadConfiguration(as: principal) }))
        }
        routes.post("automations") { request, context in
            let (automations, principal) = try server.automationControl(context)
            let definition = try await Self.body(request, limit: limit)
            return APIResponse.json(try WireAutomation(try await Self.run { try await automations.create(definition, as: principal) }), status: .created)
        }
        routes.put("automations/:id") { request, context in
            let (automations, principal) = try server.automationControl(context)
            let definition = try await Self.body(request, limit: limit)
            let id = try context.parameter("id")
            let revision = Self.revision(request)
            return APIResponse.json(
                try WireAutomation(try await Self.run { try await automations.replace(id, with: definition, ifRevision: revision, as: principal) }))
        }
        routes.delete("automations/:id") { request, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            let revision = Self.revision(request)
            try await Self.run { try await automations.deleteAutomation(id, ifRevision: revision, as: principal) }
            return Response(status: .noContent)
        }
        routes.post("automations/:id/enable") { _, context in try await Self.setEnabled(server, context, true) }
        routes.post("automations/:id/disable") { _, context in try await Self.setEnabled(server, context, false) }
        routes.post("automations/:id/run") { _, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            let run = try await Self.run { try await automations.startRun(id, as: principal) }
            return APIResponse.json(WireRunStarted(run: run), status: .accepted)
        }
        routes.post("automations/:id/simulate") { request, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            let buffer = try await request.body.collect(upTo: limit)
            let body = buffer.readableBytes == 0 ? nil : try? JSONDecoder().decode([String: String].self, from: Data(buffer.readableBytesView))
            return APIResponse.json(try Self.document(try await Self.run { try await automations.dryRun(id, starter: body?["starter"], as: principal) }))
        }
        // A draft not saved yet (the web page's Test button): `{automation, starter?}`, admins only.
        routes.post("automations/simulate") { request, context in
            let (automations, principal) = try server.automationControl(context)
            guard principal.role == .admin else {
                throw HomeError.permissionDenied("only an admin simulates a draft; simulate a saved automation with POST /automations/{id}/simulate")
            }
            let body: DraftSimulation = try await Self.decode(request, limit: limit)
            let draft = try JSONEncoder().encode(body.automation)
            return APIResponse.json(try Self.document(try await Self.run { try await automations.dryRun(draft: draft, starter: body.starter, as: principal) }))
        }
        routes.get("automations/:id/runs") { _, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            return APIResponse.json(try Self.document(try await Self.run { try await automations.runTraces(of: id, as: principal) }))
        }
        routes.get("candidates") { request, context in
            let (automations, principal) = try server.automationControl(context)
            guard let device = request.uri.queryParameters.get("device") else {
                throw APIError(.invalidArgument("give the device: /candidates?device=ID"), status: .badRequest)
            }
            return APIResponse.json(try Self.document(try await Self.run { try await automations.candidates(for: device, as: principal) }))
        }
        routes.get("runs/:id") { _, context in
            let (automations, principal) = try server.automationControl(context)
            let id = try context.parameter("id")
            return APIResponse.json(try Self.document(try await Self.run { try await automations.runTrace(id, as: principal) }))
        }
        return routes
    }

    static func setEnabled(_ server: HearthServer, _ context: APIRequestContext, _ enabled: Bool) async throws -> Response {
        let (automations, principal) = try server.automationControl(context)
        let id = try context.parameter("id")
        return APIResponse.json(try WireAutomation(try await run { try await automations.setAutomation(id, enabled: enabled, as: principal) }))
    }

    /// `If-Match: 3` (or `"3"`), or `?revision=3` → 3.
    static func revision(_ request: Request) -> Int? {
        if let header = request.headers[.ifMatch] { return Int(header.trimmingCharacters(in: CharacterSet(charactersIn: "\" W/"))) }
        return request.uri.queryParameters.get("revision", as: Int.self)
    }

    /// One of the engine's JSON documents (a definition, a trace), to send inside a wire body.
    static func document(_ data: Data) throws -> Value {
        try JSONDecoder().decode(Value.self, from: data)
    }

    /// A request body, refused with 413 when it is larger than `limit`.
    static func body(_ request: Request, limit: Int) async throws -> Data {
        do {
            return Data(try await request.body.collect(upTo: limit).readableBytesView)
        } catch let e as any HTTPResponseError where e.status == .contentTooLarge {
            throw APIError(.invalidArgument("the request body is larger than \(limit) bytes"), status: .contentTooLarge)
        }
    }

    static func decode<T: Decodable>(_ request: Request, limit: Int) async throws -> T {
        let data = try await body(request, limit: limit)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let e as DecodingError {
            throw e.invalidArgument
        }
    }

    /// Renders an ``AutomationRefusal`` with its problems (`{"error": {code, message, issues}}`).
    static func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let refusal as AutomationRefusal {
            throw IssuesError(refusal: refusal)
        }
    }
}

/// `POST /automations/simulate`'s body: a draft automation (the JSON `POST /automations` takes)
/// and the starter to simulate from.
struct DraftSimulation: Decodable {
    var automation: Value
    var starter: String?
}

struct IssuesError: Error, HTTPResponseError {
    let refusal: AutomationRefusal
    var status: HTTPResponse.Status { APIError.status(for: WireErrorCode(refusal.error.code)) }
    var headers: HTTPFields { [:] }
    func response(from request: Request, context: some RequestContext) throws -> Response { render() }

    func render() -> Response {
        let body = WireAutomationErrorBody(
            error: .init(
                code: WireErrorCode(refusal.error.code), message: refusal.error.message, issues: refusal.problems.map(WireAutomationIssue.init)))
        return APIResponse.json(body, status: status)
    }
}

extension WireAutomationIssue {
    init(_ p: AutomationProblem) {
        self.init(severity: p.isError ? .error : .warning, code: p.code, path: p.path, message: p.message, suggestion: p.suggestion)
    }
}

extension WireReloadOutcome {
    init(_ r: ConfigReloadReport) {
        func wire(_ p: ConfigProblem) -> Problem { Problem(file: p.file, line: p.line, key: p.key, message: p.message, text: p.text) }
        self.init(
            applied: r.applied, scenes: r.scenes, automations: r.automations, refused: r.refused.map(wire), warnings: r.warnings.map(wire),
            pending: r.pending.map(wire))
    }
}

extension WireAutomation {
    init(_ e: AutomationEntry) throws {
        self.init(
            // A state the wire does not know yet reads as suspended: it does not run.
            automation: try AutomationRoutes.document(e.definition), state: WireAutomationState(rawValue: e.state) ?? .suspended,
            suspendedReason: e.suspendedReason, revision: e.revision, executionCount: e.executionCount, source: e.source,
            configRef: e.configRef, issues: e.problems.map(WireAutomationIssue.init), owner: e.owner)
    }
}

/// A scene on the wire (HearthAPI's ``WireScene``), read into and from the scene book's ``Scene``.
typealias SceneBody = WireScene

extension WireScene {
    init(_ s: Scene, active: Bool) {
        self.init(
            id: s.id, name: s.name, structure: s.structureID.rawValue, room: s.roomID?.rawValue, transitionMilliseconds: s.transitionMilliseconds,
            allowSensitive: s.allowSensitive,
            targets: s.targets.map { Target(device: $0.device.rawValue, type: $0.deviceType.hex, trait: $0.trait.hex, attribute: $0.attribute.hex, value: $0.value) })
        revision = s.revision
        source = s.source
        configRef = s.configRef
        isActive = active
    }

    /// The scene the body names, resolved against the home; a target without a value is refused
    /// unless `capture` is true (``SceneBook/captured(_:allowSensitive:as:)`` then fills it).
    func scene(_ core: HomeCore) throws(HomeError) -> Scene {
        let state = core.state
        guard let structureID = structure.map({ StructureID(rawValue: $0) }) ?? state.structures.keys.sorted().first else {
            throw .invalidArgument("structure: no structure yet")
        }
        var resolved: [SceneTarget] = []
        for (i, t) in targets.enumerated() {
            guard let trait = core.catalog.trait(named: t.trait) else { throw .invalidArgument("targets[\(i)].trait: no trait '\(t.trait)'") }
            guard let attribute = trait.attribute(named: t.attribute) ?? UInt32(t.attribute.dropFirst(2), radix: 16).flatMap({ trait.attribute(AttributeID($0)) })
            else { throw .invalidArgument("targets[\(i)].attribute: \(trait.name) has no attribute '\(t.attribute)'") }
            let device = DeviceID(rawValue: t.device)
            let type: DeviceTypeID
            if let name = t.type {
                guard let d = core.catalog.deviceType(named: name) else { throw .invalidArgument("targets[\(i)].type: no device type '\(name)'") }
                type = d.id
            } else {
                guard let d = state.devices[device]?.types.first(where: { $0.traits[trait.id] != nil }) else {
                    throw .notFound("targets[\(i)].device: no device \(t.device) with \(trait.name)")
                }
                type = d.id
            }
            let value: Value
            if let given = t.value {
                value = given
            } else if capture == true {
                value = .null  // filled from the device's state
            } else {
                throw .invalidArgument("targets[\(i)].value: missing (or send capture: true to store the device's current value)")
            }
            resolved.append(SceneTarget(device: device, deviceType: type, trait: trait.id, attribute: attribute.id, value: value))
        }
        return Scene(
            id: id, name: name, structureID: structureID, roomID: room.map { RoomID(rawValue: $0) },
            transitionMilliseconds: transitionMilliseconds ?? 0, targets: resolved, allowSensitive: allowSensitive ?? false)
    }
}

struct RecallBody: Encodable {
    struct Step: Encodable {
        let device: String
        let result: String
        let message: String?
    }
    let scene: String
    let failed: Int
    let steps: [Step]

    init(_ r: SceneRecallResult) {
        scene = r.scene
        failed = r.failed
        steps = r.steps.map { Step(device: $0.step.device.rawValue, result: $0.error?.code.rawValue ?? "ok", message: $0.error?.message) }
    }
}

extension HearthServer {
    func sceneBook(_ context: APIRequestContext) throws(HomeError) -> (SceneBook, Principal) {
        guard let scenes else { throw .notFound("this server has no scenes") }
        return (scenes, try context.requireSession().principal)
    }

    func automationControl(_ context: APIRequestContext) throws(HomeError) -> (any AutomationControl, Principal) {
        guard let automations else { throw .notFound("this server has no automation engine") }
        return (automations, try context.requireSession().principal)
    }
}

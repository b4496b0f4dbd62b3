import Foundation
public import Logging
import Synchronization

/// What the accessories side answers: the database for `/accessories` and reads, and writes.
public protocol HAPAccessoryHandler: Sendable {
    /// The accessories now, values included (offline ones with ``HAPStatus/unreachable``).
    var database: AccessoryDatabase { get }
    /// Carries out writes (already validated against format and range) from `controller`.
    func write(_ writes: [(CharacteristicID, HAPValue)], controller: String) async -> [CharacteristicID: HAPStatus]
    /// `/identify` on an unpaired accessory.
    func identify() async
}

/// The connections of one server, for events and for closing a removed controller's sessions.
public final class HAPConnections: Sendable {
    struct Entry {
        var controller: String?
        var subscriptions: Set<CharacteristicID> = []
        var sink: AsyncStream<HAPConnection.Output>.Continuation
    }

    let entries = Mutex<[UInt64: Entry]>([:])
    let nextID = Atomic<UInt64>(1)

    public init() {}

    func add(_ sink: AsyncStream<HAPConnection.Output>.Continuation) -> UInt64 {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        entries.withLock { $0[id] = Entry(sink: sink) }
        return id
    }

    func remove(_ id: UInt64) { _ = entries.withLock { $0.removeValue(forKey: id) } }

    func update(_ id: UInt64, _ body: (inout Entry) -> Void) {
        entries.withLock { e in
            if var entry = e[id] {
                body(&entry)
                e[id] = entry
            }
        }
    }

    /// Ends the sessions of these controllers (unpaired from the web page or the CLI).
    public func close(controllers: Set<String>) { close(controllers: controllers, except: 0) }

    /// Verified sessions now.
    public var sessionCount: Int { entries.withLock { $0.values.filter { $0.controller != nil }.count } }

    /// Sends `EVENT/1.0` to every verified session subscribed to one of the changed
    /// characteristics (HAP R2 6.8), except the one whose write caused it.
    public func notify(_ changes: [(CharacteristicID, HAPValue?)], except: UInt64? = nil) {
        let sinks: [(AsyncStream<HAPConnection.Output>.Continuation, [UInt8])] = entries.withLock { e in
            e.compactMap { id, entry in
                guard entry.controller != nil, id != except else { return nil }
                let mine = changes.filter { entry.subscriptions.contains($0.0) }
                guard !mine.isEmpty else { return nil }
                var w = JSONWriter()
                w.raw("{\"characteristics\":[")
                for (i, (cid, value)) in mine.enumerated() {
                    if i > 0 { w.raw(",") }
                    w.raw("{\"aid\":\(cid.aid),\"iid\":\(cid.iid),\"value\":\(JSONWriter.value(value ?? .null))}")
                }
                w.raw("]}")
                return (entry.sink, HTTPResponse.json(200, w.bytes).serialized(event: true))
            }
        }
        for (sink, bytes) in sinks { sink.yield(.send(bytes)) }
    }

    /// Ends the sessions of these controllers (their pairing was removed).
    func close(controllers: Set<String>, except: UInt64) {
        let sinks = entries.withLock { e in e.filter { $0.key != except && $0.value.controller.map(controllers.contains) == true }.map(\.value.sink) }
        for s in sinks { s.yield(.close("pairing removed")) }
    }
}

/// One controller connection's protocol state (HAP R2 chapter 6): plaintext HTTP until
/// pair-verify, then encrypted frames; routes requests. Owned by one task; not thread-safe.
/// Tests drive it directly with bytes; ``HAPServer`` feeds it from a socket.
public final class HAPConnection {
    public enum Output: Sendable {
        /// Bytes to send (encrypted once encryption has started).
        case send([UInt8])
        /// Encrypt everything from here on.
        case startEncryption(SecureFraming)
        case close(String)
    }

    public let id: UInt64
    let pairing: PairingServer
    let handler: any HAPAccessoryHandler
    let connections: HAPConnections
    let logger: Logger
    let now: @Sendable () -> ContinuousClock.Instant
    var buffer: [UInt8] = []
    var framing: SecureFraming?
    var verify = PairVerify()
    public private(set) var controller: String?
    var prepared: (pid: Int, deadline: ContinuousClock.Instant)?
    var closed = false

    public init(
        pairing: PairingServer, handler: any HAPAccessoryHandler, connections: HAPConnections,
        sink: AsyncStream<Output>.Continuation, logger: Logger, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.pairing = pairing
        self.handler = handler
        self.connections = connections
        self.logger = logger
        self.now = now
        id = connections.add(sink)
    }

    /// The peer went away: forget its setup in progress and its subscriptions.
    public func closed(reason: String) {
        pairing.connectionClosed(id)
        connections.remove(id)
        logger.debug("HAP connection closed", metadata: ["connection": "\(id)", "reason": "\(reason)"])
    }

    /// Bytes from the peer; what to send back, in order.
    public func receive(_ bytes: [UInt8]) async -> [Output] {
        guard !closed else { return [] }
        var plain: [UInt8]
        if var f = framing {
            var pending = buffer + bytes
            do throws(SecureFraming.Failure) {
                plain = try f.open(&pending)
            } catch {
                logger.warning("HAP connection refused: \(error)", metadata: ["connection": "\(id)", "controller": "\(controller ?? "-")"])
                closed = true
                return [.close(error.message)]
            }
            framing = f
            buffer = pending
            plainBuffer += plain
        } else {
            plainBuffer += bytes
        }
        var out: [Output] = []
        while !closed {
            let request: HTTPRequest?
            do throws(HTTPRequest.ParseError) {
                request = try HTTPRequest.parse(&plainBuffer)
            } catch {
                logger.warning("HAP request refused: \(error)", metadata: ["connection": "\(id)"])
                out.append(.send(HTTPResponse(status: 400).serialized()))
                out.append(.close(error.message))
                closed = true
                break
            }
            guard let request else { break }
            out += await route(request)
        }
        return out
    }

    var plainBuffer: [UInt8] = []

    func route(_ r: HTTPRequest) async -> [Output] {
        switch (r.method, r.path) {
        case ("POST", "/pair-setup"):
            return await pairSetup(r)
        case ("POST", "/pair-verify"):
            return pairVerify(r)
        case ("POST", "/identify"):
            if pairing.isPaired {
                return [.send(HTTPResponse.json(400, Array("{\"status\":\(HAPStatus.insufficientPrivileges.rawValue)}".utf8)).serialized())]
            }
            await handler.identify()
            return [.send(HTTPResponse(status: 204).serialized())]
        default:
            break
        }
        guard let controller else {
            logger.warning("HAP request before pair-verify refused", metadata: ["connection": "\(id)", "request": "\(r.method) \(r.path)"])
            return [.send(HTTPResponse.json(470, Array("{\"status\":\(HAPStatus.insufficientPrivileges.rawValue)}".utf8)).serialized())]
        }
        switch (r.method, r.path) {
        case ("GET", "/accessories"):
            return [.send(HTTPResponse.json(200, handler.database.json()).serialized())]
        case ("GET", "/characteristics"):
            return [.send(read(r).serialized())]
        case ("PUT", "/characteristics"):
            return [.send(await write(r, controller: controller).serialized())]
        case ("PUT", "/prepare"):
            return [.send(prepare(r).serialized())]
        case ("POST", "/pairings"):
            return pairings(r, controller: controller)
        default:
            return [.send(HTTPResponse(status: 404).serialized())]
        }
    }

    func pairSetup(_ r: HTTPRequest) async -> [Output] {
        guard let tlv = try? TLV8(decoding: r.body) else {
            logger.warning("HAP pair-setup refused: malformed TLV8", metadata: ["connection": "\(id)"])
            return [.send(HTTPResponse.tlv(TLV8([(.state, [2]), (.error, [TLVError.unknown.rawValue])])).serialized())]
        }
        let (pairing, id) = (self.pairing, self.id)
        // SRP's 3072-bit exponentiations run on their own thread, never on a cooperative one.
        let (reply, outcome) = await PairingServer.work { pairing.pairSetup(tlv, connection: id) }
        switch outcome {
        case .progressed: break
        case .paired(let c): logger.info("HAP paired with a controller", metadata: ["controller": "\(c)"])
        case .refused(let code, let why): logger.warning("HAP pair-setup refused (\(code)): \(why)", metadata: ["connection": "\(id)"])
        }
        return [.send(HTTPResponse.tlv(reply).serialized())]
    }

    func pairVerify(_ r: HTTPRequest) -> [Output] {
        guard let tlv = try? TLV8(decoding: r.body) else {
            logger.warning("HAP pair-verify refused: malformed TLV8", metadata: ["connection": "\(id)"])
            return [.send(HTTPResponse.tlv(TLV8([(.state, [2]), (.error, [TLVError.unknown.rawValue])])).serialized())]
        }
        let (reply, outcome) = verify.handle(tlv, server: pairing)
        switch outcome {
        case .progressed:
            return [.send(HTTPResponse.tlv(reply).serialized())]
        case .refused(let why):
            logger.warning("HAP pair-verify refused: \(why)", metadata: ["connection": "\(id)"])
            return [.send(HTTPResponse.tlv(reply).serialized())]
        case .verified(let c, let keys):
            controller = c
            framing = SecureFraming(accessory: keys)
            buffer = plainBuffer  // anything after M3 is already encrypted
            plainBuffer = []
            connections.update(id) { $0.controller = c }
            logger.info("HAP session verified", metadata: ["connection": "\(id)", "controller": "\(c)"])
            return [.send(HTTPResponse.tlv(reply).serialized()), .startEncryption(SecureFraming(accessory: keys))]
        }
    }

    func pairings(_ r: HTTPRequest, controller: String) -> [Output] {
        guard let tlv = try? TLV8(decoding: r.body) else {
            return [.send(HTTPResponse.tlv(TLV8([(.state, [2]), (.error, [TLVError.unknown.rawValue])])).serialized())]
        }
        let (reply, outcome) = pairing.pairings(tlv, controller: controller)
        var out: [Output] = [.send(HTTPResponse.tlv(reply).serialized())]
        switch outcome {
        case .listed: break
        case .added(let c): logger.info("HAP pairing added", metadata: ["controller": "\(c)", "by": "\(controller)"])
        case .refused(let code, let why): logger.warning("HAP pairings request refused (\(code)): \(why)", metadata: ["controller": "\(controller)"])
        case .removed(let ids):
            logger.info("HAP pairing removed", metadata: ["controllers": "\(ids.joined(separator: ","))", "by": "\(controller)"])
            connections.close(controllers: Set(ids), except: id)
            if ids.contains(controller) {
                out.append(.close("own pairing removed"))
                closed = true
            }
        }
        return out
    }

    static func ids(_ s: String) -> [CharacteristicID]? {
        var out: [CharacteristicID] = []
        for part in s.split(separator: ",") {
            let p = part.split(separator: ".")
            guard p.count == 2, let a = Int(p[0]), let i = Int(p[1]) else { return nil }
            out.append(CharacteristicID(aid: a, iid: i))
        }
        return out.isEmpty ? nil : out
    }

    func read(_ r: HTTPRequest) -> HTTPResponse {
        let q = r.query
        guard let ids = q["id"].flatMap(Self.ids) else { return .json(400, Array("{\"status\":\(HAPStatus.invalidValue.rawValue)}".utf8)) }
        let meta = q["meta"] == "1"
        let ev = q["ev"] == "1"
        let db = handler.database
        var statuses: [HAPStatus] = []
        var items: [String] = []
        let subscribed = connections.entries.withLock { $0[id]?.subscriptions ?? [] }
        for cid in ids {
            var w = JSONWriter()
            guard let c = db[cid] else {
                statuses.append(.notFound)
                items.append("{\"aid\":\(cid.aid),\"iid\":\(cid.iid),\"status\":\(HAPStatus.notFound.rawValue)}")
                continue
            }
            let status: HAPStatus = !c.isReadable ? .writeOnly : c.status
            statuses.append(status)
            var copy = c
            copy.status = status
            w.characteristic(copy, aid: cid.aid, meta: meta, includeValue: status == .success)
            var s = String(decoding: w.bytes, as: UTF8.self)
            s.removeLast()
            if ev { s += ",\"ev\":\(subscribed.contains(cid))" }
            items.append(s + "}")
        }
        let anyError = statuses.contains { $0 != .success }
        if anyError {
            // 207: every item carries its status.
            items = zip(items, statuses).map { item, status in
                item.contains("\"status\"") ? item : String(item.dropLast()) + ",\"status\":\(status.rawValue)}"
            }
        }
        return .json(anyError ? 207 : 200, Array("{\"characteristics\":[\(items.joined(separator: ","))]}".utf8))
    }

    struct WriteRequest: Decodable {
        struct Item: Decodable {
            var aid: Int
            var iid: Int
            var value: HAPValue?
            var ev: HAPValue?
            var r: HAPValue?
        }
        var characteristics: [Item]
        var pid: Int?
    }

    func write(_ r: HTTPRequest, controller: String) async -> HTTPResponse {
        guard let request = try? JSONDecoder().decode(WriteRequest.self, from: Data(r.body)) else {
            logger.warning("HAP write refused: malformed JSON", metadata: ["connection": "\(id)"])
            return .json(400, Array("{\"status\":\(HAPStatus.invalidValue.rawValue)}".utf8))
        }
        let db = handler.database
        var statuses: [CharacteristicID: HAPStatus] = [:]
        var writes: [(CharacteristicID, HAPValue)] = []
        var timedOK = true
        if let pid = request.pid {
            timedOK = prepared.map { $0.pid == pid && now() <= $0.deadline } ?? false
            prepared = nil
        }
        for item in request.characteristics {
            let cid = CharacteristicID(aid: item.aid, iid: item.iid)
            guard let c = db[cid] else {
                statuses[cid] = .notFound
                continue
            }
            if let ev = item.ev?.bool {
                if !c.notifies {
                    statuses[cid] = .notificationNotSupported
                } else {
                    connections.update(id) { e in
                        if ev { e.subscriptions.insert(cid) } else { e.subscriptions.remove(cid) }
                    }
                    statuses[cid] = .success
                }
            }
            if let value = item.value {
                if !c.isWritable {
                    statuses[cid] = .readOnly
                } else if request.pid != nil && !timedOK || c.needsTimedWrite && request.pid == nil {
                    statuses[cid] = .invalidValue
                } else if c.status == .unreachable {
                    statuses[cid] = .unreachable
                } else if let v = c.validated(value) {
                    writes.append((cid, v))
                } else {
                    statuses[cid] = .invalidValue
                }
            }
        }
        if !writes.isEmpty {
            let results = await handler.write(writes, controller: controller)
            for (cid, _) in writes { statuses[cid] = results[cid] ?? .success }
            for (cid, status) in results where status != .success {
                logger.info("HAP write failed", metadata: ["characteristic": "\(cid)", "status": "\(status.rawValue)"])
            }
        }
        let order = request.characteristics.map { CharacteristicID(aid: $0.aid, iid: $0.iid) }
        if order.allSatisfy({ statuses[$0] == .success }) { return HTTPResponse(status: 204) }
        let items = order.map { "{\"aid\":\($0.aid),\"iid\":\($0.iid),\"status\":\((statuses[$0] ?? .success).rawValue)}" }
        return .json(207, Array("{\"characteristics\":[\(items.joined(separator: ","))]}".utf8))
    }

    struct PrepareRequest: Decodable {
        var ttl: Int
        var pid: Int
    }

    func prepare(_ r: HTTPRequest) -> HTTPResponse {
        guard let p = try? JSONDecoder().decode(PrepareRequest.self, from: Data(r.body)), p.ttl > 0 else {
            return .json(400, Array("{\"status\":\(HAPStatus.invalidValue.rawValue)}".utf8))
        }
        prepared = (p.pid, now().advanced(by: .milliseconds(p.ttl)))
        return .json(200, Array("{\"status\":0}".utf8))
    }
}

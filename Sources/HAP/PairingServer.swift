import Crypto
import Foundation
import Synchronization

/// Pair-setup, pair-verify's lookup and the pairings endpoint, shared by every connection
/// (HAP R2 sections 5.6, 5.7, 5.10–5.12). One pair-setup at a time; unsuccessful attempts are
/// counted (persisted) and after 100 every pair-setup is refused with MaxTries; a paired
/// accessory refuses pair-setup with Unavailable.
///
/// Pure apart from its lock and the store: every input returns the TLV8 to answer, plus what
/// the connection must do (nothing; become a verified session; close connections of a removed
/// controller).
public final class PairingServer: Sendable {
    /// Unsuccessful pair-setup attempts after which pair-setup is refused for good (HAP R2 5.6.2).
    public static let maxAttempts = 100
    /// Pairings an accessory keeps (HAP R2 5.10: at least 16).
    public static let maxPairings = 16

    public let identity: AccessoryIdentity
    let store: any PairingStore
    let random: @Sendable (Int) -> [UInt8]

    struct Setup {
        var owner: UInt64
        var srp: SRPServer<SHA512>?
        var sessionKey: [UInt8]?
    }

    struct State {
        var pairings: [String: Pairing]
        var failedAttempts: Int
        var setup: Setup?
        /// Bumped when pairings change, for the `sf` flag and listeners.
        var revision = 0
    }

    let state: Mutex<State>
    /// Listeners of ``changes()``; each gets the pairings' revision after every change.
    let watchers = Mutex<(next: Int, all: [Int: AsyncStream<Int>.Continuation])>((0, [:]))

    public init(identity: AccessoryIdentity, store: any PairingStore, random: @escaping @Sendable (Int) -> [UInt8] = PairingServer.secureRandom) throws {
        self.identity = identity
        self.store = store
        self.random = random
        let pairings = try store.loadPairings()
        state = Mutex(State(pairings: Dictionary(uniqueKeysWithValues: pairings.map { ($0.identifier, $0) }), failedAttempts: try store.loadFailedAttempts()))
    }

    public static let secureRandom: @Sendable (Int) -> [UInt8] = { n in
        var rng = SystemRandomNumberGenerator()
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// The pairings' revision after each change (pair-setup done, a pairing added or removed,
    /// everyone unpaired), as it happens: what the bridge re-advertises `sf` on.
    public func changes() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = watchers.withLock { w in
            defer { w.next += 1 }
            w.all[w.next] = continuation
            return w.next
        }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.all.removeValue(forKey: key) } }
        return stream
    }

    /// Tells the listeners when `before` is not the revision now.
    func announce(since before: Int) {
        let now = state.withLock { $0.revision }
        guard now != before else { return }
        for c in watchers.withLock({ Array($0.all.values) }) { c.yield(now) }
    }

    var revision: Int { state.withLock { $0.revision } }

    public var isPaired: Bool { state.withLock { !$0.pairings.isEmpty } }
    public var pairings: [Pairing] { state.withLock { $0.pairings.values.sorted { $0.identifier < $1.identifier } } }
    public var failedAttempts: Int { state.withLock { $0.failedAttempts } }
    public func pairing(_ identifier: String) -> Pairing? { state.withLock { $0.pairings[identifier] } }

    /// What a pair-setup request led to, for the log.
    public enum SetupOutcome: Hashable, Sendable {
        case progressed(state: UInt8)
        case refused(TLVError, String)
        case paired(controller: String)
    }

    /// One pair-setup message (`POST /pair-setup`) from connection `connection`.
    public func pairSetup(_ request: TLV8, connection: UInt64) -> (TLV8, SetupOutcome) {
        let before = revision
        defer { announce(since: before) }
        guard let step = request.byte(.state) else { return Self.error(.unknown, state: 2, "pair-setup: no State item") }
        switch step {
        case 1: return setupM1(request, connection: connection)
        case 3: return setupM3(request, connection: connection)
        case 5: return setupM5(request, connection: connection)
        default: return Self.error(.unknown, state: step &+ 1, "pair-setup: unexpected state \(step)")
        }
    }

    /// The serial queue pair-setup's computations run on: its own thread (a serial queue targets
    /// the overcommitting pool), so a pairing never holds one of the few cooperative threads.
    static let computations = DispatchQueue(label: "hearth.hap.pair-setup")

    /// Runs `body` on ``computations`` and returns its result.
    public static func work<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            computations.async { continuation.resume(returning: body()) }
        }
    }

    /// Forgets a pair-setup the connection had in progress (it disconnected).
    public func connectionClosed(_ connection: UInt64) {
        state.withLock { s in
            if s.setup?.owner == connection { s.setup = nil }
        }
    }

    static func error(_ code: TLVError, state: UInt8, _ why: String) -> (TLV8, SetupOutcome) {
        (TLV8([(.state, [state]), (.error, [code.rawValue])]), .refused(code, why))
    }

    func setupM1(_ request: TLV8, connection: UInt64) -> (TLV8, SetupOutcome) {
        guard request.byte(.method).map({ $0 == 0 || $0 == 1 }) ?? true else {
            return Self.error(.unknown, state: 2, "pair-setup M1: method \(request.byte(.method)!) is not pair-setup")
        }
        let salt = random(16)
        let secret = random(32)
        return state.withLock { s in
            if !s.pairings.isEmpty { return Self.error(.unavailable, state: 2, "pair-setup M1: already paired") }
            if s.failedAttempts >= Self.maxAttempts {
                return Self.error(.maxTries, state: 2, "pair-setup M1: \(s.failedAttempts) unsuccessful attempts; refused until reset")
            }
            if let setup = s.setup, setup.owner != connection {
                return Self.error(.busy, state: 2, "pair-setup M1: another controller is pairing")
            }
            let srp = SRPServer<SHA512>(group: .rfc5054_3072, username: "Pair-Setup", password: identity.setupCode, salt: salt, secret: secret)
            s.setup = Setup(owner: connection, srp: srp)
            return (TLV8([(.state, [2]), (.publicKey, srp.publicKey), (.salt, salt)]), .progressed(state: 2))
        }
    }

    func setupM3(_ request: TLV8, connection: UInt64) -> (TLV8, SetupOutcome) {
        guard let a = request[.publicKey], let proof = request[.proof] else {
            return Self.error(.unknown, state: 4, "pair-setup M3: PublicKey or Proof missing")
        }
        guard var srp = state.withLock({ s in s.setup?.owner == connection ? s.setup?.srp : nil }) else {
            return Self.error(.unknown, state: 4, "pair-setup M3 without M1")
        }
        // The modular exponentiations run outside the lock.
        let result: Result<[UInt8], SRPServer<SHA512>.Failure>
        do throws(SRPServer<SHA512>.Failure) { result = .success(try srp.verify(clientPublicKey: a, proof: proof)) } catch { result = .failure(error) }
        return state.withLock { s in
            guard s.setup?.owner == connection else { return Self.error(.unknown, state: 4, "pair-setup M3: the setup was abandoned") }
            switch result {
            case .failure(let failure):
                s.setup = nil
                s.failedAttempts += 1
                try? store.saveFailedAttempts(s.failedAttempts)
                return Self.error(.authentication, state: 4, "\(failure) (unsuccessful attempt \(s.failedAttempts) of \(Self.maxAttempts))")
            case .success(let m2):
                s.setup?.srp = nil
                s.setup?.sessionKey = srp.sessionKey
                return (TLV8([(.state, [4]), (.proof, m2)]), .progressed(state: 4))
            }
        }
    }

    func setupM5(_ request: TLV8, connection: UInt64) -> (TLV8, SetupOutcome) {
        guard let sealed = request[.encryptedData] else { return Self.error(.unknown, state: 6, "pair-setup M5: no EncryptedData") }
        guard let k = state.withLock({ s in s.setup?.owner == connection ? s.setup?.sessionKey : nil }) else {
            return Self.error(.unknown, state: 6, "pair-setup M5 before a verified M3")
        }
        let key = HAPCrypto.hkdf(k, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
        let fail: (TLVError, String) -> (TLV8, SetupOutcome) = { code, why in
            self.state.withLock { s in if s.setup?.owner == connection { s.setup = nil } }
            return Self.error(code, state: 6, why)
        }
        guard let plain = HAPCrypto.open(sealed, key: key, nonce: HAPCrypto.nonce(label: "PS-Msg05")),
              let sub = try? TLV8(decoding: plain),
              let idBytes = sub[.identifier], let ltpk = sub[.publicKey], let signature = sub[.signature]
        else { return fail(.authentication, "pair-setup M5: cannot decrypt or parse the controller's data") }
        let controllerX = HAPCrypto.bytes(HAPCrypto.hkdf(k, salt: "Pair-Setup-Controller-Sign-Salt", info: "Pair-Setup-Controller-Sign-Info"))
        guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: ltpk),
              publicKey.isValidSignature(signature, for: controllerX + idBytes + ltpk)
        else { return fail(.authentication, "pair-setup M5: the controller's signature does not verify") }
        guard let identifier = String(bytes: idBytes, encoding: .utf8) else { return fail(.authentication, "pair-setup M5: identifier is not UTF-8") }

        let accessoryX = HAPCrypto.bytes(HAPCrypto.hkdf(k, salt: "Pair-Setup-Accessory-Sign-Salt", info: "Pair-Setup-Accessory-Sign-Info"))
        let ownID = Array(identity.pairingID.utf8)
        let ownLTPK = Array(identity.signingKey.publicKey.rawRepresentation)
        guard let ownSignature = try? identity.signingKey.signature(for: accessoryX + ownID + ownLTPK) else {
            return fail(.unknown, "pair-setup M6: signing failed")
        }
        let reply = TLV8([(.identifier, ownID), (.publicKey, ownLTPK), (.signature, Array(ownSignature))])
        let encrypted = HAPCrypto.seal(reply.encoded(), key: key, nonce: HAPCrypto.nonce(label: "PS-Msg06"))
        let pairing = Pairing(identifier: identifier, publicKey: ltpk, isAdmin: true)
        return state.withLock { s in
            guard s.setup?.owner == connection else { return Self.error(.unknown, state: 6, "pair-setup M5: the setup was abandoned") }
            s.setup = nil
            do { try store.savePairing(pairing) } catch {
                return Self.error(.unknown, state: 6, "pair-setup M5: the pairing could not be saved: \(error)")
            }
            s.pairings[identifier] = pairing
            s.failedAttempts = 0
            try? store.saveFailedAttempts(0)
            s.revision += 1
            return (TLV8([(.state, [6]), (.encryptedData, encrypted)]), .paired(controller: identifier))
        }
    }

    /// What a `/pairings` request did.
    public enum PairingsOutcome: Hashable, Sendable {
        case listed
        case added(String)
        /// These controllers' sessions must end (HAP R2 5.12: after the response).
        case removed([String])
        case refused(TLVError, String)
    }

    /// `POST /pairings` from a verified controller.
    public func pairings(_ request: TLV8, controller: String) -> (TLV8, PairingsOutcome) {
        let refuse: (TLVError, String) -> (TLV8, PairingsOutcome) = { code, why in
            (TLV8([(.state, [2]), (.error, [code.rawValue])]), .refused(code, why))
        }
        guard request.byte(.state) == 1, let method = request.byte(.method) else { return refuse(.unknown, "pairings: State 1 and Method required") }
        let before = revision
        defer { announce(since: before) }
        return state.withLock { s in
            guard s.pairings[controller]?.isAdmin == true else {
                return refuse(.authentication, "pairings: \(controller) is not an admin")
            }
            switch method {
            case 3:  // add
                guard let idBytes = request[.identifier], let id = String(bytes: idBytes, encoding: .utf8), let key = request[.publicKey],
                      key.count == 32, let perms = request.byte(.permissions)
                else { return refuse(.unknown, "add pairing: Identifier, PublicKey and Permissions required") }
                if let existing = s.pairings[id] {
                    guard existing.publicKey == key else { return refuse(.unknown, "add pairing: \(id) exists with another key") }
                } else if s.pairings.count >= Self.maxPairings {
                    return refuse(.maxPeers, "add pairing: \(Self.maxPairings) pairings already")
                }
                let p = Pairing(identifier: id, publicKey: key, isAdmin: perms & 1 == 1)
                do { try store.savePairing(p) } catch { return refuse(.unknown, "add pairing: \(error)") }
                s.pairings[id] = p
                s.revision += 1
                return (TLV8([(.state, [2])]), .added(id))
            case 4:  // remove
                guard let idBytes = request[.identifier], let id = String(bytes: idBytes, encoding: .utf8) else {
                    return refuse(.unknown, "remove pairing: Identifier required")
                }
                var removed: [String] = []
                if s.pairings[id] != nil {
                    try? store.removePairing(identifier: id)
                    s.pairings[id] = nil
                    removed.append(id)
                }
                // The last admin gone: every pairing goes (HAP R2 5.12.2).
                if !s.pairings.isEmpty, !s.pairings.values.contains(where: \.isAdmin) {
                    for other in s.pairings.keys {
                        try? store.removePairing(identifier: other)
                        removed.append(other)
                    }
                    s.pairings = [:]
                }
                s.revision += 1
                return (TLV8([(.state, [2])]), .removed(removed))
            case 5:  // list
                var out = TLV8()
                out.append(.state, byte: 2)
                for (i, p) in s.pairings.values.sorted(by: { $0.identifier < $1.identifier }).enumerated() {
                    if i > 0 { out.append(.separator, []) }
                    out.append(.identifier, Array(p.identifier.utf8))
                    out.append(.publicKey, p.publicKey)
                    out.append(.permissions, byte: p.isAdmin ? 1 : 0)
                }
                return (out, .listed)
            default:
                return refuse(.unknown, "pairings: unknown method \(method)")
            }
        }
    }

    /// Removes every pairing (the web page's or CLI's "unpair all"); returns who was removed.
    public func removeAll() -> [String] {
        let before = revision
        defer { announce(since: before) }
        return state.withLock { s in
            let ids = Array(s.pairings.keys)
            for id in ids { try? store.removePairing(identifier: id) }
            s.pairings = [:]
            s.revision += 1
            return ids
        }
    }

    /// Resets the unsuccessful-attempt counter (`hearth hap reset-attempts`).
    public func resetAttempts() {
        state.withLock { s in
            s.failedAttempts = 0
            try? store.saveFailedAttempts(0)
        }
    }
}

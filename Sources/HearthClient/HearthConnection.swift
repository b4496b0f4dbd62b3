public import Foundation
public import HomeModel
import HearthAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP side of a connection to hearthd: JSON requests under `/api/v1` with the bearer
/// token; error bodies come back as ``HomeError`` with the server's stable code.
public struct HearthConnection: Sendable {
    /// `http://127.0.0.1:8080`.
    public let baseURL: URL
    public let token: String?
    let session: URLSession
    /// Every subscription of this connection, over one WebSocket (shared by copies of this value).
    let sockets: WebSocketMux

    /// The code for a daemon that cannot be reached (not one of the server's own codes).
    public static let unreachable = WireErrorCode.unreachable.homeErrorCode

    public init(baseURL: URL, token: String?) {
        self.baseURL = baseURL
        self.token = token
        self.session = Self.sharedSession
        self.sockets = WebSocketMux(url: Self.webSocketURL(baseURL), token: token)
    }

    /// One session for every connection: no cookies or cache kept, and nothing to close.
    static let sharedSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        // Long enough for the consent step's long poll (30 s) with room to spare.
        configuration.timeoutIntervalForRequest = 120
        return URLSession(configuration: configuration)
    }()

    /// Parses `http://host:port`; `invalidArgument` otherwise.
    public static func url(_ string: String) throws(HomeError) -> URL {
        guard let url = URL(string: string), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw .invalidArgument("'\(string)' is not an http:// URL of hearthd (e.g. http://127.0.0.1:8080)")
        }
        return url
    }

    public func with(token: String?) -> HearthConnection { HearthConnection(baseURL: baseURL, token: token) }

    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = .sortedKeys
        return e
    }()

    /// Sends a request and decodes the answer.
    public func send<T: Decodable>(_ method: String, _ path: String, body: (some Encodable & Sendable)? = nil as String?, as: T.Type = T.self)
        async throws(HomeError) -> T
    {
        let (data, _) = try await raw(method, path, body: body)
        do {
            return try Self.decoder.decode(T.self, from: data)
        } catch {
            throw .internal("the server's answer to \(method) \(path) could not be read: \(error)")
        }
    }

    /// Sends a request whose answer has no body.
    public func send(_ method: String, _ path: String, body: (some Encodable & Sendable)? = nil as String?) async throws(HomeError) {
        _ = try await raw(method, path, body: body)
    }

    /// Sends a request; returns the body and status of a 2xx answer, throws the server's error otherwise.
    public func raw(_ method: String, _ path: String, body: (some Encodable & Sendable)?) async throws(HomeError) -> (Data, Int) {
        var base = baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/api/v1/" + path) else { throw .invalidArgument("bad request path '\(path)'") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            do {
                request.httpBody = try Self.encoder.encode(body)
            } catch {
                throw .invalidArgument("could not encode the request: \(error)")
            }
        }
        let data: Data
        let response: URLResponse
        do {
            // In a task of its own, which a cancellation of the caller does not reach: on Linux,
            // cancelling a URLSession request in flight can deadlock (URLSessionTask.cancel waits
            // for the session's queue while holding the task's status lock). The request ends
            // at its timeout at the latest.
            let session = session
            (data, response) = try await Task { try await session.data(for: request) }.value
        } catch {
            throw HomeError(Self.unreachable, "cannot reach hearthd at \(baseURL.absoluteString): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            if let body = try? Self.decoder.decode(WireErrorBody.self, from: data) { throw body.error.homeError }
            throw .internal("hearthd answered \(method) \(path) with HTTP \(status)")
        }
        return (data, status)
    }

    /// The WebSocket URL (`ws://…/api/v1/ws`).
    var webSocketURL: String { Self.webSocketURL(baseURL) }

    static func webSocketURL(_ baseURL: URL) -> String {
        var s = baseURL.absoluteString
        if s.hasSuffix("/") { s.removeLast() }
        if s.hasPrefix("https://") { s = "wss://" + s.dropFirst("https://".count) } else if s.hasPrefix("http://") {
            s = "ws://" + s.dropFirst("http://".count)
        }
        return s + "/api/v1/ws"
    }
}

/// Path segments with reserved characters escaped (device IDs contain `:`).
func segment(_ s: String) -> String {
    s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~:"))) ?? s
}

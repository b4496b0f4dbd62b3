import HomeModel
import Hummingbird
import HearthAPI
import Foundation
import Logging

/// An error on its way to a client: a ``HomeError`` with the HTTP status it renders as.
struct APIError: Error, HTTPResponseError {
    let error: HomeError
    let status: HTTPResponse.Status

    init(_ error: HomeError, status: HTTPResponse.Status? = nil) {
        self.error = error
        self.status = status ?? Self.status(for: WireErrorCode(error.code))
    }

    var headers: HTTPFields { [:] }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        APIResponse.json(WireErrorBody(error: error), status: status)
    }

    /// The stable mapping from error codes to HTTP statuses.
    /// Exhaustive over the closed set: a new code must choose its status here.
    static func status(for code: WireErrorCode) -> HTTPResponse.Status {
        switch code {
        case .unauthenticated: .unauthorized
        case .permissionDenied: .forbidden
        case .notFound: .notFound
        case .invalidArgument: .badRequest
        case .unsupportedOperation: .unprocessableContent
        case .conflict: .conflict
        case .deviceOffline: .serviceUnavailable
        case .timeout: .gatewayTimeout
        case .driverError: .badGateway
        case .rateLimited: .tooManyRequests
        case .internal: .internalServerError
        // Never the server's own: a client's. Should a handler throw it, it is the server failing.
        case .unreachable: .internalServerError
        }
    }
}

/// Renders every error as the API's JSON error body: ``HomeError``s with their status,
/// Hummingbird's own (unknown route, body too large) translated, anything else a logged 500.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let e as APIError {
            return APIResponse.json(WireErrorBody(error: e.error), status: e.status)
        } catch let e as IssuesError {
            return e.render()
        } catch let e as HomeError {
            return APIResponse.json(WireErrorBody(error: e), status: APIError.status(for: WireErrorCode(e.code)))
        } catch let e as any HTTPResponseError {
            let message: String
            let code: WireErrorCode
            switch e.status {
            case .notFound:
                (code, message) = (.notFound, "no such endpoint: \(request.method) \(request.uri.path) (see docs/api.md)")
            case .contentTooLarge:
                (code, message) = (.invalidArgument, "the request body is too large (limit \(HearthServer.Configuration.defaultMaxBodySize) bytes)")
            case .methodNotAllowed:
                (code, message) = (.invalidArgument, "\(request.method) is not allowed on \(request.uri.path)")
            default:
                (code, message) = (e.status.code >= 500 ? .internal : .invalidArgument, "\(e.status.reasonPhrase): \(e)")
            }
            return APIResponse.json(WireErrorBody(error: WireError(code: code, message: message)), status: e.status)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return APIResponse.json(
                WireErrorBody(error: WireError(code: .internal, message: "the server failed to answer; the log has the details")),
                status: .internalServerError)
        }
    }
}

/// JSON responses with one encoder for the whole API.
enum APIResponse {
    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .iso8601
        return e
    }()

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            data = Data(#"{"error":{"code":"internal","message":"could not encode the response"}}"#.utf8)
        }
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

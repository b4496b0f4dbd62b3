import Foundation

/// One HTTP/1.1 request as HAP controllers send them (HAP R2 6.4): a request line, headers and
/// a body of `Content-Length` bytes (no chunked bodies, no continuation lines).
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    public var target: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }

    /// The query's items (`id=1.2,1.3&ev=1`), percent-decoded.
    public var query: [String: String] {
        guard let q = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
        var out: [String: String] = [:]
        for pair in q.split(separator: "&") {
            // Empty pieces kept: "=" alone is an empty key (omitting them left nothing to index).
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
            out[key] = kv.count > 1 ? (String(kv[1]).removingPercentEncoding ?? String(kv[1])) : ""
        }
        return out
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    public static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.body == b.body && a.headers.map { $0.0 + ":" + $0.1 } == b.headers.map { $0.0 + ":" + $0.1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
        hasher.combine(body)
    }

    /// Why bytes are not a request HAP accepts (the connection answers 400 and closes).
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Largest head and body accepted.
    public static let maxHead = 8 * 1024
    public static let maxBody = 256 * 1024

    /// Parses one request from the front of `buffer`, removing it; nil while incomplete.
    public static func parse(_ buffer: inout [UInt8]) throws(ParseError) -> HTTPRequest? {
        guard let headEnd = find(buffer, [13, 10, 13, 10]) else {
            if buffer.count > maxHead { throw ParseError(message: "request head longer than \(maxHead) bytes") }
            return nil
        }
        guard let head = String(bytes: buffer[0..<headEnd], encoding: .utf8) else { throw ParseError(message: "request head is not UTF-8") }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { throw ParseError(message: "bad request line") }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ParseError(message: "bad header line") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var request = HTTPRequest(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: [])
        if request.header("Transfer-Encoding") != nil { throw ParseError(message: "chunked bodies are not accepted") }
        let length: Int
        if let l = request.header("Content-Length") {
            guard let n = Int(l), n >= 0 else { throw ParseError(message: "bad Content-Length") }
            guard n <= maxBody else { throw ParseError(message: "body of \(n) bytes (at most \(maxBody))") }
            length = n
        } else {
            length = 0
        }
        let bodyStart = headEnd + 4
        guard buffer.count >= bodyStart + length else { return nil }
        request.body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return request
    }

    static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}

/// A response (or an `EVENT/1.0` notification), serialized.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var contentType: String?
    public var body: [UInt8]

    public init(status: Int, contentType: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse { HTTPResponse(status: status, contentType: "application/hap+json", body: body) }
    public static func tlv(_ tlv: TLV8) -> HTTPResponse { HTTPResponse(status: 200, contentType: "application/pairing+tlv8", body: tlv.encoded()) }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 207: "Multi-Status"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 422: "Unprocessable Entity"
        case 470: "Connection Authorization Required"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    public func serialized(event: Bool = false) -> [UInt8] {
        var head = (event ? "EVENT/1.0" : "HTTP/1.1") + " \(status) \(Self.reason(status))\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }
}

import Foundation
import HomeModel
import Testing

/// Bad input gets a 4xx with a clear message, and the server keeps serving.
@Suite struct MalformedRequestTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let body: String
        let status: Int
        let mentions: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "bad JSON", body: #"{"device": "test:lamp", "type":"#, status: 400, mentions: "not valid JSON"),
        Case(name: "not an object", body: "[1, 2]", status: 400, mentions: "JSON object"),
        Case(name: "empty body", body: "", status: 400, mentions: "JSON object"),
        Case(
            name: "unknown field", body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on","colour":"red"}"#,
            status: 400, mentions: "'colour'"),
        Case(name: "wrong type", body: #"{"device":42,"type":"OnOffLight","trait":"OnOff","command":"on"}"#, status: 400, mentions: "'device'"),
        Case(name: "missing field", body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff"}"#, status: 400, mentions: "'command'"),
        Case(name: "wrong type in args", body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on","args":[1]}"#, status: 400, mentions: "'args'"),
    ]

    @Test(arguments: cases)
    func malformedCommand_isA4xx_andTheServerKeepsServing(_ c: Case) async throws {
        try await TestHome.inProcess { home in
            let member = try home.memberToken()
            let r = try await home.call("POST", "commands", token: member, body: c.body)
            #expect(r.status == c.status, "\(c.name): \(r.text)")
            #expect(r.errorCode == "invalidArgument")
            #expect(r.json["error"]?["message"]?.stringValue?.contains(c.mentions) == true, "\(c.name): \(r.text)")
            #expect(try await home.call("GET", "devices", token: member).status == 200)
        }
    }

    @Test func hugeBody_is413_andNothingIsRead() async throws {
        try await TestHome.inProcess { home in
            let member = try home.memberToken()
            let huge = Data(("{\"name\":\"" + String(repeating: "x", count: 2 * 1024 * 1024) + "\"}").utf8)
            let r = try await home.call("POST", "structures", token: member, bodyData: huge)
            #expect(r.status == 413, "\(r.text)")
            #expect(try await home.call("GET", "health").status == 200)
        }
    }

    @Test func unknownRoute_isAJSON404() async throws {
        try await TestHome.inProcess { home in
            let r = try await home.call("GET", "gadgets", token: try home.memberToken())
            #expect(r.status == 404)
            #expect(r.errorCode == "notFound")
        }
    }

    @Test func malformedWebSocketMessages_getErrors_andTheSocketStaysOpen() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                for bad in ["not json", "[]", #"{"type":"subscribe","id":"x","query":"gadgets"}"#, #"{"type":"dance"}"#,
                    #"{"type":"subscribe","id":"x","query":"devices","mode":"sideways"}"#, #"{"type":"subscribe","query":"devices","bogus":1}"#,
                    #"{"type":"subscribe","id":7,"query":"devices"}"#]
                {
                    try await socket.send(bad)
                    let m = try await socket.next()
                    #expect(m?["type"] == "error", "\(bad) → \(String(describing: m))")
                    #expect(m?["error"]?["code"] == "invalidArgument", "\(bad)")
                }
                try await socket.send(#"{"type":"ping","id":"p"}"#)
                #expect(try await socket.next()?["type"] == "pong")
            }
        }
    }

    @Test func webSocketWithoutToken_isRefused() async throws {
        try await TestHome.with { home in
            await #expect(throws: (any Error).self) {
                try await SocketProbe.with(home, token: nil) { _ in }
            }
            let health = try await home.call("GET", "health")
            #expect(health.status == 200)
        }
    }
}

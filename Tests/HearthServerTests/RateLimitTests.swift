import DriverTesting
import Foundation
import HearthServer
import HomeModel
import HomeStorage
import Testing

/// Failed logins and setup codes are rate-limited; time is a manual clock, never slept.
@Suite struct RateLimitTests {
    @Test func limiter_refusesAfterTheLimit_andForgetsAfterTheWindow() throws {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock, limit: 3, window: .seconds(60))
        for _ in 0..<3 {
            try limiter.check("k")
            limiter.recordFailure("k")
        }
        let e = #expect(throws: HomeError.self) { try limiter.check("k") }
        #expect(e?.code == .rateLimited)
        #expect(e?.message.contains("60 s") == true)
        try limiter.check("other")
        clock.advance(by: .seconds(30))
        #expect(throws: HomeError.self) { try limiter.check("k") }
        clock.advance(by: .seconds(31))
        try limiter.check("k")
    }

    @Test func limiter_remembersABoundedNumberOfKeys() {
        let limiter = RateLimiter(clock: ManualClock(), limit: 3, window: .seconds(60), maxKeys: 100)
        for i in 0..<1_000 { limiter.recordFailure("user:\(i)") }
        #expect(limiter.keyCount <= 100)
    }

    @Test func login_isRateLimitedOverHTTP_evenWithTheRightPassword() async throws {
        let clock = ManualClock()
        try await TestHome.with(loginLimiter: RateLimiter(clock: clock, limit: 3, window: .seconds(60))) { home in
            _ = try home.memberToken("mia")
            for _ in 0..<3 {
                let r = try await home.call("POST", "auth/login", body: #"{"username":"mia","password":"wrong wrong"}"#)
                #expect(r.status == 401)
            }
            let limited = try await home.call("POST", "auth/login", body: #"{"username":"mia","password":"member password"}"#)
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rateLimited")
            clock.advance(by: .seconds(61))
            let ok = try await home.call("POST", "auth/login", body: #"{"username":"mia","password":"member password"}"#)
            #expect(ok.status == 200, "\(ok.text)")
        }
    }

    @Test func setupCodes_areRateLimited() async throws {
        let clock = ManualClock()
        try await TestHome.with(setupLimiter: RateLimiter(clock: clock, limit: 2, window: .seconds(900))) { home in
            let code = try #require(try home.access.bootstrap())
            for _ in 0..<2 {
                let r = try await home.call("POST", "auth/setup", body: #"{"code":"AAAA-AAAA","password":"correct horse"}"#)
                #expect(r.status == 401)
            }
            let limited = try await home.call("POST", "auth/setup", body: "{\"code\":\"\(code)\",\"password\":\"correct horse\"}")
            #expect(limited.status == 429)
            clock.advance(by: .seconds(901))
            let ok = try await home.call("POST", "auth/setup", body: "{\"code\":\"\(code)\",\"password\":\"correct horse\"}")
            #expect(ok.status == 200, "\(ok.text)")
        }
    }

    /// Over real sockets from two loopback addresses: a client that guessed wrong too often
    /// is refused; another client can still finish setup with the right code.
    @Test func setupCodes_areLimitedPerClient_notForEveryone() async throws {
        try await TestHome.with(setupLimiter: RateLimiter(limit: 2, window: .seconds(900))) { home in
            let code = try #require(try home.access.bootstrap())
            let port = home.port
            @Sendable func setup(from source: String, code: String) -> String {
                let body = "{\"code\":\"\(code)\",\"password\":\"correct horse\"}"
                let request = "POST /api/v1/auth/setup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                guard let socket = try? RawSocket(port: port, source: source, receiveTimeout: 30) else { return "no connection from \(source)" }
                socket.send(request)
                return socket.read().text
            }
            let statuses = try await blocking {
                let wrong = (0..<2).map { _ in RawSocket.status(setup(from: "127.0.0.1", code: "AAAA-AAAA")) }
                let lockedOut = RawSocket.status(setup(from: "127.0.0.1", code: code))
                let other = setup(from: "127.0.0.2", code: code)
                return (wrong, lockedOut, other)
            }
            #expect(statuses.0 == [401, 401])
            #expect(statuses.1 == 429)
            #expect(RawSocket.status(statuses.2) == 200, "\(statuses.2)")
        }
    }

    @Test func appRequests_areLimitedPerAddress() async throws {
        let clock = ManualClock()
        try await TestHome.with(appRequestLimiter: RateLimiter(clock: clock, limit: 2, window: .seconds(600))) { home in
            for _ in 0..<2 {
                #expect(try await home.call("POST", "apps/requests", body: #"{"name":"Spam"}"#).status == 201)
            }
            let limited = try await home.call("POST", "apps/requests", body: #"{"name":"Spam"}"#)
            #expect(limited.status == 429)
            clock.advance(by: .seconds(601))
            #expect(try await home.call("POST", "apps/requests", body: #"{"name":"Spam"}"#).status == 201)
        }
    }
}


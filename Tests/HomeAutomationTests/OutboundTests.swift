import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import MQTTExport
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot HTTP server on a loopback port: answers each request with `status` after `delay`,
/// and hands the requests it got to `requests`.
final class LoopbackHTTPServer: @unchecked Sendable {  // the fd is owned by the accept thread after init
    let port: Int
    let fd: Int32
    final class Requests: Sendable { let list = Mutex<[String]>([]) }
    let got = Requests()
    let thread: Thread

    init(status: Int, delay: Double = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, size) } }
        guard bound == 0, listen(listener, 4) == 0 else { throw HomeError.internal("cannot listen on loopback") }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &size) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        fd = listener
        let got = self.got
        thread = Thread {
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 { return }
                var text = ""
                var buffer = [UInt8](repeating: 0, count: 4096)
                // Headers, then the body of Content-Length (bounded reads).
                for _ in 0..<64 {
                    let n = read(c, &buffer, buffer.count)
                    if n <= 0 { break }
                    text += String(decoding: buffer[0..<n], as: UTF8.self)
                    if let end = text.range(of: "\r\n\r\n") {
                        let length = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                        if text.utf8.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { break }
                    }
                }
                got.list.withLock { $0.append(text) }
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                let answer = "HTTP/1.1 \(status) X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                _ = answer.withCString { write(c, $0, strlen($0)) }
                close(c)
            }
        }
        thread.start()
    }

    var requests: [String] { got.list.withLock { $0 } }

    func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

@Suite(.timeLimit(.minutes(1))) struct OutboundTests {
    static func hook(_ port: Int, timeout: String = "2s") -> String {
        """
        {"id": "hook", "name": "Hook", "starters": [{"id": "go", "manual": {}}],
         "actions": [{"webhook": {"url": "http://127.0.0.1:\(port)/doorbell", "body": {"rang": true}, "timeout": "\(timeout)"}},
                     {"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """
    }

    @Test func webhook_postsTheBody_toALoopbackServer_thenTheRunGoesOn() async throws {
        let server = try LoopbackHTTPServer(status: 204)
        defer { server.stop() }
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock(), outbound: StandardOutbound())
        try await engine.save(.json(Self.hook(server.port)), as: admin)
        await engine.start()
        try await engine.runNow("hook", as: admin)
        await engine.waitForTraces { [.completed, .failed].contains($0["hook"]?.last?.outcome) }
        let trace = try #require(try await engine.runs("hook", as: admin).first)
        #expect(trace.outcome == .completed, "\(trace)")
        #expect(trace.steps.first?.kind == "webhook" && trace.steps.first?.result == "ok")
        let request = try #require(server.requests.first)
        #expect(request.hasPrefix("POST /doorbell HTTP/1.1"))
        #expect(request.lowercased().contains("content-type: application/json"))
        #expect(request.hasSuffix(#"{"rang":true}"#))
        #expect(h.lampOn == true)
    }

    @Test func webhook_failsTheRun_onAnErrorStatus_andOnTimeout() async throws {
        let failing = try LoopbackHTTPServer(status: 500)
        defer { failing.stop() }
        let slow = try LoopbackHTTPServer(status: 200, delay: 8)
        defer { slow.stop() }
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock(), outbound: StandardOutbound())
        try await engine.save(.json(Self.hook(failing.port)), as: admin)
        await engine.start()
        try await engine.runNow("hook", as: admin)
        await engine.waitForTraces { $0["hook"]?.last?.outcome == .failed }
        var step = try #require(try await engine.runs("hook", as: admin).first?.steps.first)
        #expect(step.result == "driverError" && step.message?.contains("HTTP 500") == true, "\(step)")

        try await engine.save(.json(Self.hook(slow.port, timeout: "500ms")), as: admin)
        try await engine.runNow("hook", as: admin)
        await engine.waitForTraces { ($0["hook"] ?? []).filter { $0.outcome == .failed }.count == 2 }
        step = try #require(try await engine.runs("hook", as: admin).first?.steps.first)
        #expect(step.result == "timeout", "\(step)")
        #expect((step.milliseconds ?? 0) < 6000, "gave up at the 0.5 s timeout, not at the server's 8 s (a loaded machine may add seconds)")
        #expect(h.lampOn == false, "nothing after a failed step")
    }

    /// The webhook library is loaded at the first webhook; where it is missing the step fails
    /// with an error naming where it was looked for, and the engine goes on.
    @Test func webhook_withoutTheLibrary_failsTheStep_namingThePathsLookedAt() async throws {
        let server = try LoopbackHTTPServer(status: 204)
        defer { server.stop() }
        let h = TestHome()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-no-webhook-\(UUID())").path
        let outbound = StandardOutbound(webhooks: WebhookLibrary(directories: [missing, missing + "/lib"]))
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock(), outbound: outbound)
        try await engine.save(.json(Self.hook(server.port)), as: admin)
        await engine.start()
        try await engine.runNow("hook", as: admin)
        await engine.waitForTraces { $0["hook"]?.last?.outcome == .failed }
        let step = try #require(try await engine.runs("hook", as: admin).first?.steps.first)
        #expect(step.result == "unsupportedOperation", "\(step)")
        #expect(step.message?.contains(missing + "/libHearthWebhook.so") == true, "\(step)")
        #expect(step.message?.contains(missing + "/lib/libHearthWebhook.so") == true, "\(step)")
        #expect(server.requests.isEmpty)
        #expect(h.lampOn == false, "nothing after a failed step")
        // The standard library (beside the test binary, as beside hearthd) is there.
        #expect(WebhookLibrary.standard.directories.contains { FileManager.default.fileExists(atPath: $0 + "/libHearthWebhook.so") })
    }

    @Test func validator_refusesABadURL_andAWildcardTopic_andSimulateShowsBoth() async throws {
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let bad = try Automation.json("""
            {"id": "out", "name": "Out", "starters": [{"manual": {}}],
             "actions": [{"webhook": {"url": "ftp://example/x"}}, {"publish": {"topic": "home/#", "payload": "x"}}]}
            """)
        let issues = await engine.validate(bad)
        #expect(issues.map(\.path) == ["actions[0].webhook.url", "actions[1].publish.topic"])
        let good = try Automation.json("""
            {"id": "out", "name": "Out", "starters": [{"manual": {}}],
             "actions": [{"webhook": {"url": "http://127.0.0.1:9/x"}}, {"publish": {"topic": "home/bell", "payload": {"rang": 1}}}]}
            """)
        let trace = try await engine.simulate(good, starter: nil, as: admin)
        #expect(trace.steps.map(\.result) == ["wouldSend", "wouldSend"])
        #expect(trace.steps[1].detail == #"home/bell ← {"rang":1}"#)
    }

    /// `publish` through a real mosquitto on loopback (the connection hearthd makes with the
    /// exporter's libmosquitto client), read back with mosquitto_sub.
    @Test func publish_reachesARealBroker() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let client = try MosquittoClient(.init(host: "127.0.0.1", port: broker.port, clientID: "automation-test"))
        _ = try client.start()
        defer { client.stop() }
        try await within(10, "connected") {
            for await e in client.events { if case .connected = e { return } }
        }
        let sub = Process()
        sub.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        sub.arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "home/bell", "-C", "1", "-W", "10"]
        let out = Pipe()
        sub.standardOutput = out
        try sub.run()
        try await Task.sleep(for: .milliseconds(300))  // let mosquitto_sub subscribe

        let h = TestHome()
        let outbound = StandardOutbound { topic, payload, retain throws(HomeError) in
            guard client.publish(topic, payload, retain: retain) else { throw .deviceOffline("not connected") }
        }
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock(), outbound: outbound)
        try await engine.save(
            .json("""
                {"id": "bell", "name": "Bell", "starters": [{"manual": {}}],
                 "actions": [{"publish": {"topic": "home/bell", "payload": {"rang": 2}}}]}
                """), as: admin)
        await engine.start()
        try await engine.runNow("bell", as: admin)
        await engine.waitForTraces { $0["bell"]?.last?.outcome == .completed }
        sub.waitUntilExit()
        let line = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(line.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"rang":2}"#)
    }
}

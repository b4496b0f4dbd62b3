import CMosquitto
import Foundation
import Synchronization

/// A connection to an MQTT broker through libmosquitto.
///
/// The network loop runs on a thread of its own: it connects (retrying with exponential backoff
/// while the broker cannot be reached), serves the connection — reconnecting with the same
/// backoff when an established connection drops — and calls the handlers on that thread, one at
/// a time. Handlers must not block.
///
/// The loop is libmosquitto's `mosquitto_loop_forever` with the reading done in bursts: after
/// one `poll` it reads every message waiting on the socket, then calls `caughtUp` (libmosquitto's
/// own loop waits in `pselect` again before each message). Packets other threads queue
/// (publish, subscribe, disconnect) wake it through an eventfd.
///
/// ```swift
/// let connection = try MQTTConnection(options: .init(host: "127.0.0.1", port: 1883), handlers: handlers)
/// try connection.start()
/// try connection.subscribe("zigbee2mqtt/#", qos: 1)
/// try connection.publish("lamp/set", payload: "ON", qos: 1)
/// connection.stop()
/// ```
public final class MQTTConnection: @unchecked Sendable {
    // @unchecked: `handle` is a C pointer (not Sendable); libmosquitto guards the client behind
    // it with its own mutexes once it is threaded (mosquitto_threaded_set, in start()).
    // Everything else is immutable, in a Mutex, or thread-safe (NSCondition, DispatchSemaphore).

    public struct Options: Sendable {
        public var host: String
        public var port: Int
        /// nil: libmosquitto makes up a random one.
        public var clientID: String?
        public var username: String?
        public var password: String?
        /// Turns TLS on, trusting the certificate authorities in this PEM file.
        public var caFile: String?
        /// A client certificate and key, for brokers that require one.
        public var certFile: String?
        public var keyFile: String?
        /// Seconds between keepalive pings.
        public var keepalive: Int = 60
        /// First and largest delay between reconnection attempts, in seconds (doubling in between).
        public var reconnectDelay: (minimum: Int, maximum: Int) = (1, 30)
        /// Published by the broker when this client disappears (topic, payload).
        public var will: (topic: String, payload: String)?

        public init(host: String = "127.0.0.1", port: Int = 1883, clientID: String? = nil) {
            self.host = host
            self.port = port
            self.clientID = clientID
        }
    }

    /// What the connection reports, called on libmosquitto's thread.
    public struct Handlers: Sendable {
        /// The broker accepted the connection (again): subscribe here.
        public var connected: @Sendable () -> Void = {}
        /// The broker refused the connection (bad credentials, not authorised).
        public var refused: @Sendable (_ reason: String) -> Void = { _ in }
        /// The broker cannot be reached (logged once per reason; retried with backoff).
        public var unreachable: @Sendable (_ reason: String) -> Void = { _ in }
        /// The connection dropped (`expected` when ``stop()`` asked for it).
        public var disconnected: @Sendable (_ expected: Bool, _ reason: String) -> Void = { _, _ in }
        /// The broker acknowledged the subscription with this message ID.
        public var subscribed: @Sendable (_ messageID: Int32) -> Void = { _ in }
        /// The broker acknowledged a QoS 1/2 publication with this message ID (a QoS 0 one
        /// once it is written to the socket).
        public var published: @Sendable (_ messageID: Int32) -> Void = { _ in }
        /// A message arrived. The payload is valid only during the call.
        public var message: @Sendable (_ topic: String, _ payload: UnsafeRawBufferPointer, _ retained: Bool) -> Void = { _, _, _ in }
        /// Nothing more is waiting on the socket after a burst of one or more packets (or the
        /// burst reached its bound): hand over what the `message` calls of the burst gathered.
        public var caughtUp: @Sendable () -> Void = {}

        public init() {}
    }

    /// An error from libmosquitto, with its message.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let code: Int32
        public let message: String
        public var description: String { message }
    }

    final class Box: Sendable {
        let handlers: Handlers
        init(_ handlers: Handlers) { self.handlers = handlers }
    }

    let handle: OpaquePointer
    let box: Box
    let options: Options
    /// Whether the network thread is stopped (or never started).
    let stopped = Mutex(true)
    /// Wakes the network thread from a backoff delay when ``stop()`` is called.
    let wake = NSCondition()
    /// Signalled when the network thread ends.
    let finished = DispatchSemaphore(value: 0)
    /// Held around every libmosquitto call on `handle` from outside the network loop, and
    /// while ``dropSession()`` reinitialises the handle (the loop is not running then).
    let handleLock = Mutex(())
    /// Set by ``dropSession()``: the network thread clears libmosquitto's queue before it
    /// reconnects.
    let discardSession = Mutex(false)
    /// An eventfd the network loop polls beside the socket: written after another thread
    /// queued a packet for libmosquitto (which leaves the writing to the loop).
    let wakeFD: Int32
    /// Most packets read in one burst before `caughtUp` and the next poll (bounds a batch when
    /// the broker sends faster than the handlers keep up).
    static let burst = 1024

    private static let library: Int32 = mosquitto_lib_init()

    /// Creates the client (no network yet).
    /// - Throws: ``Failure`` when the TLS files or credentials are refused.
    public init(options: Options, handlers: Handlers) throws(Failure) {
        _ = Self.library
        self.options = options
        box = Box(handlers)
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wake >= 0 else { throw Failure(code: MOSQ_ERR_ERRNO.rawValue, message: "could not create an MQTT client: eventfd: \(String(cString: strerror(errno)))") }
        guard let h = mosquitto_new(options.clientID, true, Unmanaged.passUnretained(box).toOpaque()) else {
            close(wake)
            throw Failure(code: -1, message: "could not create an MQTT client (client id '\(options.clientID ?? "")' invalid?)")
        }
        handle = h
        wakeFD = wake
        do throws(Failure) {
            try configure()
        } catch {
            mosquitto_destroy(h)
            close(wake)
            throw error
        }
    }

    private func configure() throws(Failure) {
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311)), "setting the protocol version")
        if options.username != nil || options.password != nil {
            try check(mosquitto_username_pw_set(handle, options.username, options.password), "setting the credentials")
        }
        if options.caFile != nil || options.certFile != nil {
            try check(mosquitto_tls_set(handle, options.caFile, nil, options.certFile, options.keyFile, nil),
                "setting up TLS (caFile \(options.caFile ?? "-"), certFile \(options.certFile ?? "-"), keyFile \(options.keyFile ?? "-"))")
        }
        if let will = options.will {
            let bytes = Array(will.payload.utf8)
            try check(mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes, 1, true), "setting the last will")
        }
        try check(
            mosquitto_reconnect_delay_set(
                handle, UInt32(max(options.reconnectDelay.minimum, 1)),
                UInt32(max(options.reconnectDelay.maximum, options.reconnectDelay.minimum, 1)), true),
            "setting the reconnect delay")
        mosquitto_connect_callback_set(handle) { _, context, rc in
            guard let context else { return }
            let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
            if rc == 0 {
                box.handlers.connected()
            } else {
                box.handlers.refused(String(cString: mosquitto_connack_string(rc)))
            }
        }
        mosquitto_disconnect_callback_set(handle) { _, context, rc in
            guard let context else { return }
            let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
            box.handlers.disconnected(rc == 0, rc == 0 ? "disconnected" : String(cString: mosquitto_strerror(rc)))
        }
        mosquitto_subscribe_callback_set(handle) { _, context, mid, _, _ in
            guard let context else { return }
            Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().handlers.subscribed(mid)
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            guard let context else { return }
            Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().handlers.published(mid)
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let context, let message, let topic = message.pointee.topic else { return }
            let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
            let payload = UnsafeRawBufferPointer(start: message.pointee.payload, count: Int(max(message.pointee.payloadlen, 0)))
            box.handlers.message(String(cString: topic), payload, message.pointee.retain)
        }
    }

    deinit {
        stop()
        mosquitto_destroy(handle)
        close(wakeFD)
    }

    /// Wakes the network loop: a packet is queued (libmosquitto writes it from the loop).
    func wakeLoop() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// After a requested disconnect: wakes the loop to write it, or a backoff wait to notice it.
    func interrupt() {
        wakeLoop()
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    func check(_ rc: Int32, _ what: String) throws(Failure) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            var reason = String(cString: mosquitto_strerror(rc))
            if rc == MOSQ_ERR_INVAL.rawValue, what.hasPrefix("setting up TLS") { reason += " (is every file there and readable?)" }
            throw Failure(code: rc, message: "MQTT \(what): \(reason)")
        }
    }

    /// Starts the network thread, which connects; a broker that is not up yet is retried with backoff.
    public func start() throws(Failure) {
        let start = stopped.withLock { stopped -> Bool in
            defer { stopped = false }
            return stopped
        }
        guard start else { return }
        try check(mosquitto_threaded_set(handle, true), "preparing the network thread")
        let thread = Thread { [self] in networkLoop() }
        thread.name = "mqtt \(options.host):\(options.port)"
        thread.start()
    }

    var isStopped: Bool { stopped.withLock { $0 } }

    /// Connects, runs libmosquitto's loop until it gives up or ``stop()`` is called, and connects
    /// again after a backoff delay (doubling from the minimum to the maximum).
    private func networkLoop() {
        defer { finished.signal() }
        var delay = max(options.reconnectDelay.minimum, 1)
        var lastFailure: String?
        while !isStopped {
            let rc = mosquitto_connect(handle, options.host, Int32(options.port), Int32(options.keepalive))
            if isStopped {
                if rc == MOSQ_ERR_SUCCESS.rawValue { mosquitto_disconnect(handle) }
                break
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                // Returns when stop() disconnects, or after an error libmosquitto will not retry
                // (a TLS handshake the broker's certificate fails, refused credentials…).
                let loopRC = serveForever()
                if isStopped { break }
                if discardSession.withLock({ d in defer { d = false }; return d }) {
                    // Forget every queued and in-flight message: libmosquitto would otherwise
                    // send them again after reconnecting, long after their command failed.
                    handleLock.withLock { _ in
                        _ = mosquitto_reinitialise(handle, options.clientID, true, Unmanaged.passUnretained(box).toOpaque())
                        _ = mosquitto_threaded_set(handle, true)
                        try? configure()
                    }
                    delay = max(options.reconnectDelay.minimum, 1)
                    continue
                }
                let reason = String(cString: mosquitto_strerror(loopRC))
                if loopRC != MOSQ_ERR_SUCCESS.rawValue, reason != lastFailure {
                    lastFailure = reason
                    box.handlers.unreachable(reason)
                }
            } else {
                let reason = rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
                if reason != lastFailure {
                    lastFailure = reason
                    box.handlers.unreachable(reason)
                }
            }
            wake.lock()
            if !isStopped { _ = wake.wait(until: Date(timeIntervalSinceNow: Double(delay))) }
            wake.unlock()
            delay = min(delay * 2, max(options.reconnectDelay.maximum, options.reconnectDelay.minimum, 1))
        }
    }

    /// Disconnects and stops the network thread; waits for it to end. Idempotent.
    public func stop() {
        let wasRunning = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard wasRunning else { return }
        handleLock.withLock { _ in _ = mosquitto_disconnect(handle) }
        interrupt()
        finished.wait()
    }

    /// ``stop()`` from async code: the wait for the network thread happens on a thread of its
    /// own, never on one of the concurrency pool's few threads (which every other task needs,
    /// the network thread's own hand-overs included).
    public func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "hearth.mqtt.stop").async {
                self.stop()
                done.resume()
            }
        }
    }

    /// Subscribes to a topic filter; returns the message ID the acknowledgement will carry.
    @discardableResult
    public func subscribe(_ topic: String, qos: Int32 = 1) throws(Failure) -> Int32 {
        // A filter the broker refuses makes it drop the whole connection: never send one.
        if let problem = MQTTTopic.problem(topic, .subscribe) {
            throw Failure(code: MOSQ_ERR_INVAL.rawValue, message: "MQTT subscribing to \(topic.debugDescription): the topic \(problem)")
        }
        var mid: Int32 = 0
        let rc = handleLock.withLock { _ in mosquitto_subscribe(handle, &mid, topic, qos) }
        wakeLoop()
        try check(rc, "subscribing to \(topic)")
        return mid
    }

    public func unsubscribe(_ topic: String) throws(Failure) {
        if let problem = MQTTTopic.problem(topic, .subscribe) {
            throw Failure(code: MOSQ_ERR_INVAL.rawValue, message: "MQTT unsubscribing from \(topic.debugDescription): the topic \(problem)")
        }
        let rc = handleLock.withLock { _ in mosquitto_unsubscribe(handle, nil, topic) }
        wakeLoop()
        try check(rc, "unsubscribing from \(topic)")
    }

    /// Publishes a message.
    /// - Throws: ``Failure`` (`MOSQ_ERR_NO_CONN`) while the connection is down, so the caller
    ///   learns at once that the device cannot be reached.
    @discardableResult
    public func publish(_ topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = false) throws(Failure) -> Int32 {
        if let problem = MQTTTopic.problem(topic, .publish) {
            throw Failure(code: MOSQ_ERR_INVAL.rawValue, message: "MQTT publishing to \(topic.debugDescription): the topic \(problem)")
        }
        guard (0...2).contains(qos) else { throw Failure(code: MOSQ_ERR_INVAL.rawValue, message: "MQTT publishing to \(topic): QoS \(qos) is not 0, 1 or 2") }
        var mid: Int32 = 0
        let rc = handleLock.withLock { _ in
            payload.withUnsafeBytes { bytes in
                mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
            }
        }
        wakeLoop()
        try check(rc, "publishing to \(topic)")
        return mid
    }

    /// Drops the connection and everything libmosquitto still holds to send (queued and
    /// unacknowledged messages), then reconnects with a clean session: for a broker that has
    /// stopped answering, so that a command reported as failed is not sent again later.
    public func dropSession() {
        discardSession.withLock { $0 = true }
        handleLock.withLock { _ in _ = mosquitto_disconnect(handle) }
        interrupt()
    }

    @discardableResult
    public func publish(_ topic: String, payload: String, qos: Int32 = 1, retain: Bool = false) throws(Failure) -> Int32 {
        try publish(topic, payload: Array(payload.utf8), qos: qos, retain: retain)
    }
}


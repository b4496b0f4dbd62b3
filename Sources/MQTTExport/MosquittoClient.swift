import CMosquitto
import Foundation
import Synchronization

/// A small libmosquitto client for the exporter: it connects in the background (libmosquitto's
/// own thread reconnects with backoff once a first attempt got under way; ``retry()`` makes
/// that first attempt when the broker was down at start), sets a retained last will, publishes and subscribes,
/// and hands everything that happens to ``events`` as values.
///
/// ```swift
/// let client = try MosquittoClient(options)
/// try client.start()
/// for await event in client.events { … }
/// ```
package final class MosquittoClient: @unchecked Sendable {
    // @unchecked: `handle` is a C pointer; libmosquitto guards the client with its own mutexes
    // once its network thread runs (mosquitto_loop_start in start()). Everything else is immutable or a Mutex.

    package struct Options: Sendable {
        var host: String
        var port: Int
        var clientID: String?
        var username: String?
        var password: String?
        var keepAlive: Int = 30
        /// Published retained by the broker when this client disappears.
        var will: (topic: String, payload: String)?

        package init(
            host: String, port: Int, clientID: String? = nil, username: String? = nil, password: String? = nil, keepAlive: Int = 30,
            will: (topic: String, payload: String)? = nil
        ) {
            self.host = host
            self.port = port
            self.clientID = clientID
            self.username = username
            self.password = password
            self.keepAlive = keepAlive
            self.will = will
        }
    }

    package enum Event: Sendable {
        case connected
        case disconnected(reason: String)
        case message(topic: String, payload: [UInt8], retained: Bool)
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    let options: Options
    package let events: AsyncStream<Event>
    package let continuation: AsyncStream<Event>.Continuation
    private let handle: OpaquePointer
    private let box: Unmanaged<Box>
    private let started = Mutex(false)

    final class Box: Sendable {
        let continuation: AsyncStream<Event>.Continuation
        init(_ c: AsyncStream<Event>.Continuation) { continuation = c }
    }

    static let initialise: Void = { mosquitto_lib_init() }()

    package init(_ options: Options) throws(Failure) {
        _ = Self.initialise
        self.options = options
        // Messages are never dropped silently: a bounded buffer would lose commands; the
        // exporter reads continuously and each message is small.
        (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let box = Unmanaged.passRetained(Box(continuation))
        guard let h = mosquitto_new(options.clientID, true, box.toOpaque()) else {
            box.release()
            throw Failure(description: "libmosquitto could not create a client")
        }
        handle = h
        self.box = box
        mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        if let username = options.username {
            mosquitto_username_pw_set(h, username, options.password)
        }
        if let will = options.will {
            let bytes = Array(will.payload.utf8)
            mosquitto_will_set(h, will.topic, Int32(bytes.count), bytes, 1, true)
        }
        mosquitto_reconnect_delay_set(h, 1, 30, true)
        mosquitto_connect_callback_set(h) { _, user, rc in
            let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
            if rc == 0 {
                box.continuation.yield(.connected)
            } else {
                box.continuation.yield(.disconnected(reason: String(cString: mosquitto_connack_string(rc))))
            }
        }
        mosquitto_disconnect_callback_set(h) { _, user, rc in
            let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
            box.continuation.yield(.disconnected(reason: rc == 0 ? "asked to" : String(cString: mosquitto_strerror(rc))))
        }
        mosquitto_message_callback_set(h) { _, user, message in
            guard let user, let message else { return }
            let box = Unmanaged<Box>.fromOpaque(user).takeUnretainedValue()
            let m = message.pointee
            let topic = String(cString: m.topic)
            let payload: [UInt8] =
                m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            box.continuation.yield(.message(topic: topic, payload: payload, retained: m.retain))
        }
    }

    deinit {
        mosquitto_destroy(handle)
        box.release()
        continuation.finish()
    }

    /// Starts connecting in the background and libmosquitto's network thread.
    ///
    /// - Returns: false when the broker could not be reached at all (nothing listens yet): call
    ///   ``retry()`` later. libmosquitto's thread reconnects by itself (with backoff) only once a
    ///   first attempt got under way; after a refused first attempt it waits for one.
    @discardableResult
    package func start() throws(Failure) -> Bool {
        let first = started.withLock { s in
            defer { s = true }
            return !s
        }
        guard first else { return true }
        // mosquitto_loop_start marks the client threaded itself (and refuses one already marked).
        let rc = mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
        if rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_ERRNO.rawValue {
            throw Failure(description: "cannot connect to \(options.host):\(options.port): \(String(cString: mosquitto_strerror(rc)))")
        }
        let loop = mosquitto_loop_start(handle)
        guard loop == MOSQ_ERR_SUCCESS.rawValue else {
            throw Failure(description: "libmosquitto could not start its network thread: \(String(cString: mosquitto_strerror(loop)))")
        }
        if rc == MOSQ_ERR_ERRNO.rawValue {
            continuation.yield(.disconnected(reason: "\(options.host):\(options.port) cannot be reached yet"))
            return false
        }
        return true
    }

    /// Another first attempt after ``start()`` returned false; true once one is under way
    /// (from then on libmosquitto's thread connects and reconnects by itself).
    package func retry() -> Bool {
        mosquitto_reconnect_async(handle) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Publishes; false when the client is not connected (the exporter republishes on connect).
    @discardableResult
    package func publish(_ topic: String, _ payload: [UInt8], retain: Bool, qos: Int32 = 1) -> Bool {
        payload.withUnsafeBytes { p in
            mosquitto_publish(handle, nil, topic, Int32(p.count), p.baseAddress, qos, retain) == MOSQ_ERR_SUCCESS.rawValue
        }
    }

    @discardableResult
    package func subscribe(_ pattern: String, qos: Int32 = 1) -> Bool {
        mosquitto_subscribe(handle, nil, pattern, qos) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Disconnects cleanly (no last will) and stops the network thread.
    package func stop() {
        let wasStarted = started.withLock { s in
            defer { s = false }
            return s
        }
        guard wasStarted else { return }
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    /// ``stop()`` from async code: joining libmosquitto's thread happens on a thread of its own,
    /// never on one of the concurrency pool's few threads.
    package func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "hearth.mosquitto.stop").async {
                self.stop()
                done.resume()
            }
        }
    }
}

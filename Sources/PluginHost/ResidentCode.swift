#if canImport(Glibc)
    import Glibc
#endif

/// Gives back the resident pages of the process's code: the read-only, file-backed mappings of
/// the executable and its shared libraries (text, read-only data) that nobody wrote to.
///
/// hearthd touches most of its code once, while it starts (plugins, storage, the API, the
/// bridges), and little of it afterwards; those pages stay in its RSS although they are clean
/// copies of files. `MADV_DONTNEED` drops them from the process: they stay in the page cache,
/// and a page that is used again faults back in from there (no disk read while the file is
/// cached). Writable mappings, private mappings with written (anonymous) pages — the relocated
/// `RELRO` segments among them —, anonymous memory, the stack, `[vdso]` and `[vvar]` are never
/// touched.
///
/// ```swift
/// let released = ResidentCode.release()
/// logger.debug("released \(released.bytes / 1024) KiB of code in \(released.mappings) mappings")
/// ```
public enum ResidentCode {
    /// One mapping of `/proc/self/smaps` as far as this needs it.
    public struct Mapping: Hashable, Sendable {
        public var start: UInt
        public var end: UInt
        /// `rwxp`-style permissions.
        public var permissions: String
        public var path: String
        /// Resident bytes (`Rss:`).
        public var resident: Int
        /// Bytes of private copies of written pages (`Anonymous:`). Not `Private_Dirty:`: that also
        /// counts page-cache pages of a file not yet written back (a binary just copied), which
        /// the page cache keeps when the process lets go of them. Nil when smaps did not say.
        public var written: Int?

        /// A clean, read-only copy of a file: safe to drop from the process.
        public var isReleasable: Bool {
            let p = Array(permissions.utf8)
            return p.count == 4 && p[0] == UInt8(ascii: "r") && p[1] == UInt8(ascii: "-")
                && path.hasPrefix("/") && !path.hasSuffix(" (deleted)") && written == 0 && resident > 0 && end > start
        }
    }

    /// What one call released.
    public struct Released: Hashable, Sendable {
        /// Mappings given back.
        public var mappings: Int
        /// Their resident bytes before the call.
        public var bytes: Int
        /// The files they map (each once, in order).
        public var files: [String]
    }

    /// Drops the resident pages of every releasable mapping of this process (see the type).
    /// Reads `/proc/self/smaps`; does nothing when it cannot be read.
    @discardableResult
    public static func release() -> Released {
        guard let text = readFile("/proc/self/smaps") else { return Released(mappings: 0, bytes: 0, files: []) }
        var released = Released(mappings: 0, bytes: 0, files: [])
        for m in mappings(smaps: text) where m.isReleasable {
            guard let address = UnsafeMutableRawPointer(bitPattern: m.start) else { continue }
            if madvise(address, Int(m.end - m.start), MADV_DONTNEED) == 0 {
                released.mappings += 1
                released.bytes += m.resident
                if released.files.last != m.path, !released.files.contains(m.path) { released.files.append(m.path) }
            }
        }
        return released
    }

    /// Parses `/proc/PID/smaps`: a header line per mapping (`start-end perms offset dev inode
    /// path`), then `Key: value kB` lines.
    public static func mappings(smaps: String) -> [Mapping] {
        var out: [Mapping] = []
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                guard !out.isEmpty, fields.count >= 2, let kib = Int(fields[1]) else { continue }
                switch first {
                case "Rss:": out[out.count - 1].resident = kib * 1024
                case "Anonymous:": out[out.count - 1].written = kib * 1024
                default: break
                }
                continue
            }
            let range = first.split(separator: "-")
            guard fields.count >= 5, range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16)
            else { continue }
            let path = fields.count == 6 ? String(fields[5]).trimmingLeadingSpaces : ""
            out.append(Mapping(start: start, end: end, permissions: String(fields[1]), path: path, resident: 0, written: nil))
        }
        return out
    }

    /// A `/proc` file's text (its size reads as 0, so read until the end).
    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}

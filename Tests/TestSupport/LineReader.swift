public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a child process's output `pipe` line by line until the child exits (EOF): `line` for
/// each complete line, then `end`.
///
/// Blocking reads on a thread of its own: a dispatch-source readability handler races with the
/// pipe's teardown.
public func readLines(from pipe: Pipe, line: @escaping @Sendable (String) -> Void, end: @escaping @Sendable () -> Void) {
    let reader = Thread {
        let fd = pipe.fileHandleForReading.fileDescriptor
        var pending = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            pending += String(decoding: buffer[0..<n], as: UTF8.self)
            var parts = pending.components(separatedBy: "\n")
            pending = parts.removeLast()
            for text in parts { line(text) }
        }
        end()
    }
    reader.start()
}

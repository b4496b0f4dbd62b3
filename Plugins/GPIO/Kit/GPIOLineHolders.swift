import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A process that holds GPIO lines, as `/proc` shows it.
public struct GPIOLineHolder: Sendable, Hashable {
    public var pid: Int32
    /// The program: the last component of its `argv[0]`, else its `comm`.
    public var command: String
    /// The lines the kernel says this process holds, by chip (`gpiochip0`): v2 line requests
    /// print `gpio-chip:` and `gpio-line:` in `/proc/PID/fdinfo/FD` from Linux 6.7 on.
    public var lines: [String: Set<Int>]
    /// Line requests whose lines the kernel does not name: the v1 uAPI's (libgpiod 1.x, which
    /// the GPIO plugin and Debian 12's gpioset/gpiomon use), and v2 requests before Linux 6.7.
    public var unnamedRequests: Int
    /// The chips (`gpiochip0`) this process has open; libgpiod 1.x keeps a chip open while it
    /// holds lines of it.
    public var openChips: Set<String>

    public init(pid: Int32, command: String, lines: [String: Set<Int>] = [:], unnamedRequests: Int = 0, openChips: Set<String> = []) {
        self.pid = pid
        self.command = command
        self.lines = lines
        self.unnamedRequests = unnamedRequests
        self.openChips = openChips
    }
}

/// Which processes hold GPIO lines: every `/proc/PID/fd` entry that is a GPIO line request
/// (`anon_inode:gpio-line`, v1's `gpio-linehandle` and `gpio-event`) or a chip (`/dev/gpiochipN`).
///
/// ```swift
/// let scan = GPIOLineHolders.scan()
/// switch scan.holder(chip: "gpiochip0", offset: 17, consumer: "gpiomon") { … }
/// ```
public struct GPIOLineHolders: Sendable {
    public var holders: [GPIOLineHolder]
    /// Processes whose file descriptors this user may not read (another user's, without root).
    public var unreadable: Int

    public init(holders: [GPIOLineHolder], unreadable: Int = 0) {
        self.holders = holders
        self.unreadable = unreadable
    }

    /// The anonymous inodes of line requests: v2 (`gpio-line`), v1 handles and v1 event requests.
    static let requestLinks: Set<String> = ["anon_inode:gpio-line", "anon_inode:gpio-linehandle", "anon_inode:gpio-event"]

    /// Reads `proc` (a `/proc` file system), leaving out the process `excluding` (default: the caller).
    public static func scan(proc: String = "/proc", excluding: Int32? = nil) -> GPIOLineHolders {
        let excluding = excluding ?? getpid()
        let fm = FileManager.default
        var holders: [GPIOLineHolder] = []
        var unreadable = 0
        for entry in (try? fm.contentsOfDirectory(atPath: proc)) ?? [] {
            guard let pid = Int32(entry), pid != excluding else { continue }
            let fdDirectory = "\(proc)/\(entry)/fd"
            let fds: [String]
            do {
                fds = try fm.contentsOfDirectory(atPath: fdDirectory)
            } catch {
                // EACCES: another user's process; ENOENT: it has just ended.
                if access(fdDirectory, F_OK) == 0 { unreadable += 1 }
                continue
            }
            var holder = GPIOLineHolder(pid: pid, command: "")
            for fd in fds {
                guard let target = try? fm.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(fd)") else { continue }
                if requestLinks.contains(target) {
                    let info = (try? String(contentsOfFile: "\(proc)/\(entry)/fdinfo/\(fd)", encoding: .utf8)) ?? ""
                    if let named = fdinfoLines(info) {
                        holder.lines[named.chip, default: []].formUnion(named.lines)
                    } else {
                        holder.unnamedRequests += 1
                    }
                } else if target.hasPrefix("/dev/gpiochip") {
                    holder.openChips.insert(String(target.dropFirst("/dev/".count)))
                }
            }
            guard !holder.lines.isEmpty || holder.unnamedRequests > 0 else { continue }
            holder.command = command(proc: proc, pid: entry)
            holders.append(holder)
        }
        return GPIOLineHolders(holders: holders.sorted { $0.pid < $1.pid }, unreadable: unreadable)
    }

    static func command(proc: String, pid: String) -> String {
        if let cmdline = FileManager.default.contents(atPath: "\(proc)/\(pid)/cmdline"),
            let argv0 = cmdline.split(separator: 0, omittingEmptySubsequences: false).first, !argv0.isEmpty
        {
            return (String(decoding: argv0, as: UTF8.self) as NSString).lastPathComponent
        }
        return ((try? String(contentsOfFile: "\(proc)/\(pid)/comm", encoding: .utf8)) ?? "pid \(pid)")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The chip and lines in a line request's fdinfo (Linux ≥ 6.7, v2 requests):
    /// `gpio-chip:\tgpiochip0` then one `gpio-line:\t17` per line; nil when it names none.
    public static func fdinfoLines(_ text: String) -> (chip: String, lines: [Int])? {
        var chip: String?
        var lines: [Int] = []
        for row in text.split(separator: "\n") {
            let parts = row.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            switch parts[0] {
            case "gpio-chip": chip = value
            case "gpio-line": if let n = Int(value) { lines.append(n) }
            default: continue
            }
        }
        guard let chip, !lines.isEmpty else { return nil }
        return (chip, lines)
    }

    /// Who holds a line that the kernel reports in use.
    public enum Verdict: Sendable, Hashable {
        /// The kernel names this process as holding the line.
        case process(GPIOLineHolder)
        /// The kernel does not say which lines a request holds, but only this process holds
        /// unnamed requests on the chip (or only it runs under the consumer's name).
        case likely(GPIOLineHolder)
        /// One of these processes (the kernel does not say which).
        case oneOf([GPIOLineHolder])
        /// No process holds it: the kernel itself does (a driver, or a device-tree hog).
        case kernel
        /// No visible process holds it, but some processes' file descriptors were not readable.
        case unknown
    }

    /// The GPIO plugin's words for a verdict, after "held by 'consumer'": ` (gpiomon, pid 153)`.
    public static func logPhrase(_ verdict: Verdict) -> String {
        switch verdict {
        case .process(let h), .likely(let h): " (\(h.command), pid \(h.pid))"
        case .oneOf(let candidates): " (one of " + candidates.map { "\($0.command), pid \($0.pid)" }.joined(separator: "; ") + ")"
        case .kernel: " (no process: the kernel, for a driver or a device-tree overlay)"
        case .unknown: " (a process hidden from this user; 'sudo hearth doctor' names it)"
        }
    }

    /// Who holds `offset` of `chip` (the kernel's chip name, `gpiochip0`), which the kernel
    /// reports in use by `consumer`.
    public func holder(chip: String, offset: Int, consumer: String) -> Verdict {
        if let named = holders.first(where: { $0.lines[chip]?.contains(offset) == true }) { return .process(named) }
        let unnamed = holders.filter { $0.unnamedRequests > 0 }
        // libgpiod keeps the chip open while it holds lines of it; a program using the ioctls
        // itself may have closed it, so without such a process, those with no chip open remain.
        let onChip = unnamed.filter { $0.openChips.contains(chip) }
        let candidates = onChip.isEmpty ? unnamed.filter(\.openChips.isEmpty) : onChip
        switch candidates.count {
        case 0: return unreadable == 0 ? .kernel : .unknown
        case 1: return .likely(candidates[0])
        default:
            // The GPIO plugin's consumers are `hearth:<device>`; tools name themselves.
            let byName = candidates.filter {
                $0.command == consumer || (consumer.hasPrefix("hearth:") && $0.command == "hearthd")
            }
            return byName.count == 1 ? .likely(byName[0]) : .oneOf(candidates)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The command line both Matter fuzz executables take: `[--count N] [--seed S]`.
public struct FuzzCommandLine: Sendable {
    public var count = 1_000_000
    public var seed: UInt64 = 0x4D61_7474_6572

    /// Parses the process's arguments; prints the usage and exits 2 on anything else.
    public init(tool: String, arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            switch flag {
            case "--count": count = Int(rest.popFirst() ?? "") ?? count
            case "--seed": seed = UInt64(rest.popFirst() ?? "") ?? seed
            default:
                print("usage: \(tool) [--count N] [--seed S]")
                exit(2)
            }
        }
    }
}

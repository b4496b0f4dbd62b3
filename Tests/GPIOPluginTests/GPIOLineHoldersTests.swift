import Foundation
import GPIOKit
import Testing

/// Who holds a busy line: the `/proc` scan over a staged tree in the kernel's formats, and the
/// verdict for each way the kernel can (or cannot) name a request's lines.
@Suite struct GPIOLineHoldersTests {
    @Test func fdinfo_ofAV2LineRequest_namesItsChipAndLines() throws {
        // Linux ≥ 6.7, gpiolib-cdev's linereq_show_fdinfo after the generic fields.
        let text = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\ngpio-chip:\tgpiochip0\ngpio-line:\t17\ngpio-line:\t27\n"
        let named = try #require(GPIOLineHolders.fdinfoLines(text))
        #expect(named.chip == "gpiochip0")
        #expect(named.lines == [17, 27])
        #expect(GPIOLineHolders.fdinfoLines("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n") == nil, "v1 requests and older kernels name nothing")
    }

    @Test func scan_readsLineRequestsAndOpenChips_fromProc() throws {
        let proc = NSTemporaryDirectory() + "gpio-proc-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: proc) }
        let fm = FileManager.default
        func process(_ pid: Int, argv0: String, fds: [Int: (link: String, info: String)]) throws {
            try fm.createDirectory(atPath: "\(proc)/\(pid)/fd", withIntermediateDirectories: true)
            try fm.createDirectory(atPath: "\(proc)/\(pid)/fdinfo", withIntermediateDirectories: true)
            try Data((argv0 + "\0--flag\0").utf8).write(to: URL(fileURLWithPath: "\(proc)/\(pid)/cmdline"))
            for (fd, entry) in fds {
                try fm.createSymbolicLink(atPath: "\(proc)/\(pid)/fd/\(fd)", withDestinationPath: entry.link)
                try entry.info.write(toFile: "\(proc)/\(pid)/fdinfo/\(fd)", atomically: true, encoding: .utf8)
            }
        }
        try process(100, argv0: "/usr/bin/gpiomon", fds: [3: ("/dev/gpiochip0", "pos:\t0\n"), 4: ("anon_inode:gpio-event", "pos:\t0\n")])
        try process(200, argv0: "/usr/bin/hearthd", fds: [5: ("anon_inode:gpio-line", "gpio-chip:\tgpiochip1\ngpio-line:\t3\n")])
        try process(300, argv0: "bash", fds: [0: ("/dev/pts/0", "pos:\t0\n")])
        try process(400, argv0: "/usr/bin/gpioset", fds: [3: ("/dev/gpiochip0", "pos:\t0\n"), 4: ("anon_inode:gpio-linehandle", "")])
        try fm.createDirectory(atPath: "\(proc)/self", withIntermediateDirectories: true)

        let scan = GPIOLineHolders.scan(proc: proc, excluding: 400)
        #expect(scan.holders == [
            GPIOLineHolder(pid: 100, command: "gpiomon", unnamedRequests: 1, openChips: ["gpiochip0"]),
            GPIOLineHolder(pid: 200, command: "hearthd", lines: ["gpiochip1": [3]]),
        ])
        #expect(scan.unreadable == 0)
    }

    static let gpiomon = GPIOLineHolder(pid: 100, command: "gpiomon", unnamedRequests: 1, openChips: ["gpiochip0"])
    static let gpioset = GPIOLineHolder(pid: 101, command: "gpioset", unnamedRequests: 1, openChips: ["gpiochip0"])
    static let hearthd = GPIOLineHolder(pid: 200, command: "hearthd", lines: ["gpiochip0": [17]], openChips: ["gpiochip0"])
    static let raw = GPIOLineHolder(pid: 300, command: "raw-ioctl", unnamedRequests: 1)
    static let elsewhere = GPIOLineHolder(pid: 400, command: "relayd", unnamedRequests: 2, openChips: ["gpiochip1"])

    @Test func verdict_namesTheProcess_whenTheKernelNamesTheLine() {
        let holders = GPIOLineHolders(holders: [Self.gpiomon, Self.hearthd])
        #expect(holders.holder(chip: "gpiochip0", offset: 17, consumer: "hearth:door") == .process(Self.hearthd))
    }

    @Test func verdict_isLikely_theOnlyUnnamedHolderOfTheChip_orTheOneNamedLikeTheConsumer() {
        #expect(GPIOLineHolders(holders: [Self.gpiomon, Self.elsewhere]).holder(chip: "gpiochip0", offset: 4, consumer: "x") == .likely(Self.gpiomon))
        let two = GPIOLineHolders(holders: [Self.gpiomon, Self.gpioset])
        #expect(two.holder(chip: "gpiochip0", offset: 4, consumer: "gpioset") == .likely(Self.gpioset))
        #expect(two.holder(chip: "gpiochip0", offset: 4, consumer: "someone") == .oneOf([Self.gpiomon, Self.gpioset]))
        // A request whose process closed its chip: only when no process has the chip open.
        #expect(GPIOLineHolders(holders: [Self.raw, Self.elsewhere]).holder(chip: "gpiochip0", offset: 4, consumer: "x") == .likely(Self.raw))
    }

    @Test func verdict_isTheKernel_whenNoProcessCanHoldIt_unlessSomeAreHidden() {
        // hearthd's request is named and holds another line; relayd has only another chip open.
        let holders = GPIOLineHolders(holders: [Self.hearthd, Self.elsewhere])
        #expect(holders.holder(chip: "gpiochip0", offset: 5, consumer: "spi0 CS0") == .kernel)
        #expect(GPIOLineHolders(holders: [], unreadable: 3).holder(chip: "gpiochip0", offset: 5, consumer: "x") == .unknown)
    }
}

extension GPIOLineHoldersTests {
    @Test func logPhrase_namesTheProcess_orSaysWhyItCannot() {
        #expect(GPIOLineHolders.logPhrase(.process(Self.hearthd)) == " (hearthd, pid 200)")
        #expect(GPIOLineHolders.logPhrase(.likely(Self.gpiomon)) == " (gpiomon, pid 100)")
        #expect(GPIOLineHolders.logPhrase(.oneOf([Self.gpiomon, Self.gpioset])) == " (one of gpiomon, pid 100; gpioset, pid 101)")
        #expect(GPIOLineHolders.logPhrase(.kernel).contains("the kernel"))
        #expect(GPIOLineHolders.logPhrase(.unknown).contains("sudo hearth doctor"))
    }
}

import Foundation
import Testing

/// `hearth doctor` (the real binary) on staged faults: each diagnosis names the problem.
@Suite struct DoctorTests {
    /// A staged machine: passwd/group files, a /dev folder, a plugin folder, a database folder.
    struct Machine {
        let dir: Scratch

        init(groups: String = "gpio:x:997:hearth\n", chips: [String] = ["gpiochip0"], plugins: [String] = ["DemoPlugin"]) throws {
            dir = try Scratch("hearth-doctor")
            try "root:x:0:0:root:/root:/bin/sh\nhearth:x:990:990::/var/lib/hearth:/usr/sbin/nologin\nbob:x:1000:1000::/home/bob:/bin/sh\n"
                .write(toFile: dir.at("passwd"), atomically: true, encoding: .utf8)
            try groups.write(toFile: dir.at("group"), atomically: true, encoding: .utf8)
            let fm = FileManager.default
            for d in ["dev", "plugins", "state"] { try fm.createDirectory(atPath: dir.at(d), withIntermediateDirectories: true) }
            // A stand-in chip node: a file the user can open (the real nodes are character devices).
            for c in chips { _ = fm.createFile(atPath: dir.at("dev/\(c)"), contents: nil) }
            for p in plugins { try fm.copyItem(atPath: "\(buildDirectory)/lib\(p).so", toPath: dir.at("plugins/lib\(p).so")) }
        }

        func doctor(_ extra: [String] = [], user: String = "hearth", database: String? = nil) async throws -> Run {
            try await run(
                buildDirectory + "/hearth",
                ["doctor", "--user", user, "--dev", dir.at("dev"), "--group-file", dir.at("group"), "--passwd-file", dir.at("passwd"),
                    "--plugins", dir.at("plugins"), "--database", database ?? dir.at("state/hearth.sqlite")] + extra,
                in: dir.path)
        }
    }

    func line(_ r: Run, _ check: String) -> String {
        r.stdout.split(separator: "\n").first { $0.contains(" \(check): ") }.map(String.init) ?? "(no \(check) line in:\n\(r.stdout)\(r.stderr))"
    }

    @Test func healthy_machine_passes() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let broker = try await Broker()
        let r = try await m.doctor(["--broker", "127.0.0.1:\(broker.port)"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(!r.stdout.contains("PROBLEM"))
        #expect(line(r, "mqtt broker").hasPrefix("ok"))
        #expect(line(r, "plugin libDemoPlugin.so").hasPrefix("ok"))
    }

    @Test func user_not_in_gpio_group() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let r = try await m.doctor(user: "bob")
        #expect(r.status == 1)
        #expect(line(r, "gpio group").contains("PROBLEM  gpio group: bob is not in the gpio group"))
        #expect(line(r, "gpio group").contains("usermod -aG gpio bob"))
    }

    @Test func no_gpio_group_at_all() async throws {
        let m = try Machine(groups: "users:x:100:\n")
        defer { m.dir.remove() }
        let r = try await m.doctor()
        #expect(line(r, "gpio group").contains("there is no 'gpio' group"))
    }

    @Test func no_gpio_chip() async throws {
        let m = try Machine(chips: [])
        defer { m.dir.remove() }
        let r = try await m.doctor()
        #expect(r.status == 1)
        #expect(line(r, "gpio chips").contains("PROBLEM  gpio chips: no \(m.dir.at("dev"))/gpiochip* device"))
    }

    @Test func broker_unreachable() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let port = try Broker.freeLoopbackPort()
        let r = try await m.doctor(["--broker", "127.0.0.1:\(port)"])
        #expect(r.status == 1)
        #expect(line(r, "mqtt broker").contains("cannot reach the broker at 127.0.0.1:\(port): connection refused"))
    }

    @Test func broker_refuses_credentials() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let broker = try await Broker(users: ["hearth": "right"])
        let wrong = try await m.doctor(["--broker", "127.0.0.1:\(broker.port)", "--broker-username", "hearth", "--broker-password", "wrong"])
        #expect(wrong.status == 1)
        #expect(line(wrong, "mqtt broker").contains("PROBLEM"))
        #expect(line(wrong, "mqtt broker").contains("refused the user name or password") || line(wrong, "mqtt broker").contains("not authorized"))
        let anonymous = try await m.doctor(["--broker", "127.0.0.1:\(broker.port)"])
        #expect(line(anonymous, "mqtt broker").contains("PROBLEM"))
        let right = try await m.doctor(["--broker", "127.0.0.1:\(broker.port)", "--broker-username", "hearth", "--broker-password", "right"])
        #expect(line(right, "mqtt broker").hasPrefix("ok"), "\(right.stdout)")
    }

    @Test func plugin_built_for_another_abi() async throws {
        let m = try Machine(plugins: ["DemoPlugin", "WrongABIPlugin"])
        defer { m.dir.remove() }
        let r = try await m.doctor()
        #expect(r.status == 1)
        #expect(line(r, "plugin libWrongABIPlugin.so").contains("PROBLEM"))
        #expect(line(r, "plugin libWrongABIPlugin.so").contains("built for another plugin ABI"))
        #expect(line(r, "plugin libDemoPlugin.so").hasPrefix("ok"))
    }

    @Test func database_not_writable() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        // A file where the state folder should be (root may write anywhere, so permissions alone
        // would not stage the fault when the tests run as root).
        _ = FileManager.default.createFile(atPath: m.dir.at("blocked"), contents: Data("x".utf8))
        let r = try await m.doctor(database: m.dir.at("blocked/hearth.sqlite"))
        #expect(r.status == 1)
        #expect(line(r, "database").contains("PROBLEM  database: \(m.dir.at("blocked")) is a file, not a folder"))
        let missing = try await m.doctor(database: m.dir.at("nowhere/hearth.sqlite"))
        #expect(line(missing, "database").contains("does not exist"))
    }
}

import Foundation
import Testing

/// `hearth doctor` (the real binary) on staged faults: each diagnosis names the problem.
@Suite struct DoctorTests {
    /// A staged machine: passwd/group files, a /dev folder, a plugin folder, a database folder.
    struct Machine {
        let dir: Scratch

        /// The GPIO and MQTT plugins make their own checks (`DriverPlugin.doctor`): doctor asks
        /// the plugins it finds in the folder.
        init(
            groups: String = "gpio:x:997:hearth\n", chips: [String] = ["gpiochip0"], plugins: [String] = ["DemoPlugin", "GPIOPlugin", "MQTTPlugin"]
        ) throws {
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

        /// Runs doctor on a hearth.yaml with `yaml` in `etc/` (plus `extra` flags): the
        /// database, broker, plugin folders and GPIO lines come from the file.
        func doctor(yaml: String, _ extra: [String] = [], explicit: Bool = true) async throws -> Run {
            try FileManager.default.createDirectory(atPath: dir.at("etc"), withIntermediateDirectories: true)
            try yaml.write(toFile: dir.at("etc/hearth.yaml"), atomically: true, encoding: .utf8)
            return try await run(
                buildDirectory + "/hearth",
                (explicit ? ["doctor", "--config", dir.at("etc/hearth.yaml")] : ["doctor"])
                    + ["--user", "hearth", "--dev", dir.at("dev"), "--group-file", dir.at("group"), "--passwd-file", dir.at("passwd")] + extra,
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
        // Which libgpiod the GPIO plugin will load (this machine: Debian 12's libgpiod 1.6), and the kernel's uAPI.
        #expect(line(r, "gpio library").hasPrefix("ok       gpio library: libgpiod "), "\(r.stdout)")
        #expect(line(r, "gpio library").contains(" API, libgpiod.so.") && line(r, "gpio library").contains("kernel GPIO uAPI: unknown (no "), "\(r.stdout)")
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
        let r = try await m.doctor(["--broker", "127.0.0.1:1"])
        #expect(!r.stdout.contains("gpio group"), "no GPIO plugin in the folder: no GPIO checks")
        #expect(line(r, "mqtt broker").hasPrefix("skipped  mqtt broker: not checked: the MQTT plugin, which makes this check, does not load"))
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

    // MARK: Reading hearth.yaml

    @Test func reads_the_database_broker_credentials_and_plugin_folders_from_hearth_yaml() async throws {
        let m = try Machine(plugins: ["DemoPlugin", "GPIOPlugin", "MQTTPlugin", "WrongABIPlugin"])
        defer { m.dir.remove() }
        let broker = try await Broker(users: ["hearth": "right"])
        _ = FileManager.default.createFile(atPath: m.dir.at("blocked"), contents: Data("x".utf8))
        let yaml = """
            storage:
              database: ../blocked/hearth.sqlite   # relative to this file, as hearthd reads it
            plugins:
              directories: [\(m.dir.at("plugins"))]
              mqtt:
                broker: { host: 127.0.0.1, port: \(broker.port), username: hearth, password: right }
            """
        let r = try await m.doctor(yaml: yaml)
        #expect(r.status == 1)
        #expect(line(r, "config") == "ok       config: read \(m.dir.at("etc/hearth.yaml"))")
        #expect(line(r, "mqtt broker") == "ok       mqtt broker: 127.0.0.1:\(broker.port) accepted the connection as hearth")
        #expect(line(r, "database").contains("PROBLEM  database: \(m.dir.at("etc/../blocked")) is a file, not a folder"))
        #expect(line(r, "plugin libWrongABIPlugin.so").contains("built for another plugin ABI"))
        #expect(line(r, "plugin libDemoPlugin.so").hasPrefix("ok"))
        // No GPIO plugin in the file: the gpio group and chips do not matter.
        #expect(line(r, "gpio group").hasPrefix("skipped"))
        #expect(line(r, "gpio lines") == "skipped  gpio lines: not checked: the gpio plugin is not configured")
    }

    @Test func flags_override_hearth_yaml() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let broker = try await Broker(users: ["hearth": "right"])
        let yaml = """
            storage: { database: \(m.dir.at("nowhere/hearth.sqlite")) }
            plugins:
              directories: [\(m.dir.at("nowhere"))]
              mqtt: { broker: { host: 127.0.0.1, port: \(broker.port), username: hearth, password: wrong } }
            """
        let fromFile = try await m.doctor(yaml: yaml)
        #expect(line(fromFile, "database").contains("does not exist"))
        #expect(line(fromFile, "plugins").contains("no plugin .so in \(m.dir.at("nowhere"))"))
        // The MQTT plugin makes the broker check: without its .so there is none, and doctor says so.
        #expect(!fromFile.stdout.contains("mqtt broker"))
        #expect(line(fromFile, "plugin mqtt").hasPrefix("PROBLEM  plugin mqtt: \(m.dir.at("etc/hearth.yaml")) configures plugin 'mqtt', but no plugin"))
        let pluginsFlag = try await m.doctor(yaml: yaml, ["--plugins", m.dir.at("plugins")])
        #expect(
            line(pluginsFlag, "mqtt broker").hasPrefix("PROBLEM  mqtt broker: the broker at 127.0.0.1:\(broker.port) "),
            "the file's wrong password was sent")
        let overridden = try await m.doctor(
            yaml: yaml, ["--broker-password", "right", "--database", m.dir.at("state/hearth.sqlite"), "--plugins", m.dir.at("plugins")])
        #expect(overridden.status == 0, "\(overridden.stdout)\(overridden.stderr)")
        #expect(line(overridden, "mqtt broker").hasPrefix("ok"))
    }

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/etc/hearth/hearth.yaml"), "an installed /etc/hearth/hearth.yaml comes first"))
    func without_config_flag_reads_etc_hearth_yaml_in_the_current_folder() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let r = try await m.doctor(yaml: "storage: { database: \(m.dir.at("state/hearth.sqlite")) }\n", explicit: false)
        #expect(line(r, "config") == "ok       config: read etc/hearth.yaml")
        #expect(line(r, "database") == "ok       database: \(m.dir.at("state/hearth.sqlite")) is writable")
    }

    @Test func an_invalid_hearth_yaml_is_a_problem_naming_the_line() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let r = try await m.doctor(yaml: "log:\n  level: info\nplugin:\n  mqtt: {}\n")
        #expect(r.status == 1)
        #expect(line(r, "config").hasPrefix("PROBLEM  config: \(m.dir.at("etc/hearth.yaml")):3: plugin: unknown key"))
        // The GPIO plugin reads its own section (its doctor check), from the staged plugin folder.
        let gpio = try await m.doctor(
            yaml: "plugins:\n  gpio:\n    lines:\n      - { chip: gpiochip0, line: 17, role: contact, activelow: true }\n",
            ["--plugins", m.dir.at("plugins")])
        #expect(line(gpio, "gpio lines").hasPrefix("PROBLEM  gpio lines: "))
        #expect(line(gpio, "gpio lines").contains("did you mean 'active-low'?"))
    }

    @Test func simulated_gpio_lines_need_no_chip_or_group() async throws {
        // The shipped configuration: every line on the simulated chip sim0.
        let m = try Machine(groups: "users:x:100:\n", chips: [])
        defer { m.dir.remove() }
        let r = try await run(
            buildDirectory + "/hearth",
            ["doctor", "--config", repositoryRoot + "/etc/hearth.yaml", "--dev", m.dir.at("dev"), "--group-file", m.dir.at("group"),
                "--passwd-file", m.dir.at("passwd"), "--database", m.dir.at("state/hearth.sqlite"), "--plugins", m.dir.at("plugins")],
            in: m.dir.path)
        #expect(line(r, "gpio group").hasPrefix("skipped  gpio group: not needed: "))
        #expect(line(r, "gpio chips").hasPrefix("skipped  gpio chips: not needed: "))
        #expect(line(r, "gpio lines") == "skipped  gpio lines: nothing to check: every configured line is on a simulated chip (sim0)")
    }

    @Test func a_gpio_line_on_a_chip_that_is_not_there() async throws {
        let m = try Machine(chips: [])
        defer { m.dir.remove() }
        let yaml = """
            plugins:
              gpio:
                simulated: [{ chip: sim0, lines: [DOOR] }]
                lines:
                  - { id: front-door, chip: gpiochip3, line: GPIO17, role: contact }
                  - { id: bell, chip: sim0, line: DOOR, role: button }
            """
        let r = try await m.doctor(yaml: yaml, ["--plugins", m.dir.at("plugins")])
        #expect(r.status == 1)
        // Real chips are wanted: the group and the chips are checked again.
        #expect(line(r, "gpio chips").hasPrefix("PROBLEM"))
        #expect(line(r, "gpio line gpiochip3:GPIO17 (front-door)").contains("PROBLEM  gpio line gpiochip3:GPIO17 (front-door): GPIO chip "))
        #expect(line(r, "gpio line gpiochip3:GPIO17 (front-door)").contains("not found"))
        #expect(!r.stdout.contains("(bell)"), "lines on simulated chips are not checked")
    }

    // MARK: The plugins' own checks

    @Test func a_plugin_without_checks_gets_none_and_a_disabled_plugin_is_not_asked() async throws {
        let m = try Machine()
        defer { m.dir.remove() }
        let yaml = """
            storage: { database: \(m.dir.at("state/hearth.sqlite")) }
            plugins:
              directories: [\(m.dir.at("plugins"))]
              demo: {}
              gpio: { enabled: false }
            """
        let r = try await m.doctor(yaml: yaml)
        // The Demo plugin keeps DriverPlugin.doctor's default: no findings of its own.
        #expect(!r.stdout.split(separator: "\n").contains { $0.dropFirst(9).hasPrefix("demo") }, "\(r.stdout)")
        #expect(line(r, "plugin libDemoPlugin.so").hasPrefix("ok"))
        #expect(line(r, "plugin gpio") == "skipped  plugin gpio: disabled (enabled: false) in \(m.dir.at("etc/hearth.yaml"))")
        #expect(!r.stdout.contains("gpio group"), "a disabled plugin makes no checks")
        // The MQTT plugin is in the folder but not configured: it says what it did not check.
        #expect(line(r, "mqtt broker").hasPrefix("skipped  mqtt broker: not checked: "), "\(r.stdout)")
    }
}

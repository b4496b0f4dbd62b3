import Foundation
import Testing

/// `scripts/install` into a scratch DESTDIR, with the products of this build.
@Suite struct InstallLayoutTests {
    static func install(into dest: String, prefix: String = "/usr", bundleRuntime: Bool = false) async throws -> Run {
        try await run(
            "/bin/bash", [repositoryRoot + "/scripts/install"],
            environment: [
                "DESTDIR": dest, "PREFIX": prefix, "SKIP_BUILD": "1", "BUILD_DIR": buildDirectory,
                "BUNDLE_RUNTIME": bundleRuntime ? "1" : "0",
            ],
            in: repositoryRoot)
    }

    @Test func installs_binaries_library_plugins_config_unit_and_state_directory() async throws {
        let root = try Scratch("hearth-install")
        defer { root.remove() }
        let r = try await Self.install(into: root.path, bundleRuntime: true)
        #expect(r.status == 0, "\(r.stderr)")
        let fm = FileManager.default
        for file in [
            "usr/bin/hearthd", "usr/bin/hearth", "usr/lib/libPluginKit.so", "usr/lib/hearth/plugins/libDemoPlugin.so",
            "usr/lib/hearth/plugins/libGPIOPlugin.so", "usr/lib/hearth/plugins/libMQTTPlugin.so", "etc/hearth/hearth.yaml",
            "usr/lib/systemd/system/hearthd.service", "usr/lib/hearth/runtime/libswiftCore.so",
            "usr/lib/libHearthWebhook.so", "usr/lib/hearth/runtime/libFoundationNetworking.so",
        ] {
            #expect(fm.fileExists(atPath: root.at(file)), "\(file) is missing")
        }
        #expect(fm.isExecutableFile(atPath: root.at("usr/bin/hearthd")))
        var isDir: ObjCBool = false
        #expect(fm.fileExists(atPath: root.at("var/lib/hearth"), isDirectory: &isDir) && isDir.boolValue)
        // Test fixtures are not installed.
        #expect(!fm.fileExists(atPath: root.at("usr/lib/hearth/plugins/libCrashingPlugin.so")))

        let config = read(root.at("etc/hearth/hearth.yaml"))
        #expect(config.contains("  database: /var/lib/hearth/hearth.sqlite"))
        #expect(config.contains("  directories: [/usr/lib/hearth/plugins]"))
    }

    /// The production library carries HomeModel and DriverAPI only: DriverTesting (the test
    /// host) is a package of its own that only test binaries link.
    @Test func the_installed_libPluginKit_has_no_DriverTesting_in_it() async throws {
        let symbols = try await run("/usr/bin/nm", ["-D", "--defined-only", buildDirectory + "/libPluginKit.so"], in: repositoryRoot)
        #expect(symbols.status == 0, "\(symbols.stderr)")
        #expect(symbols.stdout.contains("9DriverAPI"), "DriverAPI's symbols are in libPluginKit.so")
        #expect(symbols.stdout.contains("9HomeModel"), "HomeModel's symbols are in libPluginKit.so")
        #expect(!symbols.stdout.contains("13DriverTesting"), "DriverTesting's symbols must not be in libPluginKit.so")
        #expect(!FileManager.default.fileExists(atPath: buildDirectory + "/libDriverTesting.so"), "DriverTesting is not a shared library to ship")
    }

    /// URLSession (FoundationNetworking, libcurl, its TLS stack) is in libHearthWebhook.so, which
    /// hearthd loads at the first webhook: the daemon's own link does without it (issue 22).
    @Test func hearthd_does_not_link_FoundationNetworking_theWebhookLibraryDoes() async throws {
        let daemon = try await run("/usr/bin/readelf", ["-d", buildDirectory + "/hearthd"], in: repositoryRoot)
        #expect(daemon.status == 0, "\(daemon.stderr)")
        #expect(daemon.stdout.contains("libFoundation"), "the check reads hearthd's NEEDED entries")
        #expect(!daemon.stdout.contains("libFoundationNetworking"), "\(daemon.stdout)")
        #expect(!daemon.stdout.contains("libcurl"), "\(daemon.stdout)")
        let webhook = try await run("/usr/bin/readelf", ["-d", buildDirectory + "/libHearthWebhook.so"], in: repositoryRoot)
        #expect(webhook.status == 0, "\(webhook.stderr)")
        #expect(webhook.stdout.contains("libFoundationNetworking"), "\(webhook.stdout)")
    }

    @Test func unit_points_at_the_installed_files() async throws {
        let root = try Scratch("hearth-install")
        defer { root.remove() }
        let r = try await Self.install(into: root.path)
        #expect(r.status == 0, "\(r.stderr)")
        let unit = read(root.at("usr/lib/systemd/system/hearthd.service"))
        #expect(!unit.contains("@"), "a placeholder was left in the unit")
        for line in ["Type=notify", "Restart=on-failure", "ProtectSystem=strict", "StateDirectory=hearth", "NoNewPrivileges=true",
            "SupplementaryGroups=gpio", "DeviceAllow=char-gpiochip rw", "WatchdogSec="]
        {
            #expect(unit.contains(line), "the unit lacks \(line)")
        }
        // Every path the unit runs or reads exists in the installed tree.
        let execStart = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let words = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(FileManager.default.isExecutableFile(atPath: root.at(String(words[0].dropFirst()))))
        let configIndex = try #require(words.firstIndex(of: "--config"))
        #expect(FileManager.default.fileExists(atPath: root.at(String(words[configIndex + 1].dropFirst()))))
        // The configured database lives in the unit's StateDirectory (the only writable place).
        #expect(read(root.at("etc/hearth/hearth.yaml")).contains("/var/lib/hearth/hearth.sqlite"))
    }

    @Test func upgrade_keeps_the_users_configuration() async throws {
        let root = try Scratch("hearth-install")
        defer { root.remove() }
        #expect(try await Self.install(into: root.path).status == 0)
        let mine = "# mine\nlog:\n  level: debug\n"
        try mine.write(toFile: root.at("etc/hearth/hearth.yaml"), atomically: true, encoding: .utf8)
        try "keep".write(toFile: root.at("var/lib/hearth/hearth.sqlite"), atomically: true, encoding: .utf8)
        let again = try await Self.install(into: root.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(read(root.at("etc/hearth/hearth.yaml")) == mine)
        #expect(read(root.at("var/lib/hearth/hearth.sqlite")) == "keep")
        #expect(read(root.at("etc/hearth/hearth.yaml.dist")).contains("database: /var/lib/hearth/hearth.sqlite"))
        #expect(again.stdout.contains("kept"))
    }

    @Test func installed_daemon_finds_its_plugins_and_checks_the_config() async throws {
        let root = try Scratch("hearth-install")
        defer { root.remove() }
        #expect(try await Self.install(into: root.path, prefix: "/opt/hearth").status == 0)
        // PREFIX other than /usr: config and state under the prefix.
        let config = root.at("opt/hearth/etc/hearth/hearth.yaml")
        var text = read(config)
        text = text.replacingOccurrences(of: "/opt/hearth/var/lib/hearth", with: root.at("opt/hearth/var/lib/hearth"))
        text = text.replacingOccurrences(of: "[/opt/hearth/lib/hearth/plugins]", with: "[\(root.at("opt/hearth/lib/hearth/plugins"))]")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let check = try await run(root.at("opt/hearth/bin/hearthd"), ["--config", config, "--check"], in: root.path)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("plugins=3"), "\(check.stderr)")
    }
}

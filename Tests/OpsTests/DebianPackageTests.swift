import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `scripts/package-deb` with this build's products, inspected with dpkg-deb and installed,
/// upgraded, removed and purged with the real dpkg into a scratch root (``DpkgRoot``).
@Suite(.serialized) struct DebianPackageTests {
    static func build(into out: String, version: String = "0.9.1") async throws -> String {
        let r = try await run(
            "/bin/bash", [repositoryRoot + "/scripts/package-deb"],
            environment: [
                "SKIP_BUILD": "1", "BUILD_DIR": buildDirectory, "BUNDLE_RUNTIME": "0", "DEB_COMPRESS": "none", "OUT": out,
                "VERSION": version,
            ],
            in: repositoryRoot)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func package_has_metadata_dependencies_and_scripts() async throws {
        let dir = try Scratch("hearth-deb")
        defer { dir.remove() }
        let deb = try await Self.build(into: dir.path)
        #expect(deb.hasSuffix("hearth_0.9.1_\(try await run("/usr/bin/dpkg", ["--print-architecture"], in: dir.path).stdout.trimmingCharacters(in: .whitespacesAndNewlines)).deb"))
        let info = try await run("/usr/bin/dpkg-deb", ["-I", deb], in: dir.path)
        #expect(info.status == 0, "\(info.stderr)")
        for needle in ["Package: hearth", "Version: 0.9.1", "libgpiod3 | libgpiod2", "libmosquitto1", "libsqlite3-0", "postinst", "prerm", "postrm", "conffiles", "triggers"] {
            #expect(info.stdout.contains(needle), "dpkg-deb -I lacks \(needle)")
        }
        let package = try await run("/usr/bin/dpkg-deb", ["-f", deb, "Package"], in: dir.path)
        #expect(package.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "hearth")

        let control = dir.at("control")
        #expect(try await run("/usr/bin/dpkg-deb", ["-e", deb, control], in: dir.path).status == 0)
        #expect(read(control + "/conffiles") == "/etc/hearth/hearth.yaml\n")
        #expect(read(control + "/triggers") == "activate-noawait ldconfig\n")
        for script in ["postinst", "prerm", "postrm"] {
            #expect(FileManager.default.isExecutableFile(atPath: control + "/" + script))
            let syntax = try await run("/bin/sh", ["-n", control + "/" + script], in: dir.path)
            #expect(syntax.status == 0, "\(script): \(syntax.stderr)")
        }

        let list = try await run("/usr/bin/dpkg-deb", ["-c", deb], in: dir.path)
        #expect(list.status == 0)
        for line in list.stdout.split(separator: "\n") {
            #expect(line.contains(" root/root "), "not owned by root: \(line)")
        }
    }

    @Test(.enabled(if: getuid() == 0, "dpkg --root unpacks root-owned files and writes the root's passwd"))
    func installs_into_a_root_with_user_group_state_folder_and_enabled_unit() async throws {
        let dir = try Scratch("hearth-deb")
        defer { dir.remove() }
        let deb = try await Self.build(into: dir.path)
        let root = try DpkgRoot(at: dir.at("root"))
        let hostAccounts = ["/etc/passwd", "/etc/group"].map(read)

        let install = try await root.dpkg(["-i", deb])
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        #expect(install.stdout.contains("Setting up hearth (0.9.1)"))
        #expect(try await root.status() == ["Status: install ok installed", "Version: 0.9.1"])
        #expect(["/etc/passwd", "/etc/group"].map(read) == hostAccounts, "the scripts changed this machine's accounts")

        // The unit's ExecStart binary and --config file, the plugins folder the config names,
        // the state folder of its database, and the runtime's ld.so.conf entry.
        let unit = read(root.at("usr/lib/systemd/system/hearthd.service"))
        let starts = unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") || $0.hasPrefix("ExecStartPre=") }
        #expect(starts.count == 2)
        var configs: Set<String> = []
        for line in starts {
            let words = line.split(separator: "=", maxSplits: 1)[1].split(separator: " ").map(String.init)
            #expect(FileManager.default.isExecutableFile(atPath: root.at(words[0])), "\(words[0]) is not installed")
            configs.insert(try #require(words.firstIndex(of: "--config").map { words[$0 + 1] }))
        }
        #expect(configs == ["/etc/hearth/hearth.yaml"])
        let config = read(root.at("etc/hearth/hearth.yaml"))
        let directories = config.split(separator: "\n").compactMap { line in
            line.hasPrefix("  directories: [") ? line.dropFirst("  directories: [".count).dropLast() : nil
        }
        #expect(directories == ["/usr/lib/hearth/plugins"])
        for folder in directories {
            let plugins = try FileManager.default.contentsOfDirectory(atPath: root.at(String(folder))).sorted()
            #expect(plugins == ["libDemoPlugin.so", "libGPIOPlugin.so", "libMQTTPlugin.so"])
        }
        #expect(FileManager.default.fileExists(atPath: root.at("usr/lib/libPluginKit.so")))
        #expect(config.contains("  database: /var/lib/hearth/hearth.sqlite\n"))
        #expect(unit.contains("StateDirectory=hearth\n") && unit.contains("SupplementaryGroups=gpio\n") && unit.contains("User=hearth\n"))
        #expect(read(root.at("etc/ld.so.conf.d/hearth.conf")) == "/usr/lib/hearth/runtime\n")

        // postinst made the system user and its groups in the root's own account files.
        let hearth = try #require(root.entry("passwd", "hearth"))
        let uid = try #require(Int(hearth[2])), gid = try #require(Int(hearth[3]))
        #expect(uid > 0 && uid < 1000, "not a system uid: \(hearth)")
        #expect(hearth[5] == "/var/lib/hearth" && hearth[6] == "/usr/sbin/nologin")
        #expect(root.entry("group", "hearth")?[2] == String(gid))
        let gpio = try #require(root.entry("group", "gpio"))
        #expect(Int(gpio[2]).map { $0 > 0 && $0 < 1000 } == true, "not a system gid: \(gpio)")
        #expect(gpio[3].split(separator: ",").contains("hearth"))
        #expect(root.entry("shadow", "hearth") != nil)
        #expect(root.entry("gshadow", "gpio")?[3].split(separator: ",").contains("hearth") == true)

        // The state folder, the hearth user's (its ids in the root, not this machine's).
        let state = try FileManager.default.attributesOfItem(atPath: root.at("var/lib/hearth"))
        #expect(state[.type] as? FileAttributeType == .typeDirectory)
        #expect((state[.ownerAccountID] as? NSNumber)?.intValue == uid)
        #expect((state[.groupOwnerAccountID] as? NSNumber)?.intValue == gid)
        #expect((state[.posixPermissions] as? NSNumber)?.intValue == 0o750)

        // Enabled (WantedBy=multi-user.target) in the root, as deb-systemd-helper does offline.
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: root.at("etc/systemd/system/multi-user.target.wants/hearthd.service"))
                == "/usr/lib/systemd/system/hearthd.service")

        // configure again (dpkg-reconfigure, a re-run after a failure): nothing twice.
        let again = try await root.dpkg(["-i", deb])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(read(root.at("etc/passwd")).components(separatedBy: "\nhearth:").count == 2)
        #expect(root.entry("group", "gpio")?[3] == "hearth")
    }

    @Test(.enabled(if: getuid() == 0, "dpkg --root unpacks root-owned files and writes the root's passwd"))
    func upgrade_keeps_config_and_database_remove_keeps_them_purge_deletes_them() async throws {
        let dir = try Scratch("hearth-deb")
        defer { dir.remove() }
        let old = try await Self.build(into: dir.at("old"))
        // A hearth group an admin left behind (no user): the new user gets it as its own.
        let root = try DpkgRoot(at: dir.at("root"), groups: "hearth:x:990:\n")
        let first = try await root.dpkg(["-i", old])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(root.entry("passwd", "hearth")?[3] == "990")

        // The admin edits the configuration; the daemon has written its database.
        let config = root.at("etc/hearth/hearth.yaml")
        let edited = read(config).replacingOccurrences(of: "  level: info ", with: "  level: debug")
        #expect(edited != read(config))
        try edited.write(toFile: config, atomically: false, encoding: .utf8)
        let database = root.at("var/lib/hearth/hearth.sqlite")
        let data = Data("the layout and the device registry".utf8)
        #expect(FileManager.default.createFile(atPath: database, contents: data))

        // Upgrade, no --force-conf*: the packaged conffile did not change, so dpkg keeps the
        // edited one without asking (stdin is /dev/null: a prompt would fail the install).
        let new = try await Self.build(into: dir.at("new"), version: "0.9.2")
        let upgrade = try await root.dpkg(["-i", new])
        #expect(upgrade.status == 0, "\(upgrade.stdout)\(upgrade.stderr)")
        #expect(upgrade.stdout.contains("Unpacking hearth (0.9.2) over (0.9.1)"))
        #expect(try await root.status() == ["Status: install ok installed", "Version: 0.9.2"])
        #expect(read(config) == edited)
        #expect(FileManager.default.contents(atPath: database) == data)
        let left = try FileManager.default.contentsOfDirectory(atPath: root.at("etc/hearth"))
        #expect(left == ["hearth.yaml"], "no .dpkg-dist/.dpkg-new beside it: \(left)")

        // remove: the programs go, the configuration and the database stay.
        let remove = try await root.dpkg(["-r", "hearth"])
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(try await root.status() == ["Status: deinstall ok config-files", "Version: 0.9.2"])
        #expect(!FileManager.default.fileExists(atPath: root.at("usr/bin/hearthd")))
        #expect(read(config) == edited)
        #expect(FileManager.default.contents(atPath: database) == data)

        // purge: the configuration, the state folder and the unit's enablement go; the system
        // user and the gpio group stay (Debian's advice for system accounts: see postrm).
        let purge = try await root.dpkg(["-P", "hearth"])
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(try await root.status() == [])
        for gone in ["etc/hearth", "var/lib/hearth", "etc/systemd/system/multi-user.target.wants/hearthd.service", "etc/systemd/system/hearthd.service"] {
            #expect(!FileManager.default.fileExists(atPath: root.at(gone)) && (try? FileManager.default.destinationOfSymbolicLink(atPath: root.at(gone))) == nil, "\(gone) is left")
        }
        #expect(root.entry("passwd", "hearth") != nil)
        #expect(root.entry("group", "gpio") != nil)
    }
}

extension DebianPackageTests {
    /// Whether this process may make a private mount namespace with overlays (root with
    /// CAP_SYS_ADMIN and overlayfs: a privileged container or a real machine).
    static func canOverlay() async -> Bool {
        guard getuid() == 0, let dir = try? Scratch("hearth-probe") else { return false }
        defer { dir.remove() }
        let probe = try? await run(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-ec",
                "mount -t tmpfs probe \"$0\"; mkdir \"$0/u\" \"$0/w\"; mount -t overlay overlay -o lowerdir=/etc,upperdir=\"$0/u\",workdir=\"$0/w\" /etc",
                dir.path], in: dir.path)
        return probe?.status == 0
    }

    /// The normal path (`DPKG_ROOT` empty, users through NSS): plain `dpkg -i` as apt runs it,
    /// in a private mount namespace whose /etc, /usr and /var are overlays on this machine's,
    /// so every change lands in a tmpfs that goes with the namespace.
    @Test(.enabled("needs root, mount namespaces and overlayfs") { await canOverlay() })
    func a_normal_install_through_nss_in_a_throwaway_overlay_of_this_machine() async throws {
        let dir = try Scratch("hearth-deb")
        defer { dir.remove() }
        let deb = try await Self.build(into: dir.path)
        try FileManager.default.createDirectory(atPath: dir.at("overlay"), withIntermediateDirectories: true)
        let host = ["/etc/passwd", "/etc/group", "/var/lib/dpkg/status"].map(read)
        let script = #"""
            set -e
            overlay=$1 deb=$2
            mount -t tmpfs hearth-test "$overlay"
            for d in etc usr var; do
                mkdir -p "$overlay/$d/upper" "$overlay/$d/work"
                mount -t overlay overlay -o "lowerdir=/$d,upperdir=$overlay/$d/upper,workdir=$overlay/$d/work" "/$d"
            done
            mount -t tmpfs hearth-test-run /run   # no systemd reachable from here
            dpkg -i "$deb" >&2
            echo "passwd=$(getent passwd hearth)"
            echo "gpio=$(getent group gpio)"
            echo "state=$(stat -c '%U:%G %a' /var/lib/hearth)"
            echo "status=$(dpkg-query -W -f '${Status} ${Version}' hearth)"
            echo "wants=$(readlink /etc/systemd/system/multi-user.target.wants/hearthd.service)"
            dpkg -i "$deb" >&2
            echo "again=$(grep -c '^hearth:' /etc/passwd) $(getent group gpio | cut -d: -f4)"
            dpkg -P hearth >&2
            echo "purged=$(ls -d /etc/hearth /var/lib/hearth /usr/bin/hearthd 2>/dev/null | wc -l) $(getent passwd hearth | cut -d: -f1)"
            """#
        let r = try await run(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/bash", "-c", script, "hearth-test", dir.at("overlay"), deb],
            environment: ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], in: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        var report: [String: String] = [:]
        for line in r.stdout.split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { report[pair[0]] = pair[1] }
        }
        let passwd = try #require(report["passwd"]).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        #expect(passwd.count == 7 && passwd[0] == "hearth" && passwd[5] == "/var/lib/hearth" && passwd[6] == "/usr/sbin/nologin", "\(passwd)")
        #expect(Int(passwd[2]).map { $0 > 0 && $0 < 1000 } == true, "not a system uid: \(passwd)")
        #expect(report["gpio"]?.split(separator: ":", omittingEmptySubsequences: false).last?.split(separator: ",").contains("hearth") == true)
        #expect(report["state"] == "hearth:hearth 750")
        #expect(report["status"] == "install ok installed 0.9.1")
        // Enabled by systemctl working offline (merged /usr: it may name /lib's path).
        #expect(["/usr/lib/systemd/system/hearthd.service", "/lib/systemd/system/hearthd.service"].contains(report["wants"] ?? ""), "\(report)")
        #expect(report["again"]?.hasPrefix("1 ") == true && report["again"]?.split(separator: " ").last?.split(separator: ",").filter { $0 == "hearth" }.count == 1)
        #expect(report["purged"] == "0 hearth")
        #expect(["/etc/passwd", "/etc/group", "/var/lib/dpkg/status"].map(read) == host, "this machine changed")
    }
}

/// A scratch root for `dpkg --root`: an empty dpkg database and the account files of a fresh
/// system holding only root. dpkg runs the maintainer scripts there without chroot
/// (`--force-script-chrootless`), with `DPKG_ROOT` set to it; the runtime libraries the package
/// depends on are not in it (`--force-depends`).
struct DpkgRoot {
    let path: String

    init(at path: String, groups: String = "") throws {
        self.path = path
        let fm = FileManager.default
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"] {
            try fm.createDirectory(atPath: path + "/" + folder, withIntermediateDirectories: true)
        }
        for (file, text, mode) in [
            ("var/lib/dpkg/status", "", 0o644), ("var/lib/dpkg/available", "", 0o644),
            ("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n", 0o644), ("etc/group", "root:x:0:\n" + groups, 0o644),
            ("etc/shadow", "root:*:19000:0:99999:7:::\n", 0o640), ("etc/gshadow", "root:*::\n", 0o640),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + file))
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: path + "/" + file)
        }
    }

    func at(_ relative: String) -> String { path + "/" + relative }

    func dpkg(_ arguments: [String]) async throws -> Run {
        try await run(
            "/usr/bin/dpkg", ["--root=\(path)", "--force-script-chrootless", "--force-depends", "--log=\(path)/dpkg.log"] + arguments,
            environment: ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], in: path)
    }

    /// The package's Status and Version lines (none once purged).
    func status() async throws -> [String] {
        try await run("/usr/bin/dpkg", ["--root=\(path)", "-s", "hearth"], in: path).stdout.split(separator: "\n")
            .filter { $0.hasPrefix("Status: ") || $0.hasPrefix("Version: ") }.map(String.init)
    }

    /// The fields of one line of the root's etc/passwd, group, shadow or gshadow.
    func entry(_ file: String, _ name: String) -> [String]? {
        read(at("etc/" + file)).split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) }
            .first { $0.first == name }
    }
}

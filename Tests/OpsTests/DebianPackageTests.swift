import Foundation
import Testing

/// `scripts/package-deb` with this build's products, inspected with dpkg-deb.
@Suite(.serialized) struct DebianPackageTests {
    static func build(into out: String) async throws -> String {
        let r = try await run(
            "/bin/bash", [repositoryRoot + "/scripts/package-deb"],
            environment: [
                "SKIP_BUILD": "1", "BUILD_DIR": buildDirectory, "BUNDLE_RUNTIME": "0", "DEB_COMPRESS": "none", "OUT": out,
                "VERSION": "0.9.1",
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
        for needle in ["Package: hearth", "Version: 0.9.1", "libgpiod2", "libmosquitto1", "libsqlite3-0", "postinst", "prerm", "postrm", "conffiles"] {
            #expect(info.stdout.contains(needle), "dpkg-deb -I lacks \(needle)")
        }
        let package = try await run("/usr/bin/dpkg-deb", ["-f", deb, "Package"], in: dir.path)
        #expect(package.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "hearth")

        // The maintainer scripts: valid shell, and postinst makes the user in the gpio group.
        let control = dir.at("control")
        #expect(try await run("/usr/bin/dpkg-deb", ["-e", deb, control], in: dir.path).status == 0)
        #expect(read(control + "/conffiles") == "/etc/hearth/hearth.yaml\n")
        for script in ["postinst", "prerm", "postrm"] {
            #expect(FileManager.default.isExecutableFile(atPath: control + "/" + script))
            let syntax = try await run("/bin/sh", ["-n", control + "/" + script], in: dir.path)
            #expect(syntax.status == 0, "\(script): \(syntax.stderr)")
        }
        let postinst = read(control + "/postinst")
        #expect(postinst.contains("adduser --system --group"))
        #expect(postinst.contains("adduser hearth gpio"))
        #expect(postinst.contains("addgroup --system gpio"))
    }

    @Test func files_land_where_the_unit_expects_them() async throws {
        let dir = try Scratch("hearth-deb")
        defer { dir.remove() }
        let deb = try await Self.build(into: dir.path)
        let list = try await run("/usr/bin/dpkg-deb", ["-c", deb], in: dir.path)
        #expect(list.status == 0)
        for path in [
            "./usr/bin/hearthd", "./usr/bin/hearth", "./usr/lib/libPluginKit.so", "./usr/lib/hearth/plugins/libGPIOPlugin.so",
            "./usr/lib/hearth/plugins/libMQTTPlugin.so", "./etc/hearth/hearth.yaml", "./usr/lib/systemd/system/hearthd.service",
            "./etc/ld.so.conf.d/hearth.conf",
        ] {
            #expect(list.stdout.contains(path), "the package lacks \(path)")
        }
        #expect(list.stdout.contains("root/root"))

        // Unpack into a scratch root (no maintainer scripts: they would change this machine).
        let root = dir.at("root")
        #expect(try await run("/usr/bin/dpkg-deb", ["-x", deb, root], in: dir.path).status == 0)
        let unit = read(root + "/usr/lib/systemd/system/hearthd.service")
        for line in unit.split(separator: "\n") where line.hasPrefix("ExecStart=") || line.hasPrefix("ExecStartPre=") {
            let words = line.split(separator: "=", maxSplits: 1)[1].split(separator: " ").map(String.init)
            #expect(FileManager.default.isExecutableFile(atPath: root + words[0]), "\(words[0]) is not in the package")
            let config = try #require(words.firstIndex(of: "--config").map { words[$0 + 1] })
            #expect(FileManager.default.fileExists(atPath: root + config))
        }
        #expect(read(root + "/etc/hearth/hearth.yaml").contains("database: /var/lib/hearth/hearth.sqlite"))
        #expect(unit.contains("StateDirectory=hearth"))
        #expect(read(root + "/etc/ld.so.conf.d/hearth.conf") == "/usr/lib/hearth/runtime\n")
    }
}

import DriverAPI
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

@Suite struct PluginLoaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let fixture: String
        let reason: PluginLoadError.Reason
        let says: String
        var testDescription: String { "\(fixture) → \(reason.rawValue)" }
    }

    @Test(arguments: [
        Case(fixture: "WrongABIPlugin", reason: .abiMismatch, says: "built for plugin ABI \(HearthPluginABI.version + 1000)"),
        Case(fixture: "WrongCompilerPlugin", reason: .compilerMismatch, says: "built with swift-1.0"),
        Case(fixture: "NoSymbolsPlugin", reason: .missingSymbol, says: "does not export hearth_plugin_abi_version"),
    ])
    func refusesFile_withReasonNamingIt(_ c: Case) throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: [c.fixture])
        let path = "\(dir.path)/lib\(c.fixture).so"
        #expect(throws: PluginLoadError.self) { try PluginLoader.load(path) }
        do {
            _ = try PluginLoader.load(path)
        } catch {
            #expect(error.reason == c.reason)
            #expect(error.path == path)
            #expect(error.message.contains(c.says), "message: \(error.message)")
            #expect(error.description.hasPrefix(path))
        }
    }

    @Test func refusesFileThatIsNotELF() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = try dir.write("libnotes.so", "these are notes, not a plugin\n")
        do {
            _ = try PluginLoader.load(path)
            Issue.record("a text file was loaded as a plugin")
        } catch {
            #expect(error.reason == .notELF)
            #expect(error.message.contains("not an ELF shared object"))
        }
    }

    @Test func refusesSecondPluginWithSameID_namingTheFirst() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: ["FlakyPlugin", "DuplicateIDPlugin"])
        let (loaded, rejected) = PluginLoader.loadAll(from: [dir.path], includeTestFixtures: true)
        #expect(loaded.map(\.manifest.id) == ["flaky"])
        let refusal = try #require(rejected.first)
        #expect(rejected.count == 1)
        #expect(refusal.reason == .duplicateID)
        #expect(refusal.pluginID == "flaky")
        // Files load in name order: libDuplicateIDPlugin.so comes first and keeps the ID.
        #expect(loaded[0].path.hasSuffix("libDuplicateIDPlugin.so"))
        #expect(refusal.path.hasSuffix("libFlakyPlugin.so"))
        #expect(refusal.message.contains("already taken by \(loaded[0].path)"))
    }

    @Test func loadsTheGoodPlugins_whenOthersInTheFolderAreRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: ["WrongABIPlugin", "WrongCompilerPlugin", "NoSymbolsPlugin", "FlakyPlugin", "CrashingPlugin"])
        _ = try dir.write("libbroken.so", "#!/bin/sh\n")
        let (loaded, rejected) = PluginLoader.loadAll(from: [dir.path, "\(dir.path)/does-not-exist"], includeTestFixtures: true)
        #expect(Set(loaded.map(\.manifest.id)) == ["flaky", "crashy"])
        #expect(
            Dictionary(uniqueKeysWithValues: rejected.map { (($0.path as NSString).lastPathComponent, $0.reason) }) == [
                "libWrongABIPlugin.so": .abiMismatch, "libWrongCompilerPlugin.so": .compilerMismatch,
                "libNoSymbolsPlugin.so": .missingSymbol, "libbroken.so": .notELF,
            ])
    }

    @Test func folderScanPassesTestFixturesBy_unlessAskedFor() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: ["FlakyPlugin", "WrongABIPlugin"])
        let (loaded, rejected) = PluginLoader.loadAll(from: [dir.path])
        #expect(loaded.isEmpty)
        #expect(rejected.isEmpty)
    }

    @Test func registryListsRefusedFiles_withPathAndReason() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: ["WrongABIPlugin", "FlakyPlugin"])
        let plan = PluginSetup.plan(
            directories: [dir.path], sections: ["flaky": section("flaky", ["failures": 0])], core: HomeCore(),
            clock: ContinuousClock(), hearthd: hearthd, includeTestFixtures: true, logger: testLogger)
        let statuses = plan.registry.statuses()
        #expect(plan.services.map(\.loaded.manifest.id) == ["flaky"])
        let refused = try #require(statuses.first { $0.state == .refused })
        #expect(refused.path == "\(dir.path)/libWrongABIPlugin.so")
        #expect(refused.lastError?.hasPrefix("abiMismatch: built for plugin ABI") == true)
        #expect(refused.isFailed)
        #expect(statuses.first { $0.id == "flaky" }?.state == .starting)
        // What the API serves: Codable, the same through the closure.
        let data = try JSONEncoder().encode(plan.registry.statusProvider())
        #expect(try JSONDecoder().decode([PluginStatus].self, from: data) == statuses)
    }
}

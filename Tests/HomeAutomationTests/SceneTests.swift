import DriverAPI
import Foundation
import HashTreeCollections
import Synchronization
import DriverTesting
import HomeCore
import HomeModel
import HomeStorage
import GRDB
import Testing

@Suite(.timeLimit(.minutes(1))) struct SceneTests {
    func evening(_ h: TestHome, transition: Int = 2000) -> Scene {
        Scene(
            id: "evening", name: "Evening", structureID: h.structure, transitionMilliseconds: transition,
            targets: [
                SceneTarget(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true),
                SceneTarget(device: "p:dim", deviceType: DimmableLightDeviceType.identifier, trait: LevelControlTrait.identifier, attribute: LevelControlTrait.Attribute.currentLevel, value: 90),
            ])
    }

    @Test func recall_sendsTargetsThroughTheCommandPath_withTheTransition() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        try book.create(evening(h), as: admin)
        #expect(!book.isActive("evening"))
        let result = try await book.recall("evening", as: member)
        #expect(result.failed == 0)
        let sent = h.hardware.commands
        #expect(sent.map(\.command) == [OnOffTrait.Command.on, LevelControlTrait.Command.moveToLevelWithOnOff])
        #expect(sent[1].arguments["Level"] == 90)
        #expect(sent[1].arguments["TransitionTime"] == 20, "2 s in tenths")
        #expect(sent[0].origin == member.id, "commands carry the caller as origin")
        #expect(book.isActive("evening"), "isActive is computed from the reported state")
        h.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)
        #expect(!book.isActive("evening"))
    }

    @Test func offWithLevel_sendsOnlyOff() {
        let h = TestHome()
        var s = evening(h)
        s.targets.append(SceneTarget(device: "p:dim", deviceType: DimmableLightDeviceType.identifier, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: false))
        let steps = s.steps()
        #expect(steps.count == 2)
        guard case .command(let c) = steps[1] else { Issue.record("expected a command"); return }
        #expect(c.trait == OnOffTrait.identifier && c.command == OnOffTrait.Command.off)
    }

    @Test func membersRecall_onlyAdminsCreateEditDelete() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        #expect(throws: HomeError.self) { try book.create(evening(h), as: member) }
        let made = try book.create(evening(h), as: admin)
        #expect(made.revision == 1)
        var edited = made
        edited.transitionMilliseconds = 0
        #expect(throws: HomeError.self) { try book.update(edited, ifRevision: 1, as: member) }
        do {
            try book.update(edited, ifRevision: 7, as: admin)
            Issue.record("expected conflict")
        } catch { #expect(error.code == .conflict) }
        #expect(try book.update(edited, ifRevision: 1, as: admin).revision == 2)
        #expect(throws: HomeError.self) { try book.delete("evening", as: member) }
        _ = try await book.recall("evening", as: member)
        try book.delete("evening", as: admin)
        #expect(try book.list(as: member).isEmpty)
    }

    @Test func app_recallsOnlyWhenEveryTargetIsInItsGrant_andItMayControl() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        try book.create(evening(h), as: admin)
        let lightsOnly = Principal(id: "app:a", role: .app, scope: GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false))
        #expect(try book.list(as: lightsOnly).isEmpty, "a scene reaching outside the grant is not listed")
        do {
            _ = try await book.recall("evening", as: lightsOnly)
            Issue.record("expected refusal")
        } catch { #expect(error.code == .notFound || error.code == .permissionDenied) }
        #expect(h.hardware.commands.isEmpty, "nothing was sent: all or nothing")
        let both = GrantScope(deviceTypes: [OnOffLightDeviceType.identifier, DimmableLightDeviceType.identifier], includeSensitive: false)
        let readOnly = Principal(id: "app:r", role: .app, scope: GrantScope(deviceTypes: both.deviceTypes, includeSensitive: false, canControl: false))
        do {
            _ = try await book.recall("evening", as: readOnly)
            Issue.record("expected permissionDenied")
        } catch { #expect(error.code == .permissionDenied) }
        let ok = try await book.recall("evening", as: Principal(id: "app:b", role: .app, scope: both))
        #expect(ok.failed == 0)
        #expect(h.hardware.commands.count == 2)
    }

    @Test func locks_needAnAdminsAllowSensitive() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        var s = Scene(
            id: "away", name: "Away", structureID: h.structure,
            targets: [SceneTarget(device: "p:lock", deviceType: DoorLockDeviceType.identifier, trait: DoorLockTrait.identifier, attribute: DoorLockTrait.Attribute.lockState, value: 1)])
        do {
            try book.create(s, as: admin)
            Issue.record("expected refusal")
        } catch { #expect(error.code == .permissionDenied && error.message.contains("allowSensitive")) }
        s.allowSensitive = true
        try book.create(s, as: admin)
        let result = try await book.recall("away", as: admin)
        #expect(result.steps.count == 1)
        #expect(h.hardware.commands.first?.command == DoorLockTrait.Command.lockDoor)
    }

    @Test func check_refusesNonSceneableAndUnknownDevices_withSuggestions() throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        var s = evening(h)
        s.targets[0].device = "p:lamb"
        do { try book.check(s); Issue.record("expected notFound") } catch { #expect(error.message.contains("did you mean 'p:lamp'")) }
        s = evening(h)
        s.targets[0].attribute = OnOffTrait.Attribute.globalSceneControl
        do { try book.check(s); Issue.record("expected refusal") } catch { #expect(error.message.contains("notSceneable")) }
        s = evening(h)
        s.targets[1].value = 300
        do { try book.check(s); Issue.record("expected out of range") } catch { #expect(error.code == .invalidArgument) }
    }

    @Test func recallErrors_areTheCommandPathsErrors() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        try book.create(evening(h), as: admin)
        h.driver.setConnectivity(.offline, device: "dim")
        let result = try await book.recall("evening", as: admin)
        #expect(result.failed == 1)
        #expect(result.steps[1].error?.code == .deviceOffline)
        #expect(result.steps[0].error == nil)
    }

    @Test func capture_storesCurrentValues() throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        h.report("dim", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, 42)
        let targets = try book.capture(devices: ["p:dim", "p:lock"], as: admin)
        #expect(targets.contains { $0.trait == LevelControlTrait.identifier && $0.value == 42 })
        #expect(targets.contains { $0.trait == OnOffTrait.identifier && $0.value == false })
        #expect(!targets.contains { $0.trait == DoorLockTrait.identifier }, "sensitive attributes are never captured")
        #expect(throws: HomeError.self) { try book.capture(devices: ["p:dim"], as: member) }
    }

    @Test func scenes_surviveARestart_inARealSQLiteFile() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("scenes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("hearth.sqlite").path
        let h = TestHome()
        do {
            let db = try HearthDatabase(path: path, extraMigrations: AutomationStateStore.registerMigrations(in:))
            let book = try SceneBook(core: h.core, store: db.automationStore())
            try book.create(evening(h), as: admin)
            _ = try await book.recall("evening", as: member)
        }
        let db = try HearthDatabase(path: path, extraMigrations: AutomationStateStore.registerMigrations(in:))
        #expect(try db.appliedMigrations().contains("automation-v1"))
        let again = try SceneBook(core: h.core, store: db.automationStore())
        let loaded = try again.scene("evening", as: member)
        #expect(loaded == evening(h).withRevision(1))
        let recalled = try await db.pool.read { db in try Double.fetchOne(db, sql: "SELECT last_recalled_at FROM scene WHERE id = 'evening'") }
        #expect(recalled != nil)
    }
}

extension Scene {
    func withRevision(_ r: Int) -> Scene {
        var s = self
        s.revision = r
        return s
    }
}

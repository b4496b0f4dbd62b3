import DriverAPI
import HomeCore
import HomeModel
import Testing

@Suite(.timeLimit(.minutes(1))) struct ChangeOriginTests {
    @Test func everyChangeCarriesItsOriginAndAMonotonicVersion() async throws {
        let core = HomeCore()
        let admin = Principal(id: "user:alice", role: .admin)
        let home = core.home(for: admin)
        var audit = home.changes().makeAsyncIterator()

        let driver = core.context(for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)  // identical: no change, no record
        try home.edit(.renameDevice("p:lamp", name: "Desk Lamp"))

        let published = try #require(await audit.next())
        #expect(published.origin == .plugin("p"))
        #expect(published.devices["p:lamp"] == .added)
        #expect(published.roomsChanged)
        let reported = try #require(await audit.next())
        #expect(reported.origin == .plugin("p"))
        #expect(reported.devices["p:lamp"] == .attributes)
        let renamed = try #require(await audit.next())
        #expect(renamed.origin == .layout("user:alice"))
        #expect(renamed.devices["p:lamp"] == .shape)
        #expect([published.version, reported.version, renamed.version] == [1, 2, 3])
    }

    @Test func batchedSetsSayWhoChangedThem() async throws {
        let core = HomeCore()
        core.context(for: "p").publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let home = core.home(for: Principal(id: "user:alice", role: .admin))
        var sets = home.devices().batched().makeAsyncIterator()
        #expect(try #require(await sets.next()).origin == nil)
        try home.edit(.renameDevice("p:lamp", name: "Desk Lamp"))
        #expect(try #require(await sets.next()).origin == .layout("user:alice"))
    }

    @Test func onlyAdminsGetTheAuditStream() async throws {
        let core = HomeCore()
        let member = core.home(for: Principal(id: "user:bob", role: .member))
        var it = member.changes().makeAsyncIterator()
        #expect(await it.next() == nil)
    }
}

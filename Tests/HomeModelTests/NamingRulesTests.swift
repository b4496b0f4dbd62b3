import HomeModel
import Testing

@Suite struct NamingRulesTests {
    @Test(arguments: [
        ("Kitchen Light", [NamingRules.Violation]()),
        ("Bob's Lamp", []),
        ("Lamp 2", []),
        ("2nd Floor Fan", []),
        ("Lámpara de Mesa", []),
        ("Küche", []),
        ("", [.empty]),
        ("   ", [.empty]),
        ("'Lamp", [.mustStartWithLetterOrDigit]),
        ("Lamp'", [.mustEndWithLetterOrDigit]),
        ("Lamp 💡", [.emoji, .mustEndWithLetterOrDigit]),
        ("💡", [.emoji, .mustStartWithLetterOrDigit, .mustEndWithLetterOrDigit]),
        ("Lamp-1", [.invalidCharacter]),
        ("Lamp_1", [.invalidCharacter]),
        ("Lamp!", [.invalidCharacter, .mustEndWithLetterOrDigit]),
        ("Red ❤️ Light", [.emoji]),
        (String(repeating: "a", count: 65), [.tooLong]),
    ])
    func judgesNames(name: String, expected: [NamingRules.Violation]) {
        let verdict = NamingRules.check(name)
        #expect(Set(verdict.violations) == Set(expected), "\(name)")
        #expect(verdict.isValid == expected.isEmpty)
    }

    @Test func trimsAndCollapsesSpaces() {
        #expect(NamingRules.check("  Desk   Lamp ").name == "Desk Lamp")
    }

    @Test(arguments: [
        ("Lamp 💡", "Lamp"),
        ("'Lamp'", "Lamp"),
        ("Lamp-1", "Lamp 1"),
    ])
    func suggestsARepairedName(name: String, suggestion: String) {
        let verdict = NamingRules.check(name)
        #expect(!verdict.isValid)
        #expect(verdict.suggestions.first == suggestion)
        #expect(NamingRules.check(suggestion).isValid)
    }

    @Test(arguments: [
        ("Kitchen Light", "Kitchen", "Light"),
        ("Light Kitchen", "kitchen", "Light"),
        ("Living Room Lamp", "Living Room", "Lamp"),
        ("Ceiling kitchen light", "Kitchen", "Ceiling light"),
    ])
    func nameThatRepeatsItsRoomIsAcceptedWithASuggestion(name: String, room: String, suggestion: String) {
        let verdict = NamingRules.check(name, roomName: room)
        #expect(verdict.isValid)
        #expect(verdict.warning?.contains("repeats its room") == true)
        #expect(verdict.suggestions == [suggestion])
    }

    @Test func nameThatIsOnlyTheRoomGetsNoEmptySuggestion() {
        let verdict = NamingRules.check("Kitchen", roomName: "Kitchen")
        #expect(verdict.isValid)
        #expect(verdict.suggestions.isEmpty)
    }

    @Test func nameInAnotherRoomHasNoWarning() {
        let verdict = NamingRules.check("Kitchen Light", roomName: "Hall")
        #expect(verdict.warning == nil)
        #expect(verdict.suggestions.isEmpty)
    }

    @Test func validateThrowsNamingTheRuleAndSuggestion() {
        do {
            _ = try NamingRules.validate("Lamp 💡", what: "device name")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("may not contain emoji"))
            #expect(error.message.contains("try 'Lamp'"))
        }
    }

    @Test func normalisedIgnoresCaseSpacesAndApostrophes() {
        #expect(NamingRules.normalised("Bob's  Room") == NamingRules.normalised("bobs room"))
        #expect(NamingRules.normalised("Hall") != NamingRules.normalised("Hall 2"))
    }
}

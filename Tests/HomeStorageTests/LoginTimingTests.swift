import Foundation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// A failed login takes as long for a name that does not exist as for a wrong password, so the
/// answer's timing does not reveal which users exist (issue #14).
@Suite struct LoginTimingTests {
    static func failedLogin(_ access: AccessStore, _ name: String) -> Duration {
        ContinuousClock().measure {
            do {
                _ = try access.login(username: name, password: "not the password")
                Issue.record("a wrong password must not sign in")
            } catch let error as HomeError {
                #expect(error.code == .unauthenticated)
                #expect(error.message == "wrong username or password")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func an_unknown_user_costs_as_much_as_a_wrong_password() throws {
        let access = try AccessStore.inMemory(passwordRounds: 20_000)
        try access.addUser(username: "mia", password: "member password", role: .member)
        _ = Self.failedLogin(access, "nobody")  // makes the decoy hash once
        var known: [Duration] = []
        var unknown: [Duration] = []
        for i in 0..<3 {
            known.append(Self.failedLogin(access, "mia"))
            unknown.append(Self.failedLogin(access, "nobody-\(i)"))
        }
        let k = known.sorted()[1]
        let u = unknown.sorted()[1]
        // Both run the same PBKDF2; without the decoy an unknown name answers in microseconds.
        #expect(u > k / 2, "unknown user: \(u), wrong password: \(k)")
        #expect(u < k * 2, "unknown user: \(u), wrong password: \(k)")
    }
}

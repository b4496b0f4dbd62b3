public import Foundation
public import HomeCore

extension AutomationEngine {
    /// The web page's Test button: a dry run of a draft not saved, as ``simulate(_:starter:as:)``
    /// (nothing is sent; commands read as `wouldSend`).
    public func dryRun(draft definition: Data, starter: String?, as principal: Principal) async throws -> Data {
        let draft = try Self.definition(definition)
        do {
            return try Self.wireEncoder.encode(try await simulate(draft, starter: starter, as: principal))
        } catch let error as AutomationError {
            throw Self.refusal(error)
        }
    }
}

public import MatterSecurity

/// CommissioningWindowStatusEnum (Core Specification 11.19.5.1).
public enum WindowStatus: UInt8, Hashable, Sendable {
    case windowNotOpen = 0
    case enhancedWindowOpen = 1
    case basicWindowOpen = 2
}

/// An open commissioning window (5.4.2.x, 11.19): how PASE is to be verified and until when.
public struct CommissioningWindow: Hashable, Sendable {
    public enum Method: Hashable, Sendable {
        /// The onboarding payload's passcode and discriminator (the owner's).
        case basic
        /// A verifier an administrator sent with OpenCommissioningWindow.
        case enhanced(verifier: Spake2pVerifier, salt: [UInt8], iterations: Int, discriminator: UInt16)
    }

    public var method: Method
    /// nil: open until commissioning completes (the first, factory-new window).
    public var expiresAt: ContinuousClock.Instant?
    /// AdminFabricIndex / AdminVendorId (11.19.6.2–3), when an administrator opened it.
    public var adminFabricIndex: FabricIndex?
    public var adminVendorID: UInt16?

    public var status: WindowStatus {
        if case .enhanced = method { return .enhancedWindowOpen }
        return .basicWindowOpen
    }

    /// The CM TXT value of the commissionable advertisement (4.3.1.3): 1 basic, 2 enhanced.
    public var commissioningMode: UInt8 { status == .enhancedWindowOpen ? 2 : 1 }
}

/// AdministratorCommissioning's cluster-specific status codes (11.19.4.1).
public enum AdministratorCommissioningStatus: UInt8, Sendable {
    case busy = 2
    case pakeParameterError = 3
    case windowNotOpen = 4
}

/// The time limits of OpenCommissioningWindow (5.4.2.3.1): 3 to 15 minutes.
public enum CommissioningTimeout {
    public static let minimumSeconds: UInt16 = 180
    public static let maximumSeconds: UInt16 = 900
}

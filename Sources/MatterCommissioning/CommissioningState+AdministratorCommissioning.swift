import MatterSecurity

extension CommissioningState {
    /// Opens the node's own Basic Commissioning Method window (the factory-new window with the
    /// onboarding payload's passcode), `timeout` nil for "until commissioned".
    public mutating func openInitialWindow(now: ContinuousClock.Instant, timeout: Duration? = nil) {
        window = CommissioningWindow(method: .basic, expiresAt: timeout.map { now + $0 })
        events.append(.windowOpened)
    }

    /// OpenCommissioningWindow (Core Specification 11.19.8.1, sent as a timed invoke): an
    /// Enhanced Commissioning Method window with the administrator's PAKE verifier.
    ///
    /// Busy (cluster status 2) when a window is open or a fail-safe is armed;
    /// PAKEParameterError (3) for iterations, salt or verifier out of range; INVALID_COMMAND for
    /// a timeout outside 180…900 s or a discriminator above 4095.
    public mutating func openCommissioningWindow(
        timeoutSeconds: UInt16, verifier: [UInt8], discriminator: UInt16, iterations: UInt32, salt: [UInt8],
        session: SessionInfo, now: ContinuousClock.Instant
    ) throws(CommissioningError) {
        let (fabricIndex, vendorID) = try checkCanOpenWindow(session: session, timeoutSeconds: timeoutSeconds)
        func pake(_ m: String) -> CommissioningError {
            CommissioningError(.failure, clusterStatus: AdministratorCommissioningStatus.pakeParameterError.rawValue, m)
        }
        guard Spake2p.iterationRange.contains(Int(iterations)) else { throw pake("iterations \(iterations) out of range") }
        guard Spake2p.saltLengthRange.contains(salt.count) else { throw pake("a salt of \(salt.count) bytes is out of range") }
        guard discriminator <= 0xFFF else { throw CommissioningError(.invalidCommand, "the discriminator is longer than 12 bits") }
        let parsed: Spake2pVerifier
        do { parsed = try Spake2pVerifier(serialized: verifier) } catch { throw pake("the PAKE verifier does not parse: \(error)") }
        window = CommissioningWindow(
            method: .enhanced(verifier: parsed, salt: salt, iterations: Int(iterations), discriminator: discriminator),
            expiresAt: now + .seconds(Int(timeoutSeconds)), adminFabricIndex: fabricIndex, adminVendorID: vendorID)
        events.append(.windowOpened)
    }

    /// OpenBasicCommissioningWindow (11.19.8.2): the onboarding payload's passcode, same checks.
    public mutating func openBasicCommissioningWindow(timeoutSeconds: UInt16, session: SessionInfo, now: ContinuousClock.Instant)
        throws(CommissioningError)
    {
        let (fabricIndex, vendorID) = try checkCanOpenWindow(session: session, timeoutSeconds: timeoutSeconds)
        window = CommissioningWindow(method: .basic, expiresAt: now + .seconds(Int(timeoutSeconds)), adminFabricIndex: fabricIndex,
                                     adminVendorID: vendorID)
        events.append(.windowOpened)
    }

    func checkCanOpenWindow(session: SessionInfo, timeoutSeconds: UInt16) throws(CommissioningError) -> (FabricIndex, UInt16) {
        guard session.authMode == .case, let fabric = fabrics[session.fabricIndex] else {
            throw CommissioningError(.unsupportedAccess, "a commissioning window is opened by an administrator over CASE")
        }
        let busy = AdministratorCommissioningStatus.busy.rawValue
        guard failSafe == nil else { throw CommissioningError(.failure, clusterStatus: busy, "a fail-safe is armed") }
        guard window == nil else { throw CommissioningError(.failure, clusterStatus: busy, "a commissioning window is already open") }
        guard (CommissioningTimeout.minimumSeconds...CommissioningTimeout.maximumSeconds).contains(timeoutSeconds) else {
            throw CommissioningError(.invalidCommand, "the timeout must be 180 to 900 seconds")
        }
        return (fabric.index, fabric.vendorID)
    }

    /// RevokeCommissioning (11.19.8.3): expires an armed fail-safe and closes the window;
    /// WindowNotOpen (cluster status 4) when none was open.
    public mutating func revokeCommissioning() throws(CommissioningError) {
        if failSafe != nil { expireFailSafe() }
        guard window != nil else {
            throw CommissioningError(.failure, clusterStatus: AdministratorCommissioningStatus.windowNotOpen.rawValue, "no commissioning window is open")
        }
        window = nil
        events.append(.windowClosed)
    }

    /// WindowStatus (11.19.6.1).
    public var windowStatus: WindowStatus { window?.status ?? .windowNotOpen }
}

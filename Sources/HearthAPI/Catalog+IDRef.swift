public import HomeModel

extension Catalog {
    /// The device type an ``IDRef`` names; a number passes through even when unknown.
    ///
    /// - Throws: `notFound` for an unknown name.
    public func resolveDeviceType(_ ref: IDRef) throws(HomeError) -> DeviceTypeID {
        switch ref {
        case .number(let n): return DeviceTypeID(n)
        case .name(let s):
            guard let t = deviceType(named: s) else { throw .notFound("no device type named '\(s)' in the catalogue") }
            return t.id
        }
    }

    /// The trait an ``IDRef`` names; a number passes through even when unknown.
    public func resolveTrait(_ ref: IDRef) throws(HomeError) -> TraitID {
        switch ref {
        case .number(let n): return TraitID(n)
        case .name(let s):
            guard let t = trait(named: s) else { throw .notFound("no trait named '\(s)' in the catalogue") }
            return t.id
        }
    }

    /// The command of `trait` an ``IDRef`` names (spec or Swift name, any case).
    public func resolveCommand(_ ref: IDRef, in traitID: TraitID) throws(HomeError) -> CommandID {
        switch ref {
        case .number(let n): return CommandID(n)
        case .name(let s):
            guard let t = trait(traitID) else { throw .notFound("trait \(traitID.hex) is not in the catalogue, so '\(s)' cannot be looked up") }
            guard let c = t.commands.first(where: { $0.name.lowercased() == s.lowercased() || $0.swiftName.lowercased() == s.lowercased() }) else {
                let known = t.commands.map(\.swiftName).joined(separator: ", ")
                throw .unsupportedOperation("trait \(t.name) has no command '\(s)'" + (known.isEmpty ? "" : " (it has: \(known))"))
            }
            return c.id
        }
    }

    /// The attribute of `trait` an ``IDRef`` names (spec or Swift name, any case).
    public func resolveAttribute(_ ref: IDRef, in traitID: TraitID) throws(HomeError) -> AttributeID {
        switch ref {
        case .number(let n): return AttributeID(n)
        case .name(let s):
            guard let t = trait(traitID) else { throw .notFound("trait \(traitID.hex) is not in the catalogue, so '\(s)' cannot be looked up") }
            guard let a = t.attributes.first(where: { $0.name.lowercased() == s.lowercased() || $0.swiftName.lowercased() == s.lowercased() }) else {
                throw .unsupportedOperation("trait \(t.name) has no attribute '\(s)'")
            }
            return a.id
        }
    }
}

/// Vendor traits: traits a plugin declares for its own hardware (a spinner's RPM, a pump's
/// duty cycle), under the vendor's namespace and in Matter's manufacturer-specific cluster
/// range (Matter Core spec §7.10 "Manufacturer Extensible Identifiers": vendor prefix in the
/// upper 16 bits, cluster suffix `0xFC00…0xFFFE`).
///
/// ```swift
/// let spinner = TraitDescriptor.vendor(
///     namespace: "ExampleOrganization", id: 0xFFF1_FC01, name: "Spinner",
///     attributes: [.vendor(id: 0x0000, name: "RPM", type: .uint16, minimum: 0, maximum: 3000, unit: "rpm")],
///     commands: [.vendor(id: 0x00, name: "Spin", fields: [.vendor(name: "RPM", type: .uint16, maximum: 3000)])])
/// ```
extension TraitDescriptor {
    /// A vendor trait. `swiftName` defaults to the name without spaces plus `Trait`
    /// (`SpinnerTrait`); apps reach it as `traits[ExampleOrganization.SpinnerTrait.self]`.
    public static func vendor(
        namespace: String, id: TraitID, name: String, swiftName: String? = nil, revision: Int = 1,
        attributes: [AttributeDescriptor] = [], commands: [CommandDescriptor] = [], events: [EventDescriptor] = []
    ) -> TraitDescriptor {
        TraitDescriptor(
            id: id, name: name, swiftName: swiftName ?? (VendorNames.upperCamel(name) + "Trait"), revision: revision, features: [],
            attributes: attributes, commands: commands, events: events, isVendor: true, namespace: namespace)
    }

    /// `Namespace.SwiftName`, as an app writes it; the plain name for standard traits.
    public var qualifiedName: String { namespace.map { "\($0).\(swiftName)" } ?? swiftName }
}

extension AttributeDescriptor {
    /// An attribute of a vendor trait: mandatory, its Swift name the lower-camel-case name.
    public static func vendor(
        id: AttributeID, name: String, type: DataType, minimum: Int64? = nil, maximum: Int64? = nil, unit: String? = nil,
        nullable: Bool = false, writable: Bool = false, items: [EnumItem] = []
    ) -> AttributeDescriptor {
        AttributeDescriptor(
            id: id, name: name, swiftName: VendorNames.lowerCamel(name), type: type, specType: type.rawValue, minimum: minimum,
            maximum: maximum, nullable: nullable, writable: writable, unit: unit, conformance: .mandatory,
            conformanceExpression: "M", items: items)
    }
}

extension FieldDescriptor {
    /// A field of a vendor command or event.
    public static func vendor(
        name: String, type: DataType, minimum: Int64? = nil, maximum: Int64? = nil, optional: Bool = false,
        items: [EnumItem] = []
    ) -> FieldDescriptor {
        FieldDescriptor(
            name: name, swiftName: VendorNames.lowerCamel(name), type: type, specType: type.rawValue, minimum: minimum,
            maximum: maximum, optional: optional, items: items)
    }
}

extension CommandDescriptor {
    /// A command of a vendor trait.
    public static func vendor(id: CommandID, name: String, fields: [FieldDescriptor] = []) -> CommandDescriptor {
        CommandDescriptor(
            id: id, name: name, swiftName: VendorNames.lowerCamel(name), fields: fields, conformance: .mandatory,
            conformanceExpression: "M")
    }
}

extension EventDescriptor {
    /// An event of a vendor trait.
    public static func vendor(id: EventID, name: String, priority: String = "info", fields: [FieldDescriptor] = []) -> EventDescriptor {
        EventDescriptor(
            id: id, name: name, swiftName: VendorNames.lowerCamel(name), priority: priority, fields: fields,
            conformance: .mandatory, conformanceExpression: "M")
    }
}

extension Catalog {
    /// This catalogue with a plugin's vendor traits added, after checking them.
    ///
    /// A trait already in the catalogue with the identical description (the same plugin,
    /// restarted) is accepted as it is.
    /// - Throws: ``HomeError`` `invalidArgument` naming the trait and what is wrong: an ID
    ///   outside the manufacturer-specific range, a missing or malformed namespace, duplicate
    ///   attribute, command or event IDs or names, an empty range; `conflict` when the ID or
    ///   the qualified name is taken by a different trait.
    public func adding(vendorTraits: [TraitDescriptor]) throws(HomeError) -> Catalog {
        var added: [TraitDescriptor] = []
        for t in vendorTraits {
            try Self.check(vendorTrait: t)
            if let existing = traits[t.id] {
                if existing == t { continue }
                throw .conflict("vendor trait \(t.qualifiedName) (\(t.id.hex)): the ID is taken by \(existing.qualifiedName)")
            }
            if let other = (traits.values.filter(\.isVendor) + added).first(where: { $0.qualifiedName == t.qualifiedName }) {
                throw .conflict("vendor trait \(t.qualifiedName): the name is taken by \(other.id.hex)")
            }
            if added.contains(where: { $0.id == t.id }) {
                throw .conflict("vendor trait \(t.qualifiedName) (\(t.id.hex)) is declared twice")
            }
            added.append(t)
        }
        return added.isEmpty ? self : adding(traits: added)
    }

    /// Checks one vendor trait's declaration on its own.
    static func check(vendorTrait t: TraitDescriptor) throws(HomeError) {
        let label = "vendor trait \(t.qualifiedName) (\(t.id.hex))"
        guard t.isVendor, let namespace = t.namespace else {
            throw .invalidArgument("\(label): declare it with TraitDescriptor.vendor(namespace:…) (isVendor and a namespace)")
        }
        guard VendorNames.isIdentifier(namespace), VendorNames.isIdentifier(t.swiftName) else {
            throw .invalidArgument("\(label): the namespace and Swift name must be letters and digits, starting with a letter")
        }
        let prefix = t.id.rawValue >> 16
        let suffix = t.id.rawValue & 0xFFFF
        guard prefix != 0, prefix != 0xFFFF, (0xFC00...0xFFFE).contains(suffix) else {
            throw .invalidArgument(
                "\(label): the ID must be manufacturer-specific: a vendor prefix in the upper 16 bits and 0xFC00…0xFFFE below "
                    + "(0xFFF1_FC00 for the test vendor 0xFFF1)")
        }
        guard !t.name.trimmingSpaces.isEmpty else { throw .invalidArgument("\(label): the name is empty") }
        func unique<ID: Hashable>(_ what: String, _ ids: [ID], _ names: [String]) throws(HomeError) {
            if Set(ids).count != ids.count { throw .invalidArgument("\(label): two \(what)s share an ID") }
            if Set(names).count != names.count { throw .invalidArgument("\(label): two \(what)s share a name") }
            if let blank = names.first(where: { !VendorNames.isIdentifier(VendorNames.upperCamel($0)) }) {
                throw .invalidArgument("\(label): \(what) name '\(blank)' needs letters or digits, starting with a letter")
            }
        }
        try unique("attribute", t.attributes.map(\.id), t.attributes.map(\.name))
        try unique("command", t.commands.map(\.id), t.commands.map(\.name))
        try unique("event", t.events.map(\.id), t.events.map(\.name))
        for a in t.attributes {
            if let lo = a.minimum, let hi = a.maximum, lo > hi {
                throw .invalidArgument("\(label): attribute \(a.name) has an empty range \(lo)…\(hi)")
            }
            if a.id.rawValue >= 0xF000 {
                throw .invalidArgument("\(label): attribute \(a.name) has a global attribute ID \(a.id.hex) (use 0x0000…0x4FFF)")
            }
        }
        for field in t.commands.flatMap(\.fields) + t.events.flatMap(\.fields) {
            if let lo = field.minimum, let hi = field.maximum, lo > hi {
                throw .invalidArgument("\(label): field \(field.name) has an empty range \(lo)…\(hi)")
            }
        }
    }
}

/// Name helpers for vendor declarations.
enum VendorNames {
    static func words(_ s: String) -> [Substring] {
        s.split(whereSeparator: { !($0.isLetter || $0.isNumber) || !$0.isASCII })
    }

    /// `spin speed` → `SpinSpeed`; `RPM` stays `RPM`.
    static func upperCamel(_ s: String) -> String {
        words(s).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// `Spin Speed` → `spinSpeed`; `RPM` → `rpm`; `RPMTarget` → `rpmTarget`.
    static func lowerCamel(_ s: String) -> String {
        let upper = Array(upperCamel(s))
        var leading = 0
        while leading < upper.count, upper[leading].isUppercase { leading += 1 }
        // Lower the leading run of capitals, except the first letter of the next word.
        let cut = leading == upper.count || leading <= 1 ? leading : leading - 1
        return String(upper[..<cut]).lowercased() + String(upper[cut...])
    }

    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.first, first.isASCII, first.isLetter else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        let start = firstIndex(where: { $0 != " " }) ?? endIndex
        let end = lastIndex(where: { $0 != " " }).map { index(after: $0) } ?? start
        return self[start..<end]
    }
}

/// What the hot path needs to check one attribute value, without copying descriptors.
struct AttributeRule: Sendable {
    let type: DataType
    let range: ClosedRange<Int64>?
    let nullable: Bool
    /// Allowed values of an enumeration (nil when any value in range is allowed).
    let enumValues: Set<Int64>?

    init(_ a: AttributeDescriptor) {
        type = a.type
        range = a.allowedRange
        nullable = a.nullable
        enumValues = (a.type == .enum8 || a.type == .enum16) && !a.items.isEmpty ? Set(a.items.map(\.value)) : nil
    }

    /// Whether the value certainly passes ``AttributeDescriptor/validate(_:in:)``; false means
    /// "ask the descriptor" (which explains why).
    func accepts(_ value: Value) -> Bool {
        switch value {
        case .null: return nullable
        case .bool: return type == .bool
        case .int(let i):
            guard let range else { return type == .single || type == .double }
            return range.contains(i) && (enumValues?.contains(i) ?? true)
        case .double:
            // Integral doubles for integer attributes: let the descriptor decide.
            return type == .single || type == .double
        case .string: return type == .string || type == .octets
        case .list: return false  // element checks: let the descriptor decide
        case .object: return type == .structure
        }
    }
}

/// The rules of one trait's attributes, shared by reference.
final class TraitRules: Sendable {
    let attributes: [AttributeID: AttributeRule]
    init(_ t: TraitDescriptor) {
        attributes = Dictionary(t.attributes.map { ($0.id, AttributeRule($0)) }, uniquingKeysWith: { a, _ in a })
    }
}

/// The verdict of ``Catalog/check(_:_:_:)``.
public enum AttributeCheck: Sendable, Equatable {
    case valid
    case unknownTrait
    case unknownAttribute
    /// The value is refused; the message names the attribute and what is allowed.
    case invalid(String)
}

extension Catalog {
    /// Checks a reported value against its attribute, fast: no descriptor is copied unless the
    /// value is refused (then the message comes from ``AttributeDescriptor/validate(_:in:)``).
    public func check(_ trait: TraitID, _ attribute: AttributeID, _ value: Value) -> AttributeCheck {
        guard let rules = rules[trait] else { return .unknownTrait }
        guard let rule = rules.attributes[attribute] else { return .unknownAttribute }
        if rule.accepts(value) { return .valid }
        guard let t = traits[trait], let a = t.attribute(attribute) else { return .unknownAttribute }
        do throws(HomeError) {
            try a.validate(value, in: t)
            return .valid
        } catch {
            return .invalid(error.message)
        }
    }
}

extension Catalog {
    /// Why a plugin's value for an attribute is refused, or nil when it is accepted: the one
    /// rule for a device's initial values (`publish`) and later reports alike.
    ///
    /// Values of traits the catalogue does not know pass; an attribute a known trait does not
    /// declare is refused unless it is manufacturer-specific (`0xF000` and up, riding along
    /// on a standard trait).
    public func refusal(_ trait: TraitID, _ attribute: AttributeID, _ value: Value) -> String? {
        switch check(trait, attribute, value) {
        case .valid, .unknownTrait:
            return nil
        case .invalid(let message):
            return message
        case .unknownAttribute:
            if attribute.rawValue < 0xF000, let descriptor = traits[trait] {
                return "trait \(descriptor.name) has no attribute \(attribute.hex)"
            }
            return nil
        }
    }
}

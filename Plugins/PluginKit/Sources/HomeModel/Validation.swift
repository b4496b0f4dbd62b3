extension AttributeDescriptor {
    /// Checks that `value` is of this attribute's type and inside its allowed range.
    ///
    /// - Throws: ``HomeError`` `invalidArgument`, naming the attribute and what is allowed.
    public func validate(_ value: Value, in trait: TraitDescriptor? = nil) throws(HomeError) {
        try checkValue(
            value, label: "attribute \(trait.map { "\($0.name)." } ?? "")\(name) (\(id.hex))", type: type, elementType: elementType,
            range: allowedRange, nullable: nullable, items: items)
    }
}

extension FieldDescriptor {
    /// Checks that `value` fits this field.
    public func validate(_ value: Value, in context: String) throws(HomeError) {
        try checkValue(
            value, label: "field \(name) of \(context)", type: type, elementType: nil, range: allowedRange,
            nullable: nullable, items: items)
    }
}

extension CommandDescriptor {
    /// Checks a command's arguments: every required field present and valid, no unknown field.
    ///
    /// Arguments are keyed by spec name (`OnOffTransitionTime`) or Swift name (`onOffTransitionTime`).
    /// - Returns: the arguments keyed by spec name.
    public func validate(arguments: [String: Value], trait: TraitDescriptor) throws(HomeError) -> [String: Value] {
        let context = "command \(trait.name).\(name)"
        var result: [String: Value] = [:]
        var unused = Set(arguments.keys)
        for field in fields {
            let key = arguments[field.name] != nil ? field.name : field.swiftName
            guard let value = arguments[key] else {
                if field.optional || field.nullable { continue }
                throw .invalidArgument("\(context) needs argument '\(field.swiftName)' (\(field.specType))")
            }
            unused.remove(key)
            try field.validate(value, in: context)
            result[field.name] = value
        }
        if let extra = unused.sorted().first {
            let known = fields.map(\.swiftName).joined(separator: ", ")
            throw .invalidArgument(
                "\(context) has no argument '\(extra)'" + (known.isEmpty ? " (it takes none)" : " (it takes: \(known))"))
        }
        return result
    }
}

/// Checks a value; `label` is only built when there is something to say.
private func checkValue(
    _ value: Value, label: @autoclosure () -> String, type: DataType, elementType: DataType?, range: ClosedRange<Int64>?,
    nullable: Bool, items: [EnumItem]
) throws(HomeError) {
    if value.isNull {
        if nullable { return }
        throw .invalidArgument("\(label()) may not be null")
    }
    func wrongType(_ expected: String) -> HomeError {
        .invalidArgument("\(label()) must be \(expected), not \(value.kindName) \(value)")
    }
    switch type {
    case .bool:
        guard value.boolValue != nil else { throw wrongType("a boolean") }
    case .single, .double:
        guard value.doubleValue != nil else { throw wrongType("a number") }
    case .string:
        guard value.stringValue != nil else { throw wrongType("a string") }
    case .octets:
        guard value.stringValue != nil else { throw wrongType("a hex or base64 string") }
    case .list:
        guard let list = value.listValue else { throw wrongType("a list") }
        if let elementType, elementType.isInteger, let r = elementType.naturalRange {
            for (i, element) in list.enumerated() {
                try checkValue(
                    element, label: "\(label())[\(i)]", type: elementType, elementType: nil, range: r,
                    nullable: false, items: [])
            }
        }
    case .structure:
        guard value.objectValue != nil else { throw wrongType("an object") }
    default:
        guard let i = value.intValue else { throw wrongType("an integer") }
        if let range, !range.contains(i) {
            throw .invalidArgument("\(label()) is \(i), outside the allowed range \(range.lowerBound)…\(range.upperBound)")
        }
        if type == .enum8 || type == .enum16, !items.isEmpty, !items.contains(where: { $0.value == i }) {
            let allowed = items.map { "\($0.value) (\($0.name))" }.joined(separator: ", ")
            throw .invalidArgument("\(label()) is \(i), not one of the allowed values: \(allowed)")
        }
    }
}

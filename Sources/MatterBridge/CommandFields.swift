import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// A command's fields as the root clusters read them: a missing or mistyped field is
/// INVALID_COMMAND (Core Specification 8.10.1), a value out of its range CONSTRAINT_ERROR.
struct CommandFields {
    let element: TLVElement?

    init(_ element: TLVElement?) throws(CommissioningError) {
        if let element, case .structure = element.value {
            self.element = element
        } else if element == nil {
            self.element = nil
        } else {
            throw CommissioningError(.invalidCommand, "the command fields are not a structure")
        }
    }

    private func field(_ n: UInt8) -> TLVElement? { element?[context: n] }

    private func required(_ n: UInt8) throws(CommissioningError) -> TLVElement {
        guard let f = field(n) else { throw CommissioningError(.invalidCommand, "field \(n) is missing") }
        return f
    }

    private static func convert<T>(_ n: UInt8, _ body: () throws(TLVError) -> T) throws(CommissioningError) -> T {
        do throws(TLVError) { return try body() } catch {
            throw CommissioningError(error.code == .outOfRange ? .constraintError : .invalidCommand, "field \(n): \(error)")
        }
    }

    func uint<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, as type: T.Type) throws(CommissioningError) -> T {
        let f = try required(n)
        return try Self.convert(n) { () throws(TLVError) in try f.uint(as: type) }
    }

    func optionalUInt<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, as type: T.Type) throws(CommissioningError) -> T? {
        guard let f = field(n), !f.isNull else { return nil }
        return try Self.convert(n) { () throws(TLVError) in try f.uint(as: type) }
    }

    func bytes(_ n: UInt8, maxLength: Int = 1024) throws(CommissioningError) -> [UInt8] {
        let f = try required(n)
        let b = try Self.convert(n) { () throws(TLVError) in try f.bytes() }
        guard b.count <= maxLength else { throw CommissioningError(.constraintError, "field \(n) is longer than \(maxLength) bytes") }
        return b
    }

    func optionalBytes(_ n: UInt8, maxLength: Int = 1024) throws(CommissioningError) -> [UInt8]? {
        guard let f = field(n), !f.isNull else { return nil }
        return try bytes(n, maxLength: maxLength)
    }

    func string(_ n: UInt8) throws(CommissioningError) -> String {
        let f = try required(n)
        return try Self.convert(n) { () throws(TLVError) in try f.string() }
    }

    func optionalBool(_ n: UInt8) throws(CommissioningError) -> Bool? {
        guard let f = field(n), !f.isNull else { return nil }
        return try Self.convert(n) { () throws(TLVError) in try f.bool() }
    }
}

extension CommandResult {
    /// A refusal as the IM puts it on the wire.
    init(_ error: CommissioningError) {
        self = .status(StatusIB(IMStatus(rawValue: error.status.rawValue), clusterStatus: error.clusterStatus))
    }

    /// Runs a command handler; its `CommissioningError` becomes the status.
    static func handling(_ body: () throws(CommissioningError) -> CommandResult) -> CommandResult {
        do throws(CommissioningError) { return try body() } catch { return CommandResult(error) }
    }

    /// A response command whose fields are these context-tagged members.
    static func response(_ command: UInt32, _ members: [TLVElement]) -> CommandResult {
        .response(command: command, fields: .structure(members))
    }
}

/// Context-tagged member builders.
func field<T: BinaryInteger>(_ n: UInt8, _ v: T) -> TLVElement { TLVElement(.context(n), .unsigned(UInt64(v))) }
func field(_ n: UInt8, _ s: String) -> TLVElement { TLVElement(.context(n), .utf8(s)) }
func field(_ n: UInt8, bytes: [UInt8]) -> TLVElement { TLVElement(.context(n), .bytes(bytes)) }
func field(_ n: UInt8, bool: Bool) -> TLVElement { TLVElement(.context(n), .bool(bool)) }
func nullField(_ n: UInt8) -> TLVElement { TLVElement(.context(n), .null) }
func anonymous<T: BinaryInteger>(_ v: T) -> TLVElement { TLVElement(.unsigned(UInt64(v))) }

/// The fabric-index member of fabric-scoped structs (tag 0xFE, 7.13.6).
let fabricIndexTag: UInt8 = 0xFE

/// The IM's status type (MatterCommissioning has a smaller one of the same name).
typealias IMStatus = MatterInteraction.InteractionStatus

extension MatterCommissioning.InteractionStatus {
    static let invalidDataType = Self(rawValue: 0x8D)
    static let unsupportedCommand = Self(rawValue: 0x81)
}

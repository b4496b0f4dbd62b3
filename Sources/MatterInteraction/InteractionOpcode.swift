public import MatterMessaging

/// The message types of the Interaction Model protocol (Matter Core Specification 10.2.1,
/// "IM Protocol Messages"; protocol ID 0x0001 of the Matter standard vendor).
public enum InteractionOpcode: UInt8, Sendable, CaseIterable {
    case statusResponse = 0x01
    case readRequest = 0x02
    case subscribeRequest = 0x03
    case subscribeResponse = 0x04
    case reportData = 0x05
    case writeRequest = 0x06
    case writeResponse = 0x07
    case invokeRequest = 0x08
    case invokeResponse = 0x09
    case timedRequest = 0x0A
}

extension ProtocolID {
    /// The Interaction Model protocol (an alias of `interactionModel`, for readers of chapter 10).
    public static var im: ProtocolID { .interactionModel }
}

/// The Interaction Model revision this implementation speaks (the `InteractionModelRevision`
/// member, context tag 0xFF, of every IM message; 10.6.1). Revision 11 is Matter 1.2/1.3.
public let interactionModelRevision: UInt8 = 11

/// The context tag of `InteractionModelRevision` in every IM message.
let revisionTag: UInt8 = 0xFF

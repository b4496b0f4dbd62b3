public import HomeModel

extension DeviceSnapshot {
    /// The On/Off attribute of an output device (one with an On/Off trait), or nil for
    /// devices without one (sensors) or that have not reported it yet.
    public var onOffValue: Bool? {
        for t in types {
            if let on = t.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff]?.boolValue { return on }
        }
        return nil
    }

    /// The device type that carries the On/Off trait, to address commands to.
    public var onOffDeviceType: DeviceTypeID? {
        (types.first(where: { $0.isPrimary && $0.traits[OnOffTrait.identifier] != nil })
            ?? types.first(where: { $0.traits[OnOffTrait.identifier] != nil }))?.id
    }
}

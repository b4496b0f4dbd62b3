import HAP
import MatterCommissioning
import MatterSecurity
import Testing

@Suite struct AdvertisementTests {
    @Test func commissionableRecord_subtypesAndTXT() {
        let node = MatterAdvertisement.Commissionable(
            discriminator: 3840, vendorID: 0xFFF1, productID: 0x8000, commissioningMode: 1, deviceType: 0x000E,
            deviceName: "Hearth bridge in the living room with a long name", pairingHint: 33, pairingInstruction: "")
        let record = MatterAdvertisement.commissionable(node, instanceName: "0123456789ABCDEF")
        #expect(record.serviceType == "_matterc._udp" && record.port == 5540)
        #expect(record.subtypes == ["_L3840", "_S15", "_V65521", "_T14", "_CM"])
        #expect(record.subtypeServiceNames.first == "_L3840._sub._matterc._udp")
        let txt = Dictionary(uniqueKeysWithValues: record.txt.map { ($0.key, $0.value) })
        #expect(txt["D"] == "3840" && txt["VP"] == "65521+32768" && txt["CM"] == "1" && txt["DT"] == "14" && txt["PH"] == "33")
        #expect(txt["SII"] == "500" && txt["SAI"] == "300" && txt["SAT"] == "4000" && txt["T"] == "0")
        #expect(txt["DN"] == "Hearth bridge in the living room")  // cut to 32 bytes
        #expect(txt["PI"] == nil)
        // Not in commissioning mode: no _CM.
        var closed = node
        closed.commissioningMode = 0
        #expect(!closed.subtypes.contains("_CM"))
        #expect(MatterAdvertisement.Commissionable(discriminator: 0x123, vendorID: 1, productID: 2, commissioningMode: 2).subtypes
            == ["_L291", "_S1", "_V1", "_CM"])
    }

    /// The spec's compressed fabric ID example (4.3.2.2): root key 4a9f42…, fabric ID
    /// 0x2906C908D115D362 → 87E1B004E235A130.
    @Test func operationalRecord_specVector() throws {
        let hex = "044a9f42b1ca4840d37292bbc7f6a7e11e22200c976fc900dbc98a7a383a641cb8254a2e56d4e295a847943b4e3897c4a773e930277b4d9fbede8a052686bfacfa"
        var rootKey: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            rootKey.append(try #require(UInt8(hex[i..<j], radix: 16)))
            i = j
        }
        let compressed = try Fabric.compressedFabricID(rootPublicKey: rootKey, fabricID: 0x2906_C908_D115_D362)
        #expect(compressed == 0x87E1_B004_E235_A130)
        let record = MatterAdvertisement.operational(compressedFabricID: compressed, nodeID: 0xDE)
        #expect(record.serviceType == "_matter._tcp")
        #expect(record.instanceName == "87E1B004E235A130-00000000000000DE")
        #expect(record.subtypes == ["_I87E1B004E235A130"])
        #expect(record.txt.map(\.key) == ["SII", "SAI", "SAT", "T"])
    }

    @Test func operationalRecord_ofACommissionedFabric() throws {
        var state = Fixture.state()
        try Fixture.commission(&state, authority: try TestAuthority(), nodeID: 0xABC, now: .now)
        let fabric = try #require(state.fabrics[1])
        let record = MatterAdvertisement.operational(fabric, port: 5541)
        #expect(record.instanceName == fabric.operationalInstanceName && record.instanceName.hasSuffix("-0000000000000ABC"))
        #expect(record.subtypes == ["_I" + String(record.instanceName.prefix(16))] && record.port == 5541)
    }

    @Test func avahiArgumentsCarrySubtypes() {
        let args = DNSSDAdvertiser.arguments(name: "0123", type: "_matterc._udp", subtypes: ["_L3840", "_CM"], port: 5540,
                                             txt: [("D", "3840"), ("CM", "1")])
        #expect(args == ["--subtype=_L3840._sub._matterc._udp", "--subtype=_CM._sub._matterc._udp", "-s", "0123", "_matterc._udp", "5540",
                         "D=3840", "CM=1"])
    }

    @Test func advertiserWithoutAvahi_saysWhatToInstall() {
        let missing = DNSSDAdvertiser(binaryPath: "/nonexistent/avahi-publish-service")
        #expect(missing.unavailableReason?.contains("avahi-utils") == true)
        #expect(throws: DNSSDAdvertiserError.self) { try missing.publish(key: "x", name: "x", type: "_matterc._udp", port: 5540, txt: []) }
        let noDaemon = DNSSDAdvertiser(binaryPath: "/bin/true", daemonSocket: "/nonexistent/avahi-socket")
        #expect(noDaemon.unavailableReason?.contains("avahi-daemon is not running") == true)
    }
}

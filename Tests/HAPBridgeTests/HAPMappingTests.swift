import HAP
@testable import HAPBridge
import HomeModel
import Testing

@Suite struct HAPMappingTests {
    @Test func placeholder_iidAllocatorStartsInfoAt1() {
        var a = IIDAllocator([:])
        #expect(a.iid("info") == 1)
        #expect(a.iid("info.identify") == 2)
        #expect(a.iid("info") == 1)
    }
}

/// "15 20 00 2a" → bytes.
func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return out
}

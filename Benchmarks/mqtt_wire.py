"""MQTT 3.1.1 packet pieces for the benchmarks' plain-socket publishers (no client library):
Benchmarks/Startup/publish_retained.py and Benchmarks/HomeAssistant/ha_bench.py."""


def varint(n: int) -> bytes:
    """The remaining-length encoding: 7 bits a byte, the high bit set while more follow."""
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def packet(kind: int, body: bytes) -> bytes:
    """A control packet: its first byte (type and flags), its length, its body."""
    return bytes([kind]) + varint(len(body)) + body


def string(s: str) -> bytes:
    """A UTF-8 string with its two-byte length."""
    b = s.encode()
    return len(b).to_bytes(2, "big") + b

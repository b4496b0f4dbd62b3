#!/usr/bin/env python3
"""Publishes N Home Assistant-discovered temperature sensors as retained MQTT messages (a
config and a state each) to a broker on 127.0.0.1, then waits for the broker's PUBACK of a
last QoS 1 message, so every retained message is stored before it returns. Plain MQTT 3.1.1
over a socket: no client library needed.

    publish_retained.py PORT N
"""
import json
import os
import socket
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mqtt_wire import packet, string  # noqa: E402  (Benchmarks/mqtt_wire.py)


def main() -> None:
    port, count = int(sys.argv[1]), int(sys.argv[2])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(packet(0x10, string("MQTT") + bytes([4, 0x02, 0, 60]) + string("startup-bench-publisher")))
    if sock.recv(4)[:1] != b"\x20":
        sys.exit("no CONNACK")
    out = bytearray()
    for i in range(count):
        config = {
            "name": f"Sensor {i}", "stat_t": f"bench/s{i}/state", "val_tpl": "{{ value_json.t }}",
            "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": f"bench-s{i}",
        }
        for topic, payload in ((f"homeassistant/sensor/bench/s{i}/config", json.dumps(config)),
                               (f"bench/s{i}/state", json.dumps({"t": round(15 + (i % 100) / 10, 1)}))):
            out += packet(0x31, string(topic) + payload.encode())
        if len(out) > 65536:
            sock.sendall(out)
            out.clear()
    # A last QoS 1 message: its PUBACK means the broker has handled everything before it.
    out += packet(0x32, string("bench/done") + (1).to_bytes(2, "big") + b"1")
    sock.sendall(out)
    reply = b""
    while len(reply) < 4:
        chunk = sock.recv(4 - len(reply))
        if not chunk:
            sys.exit("broker closed the connection")
        reply += chunk
    if reply[0] != 0x40:
        sys.exit(f"expected PUBACK, got {reply!r}")
    sock.sendall(packet(0xE0, b""))
    sock.close()


if __name__ == "__main__":
    main()

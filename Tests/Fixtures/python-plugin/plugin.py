#!/usr/bin/env python3
"""A Hearth plugin written in Python: a lamp, speaking the isolated-mode protocol (version 1).

It shows that a plugin need not be Swift: hearthd starts this program with one end of a socket
pair on the descriptor named by HEARTH_PLUGIN_FD (and `--fd N`), and they exchange
length-prefixed JSON messages (docs/plugin-protocol.md). Standard library only.

Configuration (its section of hearth.yaml):
    name: the lamp's suggested name (a string; default "Python Lamp")
    ignoreStop: true to misbehave on purpose (tests): keep running after "stop"

It declares a vendor trait in its hello (PythonExample.FanTrait: the lamp's fan, its speed in
percent, a SetSpeed command); PYLAMP_FAN_TRAIT_ID in the environment overrides the trait's ID
(tests: a bad ID gets the plugin refused).
"""
import json
import os
import socket
import struct
import sys

ON_OFF_LIGHT = 0x0100
IDENTIFY, GROUPS, ON_OFF = 0x0003, 0x0004, 0x0006
ON_OFF_ATTRIBUTE = 0x0000
OFF, ON, TOGGLE = 0x00, 0x01, 0x02
FAN = int(os.environ.get("PYLAMP_FAN_TRAIT_ID", "0xFFF1FC10"), 0)
FAN_SPEED, SET_SPEED = 0x0000, 0x00
FAN_TRAIT = {
    "namespace": "PythonExample", "id": f"0x{FAN:08X}", "name": "Fan",
    "attributes": [{"id": FAN_SPEED, "name": "Speed", "type": "uint8", "minimum": 0, "maximum": 100, "unit": "%"}],
    "commands": [{"id": SET_SPEED, "name": "Set Speed", "fields": [{"name": "Percent", "type": "uint8", "maximum": 100}]}],
}


def main():
    fd = int(os.environ.get("HEARTH_PLUGIN_FD", "3"))
    if "--fd" in sys.argv:
        fd = int(sys.argv[sys.argv.index("--fd") + 1])
    sock = socket.socket(fileno=fd)

    def send(message):
        body = json.dumps(message).encode("utf-8")
        sock.sendall(struct.pack(">I", len(body)) + body)

    def receive():
        header = read_exactly(4)
        if header is None:
            return None
        (length,) = struct.unpack(">I", header)
        body = read_exactly(length)
        return None if body is None else json.loads(body)

    def read_exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    send({"type": "hello", "protocol": 1,
          "manifest": {"id": "pylamp", "name": "Python lamp", "version": "1.0.0",
                       "summary": "A lamp written in Python"},
          "ping": True, "vendorTraits": [FAN_TRAIT]})
    start = receive()
    if start is None or start.get("type") != "start":
        return 2
    config = start["configuration"]
    section = config.get("value") or {}
    name = section.get("name", "Python Lamp")
    if not isinstance(name, str):
        line = config.get("lines", {}).get("name")
        where = f'{config.get("file", "hearth.yaml")}{f":{line}" if line else ""}'
        send({"type": "invalidConfiguration",
              "message": f'{where}: {config.get("keyPath", "")}.name: expected a string'})
        return 78

    lamp = False
    send({"type": "publish", "device": {
        "localID": "lamp", "name": name, "manufacturer": "Hearth", "model": "Python",
        "types": [{"id": ON_OFF_LIGHT, "isPrimary": True,
                   "traits": {hex4(IDENTIFY): {}, hex4(GROUPS): {},
                              hex4(ON_OFF): {hex4(ON_OFF_ATTRIBUTE): lamp},
                              f"0x{FAN:08X}": {hex4(FAN_SPEED): 0}}}]}})
    send({"type": "report", "reports": [
        {"localID": "lamp", "trait": ON_OFF, "attribute": ON_OFF_ATTRIBUTE, "value": lamp}]})
    send({"type": "log", "level": "info", "message": f"python plugin serving '{name}'"})

    while True:
        message = receive()
        if message is None:
            return 0
        if message.get("type") == "stop":
            if section.get("ignoreStop") is True:
                continue
            send({"type": "stopped"})
            return 0
        if message.get("type") == "ping":
            send({"type": "pong", "id": message.get("id")})
            continue
        if message.get("type") == "command":
            command, trait = message["command"], message["trait"]
            if trait == FAN and command == SET_SPEED:
                speed = message.get("arguments", {}).get("Percent", 0)
                send({"type": "report", "reports": [
                    {"localID": "lamp", "trait": FAN, "attribute": FAN_SPEED, "value": speed}]})
                send({"type": "result", "id": message["id"], "value": None})
                continue
            if trait != ON_OFF or command not in (OFF, ON, TOGGLE):
                send({"type": "result", "id": message["id"],
                      "error": {"code": "unsupportedOperation",
                                "message": "the python lamp supports on, off and toggle"}})
                continue
            lamp = (not lamp) if command == TOGGLE else (command == ON)
            # The "hardware" confirms with a report, then the command is answered.
            send({"type": "report", "reports": [
                {"localID": "lamp", "trait": ON_OFF, "attribute": ON_OFF_ATTRIBUTE, "value": lamp}]})
            send({"type": "result", "id": message["id"], "value": None})
        elif message.get("type") == "write":
            send({"type": "result", "id": message["id"],
                  "error": {"code": "unsupportedOperation", "message": "nothing to write"}})
        # Other message types are ignored, as the protocol asks.


def hex4(n):
    return f"0x{n:04X}"


if __name__ == "__main__":
    sys.exit(main())

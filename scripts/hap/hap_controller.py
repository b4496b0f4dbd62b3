"""The real HAP controller (aiohomekit 4.0.1) against a real hearthd with the HAP bridge on.

Run inside a private network namespace by scripts/test-hap-controller. Starts hearthd (simulated
GPIO chip: a door contact, a button, a relay), then by direct IP (no mDNS):
wrong setup code refused → pair → list accessories → read → write (the relay's line goes high)
→ subscribe → events for door edges and a button's single, double and long press → bad input on
raw sockets → hearthd restart with the exposure read-only (pair-verify again, same aid/iid; a
write refused with -70401) → remove pairing. With --mdns, it finds the bridge
through avahi first. Prints "ok: …" per step and BENCH lines; exits non-zero on the first failure.
"""
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

from aiohomekit.characteristic_cache import CharacteristicCacheMemory
from aiohomekit.controller.ip.controller import IpController
from aiohomekit.controller.ip.discovery import IpDiscovery
from aiohomekit.model.categories import Categories
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.zeroconf import HomeKitService

HEARTHD, PLUGINS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
MDNS = "--mdns" in sys.argv
PORT = 51826
CODE = "031-45-154"
GPIO = os.path.join(WORK, "gpio")
ON = "00000025-0000-1000-8000-0026BB765291"
CONTACT = "0000006A-0000-1000-8000-0026BB765291"
PROG_EVENT = "00000073-0000-1000-8000-0026BB765291"
NAME = "00000023-0000-1000-8000-0026BB765291"


def fail(msg):
    print("FAIL:", msg, flush=True)
    raise SystemExit(1)


def ok(msg):
    print("ok:", msg, flush=True)


class Hearthd:
    def __init__(self):
        self.proc = None
        self.config = os.path.join(WORK, "hearth.yaml")
        self.write_config()

    def write_config(self, read_only=False):
        """hearth.yaml; read_only: the exposure setting's read-only mode (allowControl: false)."""
        exposure = "exposure: { devices: { allowControl: false } }\n" if read_only else ""
        with open(self.config, "w") as f:
            f.write(f"""
log: {{ level: info }}
storage: {{ database: {WORK}/hearth.sqlite }}
{exposure}plugins:
  gpio:
    simulated:
      - {{ chip: sim0, lines: [DOOR, BUTTON, RELAY], control: {GPIO} }}
    lines:
      - {{ id: front-door, chip: sim0, line: DOOR, role: contact, debounce: 1ms, name: Front door, room: Hallway }}
      - {{ id: doorbell, chip: sim0, line: BUTTON, role: button, long-press: 800ms, multi-press-window: 200ms, name: Doorbell, room: Hallway }}
      - {{ id: pump, chip: sim0, line: RELAY, role: relay, initial: "off", name: Garden pump, room: Hallway }}
hap:
  enabled: true
  listen: 127.0.0.1:{PORT}
  name: Hearth Test
  setupCode: {CODE}
  advertise: {"true" if MDNS else "false"}
""")

    def start(self):
        log = open(os.path.join(WORK, "hearthd.log"), "a")
        self.proc = subprocess.Popen([HEARTHD, "--config", self.config, "--plugins", PLUGINS], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail(f"hearthd exited with {self.proc.returncode}; see hearthd.log")
            try:
                socket.create_connection(("127.0.0.1", PORT), 0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            fail("hearthd's HAP port did not open within 60 s")
        # The accessories appear once the GPIO plugin reported its devices.
        time.sleep(1.0)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def gpio(line, level):
    with open(os.path.join(GPIO, "control"), "w") as f:
        f.write(f"sim0 {line} {level}\n")


def relay_high():
    with open(os.path.join(GPIO, "state")) as f:
        for l in f:
            if " RELAY " in l:
                return "value=1" in l.split()
    return None


def raw(request: bytes) -> bytes:
    s = socket.create_connection(("127.0.0.1", PORT), 5)
    s.sendall(request)
    s.settimeout(60)  # a debug build's SRP takes seconds
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 4 + int(
            ([l for l in data.split(b"\r\n") if l.lower().startswith(b"content-length:")] or [b"c:0"])[0].split(b":")[1]
        ):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return data


def index(accessories):
    """name → {type uuid → (aid, iid)}"""
    out = {}
    for a in accessories:
        name = None
        chars = {}
        for s in a["services"]:
            for c in s["characteristics"]:
                t = c["type"].upper()
                if len(t) <= 8:
                    t = t.rjust(8, "0") + "-0000-1000-8000-0026BB765291"
                if t == NAME and name is None:
                    name = c.get("value")
                chars.setdefault(t, (a["aid"], c["iid"]))
        out[name] = chars
    return out


HEARTHD_PROC = []


async def main():
    os.makedirs(GPIO, exist_ok=True)
    hearthd = Hearthd()
    HEARTHD_PROC.append(hearthd)
    hearthd.start()
    controller = IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=None)
    if MDNS:
        from aiohomekit.zeroconf import ZeroconfServiceListener
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

        azc = AsyncZeroconf(ip_version=IPVersion.V4Only)
        browser = AsyncServiceBrowser(azc.zeroconf, ["_hap._tcp.local."], listener=ZeroconfServiceListener())
        controller = IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=azc)
        await controller.async_start()
        found = None
        for _ in range(3):
            try:
                found = await controller.async_find(_bridge_id(), timeout=10)
                break
            except Exception as e:  # noqa: BLE001
                print("mDNS find retry:", e, flush=True)
        if not found:
            fail("the bridge was not found over mDNS")
        d = found.description
        ok(f"found over mDNS: {d.name} at {d.address}:{d.port} c#={d.config_num} sf={int(d.status_flags)} category={d.category}")
        if d.port != PORT or d.category != Categories.BRIDGE or not (d.status_flags & StatusFlags.UNPAIRED):
            fail(f"unexpected TXT: {d}")
        discovery = found
    else:
        svc = HomeKitService(
            name="Hearth Test", id=_bridge_id(), model="Hearth Test", feature_flags=FeatureFlags(0), status_flags=StatusFlags.UNPAIRED,
            config_num=1, state_num=1, category=Categories.BRIDGE, protocol_version="1.1", type="_hap._tcp.local.",
            address="127.0.0.1", addresses=["127.0.0.1"], port=PORT)
        discovery = IpDiscovery(controller, svc)

    # Bad input before pairing: malformed TLV8, and /accessories without a session.
    r = raw(b"POST /pair-setup HTTP/1.1\r\nContent-Type: application/pairing+tlv8\r\nContent-Length: 3\r\n\r\n\x06\x05\x01")
    if b"200" not in r.split(b"\r\n")[0] or b"\x07\x01\x01" not in r:
        fail(f"malformed TLV8 was not refused with an Unknown error: {r!r}")
    ok("malformed TLV8 refused (TLV error Unknown)")
    r = raw(b"GET /accessories HTTP/1.1\r\n\r\n")
    if b" 470 " not in r.split(b"\r\n")[0]:
        fail(f"/accessories without pair-verify was answered {r[:40]!r}")
    ok("/accessories before pair-verify answered 470")
    # A controller that disconnects mid-setup (after M1) does not block the next one.
    r = raw(b"POST /pair-setup HTTP/1.1\r\nContent-Length: 6\r\n\r\n\x06\x01\x01\x00\x01\x00")
    if b"\x06\x01\x02" not in r:
        fail(f"pair-setup M1 was not answered with M2: {r[:60]!r}")
    await asyncio.sleep(0.3)
    ok("a controller that disconnected after M1 (mid-setup) does not block the next one")

    # A wrong setup code: refused (and counted by the bridge).
    finish = await discovery.async_start_pairing("hearth")
    try:
        await finish("111-22-333")
        fail("a wrong setup code was accepted")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        ok(f"wrong setup code refused ({type(e).__name__})")
    await discovery.connection.close()

    t0 = time.monotonic()
    finish = await discovery.async_start_pairing("hearth")
    pairing = await finish(CODE)
    pair_setup = time.monotonic() - t0
    print(f"BENCH pair-setup {pair_setup:.3f} s", flush=True)
    ok("paired with the setup code")
    pairing_data = dict(pairing._pairing_data)

    accessories = await pairing.list_accessories_and_characteristics()
    idx = index(accessories)
    print("accessories:", {k: len(v) for k, v in idx.items()}, flush=True)
    for need in ("Hearth Test", "Front door", "Doorbell", "Garden pump"):
        if need not in idx:
            fail(f"accessory {need!r} missing: {list(idx)}")
    ok(f"listed {len(accessories)} accessories (bridge + {len(accessories) - 1} devices)")
    pump = idx["Garden pump"][ON]
    door = idx["Front door"][CONTACT]
    bell = idx["Doorbell"][PROG_EVENT]
    ids_before = {n: sorted(v.values()) for n, v in idx.items()}

    got = await pairing.get_characteristics([pump, door])
    if got[pump].get("value") is not False:
        print(json.dumps([a for a in accessories if a["aid"] == pump[0]], indent=None)[:3000], flush=True)
        fail(f"pump On read {got}")
    ok(f"read: pump On = {got[pump]['value']}, door contact = {got[door].get('value')}")

    result = await pairing.put_characteristics([(pump[0], pump[1], True)])
    if result:
        fail(f"write answered {result}")
    for _ in range(50):
        if relay_high():
            break
        await asyncio.sleep(0.1)
    else:
        fail("the relay line did not go high after the write: " + open(os.path.join(GPIO, "state")).read())
    ok("write: the simulated relay went high")

    # Round trips on one verified session (BENCH): sequential reads, then writes (each write
    # goes through the core to the simulated relay and back); the relay ends high.
    n = 200
    t0 = time.monotonic()
    for _ in range(n):
        await pairing.get_characteristics([pump])
    reads = n / (time.monotonic() - t0)
    n = 100
    t0 = time.monotonic()
    for i in range(n):
        r = await pairing.put_characteristics([(pump[0], pump[1], i % 2 == 1)])
        if r:
            fail(f"write {i} answered {r}")
    writes = n / (time.monotonic() - t0)
    print(f"BENCH characteristic round trips: {reads:.0f} reads/s, {writes:.0f} writes/s (sequential, one session)", flush=True)
    # A new connection: TCP connect + pair-verify + one read (BENCH), p50 of 5.
    verify = []
    for i in range(5):
        fresh = controller.load_pairing(f"bench-{i}", pairing_data)
        t0 = time.monotonic()
        await fresh.get_characteristics([pump])
        verify.append(time.monotonic() - t0)
        await fresh.close()
    print(f"BENCH pair-verify (connect + verify + first read) p50 {statistics.median(verify) * 1000:.1f} ms "
          f"(steady read {1000 / reads:.1f} ms; n=5)", flush=True)

    events = asyncio.Queue()
    pairing.dispatcher_connect(lambda ev: events.put_nowait((time.monotonic(), ev)))
    await pairing.subscribe([door, bell, pump])

    async def wait_event(key, predicate=lambda v: True, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                t, ev = await asyncio.wait_for(events.get(), left)
            except asyncio.TimeoutError:
                return None
            if key in ev and "value" in ev[key] and predicate(ev[key]["value"]):
                return t, ev[key]["value"]

    # Door edges → ContactSensorState events; timing for the benchmark.
    latencies = []
    level = "pull-down"  # the line starts low
    for i in range(21):
        level = "pull-down" if level == "pull-up" else "pull-up"
        t0 = time.monotonic()
        gpio("DOOR", level)
        e = await wait_event(door)
        if not e:
            fail(f"no event for door edge {i} ({level})")
        latencies.append(e[0] - t0)
    ok(f"21 door edges → 21 ContactSensorState events (last value {e[1]})")
    lat = sorted(latencies)
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    print(f"BENCH edge-to-event p50 {statistics.median(lat) * 1000:.1f} ms p99 {p99 * 1000:.1f} ms (n={len(lat)})", flush=True)

    gpio("BUTTON", "pull-up")
    await asyncio.sleep(0.05)
    gpio("BUTTON", "pull-down")
    e = await wait_event(bell, lambda v: v == 0, timeout=5)
    if not e:
        fail("no ProgrammableSwitchEvent for a button press")
    ok("button press → ProgrammableSwitchEvent single press (0)")

    async def presses(holds, gap=0.06, quiet=1.2):
        """Presses the button (each held for holds[i] s, gap s apart); the ProgrammableSwitchEvent
        values the controller got until quiet s without one."""
        while not events.empty():
            events.get_nowait()
        for i, hold in enumerate(holds):
            if i:
                await asyncio.sleep(gap)
            gpio("BUTTON", "pull-up")
            await asyncio.sleep(hold)
            gpio("BUTTON", "pull-down")
        values = []
        while True:
            e = await wait_event(bell, timeout=quiet)
            if not e:
                return values
            values.append(e[1])

    got_double = await presses([0.05, 0.05])
    if got_double != [1]:
        fail(f"a double press reached the controller as {got_double} (want [1])")
    ok("double press → ProgrammableSwitchEvent double press (1)")
    got_long = await presses([1.0])
    if got_long != [2]:
        fail(f"a long press reached the controller as {got_long} (want [2])")
    ok("long press → ProgrammableSwitchEvent long press (2)")

    # Bad input after pairing: a plain request on a fresh connection is still refused.
    r = raw(b"GET /characteristics?id=1.1 HTTP/1.1\r\n\r\n")
    if b" 470 " not in r.split(b"\r\n")[0]:
        fail("an unencrypted /characteristics request was not refused")
    ok("unencrypted request refused with 470")

    # Restart hearthd, now with the exposure setting read-only: pair-verify again, same aid/iid.
    await pairing.close()
    hearthd.stop()
    hearthd.write_config(read_only=True)
    hearthd.start()
    controller2 = IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=None)
    pairing2 = controller2.load_pairing("hearth", pairing_data)
    accessories2 = await pairing2.list_accessories_and_characteristics()
    idx2 = index(accessories2)
    ids_after = {n: sorted(v.values()) for n, v in idx2.items()}
    if ids_after != ids_before:
        fail(f"aid/iid changed across the restart: {ids_before} → {ids_after}")
    got = await pairing2.get_characteristics([pump])
    ok(f"after a hearthd restart: pair-verify again, same aid/iid, pump On = {got[pump].get('value')}")

    # Read-only exposure: a write is refused with "insufficient privileges" (-70401); the relay
    # (off again: initial "off" after the restart) stays low.
    if relay_high() is not False:
        fail("the relay is not low after the restart: " + open(os.path.join(GPIO, "state")).read())
    result = await pairing2.put_characteristics([(pump[0], pump[1], True)])
    status = (result.get(pump) or {}).get("status")
    if status != -70401:
        fail(f"a write under read-only exposure was answered {result} (want status -70401)")
    await asyncio.sleep(0.3)
    if relay_high() is not False:
        fail("the relay changed although the exposure is read-only")
    ok("read-only exposure: the write refused with -70401, the relay stayed low")

    pairings = await pairing2.list_pairings()
    if len(pairings) != 1 or not pairings[0].get("controllerType") == "admin" and pairings[0].get("permissions") != 1:
        print("pairings:", pairings, flush=True)
    ok(f"list pairings: {len(pairings)}")
    await pairing2.remove_pairing(pairing_data["iOSPairingId"])
    ok("removed the pairing")
    await pairing2.close()
    # Unpaired again: pair-setup starts (M2 without error).
    r = raw(b"POST /pair-setup HTTP/1.1\r\nContent-Length: 6\r\n\r\n\x06\x01\x01\x00\x01\x00")
    if b"\x07\x01" in r:
        fail(f"pair-setup after unpairing answered an error: {r[-20:]!r}")
    ok("unpaired: pair-setup is open again")
    hearthd.stop()
    print("hap-controller: all steps passed", flush=True)


def _bridge_id():
    # The bridge's pairing ID is in hearthd's log ("HAP bridge … id=…").
    with open(os.path.join(WORK, "hearthd.log")) as f:
        for line in f:
            if "HAP bridge" in line and "id=" in line:
                return line.split("id=")[1].split()[0].strip('",')
    fail("hearthd did not log the bridge's pairing ID")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        for h in HEARTHD_PROC:
            h.stop()

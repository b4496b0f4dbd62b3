"""The real CHIP controller (home-assistant-chip-core) against a real hearthd with the Matter
bridge on (matter.enabled), inside the private namespace scripts/test-matter-controller makes
(a veth pair and avahi, so the controller's minimal mDNS finds the bridge):
  1. hearthd prints the manual pairing code and the MT: QR payload on first start;
  2. the controller commissions it with the QR payload (discovery over _matterc._udp, PASE,
     attestation against the test PAA, CSR, AddNOC, operational discovery, CASE, CommissioningComplete);
  3. over CASE: Basic Information, the Descriptor PartsLists (root → [1], Aggregator → []),
     Operational Credentials' Fabrics (fabric-filtered: its own) and CurrentFabricIndex;
  4. hearthd restarted with SIGTERM, then killed with SIGKILL and started again: a new CASE
     session each time, same reads;
  5. 'hearth matter open-window', then a second controller (another fabric) commissions it;
  6. 'hearth matter show' lists both fabrics; 'hearth matter remove-fabric N' removes the second;
     the first still reads.

Usage: bridge_controller.py HEARTHD HEARTH WORK
Prints 'ok: …' per step, BENCH lines, and 'BRIDGE OK'; exits 1 with 'FAIL: …' otherwise.
"""
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

HEARTHD, HEARTH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
API_PORT = 18080
PASSWORD = "correct horse battery staple"


def fail(msg):
    print("FAIL:", msg, flush=True)
    raise SystemExit(1)


def ok(msg):
    print("ok:", msg, flush=True)


class Hearthd:
    def __init__(self):
        self.proc = None
        self.config = os.path.join(WORK, "hearth.yaml")
        os.makedirs(os.path.join(WORK, "plugins"), exist_ok=True)
        with open(self.config, "w") as f:
            f.write(f"""
log: {{ level: {os.environ.get("MATTER_BRIDGE_LOG_LEVEL", "info")} }}
storage: {{ database: {WORK}/hearth.sqlite }}
server: {{ listen: 127.0.0.1:{API_PORT}, stateDirectory: {WORK}/state }}
matter:
  enabled: true
  port: 5540
  name: Hearth Test
""")

    def log(self):
        with open(os.path.join(WORK, "hearthd.log")) as f:
            return f.read()

    def start(self):
        log = open(os.path.join(WORK, "hearthd.log"), "a")
        self.proc = subprocess.Popen([HEARTHD, "--config", self.config, "--plugins", os.path.join(WORK, "plugins")],
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail(f"hearthd exited with {self.proc.returncode}; see hearthd.log")
            try:
                socket.create_connection(("127.0.0.1", API_PORT), 0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        fail("hearthd's API port did not open within 60 s")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                fail("hearthd did not stop within 20 s of SIGTERM")


def cli(*args):
    env = dict(os.environ, HEARTH_CONFIG_DIR=os.path.join(WORK, "cli"))
    r = subprocess.run([HEARTH, *args], env=env, capture_output=True, text=True, timeout=60,
                       input=PASSWORD + "\n")
    if r.returncode != 0:
        fail(f"'hearth {' '.join(args)}' failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def matter_show():
    return json.loads(cli("matter", "show", "--json"))


async def retry(what, body, seconds=45):
    """A read right after a restart waits for the bridge to be back and re-advertised."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            return await asyncio.wait_for(body(), timeout=15)
        except Exception as error:  # ChipStackError, timeouts
            last = error
            await asyncio.sleep(1)
    fail(f"{what}: {last!r}")


async def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from chip_controller import start_with_authorities
    from chip.discovery import DiscoveryType
    import chip.clusters as Clusters

    hearthd = Hearthd()
    hearthd.start()
    m = None
    for _ in range(100):
        m = re.search(r"Matter pairing code (\d{4}-\d{3}-\d{4})\s+QR (MT:[0-9A-Z.\-]+)", hearthd.log())
        if m:
            break
        time.sleep(0.1)
    if not m:
        fail("hearthd did not print the Matter pairing code and QR payload")
    manual, qr = m.group(1), m.group(2)
    ok(f"first start printed the pairing code {manual} and {qr}")
    with open(os.path.join(WORK, "state", "setup-code")) as f:
        code = f.read().strip()
    cli("setup", "--url", f"http://127.0.0.1:{API_PORT}", "--code", code, "--password-stdin")
    shown = matter_show()
    if shown["manualPairingCode"] != manual or shown["qrPayload"] != qr or shown["window"] != "basic" or shown["fabrics"]:
        fail(f"'hearth matter show' before commissioning: {shown}")
    ok("'hearth matter show': same codes, basic window open, no fabric")

    controller, new_controller, stop = start_with_authorities(os.path.join(WORK, "chip"), fabric_id=1)
    BI, D, OC = Clusters.BasicInformation, Clusters.Descriptor, Clusters.OperationalCredentials

    async def read_bridge(ctrl, node):
        r = await ctrl.ReadAttribute(node, [(0, BI.Attributes.VendorName), (0, BI.Attributes.ProductName), (0, BI.Attributes.VendorID),
                                            (0, D.Attributes.PartsList), (1, D.Attributes.PartsList), (1, D.Attributes.DeviceTypeList),
                                            (0, OC.Attributes.Fabrics), (0, OC.Attributes.CurrentFabricIndex)])
        info = r[0][BI]
        parts0, parts1 = list(r[0][D][D.Attributes.PartsList]), list(r[1][D][D.Attributes.PartsList])
        types1 = [t.deviceType for t in r[1][D][D.Attributes.DeviceTypeList]]
        fabrics = r[0][OC][OC.Attributes.Fabrics]
        current = r[0][OC][OC.Attributes.CurrentFabricIndex]
        assert info[BI.Attributes.VendorName] == "Hearth" and info[BI.Attributes.VendorID] == 0xFFF1, info
        assert info[BI.Attributes.ProductName] == "Hearth Test", info
        assert parts0 == [1] and parts1 == [] and types1 == [0x000E], (parts0, parts1, types1)
        assert len(fabrics) == 1 and fabrics[0].fabricIndex == current, (fabrics, current)
        return fabrics[0], current

    try:
        t0 = time.monotonic()
        try:
            await asyncio.wait_for(controller.CommissionWithCode(qr, 1, DiscoveryType.DISCOVERY_NETWORK_ONLY), timeout=90)
        except Exception as error:
            fail(f"commissioning with {qr}: {error!r}")
        print(f"BENCH commission {time.monotonic() - t0:.2f} s", flush=True)
        ok("commissioned by the controller with the QR payload (mDNS, PASE, attestation, AddNOC, CASE)")
        fabric, index = await retry("read over CASE", lambda: read_bridge(controller, 1))
        ok(f"over CASE: Basic Information, PartsLists root=[1] aggregator=[], own fabric 0x{fabric.fabricID:x} index {index}")
        shown = matter_show()
        if shown["window"] != "closed" or len(shown["fabrics"]) != 1 or shown["fabrics"][0]["fabricID"] != "1":
            fail(f"'hearth matter show' after commissioning: {shown}")
        ok("'hearth matter show': window closed, one fabric (0x1)")

        for how, sig in (("SIGTERM", signal.SIGTERM), ("kill -9", signal.SIGKILL)):
            hearthd.stop(sig)
            hearthd.start()
            controller.ExpireSessions(1)
            again, _ = await retry(f"read after {how}", lambda: read_bridge(controller, 1))
            if again.fabricID != fabric.fabricID:
                fail(f"after {how}: fabric {again}")
            ok(f"after {how} and a restart: a new CASE session, same reads, same fabric")

        opened = json.loads(cli("matter", "open-window", "--json"))
        if opened["window"] != "basic":
            fail(f"'hearth matter open-window': {opened}")
        ok("'hearth matter open-window' opened a basic window")
        second = new_controller(2, 112234)
        try:
            await asyncio.wait_for(second.CommissionWithCode(qr, 2, DiscoveryType.DISCOVERY_NETWORK_ONLY), timeout=90)
        except Exception as error:
            fail(f"second controller commissioning: {error!r}")
        other, other_index = await retry("second controller read", lambda: read_bridge(second, 2))
        if other.fabricID != 2 or other_index == index:
            fail(f"second fabric: {other} index {other_index}")
        ok(f"a second controller (fabric 0x2, index {other_index}) commissioned it through the new window")

        shown = matter_show()
        ids = sorted(f["fabricID"] for f in shown["fabrics"])
        if ids != ["1", "2"]:
            fail(f"'hearth matter show' with two fabrics: {shown}")
        removed = json.loads(cli("matter", "remove-fabric", str(other_index), "--json"))
        if [f["fabricID"] for f in removed["fabrics"]] != ["1"]:
            fail(f"'hearth matter remove-fabric {other_index}': {removed}")
        ok(f"'hearth matter show' listed both fabrics; 'remove-fabric {other_index}' left fabric 0x1")
        controller.ExpireSessions(1)
        await retry("first controller after the removal", lambda: read_bridge(controller, 1))
        ok("the first controller still reads after the second fabric was removed")
        print("BRIDGE OK", flush=True)
    finally:
        stop()
        hearthd.stop()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except SystemExit:
        raise
    except BaseException as error:
        print(f"FAIL: {error!r}", flush=True)
        sys.exit(1)

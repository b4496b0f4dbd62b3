"""python-matter-server (the Open Home Foundation Matter Server that Home Assistant's Matter
integration talks to) as a second controller of a real hearthd, inside the private namespace
scripts/test-matter-controller makes (veth pair, avahi):
  1. hearthd (matter.enabled, the demo plugin beside it when built: its lamp is commissioned
     into the room 'Kitchen') prints its manual pairing code;
  2. matter-server starts (its own storage, the CSA test PAA in its trust directory, no
     network beyond the namespace) and, over its WebSocket API, commissions the bridge with
     commission_with_code (network_only: mDNS, PASE, attestation, AddNOC, CASE);
  3. the node it returns carries what HA would read: Basic Information (VendorID 0xFFF1,
     ProductName), the Aggregator's device type and PartsList, the Actions cluster's lists
     (room 'Kitchen' with the lamp's endpoint); device_command OnOff Toggle on the lamp goes
     through Hearth's command path (the demo lamp turns on) and read_attribute reads it back;
  4. 'hearth matter show' lists the server's fabric; remove_node takes it away again.

The namespace has no Internet: matter-server's trust directory gets the CSA test PAA (DER) and
a fresh `.version` file, so it uses that and skips its daily download from the DCL and GitHub
(a directory without `.version` it empties first).

Usage: server_controller.py SERVER_PYTHON HEARTHD HEARTH WORK PAA_DIR (PAA_DIR holds paa.der)
Prints 'ok: …' per step and 'SERVER OK'; exits 1 with 'FAIL: …' otherwise.
"""
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

SERVER_PY, HEARTHD, HEARTH, WORK, PAA_DIR = sys.argv[1:6]
API_PORT = 18081
WS_PORT = 5580
PASSWORD = "correct horse battery staple"


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


def ok(msg):
    print("ok:", msg, flush=True)


def cli(*args):
    env = dict(os.environ, HEARTH_CONFIG_DIR=os.path.join(WORK, "cli"))
    r = subprocess.run([HEARTH, *args], env=env, capture_output=True, text=True, timeout=60, input=PASSWORD + "\n")
    if r.returncode != 0:
        fail(f"'hearth {' '.join(args)}' failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def wait_port(port, proc, what, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            fail(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    fail(f"{what} did not listen on {port} within {seconds} s")


async def main():
    import aiohttp  # matter-server's own dependency (this runs with its venv's python)

    os.makedirs(WORK, exist_ok=True)
    config = os.path.join(WORK, "hearth.yaml")
    with open(config, "w") as f:
        f.write(f"""
log: {{ level: info }}
storage: {{ database: {WORK}/hearth.sqlite }}
server: {{ listen: 127.0.0.1:{API_PORT}, stateDirectory: {WORK}/state }}
matter: {{ enabled: true, port: 5540, name: Hearth Server Test }}
""")
    trust = os.path.join(WORK, "paa")
    os.makedirs(trust, exist_ok=True)
    shutil.copy(os.path.join(PAA_DIR, "paa.der"), os.path.join(trust, "csa-test-paa.der"))
    open(os.path.join(trust, ".version"), "w").close()
    plugins = os.path.join(WORK, "plugins")
    os.makedirs(plugins, exist_ok=True)
    demo = os.path.join(os.path.dirname(HEARTHD), "libDemoPlugin.so")
    if os.path.exists(demo):
        os.symlink(demo, os.path.join(plugins, "libDemoPlugin.so"))
    else:
        print("SKIP the bridged lamp: libDemoPlugin.so is not built beside hearthd", flush=True)
        demo = None
    hearthd_log = open(os.path.join(WORK, "hearthd.log"), "w")
    hearthd = subprocess.Popen([HEARTHD, "--config", config, "--plugins", plugins], stdout=hearthd_log, stderr=subprocess.STDOUT)
    server = None
    try:
        wait_port(API_PORT, hearthd, "hearthd")
        code = None
        for _ in range(100):
            m = re.search(r"Matter pairing code (\d{4}-\d{3}-\d{4})", open(os.path.join(WORK, "hearthd.log")).read())
            if m:
                code = m.group(1)
                break
            time.sleep(0.1)
        if not code:
            fail("hearthd did not print the Matter pairing code")
        setup = open(os.path.join(WORK, "state", "setup-code")).read().strip()
        cli("setup", "--url", f"http://127.0.0.1:{API_PORT}", "--code", setup, "--password-stdin")
        if demo:
            deadline = time.time() + 30
            while "demo:lamp" not in {d["id"] for d in json.loads(cli("discovered", "--json"))}:
                if time.time() > deadline:
                    fail("demo:lamp was not discovered within 30 s")
                time.sleep(0.2)
            structures = json.loads(cli("structures", "--json"))
            structure = structures[0]["id"] if structures else json.loads(cli("structures", "add", "Home", "--json"))["id"]
            room = json.loads(cli("rooms", "add", "Kitchen", "--structure", structure, "--json"))["id"]
            cli("commission", "demo:lamp", "--name", "Kitchen lamp", "--structure", structure, "--room", room, "--json")
            ok("the demo lamp commissioned in Hearth into the room 'Kitchen'")

        storage = os.path.join(WORK, "matter-server")
        os.makedirs(storage, exist_ok=True)
        server_log = open(os.path.join(WORK, "matter-server.log"), "w")
        server = subprocess.Popen([SERVER_PY, "-m", "matter_server.server", "--storage-path", storage, "--port", str(WS_PORT),
                                   "--paa-root-cert-dir", trust, "--log-level", "info", "--primary-interface", "v1"],
                                  stdout=server_log, stderr=subprocess.STDOUT)
        wait_port(WS_PORT, server, "matter-server", seconds=120)
        ok(f"matter-server is up (WebSocket port {WS_PORT}); hearthd's pairing code {code}")

        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"http://127.0.0.1:{WS_PORT}/ws", heartbeat=30) as ws:
                info = await ws.receive_json(timeout=30)
                ok(f"server_info: schema {info.get('schema_version')}, SDK {info.get('sdk_version')}, fabric {info.get('fabric_id')}")

                async def command(name, args, seconds):
                    mid = str(time.monotonic_ns())
                    await ws.send_json({"message_id": mid, "command": name, "args": args})
                    deadline = time.monotonic() + seconds
                    while time.monotonic() < deadline:
                        msg = await ws.receive_json(timeout=max(1, deadline - time.monotonic()))
                        if msg.get("message_id") == mid:
                            if "error_code" in msg:
                                fail(f"{name}: error {msg['error_code']} {msg.get('details')}")
                            return msg.get("result")
                    fail(f"{name}: no answer within {seconds} s")

                t0 = time.monotonic()
                node = await command("commission_with_code", {"code": code.replace("-", ""), "network_only": True}, 120)
                print(f"BENCH matter-server commission {time.monotonic() - t0:.2f} s", flush=True)
                attrs = node.get("attributes", {})
                node_id = node["node_id"]
                vendor, product = attrs.get("0/40/2"), attrs.get("0/40/3")
                types = attrs.get("1/29/0")
                if vendor != 0xFFF1 or product != "Hearth Server Test":
                    fail(f"node {node_id}: Basic Information VendorID {vendor} ProductName {product!r}")
                if not types or types[0].get("0") != 0x000E:
                    fail(f"node {node_id}: endpoint 1's DeviceTypeList {types}, expected the Aggregator (0x000E)")
                ok(f"commissioned by matter-server (commission_with_code, network only) as node {node_id}: "
                   f"VendorID 0x{vendor:04X}, ProductName {product!r}, endpoint 1 an Aggregator, PartsList {attrs.get('1/29/3')}, "
                   f"Actions EndpointLists {attrs.get('1/37/1')}")

                if demo:
                    parts = attrs.get("1/29/3") or []
                    lamps = [e for e in parts if f"{e}/6/0" in attrs]
                    rooms = {l.get("1"): l.get("3") for l in attrs.get("1/37/1") or []}
                    if len(lamps) != 1 or rooms.get("Kitchen") != lamps or attrs.get(f"{lamps[0]}/6/0") is not False:
                        fail(f"the lamp in matter-server's node: PartsList {parts}, OnOff endpoints {lamps}, rooms {rooms}")
                    lamp = lamps[0]
                    ok(f"matter-server sees the lamp on endpoint {lamp} (OnOff False, NodeLabel {attrs.get(f'{lamp}/57/5')!r}) "
                       f"and the room 'Kitchen' = {rooms['Kitchen']} in the Actions EndpointLists")
                    await command("device_command", {"node_id": node_id, "endpoint_id": lamp, "cluster_id": 6,
                                                     "command_name": "Toggle", "payload": {}}, 30)
                    value = None
                    for _ in range(50):
                        value = await command("read_attribute", {"node_id": node_id, "attribute_path": f"{lamp}/6/0"}, 30)
                        if isinstance(value, dict):
                            value = value.get(f"{lamp}/6/0")
                        if value is True:
                            break
                        await asyncio.sleep(0.2)
                    else:
                        fail(f"OnOff read {value} through matter-server after Toggle")
                    if not re.search(r"device=demo:lamp .*OnOff = true", open(os.path.join(WORK, "hearthd.log")).read()):
                        fail("hearthd's log does not show the demo lamp's OnOff = true after matter-server's Toggle")
                    ok("device_command OnOff Toggle from matter-server: Hearth's demo lamp turned on; read_attribute reads True")

                shown = json.loads(cli("matter", "show", "--json"))
                if len(shown["fabrics"]) != 1:
                    fail(f"'hearth matter show' after matter-server's commissioning: {shown}")
                ok(f"'hearth matter show' lists matter-server's fabric 0x{shown['fabrics'][0]['fabricID']} (vendor {shown['fabrics'][0]['vendorID']:#x})")
                await command("remove_node", {"node_id": node_id}, 60)
                for _ in range(50):
                    if not json.loads(cli("matter", "show", "--json"))["fabrics"]:
                        break
                    time.sleep(0.2)
                else:
                    fail("the fabric is still listed after matter-server's remove_node")
                ok("remove_node: matter-server removed its fabric from the bridge (RemoveFabric), none is left")
        print("SERVER OK", flush=True)
    finally:
        for p in (server, hearthd):
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except SystemExit:
        raise
    except BaseException as error:
        print(f"FAIL: {error!r}", flush=True)
        sys.exit(1)

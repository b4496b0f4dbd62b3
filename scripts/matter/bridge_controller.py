"""The real CHIP controller (home-assistant-chip-core) against a real hearthd with the Matter
bridge on (matter.enabled), inside the private namespace scripts/test-matter-controller makes
(a veth pair and avahi, so the controller's minimal mDNS finds the bridge):
  1. hearthd prints the manual pairing code and the MT: QR payload on first start;
  2. the controller commissions it with the QR payload (discovery over _matterc._udp, PASE,
     attestation against the test PAA, CSR, AddNOC, operational discovery, CASE, CommissioningComplete);
  3. over CASE: Basic Information, the Descriptor PartsLists (root → [1] and the bridged endpoints,
     Aggregator → the bridged endpoints; [] without the GPIO plugin),
     Operational Credentials' Fabrics (fabric-filtered: its own) and CurrentFabricIndex;
     hearthd runs the GPIO plugin on a simulated chip (a door contact, a relay): the devices,
     commissioned into Hearth through the API when they wait in the discovered list, are bridged
     endpoints under the Aggregator; the controller reads the contact's BooleanState, toggles the
     relay's OnOff (the simulated line follows; OnOff reads back), and a subscription to the
     contact's BooleanState receives a report after a simulated edge; the Aggregator's Actions
     cluster lists the room 'Hallway' (EndpointLists, Type Room) with the contact and the relay;
  3c. BooleanState StateChange events for the door's edges (a read of events); a subscription
     to the doorbell's (a GPIO button) Switch events receives InitialPress, ShortRelease,
     MultiPressComplete, LongPress and LongRelease for presses on the simulated line, with
     increasing event numbers and epoch timestamps; a read with an event-min filter;
  4. hearthd restarted with SIGTERM, then killed with SIGKILL and started again: each time the
     controller's CASE session is resumed (Sigma2_Resume: the resumption record is in the state
     store; hearthd's log must show it and no full CASE), same reads; the doorbell's events after
     the restarts are numbered above every earlier one (the stored event number epoch);
  5. 'hearth matter open-window', then a second controller (another fabric) commissions it;
  6. 'hearth matter show' lists both fabrics; the web page's Remove button (headless Chromium, when
     Selenium is there; else 'hearth matter remove-fabric N') removes the second;
     the first still reads.

  3b. with libMQTTPlugin.so and mosquitto: the controller, already commissioned and subscribed to
     the Aggregator's Descriptor, gets a PartsList report when a device announced over MQTT (Home
     Assistant discovery, a mosquitto on a free loopback port) is commissioned into a room through
     the API, and a report of the Actions EndpointLists with the new room 'Attic' holding it;
     it reads the new endpoint's TemperatureMeasurement and its room (Fixed Label), and
     the endpoint keeps its number across the restarts.

Usage: bridge_controller.py HEARTHD HEARTH WORK [libGPIOPlugin.so [libMQTTPlugin.so]]
Prints 'ok: …' per step, BENCH lines, and 'BRIDGE OK'; exits 1 with 'FAIL: …' otherwise.
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

HEARTHD, HEARTH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
PLUGIN = sys.argv[4] if len(sys.argv) > 4 else None  # libGPIOPlugin.so (absent: no bridged devices)
MQTT_PLUGIN = sys.argv[5] if len(sys.argv) > 5 else None  # libMQTTPlugin.so (absent: no MQTT device)
MOSQUITTO = next((p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.path.exists(p)), None)
if MQTT_PLUGIN and not MOSQUITTO:
    print("SKIP the MQTT device: mosquitto is not installed", flush=True)
    MQTT_PLUGIN = None
# Debian's python3 with Selenium, Chromium and chromedriver: the web page removes the second
# fabric (else 'hearth matter remove-fabric' does).
WEB_PYTHON = "/usr/bin/python3" if (os.path.exists("/usr/bin/python3") and shutil.which("chromium") and shutil.which("chromedriver")
                                    and subprocess.run(["/usr/bin/python3", "-c", "import selenium"], capture_output=True).returncode == 0) else None
if not WEB_PYTHON:
    print("SKIP the web page's Remove button: /usr/bin/python3 with selenium, chromium or chromedriver is missing", flush=True)
GPIO = os.path.join(WORK, "gpio")
API_PORT = 18080
PASSWORD = "correct horse battery staple"


def fail(msg):
    print("FAIL:", msg, flush=True)
    raise SystemExit(1)


def ok(msg):
    print("ok:", msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """A mosquitto on a free loopback port, for the MQTT plugin."""
    def __init__(self):
        self.port = free_port()
        conf = os.path.join(WORK, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", conf], stdout=open(os.path.join(WORK, "mosquitto.log"), "w"),
                                     stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        fail("mosquitto did not listen within 10 s")

    def publish(self, topic, payload):
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-r", "-t", topic, "-m", payload],
                       check=True, timeout=10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Hearthd:
    def __init__(self, broker=None):
        self.proc = None
        self.config = os.path.join(WORK, "hearth.yaml")
        os.makedirs(os.path.join(WORK, "plugins"), exist_ok=True)
        gpio = ""
        if broker:
            link = os.path.join(WORK, "plugins", os.path.basename(MQTT_PLUGIN))
            if not os.path.exists(link):
                os.symlink(MQTT_PLUGIN, link)
        if PLUGIN:
            link = os.path.join(WORK, "plugins", os.path.basename(PLUGIN))
            if not os.path.exists(link):
                os.symlink(PLUGIN, link)
            gpio = f"""plugins:
  gpio:
    simulated:
      - {{ chip: sim0, lines: [DOOR, RELAY, BUTTON], control: {GPIO} }}
    lines:
      - {{ id: front-door, chip: sim0, line: DOOR, role: contact, debounce: 1ms, name: Front door, room: Hallway }}
      - {{ id: pump, chip: sim0, line: RELAY, role: relay, initial: "off", name: Garden pump, room: Hallway }}
      - {{ id: doorbell, chip: sim0, line: BUTTON, role: button, long-press: 500ms, multi-press-window: 300ms, name: Doorbell, room: Hallway }}
"""
        if broker:
            gpio = (gpio or "plugins:\n") + f"""  mqtt:
    broker: {{ host: 127.0.0.1, port: {broker.port}, clientID: hearth-matter-test }}
    discovery: {{ enabled: true, prefix: homeassistant }}
"""
        with open(self.config, "w") as f:
            f.write(f"""
log: {{ level: {os.environ.get("MATTER_BRIDGE_LOG_LEVEL", "info")} }}
storage: {{ database: {WORK}/hearth.sqlite }}
server: {{ listen: 127.0.0.1:{API_PORT}, stateDirectory: {WORK}/state }}
{gpio}matter:
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


def gpio(line, level):
    with open(os.path.join(GPIO, "control"), "w") as f:
        f.write(f"sim0 {line} {level}\n")


def line_high(name):
    with open(os.path.join(GPIO, "state")) as f:
        for l in f:
            if f" {name} " in l:
                return "value=1" in l.split()
    return None


def commission_gpio():
    """The GPIO devices into Hearth through the API ('hearth commission') when they wait in the
    discovered list; then both must be listed as devices."""
    wanted = {"gpio:front-door": "Front door", "gpio:pump": "Garden pump", "gpio:doorbell": "Doorbell"}
    deadline = time.time() + 30
    while time.time() < deadline:
        discovered = {d["id"] for d in json.loads(cli("discovered", "--json"))}
        devices = {d["id"] for d in json.loads(cli("devices", "--json"))}
        if set(wanted) <= devices:
            return "already commissioned"
        if set(wanted) <= discovered | devices:
            break
        time.sleep(0.2)
    else:
        fail(f"the GPIO devices did not appear: discovered {discovered}, devices {devices}")
    structures = json.loads(cli("structures", "--json"))
    structure = structures[0]["id"] if structures else json.loads(cli("structures", "add", "Home", "--json"))["id"]
    for device, name in wanted.items():
        if device in discovered:
            cli("commission", device, "--name", name, "--structure", structure, "--json")
    devices = {d["id"] for d in json.loads(cli("devices", "--json"))}
    if not set(wanted) <= devices:
        fail(f"after 'hearth commission': devices {devices}")
    return "commissioned through the API"


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

    broker = Broker() if MQTT_PLUGIN else None
    hearthd = Hearthd(broker)
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
    if PLUGIN:
        ok(f"the simulated GPIO contact, relay and doorbell: {commission_gpio()}")
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
        # The root's PartsList is the full family: the Aggregator and every bridged endpoint.
        assert sorted(parts0) == sorted([1] + parts1) and types1 == [0x000E], (parts0, parts1, types1)
        assert (len(parts1) >= 2 and min(parts1) >= 2) if PLUGIN else parts1 == [], parts1
        assert len(fabrics) == 1 and fabrics[0].fabricIndex == current, (fabrics, current)
        return fabrics[0], current

    BS, OO = Clusters.BooleanState, Clusters.OnOff

    async def find_devices(ctrl, node):
        """The Aggregator's PartsList, then each part's ServerList: the contact and the relay."""
        r = await ctrl.ReadAttribute(node, [(1, D.Attributes.PartsList)])
        parts = list(r[1][D][D.Attributes.PartsList])
        lists = await ctrl.ReadAttribute(node, [(e, D.Attributes.ServerList) for e in parts])
        contact = [e for e in parts if BS.id in lists[e][D][D.Attributes.ServerList]]
        relay = [e for e in parts if OO.id in lists[e][D][D.Attributes.ServerList]]
        assert len(contact) == 1 and len(relay) == 1, (parts, {e: list(lists[e][D][D.Attributes.ServerList]) for e in parts})
        return parts, contact[0], relay[0]

    async def read_attr(ctrl, node, endpoint, cluster, attribute):
        r = await ctrl.ReadAttribute(node, [(endpoint, attribute)])
        return r[endpoint][cluster][attribute]

    AC = Clusters.Actions

    async def room_lists(ctrl, node):
        """The Aggregator's Actions EndpointLists as {name: (EndpointListID, Type, endpoints)}."""
        lists = await read_attr(ctrl, node, 1, AC, AC.Attributes.EndpointLists)
        return {l.name: (l.endpointListID, int(l.type), sorted(l.endpoints)) for l in lists}

    async def bridged_devices(ctrl, node):
        parts, contact, relay = await retry("bridged endpoints", lambda: find_devices(ctrl, node))
        ok(f"Aggregator PartsList {parts}: contact sensor (BooleanState) on {contact}, relay (OnOff) on {relay}")
        # The rooms as the Actions cluster's EndpointLists (Type Room = 1); no actions.
        rooms = await room_lists(ctrl, node)
        actions = await read_attr(ctrl, node, 1, AC, AC.Attributes.ActionList)
        hallway = rooms.get("Hallway")
        if actions or not hallway or hallway[1] != 1 or not {contact, relay} <= set(hallway[2]) or not set(hallway[2]) <= set(parts):
            fail(f"Actions on the Aggregator: EndpointLists {rooms}, ActionList {actions}; contact {contact}, relay {relay}, parts {parts}")
        ok(f"read the Aggregator's Actions EndpointLists: room 'Hallway' (list {hallway[0]}, Type Room) = endpoints {hallway[2]}; ActionList empty")
        # The door line starts low (pull-down); a pull-up flips the contact.
        gpio("DOOR", "pull-down")
        await asyncio.sleep(0.5)
        low = await read_attr(ctrl, node, contact, BS, BS.Attributes.StateValue)
        ok(f"read the contact's BooleanState StateValue = {low} (door line low)")

        before = await read_attr(ctrl, node, relay, OO, OO.Attributes.OnOff)
        if before is not False or line_high("RELAY") is not False:
            fail(f"relay before the toggle: OnOff {before}, line high {line_high('RELAY')}")
        await ctrl.SendCommand(node, relay, OO.Commands.Toggle())
        for _ in range(50):
            if line_high("RELAY"):
                break
            await asyncio.sleep(0.1)
        else:
            fail("the relay line did not go high after OnOff Toggle: " + open(os.path.join(GPIO, "state")).read())
        after = None
        for _ in range(30):
            after = await read_attr(ctrl, node, relay, OO, OO.Attributes.OnOff)
            if after is True:
                break
            await asyncio.sleep(0.1)
        else:
            fail(f"OnOff read back {after} after the toggle")
        ok("OnOff Toggle on the relay: the simulated RELAY line went high, OnOff reads back True")
        await ctrl.SendCommand(node, relay, OO.Commands.Toggle())
        for _ in range(50):
            if line_high("RELAY") is False:
                break
            await asyncio.sleep(0.1)
        else:
            fail("the relay line did not go low after a second Toggle")

        sub = await ctrl.ReadAttribute(node, [(contact, BS.Attributes.StateValue)], reportInterval=(0, 10))
        try:
            primed = sub.GetAttributes()[contact][BS][BS.Attributes.StateValue]
            loop = asyncio.get_running_loop()
            reports = asyncio.Queue()
            sub.SetAttributeUpdateCallback(
                lambda path, transaction: loop.call_soon_threadsafe(reports.put_nowait, transaction.GetAttribute(path)))
            t0 = time.monotonic()
            gpio("DOOR", "pull-up")
            try:
                value = await asyncio.wait_for(reports.get(), timeout=15)
            except asyncio.TimeoutError:
                fail("no BooleanState report within 15 s of the door edge")
            print(f"BENCH door edge -> BooleanState report {time.monotonic() - t0:.3f} s", flush=True)
            if value == primed or value == low:
                fail(f"BooleanState report {value} after the edge (primed {primed}, before {low})")
            ok(f"subscribed to BooleanState (primed {primed}); the door edge brought a report: StateValue = {value}")
            high = await read_attr(ctrl, node, contact, BS, BS.Attributes.StateValue)
            if high != value:
                fail(f"StateValue read {high} after the report {value}")
        finally:
            sub.Shutdown()
        gpio("DOOR", "pull-down")
        return contact, relay

    TM, FL, SW = Clusters.TemperatureMeasurement, Clusters.FixedLabel, Clusters.Switch
    from chip.clusters.Attribute import EventPriority, EventTimestampType

    def check_header(event, cluster, endpoint):
        h = event.Header
        now_ms = time.time() * 1000
        if h.EndpointId != endpoint or h.ClusterId != cluster.id or h.Priority != EventPriority.INFO:
            fail(f"event header {h}")
        if h.TimestampType != EventTimestampType.EPOCH or abs(h.Timestamp - now_ms) > 120_000:
            fail(f"event timestamp {h.Timestamp} ({h.TimestampType}), now {now_ms:.0f} ms since the epoch")

    async def button_events(ctrl, node, after=0):
        """Subscribes to the doorbell's Switch events (urgent) and presses it on the simulated
        chip: a short press, then a long one. Returns the highest event number seen."""
        parts = await read_attr(ctrl, node, 1, D, D.Attributes.PartsList)
        lists = await ctrl.ReadAttribute(node, [(e, D.Attributes.ServerList) for e in parts])
        buttons = [e for e in parts if SW.id in lists[e][D][D.Attributes.ServerList]]
        if len(buttons) != 1:
            fail(f"expected one Switch endpoint among {list(parts)}: {buttons}")
        button = buttons[0]
        sub = await ctrl.ReadEvent(node, [(button, SW, 1)], reportInterval=(0, 10))
        seen = []
        try:
            loop = asyncio.get_running_loop()
            queue = asyncio.Queue()
            sub.SetEventUpdateCallback(lambda event, transaction: loop.call_soon_threadsafe(queue.put_nowait, event))

            async def until(kind, what):
                try:
                    while True:
                        event = await asyncio.wait_for(queue.get(), timeout=10)
                        seen.append(event)
                        if isinstance(event.Data, kind):
                            return event
                except asyncio.TimeoutError:
                    fail(f"no {kind.__name__} event within 10 s of {what}; got {[type(e.Data).__name__ for e in seen]}")

            t0 = time.monotonic()
            gpio("BUTTON", "pull-up")
            first = await until(SW.Events.InitialPress, "the press")
            print(f"BENCH button press -> InitialPress event {time.monotonic() - t0:.3f} s", flush=True)
            await asyncio.sleep(0.1)
            gpio("BUTTON", "pull-down")
            await until(SW.Events.ShortRelease, "the release")
            complete = await until(SW.Events.MultiPressComplete, "the short press")
            if complete.Data.totalNumberOfPressesCounted != 1 or first.Data.newPosition != 1:
                fail(f"short press: {first.Data}, {complete.Data}")
            gpio("BUTTON", "pull-up")
            await until(SW.Events.LongPress, "holding the button")
            gpio("BUTTON", "pull-down")
            await until(SW.Events.LongRelease, "the long press's release")
        finally:
            sub.Shutdown()
        numbers = [e.Header.EventNumber for e in seen]
        if numbers != sorted(set(numbers)) or numbers[0] <= after:
            fail(f"event numbers {numbers} (previous run's highest {after}): not increasing")
        for e in seen:
            check_header(e, SW, button)
        kinds = [type(e.Data).__name__ for e in seen]
        ok(f"subscribed to the doorbell's Switch events (endpoint {button}); presses on the simulated line brought {kinds}, "
           f"event numbers {numbers[0]}..{numbers[-1]}, epoch timestamps")
        # A read with an EventFilter (event-min): only the newest ones come back.
        tail = await ctrl.ReadEvent(node, [(button, SW)], eventNumberFilter=numbers[-2])
        if [e.Header.EventNumber for e in tail] != numbers[-2:]:
            fail(f"ReadEvent with event-min {numbers[-2]}: {[e.Header.EventNumber for e in tail]}, expected {numbers[-2:]}")
        ok(f"ReadEvent with event-min {numbers[-2]} returned events {numbers[-2:]} only")
        # A concrete path to an event the button does not have (SwitchLatched: LS is off): EventStatus.
        from chip.interaction_model import Status
        latched = await ctrl.ReadEvent(node, [(button, SW.Events.SwitchLatched)])
        if [e.Status for e in latched] != [Status.UnsupportedEvent]:
            fail(f"ReadEvent of SwitchLatched: {[(e.Header, e.Status) for e in latched]}")
        ok("ReadEvent of the absent SwitchLatched event answered UNSUPPORTED_EVENT (an EventStatusIB)")
        return numbers[-1]

    async def contact_events(ctrl, node, contact):
        """BooleanState StateChange for the edges the contact saw."""
        for _ in range(50):  # the door's last edge (back low) may still be on its way
            events = await ctrl.ReadEvent(node, [(contact, BS, 0)])
            changes = [e for e in events if isinstance(e.Data, BS.Events.StateChange)]
            if len(changes) >= 2 and changes[-1].Data.stateValue is False:
                break
            await asyncio.sleep(0.1)
        if [e.Data.stateValue for e in changes[-2:]] != [True, False]:
            fail(f"BooleanState StateChange events on {contact}: {[(e.Header.EventNumber, e.Data) for e in events]}")
        for e in changes:
            check_header(e, BS, contact)
        ok(f"read the contact's BooleanState StateChange events: {[e.Data.stateValue for e in changes]}")

    async def mqtt_device(ctrl, node):
        """An MQTT thermometer commissioned into a room in Hearth after the controller paired:
        a Descriptor report brings the new endpoint, which reads the MQTT value and the room."""
        r = await ctrl.ReadAttribute(node, [(1, D.Attributes.PartsList)])
        before = list(r[1][D][D.Attributes.PartsList])
        sub = await ctrl.ReadAttribute(node, [(1, D.Attributes.PartsList)], reportInterval=(0, 10))
        # The rooms (Actions EndpointLists) subscribed too: the new room's list must be reported.
        # (keepSubscriptions: a new subscription otherwise ends the controller's earlier ones.)
        rooms_sub = await ctrl.ReadAttribute(node, [(1, AC.Attributes.EndpointLists)], reportInterval=(0, 10), keepSubscriptions=True)
        try:
            loop = asyncio.get_running_loop()
            reports = asyncio.Queue()
            room_reports = asyncio.Queue()
            sub.SetAttributeUpdateCallback(
                lambda path, transaction: loop.call_soon_threadsafe(reports.put_nowait, list(transaction.GetAttribute(path))))
            rooms_sub.SetAttributeUpdateCallback(
                lambda path, transaction: loop.call_soon_threadsafe(
                    room_reports.put_nowait, {l.name: sorted(l.endpoints) for l in transaction.GetAttribute(path)}))
            broker.publish("homeassistant/sensor/mt21attic/temperature/config", json.dumps({
                "name": "Temperature", "unique_id": "mt21attic-temperature", "state_topic": "mt21attic/temperature",
                "device_class": "temperature", "unit_of_measurement": "°C",
                "device": {"identifiers": ["mt21attic"], "name": "Attic thermometer", "manufacturer": "Test", "model": "T1"}}))
            broker.publish("mt21attic/temperature", "21.5")
            device = "mqtt:mt21attic"
            deadline = time.time() + 30
            while device not in {d["id"] for d in json.loads(cli("discovered", "--json"))}:
                if time.time() > deadline:
                    fail(f"{device} was not discovered over MQTT within 30 s")
                time.sleep(0.2)
            structure = json.loads(cli("structures", "--json"))[0]["id"]
            room = json.loads(cli("rooms", "add", "Attic", "--structure", structure, "--json"))["id"]
            t0 = time.monotonic()
            cli("commission", device, "--name", "Attic thermometer", "--structure", structure, "--room", room, "--json")
            parts = None
            try:
                while True:
                    parts = await asyncio.wait_for(reports.get(), timeout=15)
                    if len(parts) > len(before):
                        break
            except asyncio.TimeoutError:
                fail(f"no Aggregator PartsList report with a new endpoint within 15 s of commissioning {device} (last {parts}, before {before})")
            print(f"BENCH commission in Hearth -> PartsList report {time.monotonic() - t0:.3f} s", flush=True)
            new_endpoints = set(parts) - set(before)
            reported = None
            try:
                while True:
                    reported = await asyncio.wait_for(room_reports.get(), timeout=15)
                    if new_endpoints and new_endpoints <= set(reported.get("Attic", [])):
                        break
            except asyncio.TimeoutError:
                fail(f"no Actions EndpointLists report with room 'Attic' = {sorted(new_endpoints)} within 15 s (last {reported})")
            ok(f"subscribed to the Aggregator's Actions EndpointLists: the report after the commissioning lists room 'Attic' = {reported['Attic']}")
        finally:
            sub.Shutdown()
            rooms_sub.Shutdown()
        new = sorted(set(parts) - set(before))
        if len(new) != 1 or not set(before) <= set(parts):
            fail(f"PartsList report {parts} after commissioning {device}; before {before}")
        endpoint = new[0]
        ok(f"subscribed to the Aggregator's PartsList {before}; commissioning {device} in Hearth brought a report {parts} (new endpoint {endpoint})")
        again = await read_attr(ctrl, node, 1, D, D.Attributes.PartsList)
        if sorted(again) != sorted(parts):
            fail(f"PartsList read {list(again)} after the report {parts}")
        servers = list(await read_attr(ctrl, node, endpoint, D, D.Attributes.ServerList))
        if TM.id not in servers:
            fail(f"endpoint {endpoint}'s ServerList {servers} has no TemperatureMeasurement")
        value = None
        for _ in range(30):
            value = await read_attr(ctrl, node, endpoint, TM, TM.Attributes.MeasuredValue)
            if value == 2150:
                break
            await asyncio.sleep(0.2)
        else:
            fail(f"endpoint {endpoint}'s MeasuredValue {value}, expected 2150 (21.5 °C over MQTT)")
        labels = {l.label: l.value for l in await read_attr(ctrl, node, endpoint, FL, FL.Attributes.LabelList)}
        if labels.get("room") != "Attic":
            fail(f"endpoint {endpoint}'s Fixed Label {labels}, expected room Attic")
        ok(f"read the new endpoint {endpoint} without re-pairing: TemperatureMeasurement MeasuredValue {value} (21.5 °C), room '{labels['room']}'")
        return endpoint

    try:
        t0 = time.monotonic()
        try:
            await asyncio.wait_for(controller.CommissionWithCode(qr, 1, DiscoveryType.DISCOVERY_NETWORK_ONLY), timeout=90)
        except Exception as error:
            fail(f"commissioning with {qr}: {error!r}")
        print(f"BENCH commission {time.monotonic() - t0:.2f} s", flush=True)
        ok("commissioned by the controller with the QR payload (mDNS, PASE, attestation, AddNOC, CASE)")
        fabric, index = await retry("read over CASE", lambda: read_bridge(controller, 1))
        ok(f"over CASE: Basic Information, PartsLists root=[1]+bridged, aggregator={'bridged' if PLUGIN else '[]'}, own fabric 0x{fabric.fabricID:x} index {index}")
        bridged = await bridged_devices(controller, 1) if PLUGIN else None
        thermometer = await mqtt_device(controller, 1) if broker else None
        last_event = 0
        if PLUGIN:
            await contact_events(controller, 1, bridged[0])
            last_event = await button_events(controller, 1)
        shown = matter_show()
        if shown["window"] != "closed" or len(shown["fabrics"]) != 1 or shown["fabrics"][0]["fabricID"] != "1":
            fail(f"'hearth matter show' after commissioning: {shown}")
        ok("'hearth matter show': window closed, one fabric (0x1)")

        for how, sig in (("SIGTERM", signal.SIGTERM), ("kill -9", signal.SIGKILL)):
            hearthd.stop(sig)
            mark = len(hearthd.log())
            hearthd.start()
            controller.ExpireSessions(1)
            again, _ = await retry(f"read after {how}", lambda: read_bridge(controller, 1))
            if again.fabricID != fabric.fabricID:
                fail(f"after {how}: fabric {again}")
            # The resumption record outlived the restart (the state store): Sigma2_Resume, no full CASE.
            since = hearthd.log()[mark:]
            resumed = [l for l in since.splitlines() if "CASE (resumed, Sigma2_Resume) session established" in l]
            full = [l for l in since.splitlines() if "Matter CASE session established" in l]
            if not resumed or full:
                fail(f"after {how}: expected a resumed CASE session and no full one; log since the restart:\n" +
                     "\n".join(l for l in since.splitlines() if "session established" in l or "resumption" in l))
            ok(f"after {how} and a restart: the controller's CASE session was resumed (Sigma2_Resume, record from the state store), "
               "same reads, same fabric")
        if PLUGIN:
            parts, contact, relay = await retry("bridged endpoints after the restarts", lambda: find_devices(controller, 1))
            if (contact, relay) != bridged:
                fail(f"after the restarts: contact {contact}, relay {relay}; before {bridged}")
            ok(f"after the restarts the same bridged endpoints: contact {contact}, relay {relay}, PartsList {parts}")
            newest = await button_events(controller, 1, after=last_event)
            ok(f"after the restarts the event numbers went on from the stored epoch: {newest} > {last_event}")
        if thermometer is not None:
            parts = await read_attr(controller, 1, 1, D, D.Attributes.PartsList)
            value = await retry("the MQTT thermometer after the restarts",
                                lambda: read_attr(controller, 1, thermometer, TM, TM.Attributes.MeasuredValue))
            if thermometer not in parts or value != 2150:
                fail(f"after the restarts: PartsList {list(parts)}, thermometer {thermometer} reads {value}")
            ok(f"after the restarts the MQTT thermometer keeps endpoint {thermometer} and reads {value}")

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
        if WEB_PYTHON:
            # The web page's Remove button (headless Chromium inside this namespace).
            r = subprocess.run([WEB_PYTHON, os.path.join(os.path.dirname(os.path.abspath(__file__)), "web_fabrics.py"),
                                f"http://127.0.0.1:{API_PORT}", PASSWORD, str(other_index), ",".join(ids)],
                               capture_output=True, text=True, timeout=120)
            print(r.stdout.strip(), flush=True)
            if r.returncode != 0:
                fail(f"the web page's Remove: {r.stdout.strip()} {r.stderr.strip()[-2000:]}")
            removed = matter_show()
            how = f"the web page's Remove button on fabric {other_index}"
        else:
            removed = json.loads(cli("matter", "remove-fabric", str(other_index), "--json"))
            how = f"'remove-fabric {other_index}'"
        if [f["fabricID"] for f in removed["fabrics"]] != ["1"]:
            fail(f"{how}: {removed}")
        ok(f"'hearth matter show' listed both fabrics; {how} left fabric 0x1")
        controller.ExpireSessions(1)
        await retry("first controller after the removal", lambda: read_bridge(controller, 1))
        ok("the first controller still reads after the second fabric was removed")
        print("BRIDGE OK", flush=True)
    finally:
        stop()
        hearthd.stop()
        if broker:
            broker.stop()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except SystemExit:
        raise
    except BaseException as error:
        print(f"FAIL: {error!r}", flush=True)
        sys.exit(1)

#!/usr/bin/env python3
"""Home Assistant side of issue 22's CPU comparison, run by ha-bench.sh in its own venv.

The same load as `mqtt-benchmark e2e` (Benchmarks/MQTTBenchmark/EndToEnd.swift): one mosquitto
on a free 127.0.0.1 port, 1,000 retained discovery configs
`homeassistant/sensor/bench/t<N>/config` (the same payload), state topics `bench/t/<N>` with
`{"t":<value>}`; a paced phase (RATE msg/s for SECONDS s, round-robin, each message a new value)
and a flood (MESSAGES as fast as one publisher can). Home Assistant 2024.3.3 runs from a fresh
config directory with the MQTT integration as a config entry and one WebSocket observer
(`subscribe_entities`, what the frontend uses), as hearthd has one. CPU is the hass process's
utime+stime (and its children's) from /proc. Loopback only; everything it starts is killed at
the end.

    ha_bench.py --work DIR [--devices 1000] [--rate 1000] [--seconds 10] [--messages 100000]
                [--recorder on|off|both] [--keep]
"""
import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mqtt_wire import packet, string  # noqa: E402  (Benchmarks/mqtt_wire.py)

HA_VERSION = "2024.3.3"
TICK = os.sysconf("SC_CLK_TCK")
children: list[subprocess.Popen] = []
OBSERVER: asyncio.Task | None = None


def log(msg: str) -> None:
    print(f"ha-bench: {msg}", file=sys.stderr, flush=True)


def fail(msg: str) -> None:
    raise SystemExit(f"ha-bench: {msg}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: list[str], out: str, **kw) -> subprocess.Popen:
    """Started in this process's group (ha-bench.sh makes it a group of its own and kills it at the end)."""
    p = subprocess.Popen(args, stdout=open(out, "ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kw)
    children.append(p)
    return p


def stop_all() -> None:
    """SIGTERM each process we started, SIGKILL after 20 s (bounded)."""
    for p in reversed(children):
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 20
    for p in reversed(children):
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
    children.clear()


# MARK: CPU

def stat_fields(pid: int) -> list[str] | None:
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from state (3) on


def cpu_seconds(pid: int) -> float:
    """utime+stime of pid and of every live descendant, plus the reaped children's (cutime+cstime)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (f := stat_fields(int(entry))):
            parents[int(entry)] = int(f[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        for child, parent in parents.items():
            if parent == p and child not in tree:
                tree.add(child)
                frontier.append(child)
    total = 0.0
    for p in tree:
        if f := stat_fields(p):
            total += int(f[11]) + int(f[12]) + (int(f[13]) + int(f[14]) if p == pid else 0)
    return total / TICK


# MARK: MQTT 3.1.1 over a socket (packet pieces in Benchmarks/mqtt_wire.py)

class Publisher:
    def __init__(self, port: int, client_id: str):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(packet(0x10, string("MQTT") + bytes([4, 0x02, 0, 0]) + string(client_id)))  # keep-alive off
        if self.sock.recv(4)[:1] != b"\x20":
            fail("no CONNACK from mosquitto")
        self.sock.settimeout(None)
        self.packet_id = 0
        threading.Thread(target=self._drain, daemon=True).start()  # PUBACKs

    def _drain(self) -> None:
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass

    def packet(self, topic: str, payload: str, qos: int = 0, retain: bool = False) -> bytes:
        body = string(topic)
        if qos:
            self.packet_id = self.packet_id % 65535 + 1
            body += self.packet_id.to_bytes(2, "big")
        return packet(0x30 | qos << 1 | int(retain), body + payload.encode())

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)


def centi(k: int) -> int:
    """The value (0.01 °C) of a device's k-th message, as EndToEnd.swift: distinct below 30,000."""
    return k % 30_000 - 5_000


def payload(c: int) -> str:
    return '{"t":%r}' % (c / 100)  # Swift's Double description and Python's repr agree: 12.3, -50.0


def config_payload(d: int) -> str:
    return ('{"name": "Bench %d", "stat_t": "bench/t/%d", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", '
            '"unit_of_meas": "°C", "uniq_id": "bench-t%d"}' % (d, d, d))


# MARK: Home Assistant's config directory

def storage(key: str, data, version: int = 1, minor: int = 1) -> str:
    return json.dumps({"version": version, "minor_version": minor, "key": key, "data": data}, indent=2)


def write_config(config: str, http_port: int, broker_port: int, recorder: bool) -> str:
    """configuration.yaml, onboarding done, an owner with a long-lived token, the MQTT entry. Returns the token."""
    import jwt  # PyJWT, one of Home Assistant's own requirements
    st = os.path.join(config, ".storage")
    os.makedirs(st)
    with open(os.path.join(config, "configuration.yaml"), "w") as f:
        f.write(f"""# Written by Benchmarks/HomeAssistant/ha_bench.py: loopback only, no default_config.
homeassistant:
  name: Bench
  unit_system: metric
  time_zone: UTC
  latitude: 0
  longitude: 0
  elevation: 0
  currency: EUR
  country: DE
http:
  server_host: 127.0.0.1
  server_port: {http_port}
api:
logger:
  default: warning
""" + ("recorder:\n" if recorder else ""))
    with open(os.path.join(st, "onboarding"), "w") as f:
        f.write(storage("onboarding", {"done": ["user", "core_config", "analytics", "integration"]}, version=4))
    user_id, token_id, jwt_key = uuid.uuid4().hex, uuid.uuid4().hex, secrets.token_hex(64)
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000+00:00", time.gmtime())
    groups = [{"id": "system-admin", "name": "Administrators"}, {"id": "system-users", "name": "Users"},
              {"id": "system-read-only", "name": "Read Only"}]
    auth = {
        "users": [{"id": user_id, "group_ids": ["system-admin"], "is_owner": True, "is_active": True, "name": "bench",
                   "system_generated": False, "local_only": False}],
        "groups": groups,
        "credentials": [],
        "refresh_tokens": [{
            "id": token_id, "user_id": user_id, "client_id": None, "client_name": "ha-bench", "client_icon": None,
            "token_type": "long_lived_access_token", "created_at": now, "access_token_expiration": 315360000.0,
            "token": secrets.token_hex(64), "jwt_key": jwt_key, "last_used_at": None, "last_used_ip": None,
            "credential_id": None, "version": HA_VERSION}],
    }
    with open(os.path.join(st, "auth"), "w") as f:
        f.write(storage("auth", auth))
    entry = {
        "entry_id": uuid.uuid4().hex, "version": 1, "minor_version": 1, "domain": "mqtt", "title": "127.0.0.1",
        "data": {"broker": "127.0.0.1", "port": broker_port, "discovery": True, "discovery_prefix": "homeassistant"},
        "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False, "source": "user",
        "unique_id": None, "disabled_by": None,
    }
    with open(os.path.join(st, "core.config_entries"), "w") as f:
        f.write(storage("core.config_entries", {"entries": [entry]}))
    iat = int(time.time()) - 60
    return jwt.encode({"iss": token_id, "iat": iat, "exp": iat + 10 * 365 * 86400}, jwt_key, algorithm="HS256")


# MARK: The observer (subscribe_entities over /api/websocket)

class Seen:
    def __init__(self) -> None:
        self.latest: dict[int, int] = {}
        self.times: dict[tuple[int, int], int] = {}
        self.keep = False
        self.count = 0
        self.last = 0


async def observe(http_port: int, token: str, seen: Seen, ready: asyncio.Event) -> None:
    import aiohttp
    index: dict[str, int] = {}

    def record(eid: str, state: str, t: int) -> None:
        d = index.get(eid)
        try:
            v = round(float(state) * 100)
        except ValueError:
            return
        if d is None:
            return
        seen.count += 1
        seen.last = t
        seen.latest[d] = v
        if seen.keep:
            seen.times.setdefault((d, v), t)

    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{http_port}/api/websocket", max_msg_size=0) as ws:
            await ws.receive_json()  # auth_required
            await ws.send_json({"type": "auth", "access_token": token})
            if (await ws.receive_json()).get("type") != "auth_ok":
                fail("the WebSocket refused the token")
            await ws.send_json({"id": 1, "type": "subscribe_entities"})
            async for m in ws:
                t = time.monotonic_ns()
                if m.type != aiohttp.WSMsgType.TEXT:
                    break
                data = json.loads(m.data)
                for msg in data if isinstance(data, list) else [data]:
                    event = msg.get("event") or {}
                    for eid, s in (event.get("a") or {}).items():
                        name = (s.get("a") or {}).get("friendly_name", "")
                        if eid.startswith("sensor.") and name.startswith("Bench ") and name[6:].isdigit():
                            index[eid] = int(name[6:])
                        record(eid, s.get("s", ""), t)
                        ready.set()
                    for eid, change in (event.get("c") or {}).items():
                        if "s" in (plus := change.get("+") or {}):
                            record(eid, plus["s"], t)


# MARK: One Home Assistant run

def get_json(url: str, token: str):
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


async def wait_until(what: str, seconds: float, cond, hass: subprocess.Popen, log_file: str, poll: float = 0.005) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if hass.poll() is not None:
            os.system(f"tail -n 30 {log_file} >&2")
            fail(f"hass exited ({hass.returncode}) while waiting for {what}; log {log_file}")
        if await cond():
            return
        if OBSERVER and OBSERVER.done():
            fail(f"the WebSocket observer stopped ({OBSERVER.exception() or 'closed by Home Assistant'}) while waiting "
                 f"for {what}; log {log_file}")
        await asyncio.sleep(poll)
    os.system(f"tail -n 30 {log_file} >&2")
    fail(f"timed out after {seconds:.0f} s waiting for {what}; log {log_file}")


def percentile(xs: list[float], p: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


async def run_ha(o, work: str, broker_port: int, pub: Publisher, recorder: bool, k: list[int]) -> dict:
    name = "recorder on" if recorder else "recorder off"
    config = os.path.join(work, f"ha-{'rec' if recorder else 'norec'}")
    shutil.rmtree(config, ignore_errors=True)
    http_port = free_port()
    token = write_config(config, http_port, broker_port, recorder)
    log_file = os.path.join(config, "hass.out")
    t0 = time.monotonic()
    hass = start([os.path.join(os.path.dirname(sys.executable), "hass"), "-c", config, "--log-file",
                  os.path.join(config, "home-assistant.log")], log_file)
    api = f"http://127.0.0.1:{http_port}/api"
    loop = asyncio.get_running_loop()

    async def running() -> bool:
        try:
            return (await loop.run_in_executor(None, get_json, api + "/config", token)).get("state") == "RUNNING"
        except Exception:
            return False

    await wait_until("Home Assistant to run (first start pip-installs integration requirements)", o.start_timeout,
                     running, hass, log_file, poll=1)
    sensors: list = []

    async def all_sensors() -> bool:
        nonlocal sensors
        states = await loop.run_in_executor(None, get_json, api + "/states", token)
        sensors = [s for s in states if s["entity_id"].startswith("sensor.")
                   and str(s["attributes"].get("friendly_name", "")).startswith("Bench ")]
        return len(sensors) >= o.devices

    await wait_until(f"{o.devices} discovered sensors", 300, all_sensors, hass, log_file, poll=1)
    log(f"[{name}] Home Assistant up with {len(sensors)} sensors in {time.monotonic() - t0:.1f} s (pid {hass.pid})")

    seen, ready = Seen(), asyncio.Event()
    global OBSERVER
    observer = OBSERVER = asyncio.create_task(observe(http_port, token, seen, ready))

    async def observer_ready() -> bool:
        if observer.done():
            observer.result()
        return ready.is_set()

    await wait_until("the observer's first message", 60, observer_ready, hass, log_file)
    f: dict = {"name": name, "pid": hass.pid}

    # Warm-up: one value per device until the observer has them all (sent again, new values,
    # while Home Assistant's subscriptions are still being made: it subscribes in batches).
    deadline = time.monotonic() + 180
    while True:
        warm = k[0]
        k[0] += 1
        pub.send(b"".join(pub.packet(f"bench/t/{d}", payload(centi(warm))) for d in range(o.devices)))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if observer.done():
                fail(f"the WebSocket observer stopped during the warm-up; log {log_file}")
            missing = [d for d in range(o.devices) if seen.latest.get(d) != centi(warm)]
            if not missing:
                break
        if not missing:
            break
        if time.monotonic() > deadline or hass.poll() is not None:
            fail(f"warm-up: {len(missing)} sensors never showed a value at the observer (e.g. {missing[:5]}); log {log_file}")
        log(f"[{name}] warm-up: {len(missing)} sensors without the value yet; again")
    # Settle: until Home Assistant's start-up work is over (under 5 % of a core for a second; at most 60 s).
    settle0 = time.monotonic()
    while time.monotonic() - settle0 < 60:
        c0 = cpu_seconds(hass.pid)
        await asyncio.sleep(1)
        if cpu_seconds(hass.pid) - c0 < 0.05:
            break
    f["settle_s"] = time.monotonic() - settle0
    log(f"[{name}] warm-up done; idle after {f['settle_s']:.0f} s")

    # Paced: RATE msg/s round-robin, each message a new value.
    count = o.rate * o.seconds
    base = k[0]
    k[0] += count // o.devices + 1
    sent: list[tuple[int, int, int]] = []

    def paced() -> None:
        interval = 1e9 / o.rate
        start_ns = time.monotonic_ns()
        for i in range(count):
            due = start_ns + i * interval
            while (now := time.monotonic_ns()) < due:
                time.sleep((due - now) / 1e9)
            d, v = i % o.devices, centi(base + i // o.devices)
            t = time.monotonic_ns()
            pub.send(pub.packet(f"bench/t/{d}", payload(v)))
            sent.append((d, v, t))

    seen.times.clear()
    seen.keep = True
    cpu0 = cpu_seconds(hass.pid)
    p0 = time.monotonic()
    await loop.run_in_executor(None, paced)
    f["paced_s"] = time.monotonic() - p0
    last_d, last_v, _ = sent[-1]
    await wait_until("the last paced value at the observer", 60,
                     lambda: asyncio.sleep(0, seen.latest.get(last_d) == last_v), hass, log_file)
    await asyncio.sleep(0.2)
    f["paced_cpu10k"] = (cpu_seconds(hass.pid) - cpu0) / count * 10_000
    seen.keep = False
    lat = [(seen.times[(d, v)] - t) / 1000 for d, v, t in sent[len(sent) // 20:] if (d, v) in seen.times]
    f["paced_seen"], f["paced_sent"] = len(lat), len(sent) - len(sent) // 20
    f["p50"], f["p99"] = percentile(lat, 0.5), percentile(lat, 0.99)
    # Home Assistant's own state machine (REST) has each device's last paced value?
    final = {}
    for d, v, _ in sent:
        final[d] = v
    states = await loop.run_in_executor(None, get_json, api + "/states", token)
    by_name = {int(s["attributes"]["friendly_name"][6:]): s["state"] for s in states
               if str(s["attributes"].get("friendly_name", "")).startswith("Bench ")}
    f["rest_match"] = sum(1 for d, v in final.items() if by_name.get(d) not in (None, "unknown", "unavailable")
                          and round(float(by_name[d]) * 100) == v)
    f["rest_devices"] = len(final)

    # Flood: MESSAGES as fast as one publisher can; ends when the observer has each device's final value.
    if o.messages:
        fbase = k[0]
        k[0] += o.messages // o.devices + 1
        last = {}
        chunks, buf = [], bytearray()
        for i in range(o.messages):
            d, v = i % o.devices, centi(fbase + i // o.devices)
            last[d] = v
            buf += pub.packet(f"bench/t/{d}", payload(v))
            if len(buf) > 65536:
                chunks.append(bytes(buf))
                buf.clear()
        chunks.append(bytes(buf))
        # Home Assistant drops a WebSocket client with 4,096 messages pending (it cannot send while
        # its loop is busy with MQTT): a flood disconnects the observer. It is closed first, and the
        # end is seen through GET /api/states twice a second instead.
        OBSERVER = None
        observer.cancel()
        await asyncio.sleep(0.5)

        def finished() -> bool:
            states = get_json(api + "/states", token)
            got = {int(s["attributes"]["friendly_name"][6:]): s["state"] for s in states
                   if str(s["attributes"].get("friendly_name", "")).startswith("Bench ")}
            try:
                return all(round(float(got[d]) * 100) == v for d, v in last.items())
            except (KeyError, ValueError):
                return False

        cpu0 = cpu_seconds(hass.pid)
        start_ns = time.monotonic_ns()
        await loop.run_in_executor(None, lambda: [pub.send(c) for c in chunks])
        f["flood_send_rate"] = o.messages / ((time.monotonic_ns() - start_ns) / 1e9)
        await wait_until("every device's final flood value (REST)", o.flood_timeout,
                         lambda: loop.run_in_executor(None, finished), hass, log_file, poll=0.5)
        end_ns = time.monotonic_ns()
        f["flood_rate"] = o.messages / ((end_ns - start_ns) / 1e9)
        f["flood_cpu10k"] = (cpu_seconds(hass.pid) - cpu0) / o.messages * 10_000

    f["rss_mib"] = int(stat_fields(hass.pid)[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    OBSERVER = None
    observer.cancel()
    hass.send_signal(signal.SIGTERM)
    try:
        hass.wait(60)
    except subprocess.TimeoutExpired:
        log(f"[{name}] hass did not stop within 60 s; killed")
        hass.kill()
    log(f"[{name}] done")
    return f


async def main_async(o) -> None:
    work = os.path.abspath(o.work)
    os.makedirs(work, exist_ok=True)
    broker_port = free_port()
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:  # as EndToEnd.swift's
        f.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n"
                "max_queued_messages 0\n")
    start([shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", conf], os.path.join(work, "mosquitto.out"))
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", broker_port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        fail(f"mosquitto did not listen on 127.0.0.1:{broker_port}")
    pub = Publisher(broker_port, "bench-load")
    pub.send(b"".join(pub.packet(f"homeassistant/sensor/bench/t{d}/config", config_payload(d), qos=1, retain=True)
                      for d in range(o.devices)))
    log(f"mosquitto on 127.0.0.1:{broker_port}, {o.devices} discovery configs published (retained)")
    results, k = [], [0]
    modes = {"on": [True], "off": [False], "both": [True, False]}[o.recorder]
    for recorder in modes:
        results.append(await run_ha(o, work, broker_port, pub, recorder, k))

    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"\nHome Assistant {HA_VERSION} (Python {sys.version.split()[0]}), MQTT on 127.0.0.1:{broker_port}, "
          f"{o.devices} HA-discovered temperature sensors, one subscribe_entities WebSocket observer")
    print(f"paced: {o.rate} msg/s for {o.seconds} s; flood: {o.messages} messages (QoS 0); load average now {load}\n")
    cols = [("run", 14), ("CPU s/10k paced", 17), ("seen paced", 13), ("REST final", 12), ("p50/p99 ms", 15),
            ("flood msg/s", 13), ("CPU s/10k flood", 17), ("RSS MiB", 8)]
    print("".join(c.ljust(w) for c, w in cols))
    for f in results:
        row = [f["name"], f"{f['paced_cpu10k']:.3f}", f"{f['paced_seen']}/{f['paced_sent']}",
               f"{f['rest_match']}/{f['rest_devices']}", f"{f['p50'] / 1000:.1f}/{f['p99'] / 1000:.1f}",
               f"{f.get('flood_rate', 0):.0f}", f"{f.get('flood_cpu10k', 0):.3f}", f"{f['rss_mib']:.0f}"]
        print("".join(v.ljust(w) for v, (_, w) in zip(row, cols)))
    print("\nCPU s/10k: utime+stime of the hass process (and children) per 10,000 messages, /proc/PID/stat, as "
          "EndToEnd.swift measures hearthd.\nseen paced: paced values the observer saw (first 5 % dropped); REST final: "
          "sensors whose state (GET /api/states) is the last paced value.\nflood msg/s: messages ÷ (first publish → "
          "GET /api/states shows every device's final value, polled twice a second; the observer is closed before the "
          "flood, which Home Assistant would drop it in).")
    if o.json:
        with open(o.json, "w") as fh:
            json.dump({"load": load, "results": results}, fh, indent=2)


def requirements(domains: list[str]) -> list[str]:
    """The PyPI requirements of these integrations and of their dependencies (their manifests)."""
    import homeassistant.components as components
    base, seen, out = os.path.dirname(components.__file__), set(), []
    while domains:
        d = domains.pop()
        if d in seen:
            continue
        seen.add(d)
        with open(os.path.join(base, d, "manifest.json")) as f:
            m = json.load(f)
        out += m.get("requirements", [])
        domains += m.get("dependencies", [])
    return sorted(set(out))


def main() -> None:
    if sys.argv[1:2] == ["--requirements"]:
        print("\n".join(requirements(["mqtt", "recorder", "http", "api"])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--recorder", choices=["on", "off", "both"], default="both")
    ap.add_argument("--start-timeout", type=float, default=300)
    ap.add_argument("--flood-timeout", type=float, default=600)
    ap.add_argument("--json")
    o = ap.parse_args()
    import faulthandler
    faulthandler.register(signal.SIGUSR1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("ha-bench: terminated"))
    try:
        asyncio.run(main_async(o))
    finally:
        stop_all()


if __name__ == "__main__":
    main()

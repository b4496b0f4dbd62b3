"""The Matter bridge benchmark (issue 21): the real CHIP controller against a real hearthd
(meant for a release build), in the namespace scripts/test-matter-controller makes
(MATTER_BENCH=1). Reuses bridge_controller.py's hearthd, mosquitto and CLI helpers.
  1. time to commission (CommissionWithCode with the QR payload, mDNS to CommissioningComplete);
  2. GPIO edge -> BooleanState subscription report at the controller, EDGES edges on the
     simulated chip's control FIFO, each timed from the write to the report callback; p50/p99
     (the door line's chatter guard off: it would hold a line with more than 24 changes in 10 s);
  3. hearthd's VmRSS with the three GPIO devices bridged, then with DEVICES more MQTT
     thermometers (Home Assistant discovery through a mosquitto in the namespace, commissioned
     through the API and bridged): (RSS after - RSS before) / DEVICES;
  4. reads over the DEVICES bridged endpoints: sequential single-attribute reads (one
     MeasuredValue per request, round robin), CONCURRENT reads in flight, and one wildcard read
     of every endpoint's MeasuredValue.

Usage: bench_controller.py HEARTHD HEARTH WORK libGPIOPlugin.so libMQTTPlugin.so
Env: MATTER_BENCH_EDGES (default 200), MATTER_BENCH_DEVICES (100), MATTER_BENCH_READS (1000).
Prints BENCH lines and 'BENCH OK'; exits 1 with 'FAIL: …' otherwise.
"""
import asyncio
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bridge_controller as bc  # noqa: E402  (parses the same argv)

EDGES = int(os.environ.get("MATTER_BENCH_EDGES", "200"))
DEVICES = int(os.environ.get("MATTER_BENCH_DEVICES", "100"))
READS = int(os.environ.get("MATTER_BENCH_READS", "1000"))
CONCURRENT = 8
fail, ok = bc.fail, bc.ok


def bench(msg):
    print("BENCH", msg, flush=True)


def percentile(values, p):
    """Nearest rank."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def rss_kib(pid):
    """VmRSS of pid, and its child processes' as 'name=KiB' (hearthd's helpers, if any)."""
    def one(p):
        rss, name = 0, "?"
        with open(f"/proc/{p}/status") as f:
            for line in f:
                if line.startswith("Name:"):
                    name = line.split()[1]
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        return rss, name
    children = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            for c in f.read().split():
                rss, name = one(int(c))
                children.append(f"{name}={rss}")
    except OSError:
        pass
    return one(pid)[0], ", ".join(children) or "none"


def cpu_seconds(pid):
    """utime + stime of pid (all its threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid or 'self'}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main():
    from chip_controller import start
    from chip.discovery import DiscoveryType
    import chip.clusters as Clusters
    D, BS, TM = Clusters.Descriptor, Clusters.BooleanState, Clusters.TemperatureMeasurement
    if not bc.PLUGIN or not bc.MQTT_PLUGIN:
        fail("the benchmark needs libGPIOPlugin.so and libMQTTPlugin.so (and mosquitto)")

    broker = bc.Broker()
    hearthd = bc.Hearthd(broker)
    # The edges come every few tens of ms: the door line's chatter guard (more than 24 changes
    # in 10 s) would hold it, so it is off for this line (the setting for lines that pulse on purpose).
    with open(hearthd.config) as f:
        config = f.read()
    door = "line: DOOR, role: contact, debounce: 1ms,"
    if door not in config:
        fail("bridge_controller.py's configuration has no door line to benchmark")
    with open(hearthd.config, "w") as f:
        f.write(config.replace(door, door + " chatter-guard: false,"))
    hearthd.start()
    m = None
    for _ in range(100):
        m = re.search(r"Matter pairing code \d{4}-\d{3}-\d{4}\s+QR (MT:[0-9A-Z.\-]+)", hearthd.log())
        if m:
            break
        time.sleep(0.1)
    if not m:
        fail("hearthd did not print the Matter QR payload")
    qr = m.group(1)
    with open(os.path.join(bc.WORK, "state", "setup-code")) as f:
        code = f.read().strip()
    bc.cli("setup", "--url", f"http://127.0.0.1:{bc.API_PORT}", "--code", code, "--password-stdin")
    bc.commission_gpio()
    controller, stop = start(os.path.join(bc.WORK, "chip"), fabric_id=1)

    async def read_attr(endpoint, cluster, attribute):
        r = await controller.ReadAttribute(1, [(endpoint, attribute)])
        return r[endpoint][cluster][attribute]

    try:
        t0 = time.monotonic()
        try:
            await asyncio.wait_for(controller.CommissionWithCode(qr, 1, DiscoveryType.DISCOVERY_NETWORK_ONLY), timeout=90)
        except Exception as error:
            fail(f"commissioning with {qr}: {error!r}")
        bench(f"commission {time.monotonic() - t0:.3f} s (CommissionWithCode, QR payload, network discovery)")

        async def contact_endpoint():
            parts = list(await read_attr(1, D, D.Attributes.PartsList))
            lists = await controller.ReadAttribute(1, [(e, D.Attributes.ServerList) for e in parts])
            found = [e for e in parts if BS.id in lists[e][D][D.Attributes.ServerList]]
            assert len(found) == 1, found
            return parts, found[0]
        parts, contact = await bc.retry("the contact's endpoint", contact_endpoint)

        # Edges: alternate pull-up / pull-down, one report awaited per edge.
        bc.gpio("DOOR", "pull-down")
        await asyncio.sleep(0.5)
        sub = await controller.ReadAttribute(1, [(contact, BS.Attributes.StateValue)], reportInterval=(0, 60))
        samples = []
        try:
            loop = asyncio.get_running_loop()
            reports = asyncio.Queue()
            sub.SetAttributeUpdateCallback(
                lambda path, transaction: loop.call_soon_threadsafe(reports.put_nowait, (time.monotonic(), transaction.GetAttribute(path))))
            value = sub.GetAttributes()[contact][BS][BS.Attributes.StateValue]
            for i in range(EDGES):
                want = not value
                t0 = time.monotonic()
                bc.gpio("DOOR", "pull-up" if want else "pull-down")
                try:
                    while True:
                        at, value = await asyncio.wait_for(reports.get(), timeout=10)
                        if value == want:
                            break
                except asyncio.TimeoutError:
                    fail(f"edge {i}: no BooleanState report {want} within 10 s")
                samples.append(at - t0)
                await asyncio.sleep(0.02)  # past the 1 ms debounce; one edge at a time
        finally:
            sub.Shutdown()
        ms = [s * 1000 for s in samples]
        bench(f"edge -> BooleanState report n={len(ms)} p50 {percentile(ms, 50):.2f} ms p99 {percentile(ms, 99):.2f} ms "
              f"min {min(ms):.2f} ms max {max(ms):.2f} ms (p90 {percentile(ms, 90):.2f} ms, p95 {percentile(ms, 95):.2f} ms)")
        slow = [(i, round(v, 1)) for i, v in enumerate(ms) if v > 2 * percentile(ms, 50)]
        bench(f"edges slower than twice the median: {len(slow)} of {len(ms)} (edge, ms): {slow[:20]}")

        await asyncio.sleep(2)
        base, base_children = rss_kib(hearthd.proc.pid)
        bench(f"rss with {len(parts)} bridged endpoints (GPIO): hearthd {base} KiB (child processes, KiB: {base_children})")

        # DEVICES MQTT thermometers, announced with retained discovery configs, then commissioned.
        names = [f"mb{i:03d}" for i in range(DEVICES)]
        for i, n in enumerate(names):
            broker.publish(f"homeassistant/sensor/{n}/temperature/config", json.dumps({
                "name": "Temperature", "unique_id": f"{n}-temperature", "state_topic": f"{n}/temperature",
                "device_class": "temperature", "unit_of_measurement": "°C",
                "device": {"identifiers": [n], "name": f"Bench {n}", "manufacturer": "Test", "model": "T1"}}))
            broker.publish(f"{n}/temperature", f"{20 + i / 100:.2f}")
        wanted = {f"mqtt:{n}" for n in names}
        deadline = time.time() + 120
        while not wanted <= {d["id"] for d in json.loads(bc.cli("discovered", "--json"))}:
            if time.time() > deadline:
                fail(f"the {DEVICES} MQTT devices were not all discovered within 120 s")
            time.sleep(0.5)
        structure = json.loads(bc.cli("structures", "--json"))[0]["id"]
        t0 = time.monotonic()
        for n in names:
            bc.cli("commission", f"mqtt:{n}", "--name", f"Bench {n[2:]}", "--structure", structure)
        bench(f"commissioned {DEVICES} MQTT devices through the CLI in {time.monotonic() - t0:.1f} s")

        async def thermometers():
            now = list(await read_attr(1, D, D.Attributes.PartsList))
            new = sorted(set(now) - set(parts))
            assert len(new) >= DEVICES, (len(new), DEVICES)
            return new
        endpoints = await bc.retry("the new endpoints in the PartsList", thermometers, seconds=60)
        lists = await controller.ReadAttribute(1, [(e, D.Attributes.ServerList) for e in endpoints])
        endpoints = [e for e in endpoints if TM.id in lists[e][D][D.Attributes.ServerList]]
        if len(endpoints) != DEVICES:
            fail(f"{len(endpoints)} TemperatureMeasurement endpoints, expected {DEVICES}")
        # Every endpoint once (the values arrived over MQTT), then the figures.
        for _ in range(60):
            first = {e: await read_attr(e, TM, TM.Attributes.MeasuredValue) for e in endpoints}
            if all(v is not None and 2000 <= v < 2100 for v in first.values()):
                break
            await asyncio.sleep(0.5)
        else:
            fail(f"MeasuredValues not all in 20.00-20.99 °C: {first}")
        ok(f"{DEVICES} MQTT thermometers bridged as endpoints {endpoints[0]}..{endpoints[-1]}, each read once")
        await asyncio.sleep(2)
        full, full_children = rss_kib(hearthd.proc.pid)
        bench(f"rss with {len(parts) + DEVICES} bridged endpoints: hearthd {full} KiB (child processes, KiB: {full_children}); "
              f"per added device {(full - base) / DEVICES:.1f} KiB")

        pid = hearthd.proc.pid
        t0, c0, s0 = time.monotonic(), cpu_seconds(pid), cpu_seconds(None)
        for i in range(READS):
            await read_attr(endpoints[i % DEVICES], TM, TM.Attributes.MeasuredValue)
        elapsed, cpu, own = time.monotonic() - t0, cpu_seconds(pid) - c0, cpu_seconds(None) - s0
        bench(f"sequential reads over {DEVICES} endpoints: {READS} in {elapsed:.2f} s = {READS / elapsed:.0f} reads/s; "
              f"CPU per read: hearthd {cpu / READS * 1e6:.0f} us, the controller {own / READS * 1e6:.0f} us")

        queue = list(range(READS))

        async def worker():
            while queue:
                i = queue.pop()
                await read_attr(endpoints[i % DEVICES], TM, TM.Attributes.MeasuredValue)
        t0, c0, s0 = time.monotonic(), cpu_seconds(pid), cpu_seconds(None)
        await asyncio.gather(*(worker() for _ in range(CONCURRENT)))
        elapsed, cpu, own = time.monotonic() - t0, cpu_seconds(pid) - c0, cpu_seconds(None) - s0
        bench(f"concurrent reads ({CONCURRENT} in flight) over {DEVICES} endpoints: {READS} in {elapsed:.2f} s = {READS / elapsed:.0f} reads/s; "
              f"CPU per read: hearthd {cpu / READS * 1e6:.0f} us, the controller {own / READS * 1e6:.0f} us")

        rounds = 20
        t0, c0 = time.monotonic(), cpu_seconds(pid)
        for _ in range(rounds):
            r = await controller.ReadAttribute(1, [TM.Attributes.MeasuredValue])  # every endpoint
            if len(r) != DEVICES:
                fail(f"wildcard read answered {len(r)} endpoints")
        elapsed, cpu = time.monotonic() - t0, cpu_seconds(pid) - c0
        bench(f"wildcard read of MeasuredValue on all {DEVICES} endpoints: {elapsed / rounds * 1000:.1f} ms each, "
              f"{rounds * DEVICES / elapsed:.0f} attributes/s; hearthd CPU {cpu / rounds * 1000:.1f} ms per read")
        after, after_children = rss_kib(hearthd.proc.pid)
        bench(f"rss after the reads: hearthd {after} KiB (child processes, KiB: {after_children})")
        print("BENCH OK", flush=True)
    finally:
        stop()
        hearthd.stop()
        broker.stop()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except SystemExit:
        raise
    except BaseException as error:
        print(f"FAIL: {error!r}", flush=True)
        sys.exit(1)

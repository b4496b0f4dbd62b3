// Unit tests of the page's presentation module (spec units → human units, controls), run by
// scripts/test-web with `node --test` when Node is installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { describeDevice, controlsFor, connectivityText, formatEvent, suggestName, identifyTime } from "../../Sources/HearthServer/Web/present.js";

const trait = (id, value) => ({ id, attributes: [{ id: 0, value }] });
const device = (types) => ({ id: "t:x", name: "X", types });
const reading = (d, key) => describeDevice(d).readings.find((r) => r.key === key)?.text;

test("temperature in 0.01 °C and humidity in 0.01 % read in human units", () => {
  const d = device([{ id: 770, name: "Temperature Sensor", isPrimaryType: true, traits: [trait(0x0402, 2150)] },
    { id: 775, name: "Humidity Sensor", traits: [trait(0x0405, 4312)] }]);
  assert.equal(reading(d, "temperature"), "21.5 °C");
  assert.equal(reading(d, "humidity"), "43 %");
  assert.equal(describeDevice(d).type, "Temperature Sensor");
});

test("contact sensor true is Closed, false is Open; a leak detector says Leak", () => {
  assert.equal(reading(device([{ id: 0x15, name: "Contact Sensor", traits: [trait(0x45, true)] }]), "contact"), "Closed");
  assert.equal(reading(device([{ id: 0x15, name: "Contact Sensor", traits: [trait(0x45, false)] }]), "contact"), "Open");
  assert.equal(reading(device([{ id: 0x43, name: "Water Leak Detector", traits: [trait(0x45, true)] }]), "leak"), "Leak!");
});

test("occupancy bitmap bit 0 is motion", () => {
  assert.equal(reading(device([{ id: 0x107, name: "Occupancy Sensor", traits: [trait(0x406, 1)] }]), "occupancy"), "Motion");
  assert.equal(reading(device([{ id: 0x107, name: "Occupancy Sensor", traits: [trait(0x406, 0)] }]), "occupancy"), "No motion");
});

test("level 0…254 shows as percent and a dimmable light gets switch, toggle and level", () => {
  const d = device([{ id: 0x101, name: "Dimmable Light", isPrimaryType: true, traits: [trait(6, false), trait(8, 127)] }]);
  assert.equal(reading(d, "level"), "50 %");
  assert.equal(reading(d, "onOff"), "Off");
  const c = controlsFor(d);
  assert.deepEqual(c.map((x) => x.key), ["onOff", "toggle", "level"]);
  assert.equal(c[0].label, "Turn on");
  assert.equal(c[2].value, 127);
});

test("a lock offers lock and unlock; a sensor offers nothing", () => {
  const lock = device([{ id: 0xa, name: "Door Lock", traits: [trait(0x101, 1)] }]);
  assert.equal(reading(lock, "lock"), "Locked");
  assert.deepEqual(controlsFor(lock).map((x) => x.command), ["LockDoor", "UnlockDoor"]);
  assert.deepEqual(controlsFor(device([{ id: 770, name: "Temperature Sensor", traits: [trait(0x402, 0)] }])), []);
});

test("connectivity and events read in words", () => {
  assert.equal(connectivityText("partiallyOnline"), "Partially online");
  const e = formatEvent({ device: "gpio:doorbell", name: "ShortRelease", fields: { previousPosition: 1 }, timestampNanoseconds: 0 }, { name: "Doorbell" });
  assert.equal(e.device, "Doorbell");
  assert.equal(e.text, "ShortRelease (previousPosition=1)");
});

test("power in mW, energy in mWh and concentrations read in human units (#14)", () => {
  const attrs = (id, pairs) => ({ id, attributes: pairs.map(([a, value]) => ({ id: a, value })) });
  const meter = device([{ id: 0x510, name: "Electrical Sensor", isPrimaryType: true,
    traits: [attrs(0x0090, [[0x0008, 42400]]), attrs(0x0091, [[0x0001, { Energy: 1510000 }]])] }]);
  assert.equal(reading(meter, "power"), "42.4 W");
  assert.equal(reading(meter, "energy"), "1.51 kWh");
  const air = device([{ id: 0x2c, name: "Air Quality Sensor", isPrimaryType: true,
    traits: [attrs(0x040d, [[0x0000, 612], [0x0008, 0]]), attrs(0x042a, [[0x0000, 11], [0x0008, 4]])] }]);
  assert.equal(reading(air, "CO₂"), "612 ppm");
  assert.equal(reading(air, "PM2.5"), "11 µg/m³");
});

test("a plugin's own trait reads by its declared names and units", () => {
  const spinner = { id: 0xfff1fc01, name: "Spinner", attributes: [{ id: 0, name: "rpm", value: 300, unit: "rpm" }] };
  const d = device([{ id: 0x100, name: "On/Off Light", isPrimaryType: true, traits: [trait(6, true), spinner] }]);
  assert.equal(reading(d, "Spinner.rpm"), "300 rpm");
});

test("a trait two device types share gets controls and readings for each type", () => {
  const d = device([
    { id: 0x101, name: "Dimmable Light", isPrimaryType: true, traits: [trait(6, true), trait(8, 254)] },
    { id: 0x22, name: "Speaker", traits: [trait(6, false), trait(8, 100)] },
  ]);
  const keys = controlsFor(d).map((x) => x.key);
  assert.deepEqual(keys, ["onOff@257", "toggle@257", "level@257", "onOff@34", "toggle@34", "level@34"]);
  assert.equal(controlsFor(d)[3].type, 0x22);
  assert.equal(reading(d, "onOff@257"), "On");
  assert.equal(reading(d, "onOff@34"), "Off");
  assert.match(describeDevice(d).readings.find((r) => r.key === "onOff@34").label, /Speaker/);
});

test("Identify is offered where the device has it, and an identifying device says so", () => {
  const identify = (t) => ({ id: 3, attributes: [{ id: 0, value: t }] });
  const d = device([{ id: 0x100, name: "On/Off Light", isPrimaryType: true, traits: [trait(6, false), identify(0)] }]);
  assert.ok(controlsFor(d).some((c) => c.key === "identify" && c.command === "Identify"));
  assert.equal(describeDevice(d).identifying, false);
  const busy = device([{ id: 0x100, name: "On/Off Light", isPrimaryType: true, traits: [identify(7)] }]);
  assert.equal(identifyTime(busy), 7);
  assert.equal(describeDevice(busy).identifying, true);
  assert.ok(!controlsFor(device([{ id: 0x15, name: "Contact Sensor", traits: [trait(0x45, true)] }])).some((c) => c.key === "identify"));
});

test("the suggested name is not the vendor's model string nor a firmware identifier", () => {
  const plug = (name, model, manufacturer) => ({ id: "m:x", name, model, manufacturer, types: [{ id: 0x10a, name: "On/Off Plug-in Unit", isPrimaryType: true, traits: [] }] });
  assert.equal(suggestName(plug("Sonoff S31", "Sonoff S31", "Tasmota")), "Plug");
  assert.equal(suggestName(plug("desk_plug", "Smart plug (TS011F_plug_1)", "TuYa")), "Desk plug");
  assert.equal(suggestName(plug("Shelly Plug S", "Shelly Plug S", "Allterco Robotics")), "Plug");
  assert.equal(suggestName(plug("Desk plug", "X1", "Acme")), "Desk plug");
  assert.equal(suggestName({ name: "0x00158d0001a2b3c4", types: [{ id: 0x302, name: "Temperature Sensor", isPrimaryType: true }] }), "Thermometer");
  assert.equal(describeDevice(plug("a", "b", "c")).icon, "plug");
});

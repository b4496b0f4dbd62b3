// How devices look: spec units to human units, the controls a device supports.
// Traits and attributes are matched by their Matter IDs (see catalog/matter.json).

const TRAIT = { onOff: 0x0006, level: 0x0008, booleanState: 0x0045, doorLock: 0x0101, temperature: 0x0402, humidity: 0x0405, occupancy: 0x0406, switch: 0x003b };
const TYPE = { contactSensor: 0x0015, doorLock: 0x000a, leak: 0x0043, genericSwitch: 0x000f };

// Icon names (drawn as inline SVG by icons.js), by the primary type's name.
const ICONS = [
  [/light/i, "light"], [/plug|outlet|relay/i, "plug"], [/contact/i, "door"], [/occupancy|motion/i, "motion"],
  [/temperature|thermostat/i, "temperature"], [/humidity/i, "humidity"], [/leak|water/i, "leak"], [/lock/i, "lock"],
  [/switch|button/i, "button"], [/smoke|alarm/i, "alarm"], [/fan/i, "fan"],
];

const IDENTIFY = 0x0003;

function attribute(trait, id) {
  const a = (trait.attributes || []).find((x) => x.id === id);
  return a ? a.value : undefined;
}

function primaryType(device) {
  return (device.types || []).find((t) => t.isPrimaryType) || (device.types || [])[0] || { name: "Device", traits: [] };
}

function number(v) {
  if (typeof v === "number") return v;
  if (v && typeof v === "object" && "value" in v) return number(v.value);
  return undefined;
}

const fmt = (n, digits) => n.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });

/// The tile's content: icon, primary type's name, readings in human units.
export function describeDevice(device) {
  const primary = primaryType(device);
  const icon = (ICONS.find(([re]) => re.test(primary.name || "")) || [null, "home"])[1];
  const readings = [];
  const seen = new Set();
  const types = device.types || [];
  for (const type of types) {
    for (const trait of type.traits || []) {
      // A trait several types share is read per type (each type's own state).
      const many = types.filter((t) => (t.traits || []).some((x) => x.id === trait.id)).length > 1;
      const at = readings.length;
      if (seen.has(trait.id) && !many) continue;
      seen.add(trait.id);
      const v = attribute(trait, 0);
      switch (trait.id) {
        case TRAIT.onOff:
          if (v !== undefined && v !== null) readings.push({ key: "onOff", label: "Power", text: v ? "On" : "Off" });
          break;
        case TRAIT.level: {
          const n = number(v);
          if (n !== undefined) readings.push({ key: "level", label: "Level", text: `${Math.round((n / 254) * 100)} %` });
          break;
        }
        case TRAIT.temperature: {
          const n = number(v);
          readings.push({ key: "temperature", label: "Temperature", text: n === undefined ? "—" : `${fmt(n / 100, 1)} °C` });
          break;
        }
        case TRAIT.humidity: {
          const n = number(v);
          readings.push({ key: "humidity", label: "Humidity", text: n === undefined ? "—" : `${fmt(n / 100, 0)} %` });
          break;
        }
        case TRAIT.booleanState: {
          if (v === undefined || v === null) break;
          if (type.id === TYPE.contactSensor) readings.push({ key: "contact", label: "Contact", text: v ? "Closed" : "Open" });
          else if (type.id === TYPE.leak) readings.push({ key: "leak", label: "Leak", text: v ? "Leak!" : "Dry" });
          else readings.push({ key: "state", label: "State", text: v ? "Detected" : "Clear" });
          break;
        }
        case TRAIT.occupancy: {
          const n = number(v);
          if (n !== undefined || typeof v === "boolean") readings.push({ key: "occupancy", label: "Motion", text: (n !== undefined ? n & 1 : v) ? "Motion" : "No motion" });
          break;
        }
        case TRAIT.doorLock: {
          const n = number(v);
          const text = { 0: "Not fully locked", 1: "Locked", 2: "Unlocked", 3: "Unlatched" }[n] || "Unknown";
          readings.push({ key: "lock", label: "Lock", text });
          break;
        }
        case 0x0090: { // Electrical Power Measurement: ActivePower (0x0008) in mW
          const n = number(attribute(trait, 0x0008));
          readings.push({ key: "power", label: "Power", text: n === undefined ? "—" : `${fmt(n / 1000, 1)} W` });
          break;
        }
        case 0x0091: { // Electrical Energy Measurement: CumulativeEnergyImported (0x0001) {Energy} in mWh
          const e = attribute(trait, 0x0001);
          const n = e && typeof e === "object" ? number(e.Energy ?? (e.value && e.value.Energy)) : undefined;
          readings.push({ key: "energy", label: "Energy", text: n === undefined ? "—" : `${fmt(n / 1e6, 2)} kWh` });
          break;
        }
        case 0x040d: case 0x042a: case 0x042d: case 0x042e: { // concentrations: MeasuredValue, MeasurementUnit (0x0008)
          const label = { 0x040d: "CO₂", 0x042a: "PM2.5", 0x042d: "PM10", 0x042e: "TVOC" }[trait.id];
          const unit = ["ppm", "ppb", "ppt", "mg/m³", "µg/m³", "ng/m³", "p/m³", "Bq/m³"][number(attribute(trait, 0x0008))];
          const n = number(v);
          readings.push({ key: label, label, text: n === undefined ? "—" : `${fmt(n, 0)}${unit ? " " + unit : ""}` });
          break;
        }
        default:
          // A plugin's own trait: its attributes by name, with their units (from the catalogue).
          if (trait.id > 0xffff) {
            for (const a of trait.attributes || []) {
              const n = number(a.value);
              const shown = n !== undefined ? fmt(n, 0) : a.value === null || a.value === undefined ? "—" : String(a.value);
              readings.push({ key: `${trait.name || trait.id}.${a.name || a.id}`, label: `${trait.name || "Vendor"} ${a.name || a.id}`, text: a.unit ? `${shown} ${a.unit}` : shown });
            }
          }
          break;
      }
      if (many) for (const r of readings.slice(at)) { r.key = `${r.key}@${type.id}`; r.label = `${r.label} (${type.name || type.id})`; }
    }
  }
  return { icon, type: primary.name, readings, identifying: identifyTime(device) > 0 };
}

/// Seconds the device is still identifying (its IdentifyTime), 0 when it is not.
export function identifyTime(device) {
  for (const type of device.types || []) {
    const t = (type.traits || []).find((x) => x.id === IDENTIFY);
    const n = t ? number(attribute(t, 0)) : undefined;
    if (n) return n;
  }
  return 0;
}

/// A name to suggest at commissioning: the device's own name when it reads like one a person
/// gave (not the vendor's model string, not a firmware identifier such as `living_room_sensor`
/// or `0x00158d…`), else the primary type's name, in the suggested room when there is one.
export function suggestName(device) {
  const name = (device.name || "").trim();
  const model = (device.model || "").trim().toLowerCase();
  const vendor = (device.manufacturer || "").trim().toLowerCase();
  const looksMachine = /_|0x[0-9a-f]|^[0-9a-f]{6,}$|[-_][0-9a-f]{6,}$/i.test(name);
  const isModel = name === "" || name.toLowerCase() === model || (model !== "" && name.toLowerCase().includes(model))
    || (vendor !== "" && name.toLowerCase().startsWith(vendor));
  if (!looksMachine && !isModel) return name;
  const kind = { light: "Light", plug: "Plug", door: "Door sensor", motion: "Motion sensor", temperature: "Thermometer",
    humidity: "Humidity sensor", leak: "Leak sensor", lock: "Lock", button: "Button", alarm: "Alarm", fan: "Fan" };
  const pretty = kind[(ICONS.find(([re]) => re.test(primaryType(device).name || "")) || [])[1]] || "Device";
  if (looksMachine && !isModel) {
    const words = name.replace(/0x[0-9a-f]+/gi, " ").replace(/[_-]+/g, " ").replace(/\s+/g, " ").trim();
    if (words && /^[\p{L}][\p{L}\p{N}' ]*$/u.test(words)) return words.charAt(0).toUpperCase() + words.slice(1);
  }
  return pretty;
}

/// The controls a device supports, from its traits. A trait that several of the device's
/// types share (a speaker that is also a dimmable light: On/Off on both) gets controls for
/// each type, keyed and labelled by the type.
export function controlsFor(device) {
  const out = [];
  const types = device.types || [];
  const shared = (id) => types.filter((t) => (t.traits || []).some((x) => x.id === id)).length > 1;
  for (const type of types) {
    for (const trait of type.traits || []) {
      const v = attribute(trait, 0);
      const many = shared(trait.id);
      const k = (key) => (many ? `${key}@${type.id}` : key);
      const of = (label) => (many ? `${label} (${type.name || type.id})` : label);
      if (trait.id === TRAIT.onOff && !out.some((c) => c.key === k("onOff"))) {
        out.push({ key: k("onOff"), kind: "switch", type: type.id, trait: trait.id, on: Boolean(v), label: of(v ? "Turn off" : "Turn on"), onCommand: "On", off: "Off" });
        out.push({ key: k("toggle"), kind: "button", type: type.id, trait: trait.id, command: "Toggle", label: of("Toggle") });
      }
      if (trait.id === TRAIT.level && !out.some((c) => c.key === k("level"))) {
        out.push({ key: k("level"), kind: "level", type: type.id, trait: trait.id, value: number(v) ?? 254, label: of("Level") });
      }
      if (trait.id === IDENTIFY && !out.some((c) => c.key === "identify")) {
        out.push({ key: "identify", kind: "button", type: type.id, trait: trait.id, command: "Identify", args: { IdentifyTime: 10 }, label: "Identify" });
      }
      if (trait.id === TRAIT.doorLock && !out.some((c) => c.key === "lock")) {
        out.push({ key: "lock", kind: "button", type: type.id, trait: trait.id, command: "LockDoor", label: "Lock" });
        out.push({ key: "unlock", kind: "button", type: type.id, trait: trait.id, command: "UnlockDoor", label: "Unlock" });
      }
    }
  }
  return out;
}

export function connectivityText(state) {
  return { online: "Online", offline: "Offline", partiallyOnline: "Partially online" }[state] || "Unknown";
}

/// One line of the events feed.
export function formatEvent(e, device) {
  const ms = Number(e.timestampNanoseconds || 0) / 1e6;
  const time = ms > 0 ? new Date(ms).toLocaleTimeString() : "";
  const fields = e.fields && typeof e.fields === "object" ? Object.entries(e.fields).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ") : "";
  return { time, device: device ? device.name : e.device, text: `${e.name || e.event}${fields ? ` (${fields})` : ""}` };
}

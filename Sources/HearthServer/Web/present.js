// How devices look: spec units to human units, the controls a device supports.
// Traits and attributes are matched by their Matter IDs (see catalog/matter.json).

const TRAIT = { onOff: 0x0006, level: 0x0008, booleanState: 0x0045, doorLock: 0x0101, temperature: 0x0402, humidity: 0x0405, occupancy: 0x0406, switch: 0x003b };
const TYPE = { contactSensor: 0x0015, doorLock: 0x000a, leak: 0x0043, genericSwitch: 0x000f };

const ICONS = [
  [/light/i, "💡"], [/plug|outlet|relay/i, "🔌"], [/contact/i, "🚪"], [/occupancy|motion/i, "🏃"],
  [/temperature|thermostat/i, "🌡️"], [/humidity/i, "💧"], [/leak|water/i, "💦"], [/lock/i, "🔒"],
  [/switch|button/i, "🔘"], [/smoke|alarm/i, "🚨"],
];

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
  const icon = (ICONS.find(([re]) => re.test(primary.name)) || [null, "🏠"])[1];
  const readings = [];
  const seen = new Set();
  for (const type of device.types || []) {
    for (const trait of type.traits || []) {
      if (seen.has(trait.id)) continue;
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
          break;
      }
    }
  }
  return { icon, type: primary.name, readings };
}

/// The controls a device supports, from its traits.
export function controlsFor(device) {
  const out = [];
  for (const type of device.types || []) {
    for (const trait of type.traits || []) {
      const v = attribute(trait, 0);
      if (trait.id === TRAIT.onOff && !out.some((c) => c.key === "onOff")) {
        out.push({ key: "onOff", kind: "switch", type: type.id, trait: trait.id, on: Boolean(v), label: v ? "Turn off" : "Turn on", onCommand: "On", off: "Off" });
        out.push({ key: "toggle", kind: "button", type: type.id, trait: trait.id, command: "Toggle", label: "Toggle" });
      }
      if (trait.id === TRAIT.level && !out.some((c) => c.key === "level")) {
        out.push({ key: "level", kind: "level", type: type.id, trait: trait.id, value: number(v) ?? 254 });
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
